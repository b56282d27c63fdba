! Private scalar temporaries and IF constructs inside owner-computes DO loops:
! each process computes a temporary for the iterations it owns, and the
! conditions read loop indices, replicated data, private scalars and elements
! local to the iteration's owner (its own or the fetched halo); scalar
! reductions (INTEGER: partials then MPI_Allreduce; REAL and DOUBLE PRECISION
! sums: along the chain of processes, in the sequential order).
program private_scalars
  implicit none
  integer, parameter :: n = 24
  integer :: a(n), b(n), c(n), k(n), m(n, 5)
  real :: x(n), y(n), w
  double precision :: d(0:n+1), e(0:n+1), h
  integer :: i, j, t, u, v, cut, isum, imax, iprod
  real :: rs, rk
  double precision :: ds
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE G(N)
!HPF$ DISTRIBUTE G(BLOCK) ONTO P
!HPF$ ALIGN (I) WITH G(I) :: A, B, C, X, Y
!HPF$ DISTRIBUTE K(CYCLIC) ONTO P
!HPF$ DISTRIBUTE M(BLOCK, *) ONTO P
!HPF$ DISTRIBUTE D(BLOCK) ONTO P
!HPF$ ALIGN E(I) WITH D(I)
  cut = 5
  y = 0.0
  d = 0.0d0
  do i = 1, n
    a(i) = mod(7 * i, 19) - 9
    x(i) = real(i) / 8.0
  end do
  do i = 0, n + 1
    e(i) = dble(i) / 3.0d0
  end do
  ! A temporary assigned first in every iteration.
!HPF$ INDEPENDENT, NEW(T)
  do i = 1, n
    t = a(i) * a(i)
    b(i) = t - i
  end do
  ! An IF construct with ELSE IF and ELSE, reading a private scalar and a
  ! local element in its conditions.
!HPF$ INDEPENDENT, NEW(T)
  do i = 1, n
    t = 2 * a(i)
    if (a(i) > 0) then
      c(i) = t + 1
    else if (t < -cut) then
      c(i) = -t
    else
      c(i) = 0
    end if
  end do
  print '(A,12I5)', 'b =', b(13:24)
  ! A condition reading the neighbours' elements (the fetched halo).
  do i = 2, n - 1
    if (a(i-1) < a(i+1)) y(i) = x(i-1) + x(i+1)
  end do
  ! A temporary assigned in an inner loop, tested in an IF there.
!HPF$ INDEPENDENT, NEW(U, J)
  do i = 1, n
    do j = 1, 5
      u = i * j + a(i)
      if (mod(u, 3) == 0) then
        m(i, j) = u
      else
        m(i, j) = -u
      end if
    end do
  end do
  ! DOUBLE PRECISION temporary and a square root on one branch.
!HPF$ INDEPENDENT, NEW(H)
  do i = 1, n
    h = e(i) * e(i) - e(i-1)
    if (h > 1.0d0) then
      d(i) = sqrt(h)
    else
      d(i) = h
    end if
  end do
  ! A CYCLIC array set on its owners by an IF construct.
  do i = 1, n
    if (mod(i, 3) == 0) then
      k(i) = i * i
    else if (mod(i, 3) == 1) then
      k(i) = -i
    else
      k(i) = 2 * i + 1
    end if
  end do
  ! w is read after the loop: the owner of the last iteration hands its
  ! value to the others.
  do i = 1, n
    w = x(i) * 2.0 + y(i)
    y(i) = y(i) + w
  end do
  ! The loop ends where b(i) > 60 first holds: found before it runs.
  do i = 1, n
    if (b(i) > 60) exit
    c(i) = c(i) + b(i)
  end do
  ! Not owner-computes: v carries a value from one iteration to the next
  ! (every process runs this loop, each element read comes from its owner).
  v = 0
  do i = 1, n
    b(i) = v
    v = a(i)
  end do
  ! Reductions: INTEGER sum (with a difference), maximum and product, a
  ! REAL sum whose value depends on the order of its additions, and a
  ! DOUBLE PRECISION sum under an IF.
  isum = 5
  imax = -100
  iprod = 1
  do i = 1, n
    isum = isum + c(i) - 1
    imax = max(imax, c(i) * a(i))
    if (mod(i, 5) == 0) iprod = iprod * a(i)
  end do
  rs = 1.0e4
  do i = 1, n
    rs = rs + x(i) / 3.0 - y(i) * 1.0e-3
  end do
  ds = 0.1d0
  do i = 1, n
    if (d(i) > 1.0d0) then
      ds = ds + d(i) / 7.0d0
    end if
  end do
  ! Stays on rank 0: a REAL sum over a CYCLIC distribution (the processes'
  ! iterations interleave, the order of the additions would change).
  rk = 0.0
  do i = 1, n
    rk = rk + real(k(i)) / 3.0
  end do
  print '(A,3I8)', 'isum, imax, iprod =', isum, imax, iprod
  print '(A,ES16.8)', 'rs =', rs
  print '(A,F22.16)', 'ds =', ds
  print '(A,ES16.8)', 'rk =', rk
  print '(A,I6,I6)', 'sum b, sum c =', sum(b), sum(c)
  print '(A,12I5)', 'b =', b(1:12)
  print '(A,12I5)', 'c =', c(13:24)
  print '(A,12I5)', 'k =', k(1:12)
  print '(A,5I6)', 'm column sums =', (sum(m(:, j)), j = 1, 5)
  print '(A,5I5)', 'm(7,:) =', m(7, :)
  print '(A,F10.4)', 'sum y =', sum(y)
  print '(A,3F9.4)', 'y(2), y(12), y(23) =', y(2), y(12), y(23)
  print '(A,F12.6)', 'sum d =', sum(d)
  print '(A,3F11.6)', 'd(1), d(10), d(24) =', d(1), d(10), d(24)
  print '(A,F8.3)', 'last w =', w
  print '(A,12I5)', 'c =', c(1:12)
  print '(A,12I5)', 'b =', b(1:12)
  print '(A,I5)', 'last v =', v
end program private_scalars
