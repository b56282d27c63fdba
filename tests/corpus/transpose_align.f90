! Transposed 2-D alignment: ALIGN C(I,J) WITH E(J,I) in statement form and
! ALIGN (I,J) WITH E(J,I) :: C, D in combined form; transpose and add.
program transpose_align
  implicit none
  integer, parameter :: n = 16
  integer :: e(n, n), c(n, n), d(n, n), f(n, n)
  integer :: i, j
!hpf$ processors p(2,2)
!hpf$ distribute (block,block) onto p :: e
!hpf$ align (i,j) with e(j,i) :: c, d
!hpf$ align f(i,j) with e(j,i)
  do j = 1, n
    do i = 1, n
      e(i, j) = 100 * i + j
    end do
  end do
!hpf$ independent
  forall (i = 1:n, j = 1:n) c(i, j) = e(j, i)       ! local under the alignment
  d = transpose(e)
  f = c - d
  print *, 'c(2,5) =', c(2, 5), ' c(5,2) =', c(5, 2)
  print *, 'mismatches =', count(f /= 0)
  print *, 'trace =', sum((/ (c(i, i), i = 1, n) /))
  print *, 'sym check =', count(c + e == transpose(c + e))
end program transpose_align
