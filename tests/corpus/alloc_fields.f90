! Distributed ALLOCATABLE arrays whose bounds are read from the input and
! computed at run time: a 1-D shift stencil on BLOCK arrays with ghost cells
! (0:n+1), a 2-D (*, BLOCK) Jacobi time loop, reductions, LBOUND/UBOUND/SIZE,
! a CYCLIC INTEGER work array allocated anew in every step of a loop.
program alloc_fields
  implicit none
  integer :: n, nx, ny, i, j, step, k, m, dot
  real(8), allocatable :: a(:), b(:)
  integer, allocatable :: w(:)
  real(8), allocatable :: u(:,:), v(:,:)
  integer, allocatable :: flag(:)
  real(8) :: diff, total
!HPF$ DISTRIBUTE A(BLOCK)
!HPF$ ALIGN B(:) WITH A(:)
!HPF$ ALIGN FLAG(I) WITH A(I)
!HPF$ DISTRIBUTE U(*, BLOCK)
!HPF$ ALIGN V(:,:) WITH U(:,:)
!HPF$ DISTRIBUTE W(CYCLIC)

  read *, n
  read *, nx, ny
  ! 1-D: ghost cells at 0 and n+1.
  allocate (a(0:n+1), b(0:n+1))
  allocate (flag(0:n+1))
  do i = 0, n + 1
    a(i) = dble(mod(7 * i, 11)) / 4.0d0
  end do
  b = 0.0d0
  do step = 1, 10
    b(1:n) = a(1:n) + 0.25d0 * (a(0:n-1) - 2.0d0 * a(1:n) + a(2:n+1))
    a(1:n) = b(1:n)
  end do
  flag = 0
  do i = 1, n
    if (a(i) > 1.25d0) flag(i) = 1
  end do
  print '(a, i4, a, i4, a, i4)', 'a: lbound', lbound(a, 1), ' ubound', ubound(a, 1), ' size', size(a)
  print '(a, f16.10)', 'sum(a(1:n)) =', sum(a(1:n))
  print '(a, f12.8, a, f12.8)', 'max =', maxval(a(1:n)), '  min =', minval(a(1:n))
  print '(a, i6)', 'cells above 1.25:', sum(flag)
  print '(4f12.8)', a(1), a(n / 2), a(n - 1), a(n)

  ! 2-D: (*, BLOCK) Jacobi on u(0:nx+1, 0:ny+1), hot left edge.
  allocate (u(0:nx+1, 0:ny+1), v(0:nx+1, 0:ny+1))
  u = 0.0d0
  do j = 0, ny + 1
    u(0, j) = 1.0d0
  end do
  v = u
  do step = 1, 25
    do j = 1, ny
      do i = 1, nx
        v(i, j) = 0.25d0 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
      end do
    end do
    diff = maxval(abs(v(1:nx, 1:ny) - u(1:nx, 1:ny)))
    u(1:nx, 1:ny) = v(1:nx, 1:ny)
  end do
  total = sum(u(1:nx, 1:ny))
  print '(a, i4, a, i4)', 'u: columns', size(u, 2), ' rows', size(u, 1)
  print '(a, es16.8)', 'last change =', diff
  print '(a, f16.10)', 'sum(u) =', total
  print '(5f10.6)', (u(i, ny / 2), i = 1, nx, 2)

  ! A CYCLIC array made anew in every step, its size computed.
  do k = 1, 3
    m = 8 * k + 3
    allocate (w(m))
    do i = 1, m
      w(i) = i * k
    end do
    dot = dot_product(w, w)
    print '(a, i2, a, i4, a, i8, a, i6)', 'k =', k, ' size', size(w), ' w.w =', dot, ' max', maxval(w)
    deallocate (w)
  end do
  deallocate (a, b, flag)
  deallocate (u, v)
end program alloc_fields
