! Reductions with DIM= of distributed arrays into arrays: along the
! undistributed dimension (each process reduces its own columns, the
! result gathered) and along the distributed one (partial vectors
! combined across the processes), into replicated results. Floating sums
! and products across the processes print 5 significant digits: by default
! their partials are combined in rank order (the last bits may differ from
! the sequential program's); with --ordered-reductions every line is
! bit-identical.
program column_reductions
  implicit none
  integer, parameter :: nx = 11, ny = 7
  real :: t(nx, ny), u(nx, ny)
  double precision :: d(nx, ny)
  integer :: k(nx, ny)
  real :: colmax(ny), colmin(ny), rowsum(nx), total(ny), usum(ny), urow(nx), uprod(nx)
  real :: msum(ny), part(3:9)
  double precision :: dsum(ny), drow(nx)
  integer :: cnt(ny), ksum(nx), kmax(ny), ucnt(nx)
  logical :: anyc(ny), allr(nx), anyu(ny)
  real :: acolmax(ny), arow(nx), asec(2:6), mean(ny)
  integer :: ubig(nx)
  integer :: i, j
!hpf$ distribute (*, block) :: t
!hpf$ align d(i, j) with t(i, j)
!hpf$ align k(i, j) with t(i, j)
!hpf$ distribute (block, *) :: u
!hpf$ align acolmax(j) with t(*, j)
!hpf$ align arow(i) with u(i, *)
!hpf$ align asec(j) with t(*, j)

  do j = 1, ny
    do i = 1, nx
      t(i, j) = sin(real(i * j) * 0.37) + 0.1 * real(i)
      d(i, j) = cos(dble(i + 3 * j) * 0.21d0) / dble(j)
      k(i, j) = mod(i * 7 + j * 5, 13) - 6
    end do
  end do
  do j = 1, ny
    do i = 1, nx
      u(i, j) = (sin(real(i * j) * 0.37) + 0.1 * real(i)) * 1.5 - 0.25
    end do
  end do

  ! Along the undistributed dimension of (*, BLOCK) data.
  colmax = maxval(t, dim=1)
  colmin = minval(t(2:nx - 1, :), dim=1)
  total = sum(t(2:nx - 1, :) ** 2, dim=1)
  cnt = count(t > 0.5, dim=1)
  anyc = any(t < -0.5, dim=1)
  dsum = sum(d, dim=1)
  kmax = maxval(k, dim=1)
  msum = sum(t, dim=1, mask=t > 0.0)
  ! Along the distributed dimension of (*, BLOCK) data.
  rowsum = sum(t, dim=2)
  drow = product(1.0d0 + d, dim=2)
  ksum = sum(abs(k), dim=2)
  allr = all(t > -0.6, dim=2)
  part = sum(t(3:9, 2:ny), dim=2)
  ! (BLOCK, *) data: along the distributed dimension, then along the other.
  usum = sum(u, dim=1)
  anyu = any(u > 2.5, dim=1)
  urow = maxval(u, dim=2)
  uprod = product(u(:, 1:4), dim=2)
  ucnt = count(u > 0.0 .and. u < 1.0, dim=2)
  ! Results aligned with the remaining dimension: each process keeps its part.
  acolmax = maxval(t, dim=1)
  arow = sum(u * 2.0, dim=2)
  asec = minval(t(:, 2:6), dim=1)
  ! A reduction with DIM= as an operand of a bigger expression.
  mean = total / real(nx - 2) + 0.5 * maxval(t(2:nx - 1, :), dim=1)
  ubig = ucnt + count(u > 1.0, dim=2)

  print '(a)', 'colmax, colmin, total'
  print '(7es13.5)', colmax
  print '(7es13.5)', colmin
  print '(7es13.5)', total
  print '(a, 7i4)', 'cnt', cnt
  print '(a, 7l2)', 'anyc', anyc
  print '(7es13.5)', dsum
  print '(a, 7i4)', 'kmax', kmax
  print '(7es13.5)', msum
  print '(a)', 'rowsum, drow, part'
  print '(6es12.4)', rowsum
  print '(6es12.4)', drow
  print '(a, 11i5)', 'ksum', ksum
  print '(a, 11l2)', 'allr', allr
  print '(7es12.4)', part
  print '(a)', 'usum, urow, uprod'
  print '(7es12.4)', usum
  print '(a, 7l2)', 'anyu', anyu
  print '(6es13.5)', urow
  print '(6es12.4)', uprod
  print '(a, 11i4)', 'ucnt', ucnt
  print '(a)', 'acolmax, arow, asec'
  print '(7es13.5)', acolmax
  print '(6es13.5)', arow
  print '(5es13.5)', asec
  print '(7es13.5)', mean
  print '(a, 11i4)', 'ubig', ubig
end program column_reductions
