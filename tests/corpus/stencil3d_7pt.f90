! 3-D seven-point heat stencil: 3-D PROCESSORS and 3-D TEMPLATE with lower
! bounds, (BLOCK,BLOCK,BLOCK) ONTO P3, INDEPENDENT, NEW(I,J) over K.
program stencil3d
  implicit none
  integer, parameter :: n = 12
  double precision :: u(0:n+1, 0:n+1, 0:n+1), w(0:n+1, 0:n+1, 0:n+1)
  double precision, parameter :: c = 1.0d0 / 6.0d0
  integer :: i, j, k, step
!HPF$ PROCESSORS P3(2,2,2)
!HPF$ TEMPLATE T3(0:N+1, 0:N+1, 0:N+1)
!HPF$ DISTRIBUTE T3(BLOCK, BLOCK, BLOCK) ONTO P3
!HPF$ ALIGN U(I,J,K) WITH T3(I,J,K)
!HPF$ ALIGN (:,:,:) WITH T3(:,:,:) :: W
  u = 0.0d0
  u(0, :, :) = 6.0d0            ! one hot face
  w = u
  do step = 1, 8
!HPF$ INDEPENDENT, NEW(I,J)
    do k = 1, n
      do j = 1, n
        do i = 1, n
          w(i,j,k) = c * (u(i-1,j,k) + u(i+1,j,k) + u(i,j-1,k) &
                        + u(i,j+1,k) + u(i,j,k-1) + u(i,j,k+1))
        end do
      end do
    end do
    u(1:n, 1:n, 1:n) = w(1:n, 1:n, 1:n)
  end do
  print '(A,F12.8)', 'u(1,6,6)  =', u(1, 6, 6)
  print '(A,F12.8)', 'u(2,6,6)  =', u(2, 6, 6)
  print '(A,F12.6)', 'interior  =', sum(u(1:n, 1:n, 1:n))
end program stencil3d
