! Fields renormalised inside a time loop the way models write it: the mean
! taken out (`e = e - sum(e) / n`), a scaling by the largest magnitude, a
! relaxation toward a projection by DOT_PRODUCT, an integer field shifted by
! its COUNT, a CYCLIC field scaled by its SUM and shifted by its MINVAL under
! a WHERE: each reduction inside an array assignment or a WHERE is computed
! first by every process (issue 27), the assignment by the owners.
program normalised_fields
  implicit none
  integer, parameter :: n = 48
  real(8) :: e(n), x(n), w(n)
  integer :: k(n)
  integer :: i, step
!hpf$ processors p(4)
!hpf$ distribute e(block) onto p
!hpf$ align x(i) with e(i)
!hpf$ align k(i) with e(i)
!hpf$ distribute w(cyclic) onto p
  do i = 1, n
    e(i) = dble(mod(i * 7, 11)) - 3.0d0
    x(i) = dble(i) * 0.5d0
    w(i) = dble(mod(i * 5, 13)) + 1.0d0
    k(i) = mod(i * 3, 10)
  end do
  do step = 1, 4
    e = e - sum(e) / n
    x = x / maxval(abs(x)) + e * 0.25d0
    e(2:n) = e(2:n) + 0.125d0 * (e(1:n-1) - dot_product(e, x) / n)
    k = k - count(k > 4) + step
    w = w / sum(w) * n + 0.5d0
    where (w > 0.6d0) w = w - minval(w) * 0.5d0
  end do
  print '(4f14.8)', e(1:8)
  print '(4f14.8)', x(n-7:n)
  print '(4f14.8)', w(1:8)
  print '(8i6)', k(1:16)
  print '(f16.10)', sum(w)
end program normalised_fields
