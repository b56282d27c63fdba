! 2-D five-point Jacobi on a (*, BLOCK) template with a boundary layer
! T(0:N+1,0:N+1), INDEPENDENT, NEW(I) on the column loop, DO WHILE sweep.
program jacobi_star_block
  implicit none
  integer, parameter :: n = 16
  real :: u(0:n+1, 0:n+1), unew(0:n+1, 0:n+1)
  integer :: i, j, it
  real :: diff
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(0:N+1, 0:N+1)
!HPF$ DISTRIBUTE T(*, BLOCK) ONTO P
!HPF$ ALIGN U(I,J) WITH T(I,J)
!HPF$ ALIGN UNEW(I,J) WITH T(I,J)
  u = 0.0
  u(0, :) = 1.0          ! hot top edge
  u(:, n+1) = 0.5        ! warm right edge
  unew = u
  diff = 1.0
  it = 0
  do while (diff > 1.0e-3 .and. it < 200)
    it = it + 1
!HPF$ INDEPENDENT, NEW(I)
    do j = 1, n
      do i = 1, n
        unew(i, j) = 0.25 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
      end do
    end do
    diff = maxval(abs(unew(1:n, 1:n) - u(1:n, 1:n)))
    u(1:n, 1:n) = unew(1:n, 1:n)
  end do
  print '(A,I4)', 'iterations =', it
  print '(A,F10.5)', 'centre     =', u(n/2, n/2)
  print '(A,F10.4)', 'interior   =', sum(u(1:n, 1:n))
end program jacobi_star_block
