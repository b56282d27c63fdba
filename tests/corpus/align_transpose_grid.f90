! Transposed and strided alignments on a 2-D grid: C, D (7 x 13) on the
! transposed cells T(J,I) of a 13 x 7 (BLOCK,BLOCK) template, X, Y reversed
! along one dimension and with stride 2 along the other, W transposed onto a
! (BLOCK,*) template. Stencils, FORALLs, sections and reductions among
! arrays of one alignment run in parallel, and so does reading E (T(I,J))
! into C (E(J,I) sits on C(I,J)'s cell).
program align_transpose_grid
  implicit none
  integer, parameter :: n = 13, m = 7
  integer :: e(n, m), c(m, n), d(m, n), w(3, n)
  real :: x(m, n), y(m, n)
  integer :: i, j
!hpf$ processors p(2,2)
!hpf$ template t(n, m), u(n, 3), t2(n, 2*m)
!hpf$ distribute (block, block) onto p :: t, t2
!hpf$ distribute u(block, *)
!hpf$ align e(i,j) with t(i,j)
!hpf$ align (i,j) with t(j,i) :: c, d
!hpf$ align (i,j) with t2(n+1-j, 2*i-1) :: x, y
!hpf$ align w(i,j) with u(j,i)
  do j = 1, m
    do i = 1, n
      e(i, j) = 100 * i + j
    end do
  end do
  forall (i = 1:m, j = 1:n) c(i, j) = e(j, i) + i
  forall (i = 1:m, j = 1:n) x(i, j) = real(i) / real(j)
  d = 0
  do j = 2, n - 1
    do i = 2, m - 1
      d(i, j) = c(i-1, j) + c(i+1, j) + c(i, j-1) + c(i, j+1)
    end do
  end do
  y = 0.0
  do j = 2, n - 1
    do i = 2, m - 1
      y(i, j) = x(i-1, j) - x(i, j+1) + x(i+1, j-1)
    end do
  end do
  d(2:m:2, 3) = c(2:m:2, 4) * 2
  w = 0
  do j = 1, n
    do i = 1, 3
      w(i, j) = i * j
    end do
  end do
  w(2, :) = w(1, :) + w(3, :)
  print *, sum(c), maxval(d), count(d > 400), d(3, 3), c(7, 13)
  print '(3F14.6)', sum(y), maxval(y), y(3, 4)
  print *, sum(w), w(2, 5), maxval(w(:, 3:n:2))
end program align_transpose_grid
