! 2-D five-point Jacobi on a (BLOCK,BLOCK) 2x2 grid: combined :: forms
! (PROCESSORS, DIMENSION / DISTRIBUTE ... ONTO Q :: U, V), SHADOW U(1,1),
! old-style INDEPENDENT(I,J) and a continued directive with a leading '&'.
program jacobi_block_block
  implicit none
  integer, parameter :: n = 24
  double precision :: u(n, n), v(n, n)
  integer :: i, j, it
!HPF$ PROCESSORS, DIMENSION(2,2) :: Q
!HPF$ DISTRIBUTE (BLOCK,BLOCK) &
!HPF$& ONTO Q :: U, V
!HPF$ SHADOW U(1,1)
!HPF$ SHADOW (1:1, 1:1) :: V
  u = 0.0d0
  do i = 1, n
    u(i, 1) = dble(i)          ! left boundary ramps 1..n
  end do
  v = u
  do it = 1, 50
!HPF$ INDEPENDENT(I,J)
    do j = 2, n-1
      do i = 2, n-1
        v(i, j) = 0.25d0 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
      end do
    end do
!HPF$ INDEPENDENT
    forall (i = 2:n-1, j = 2:n-1)
      u(i, j) = 0.25d0 * (v(i-1, j) + v(i+1, j) + v(i, j-1) + v(i, j+1))
    end forall
  end do
  print '(A,F14.8)', 'u(12,2)   =', u(12, 2)
  print '(A,F14.8)', 'u(12,12)  =', u(12, 12)
  print '(A,F14.6)', 'sum(u)    =', sum(u)
end program jacobi_block_block
