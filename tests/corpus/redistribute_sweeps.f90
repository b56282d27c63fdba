! Remapping at run time between the main program's statements: ADI-like
! prefix sweeps along rows under (BLOCK,*) and along columns under
! (*,BLOCK), a CYCLIC(2) phase, a template redistributed under its aligned
! arrays, REALIGNs that reverse an array and put it back, and a 2-D grid remapped from
! (BLOCK,BLOCK) to (CYCLIC,BLOCK) between two stencil sweeps.
program redistribute_sweeps
  implicit none
  integer, parameter :: n = 16, m = 12
  integer :: a(n, n), b(n, n), v(n), w(n)
  double precision :: g(m, m), h(m, m)
  integer :: i, j, k
!HPF$ PROCESSORS P(4)
!HPF$ PROCESSORS Q(2, 2)
!HPF$ TEMPLATE T(N)
!HPF$ DYNAMIC A, B, T, V, G
!HPF$ DISTRIBUTE A(BLOCK,*) ONTO P
!HPF$ DISTRIBUTE B(BLOCK,*) ONTO P
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN V(I) WITH T(I)
!HPF$ ALIGN W(I) WITH T(I)
!HPF$ DISTRIBUTE G(BLOCK,BLOCK) ONTO Q
!HPF$ ALIGN H(I,J) WITH G(I,J)
  do j = 1, n
    do i = 1, n
      a(i, j) = mod(3*i + 5*j, 7)
    end do
  end do
  do i = 1, n                     ! along rows: local under (BLOCK,*)
    do j = 2, n
      a(i, j) = a(i, j) + a(i, j-1)
    end do
  end do
!HPF$ REDISTRIBUTE A(*,BLOCK) ONTO P
  do j = 1, n                     ! along columns: local under (*,BLOCK)
    do i = 2, n
      a(i, j) = a(i, j) + a(i-1, j)
    end do
  end do
  print *, 'a(3,5) =', a(3, 5), ' a(n,n) =', a(n, n), ' sum(a) =', sum(a)
!HPF$ REDISTRIBUTE (CYCLIC(2),*) ONTO P :: A, B
  b = transpose(a) - a
  print *, 'antisymmetric part nonzero:', count(b /= 0), ' sum(b*b) =', sum(b*b)
  do i = 1, n
    w(i) = 10 * i
  end do
!HPF$ REALIGN V(I) WITH T(N+1-I)
  do i = 1, n
    v(i) = w(n+1-i) + i
  end do
!HPF$ REALIGN (:) WITH T(:) :: V
!HPF$ REDISTRIBUTE T(CYCLIC) ONTO P
  do i = 2, n
    w(i) = w(i) + v(i-1)
  end do
  print *, 'v(1:4) =', v(1:4), ' w(13:16) =', w(13:16), ' sum(v+w) =', sum(v + w)
  do j = 1, m
    do i = 1, m
      g(i, j) = dble(i*i + 2*j) / 7.0d0
    end do
  end do
  do k = 1, 3
    do j = 2, m-1
      do i = 2, m-1
        h(i, j) = 0.25d0 * (g(i-1, j) + g(i+1, j) + g(i, j-1) + g(i, j+1))
      end do
    end do
    do j = 2, m-1
      do i = 2, m-1
        g(i, j) = h(i, j)
      end do
    end do
  end do
!HPF$ REDISTRIBUTE G(CYCLIC,BLOCK) ONTO Q
  do j = 2, m-1
    do i = 2, m-1
      h(i, j) = g(i, j) - 0.5d0 * g(i-1, j)
    end do
  end do
  print '(A,F14.8,A,F14.8)', ' g(6,7) =', g(6, 7), '  h(5,5) =', h(5, 5)
  print '(A,3F12.6)', ' h(2:4,6) =', h(2:4, 6)
end program redistribute_sweeps
