! Dynamic remapping: DYNAMIC, REDISTRIBUTE (statement and :: forms) and REALIGN
! (statement and :: forms) in the execution part; ADI-like prefix sweeps along
! rows under (BLOCK,*) and along columns under (*,BLOCK).
program dynamic_remap
  implicit none
  integer, parameter :: n = 16
  integer :: a(n, n), b(n, n), v(n), w(n)
  integer :: i, j, nb
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE T(N)
!HPF$ DYNAMIC A, B
!HPF$ DYNAMIC T, V
!HPF$ DISTRIBUTE A(BLOCK,*) ONTO P
!HPF$ DISTRIBUTE B(BLOCK,*) ONTO P
!HPF$ DISTRIBUTE T(BLOCK) ONTO P
!HPF$ ALIGN V(I) WITH T(I)
!HPF$ ALIGN W(I) WITH T(I)
  a = 1
  do i = 1, n                     ! sweep along rows: local under (BLOCK,*)
    do j = 2, n
      a(i, j) = a(i, j) + a(i, j-1)
    end do
  end do
!HPF$ REDISTRIBUTE A(*,BLOCK) ONTO P
  do j = 1, n                     ! sweep along columns: local under (*,BLOCK)
    do i = 2, n
      a(i, j) = a(i, j) + a(i-1, j)
    end do
  end do
  print *, 'a(3,5) =', a(3, 5), ' sum(a) =', sum(a)
  nb = 2
!HPF$ REDISTRIBUTE (CYCLIC(NB),*) ONTO P :: A, B
  b = transpose(a) - a
  print *, 'antisymmetric part nonzero:', count(b /= 0)
  do i = 1, n
    w(i) = 10 * i
  end do
!HPF$ REALIGN V(I) WITH T(N+1-I)
  do i = 1, n
    v(i) = w(n+1-i)
  end do
!HPF$ REALIGN (:) WITH T(:) :: V
!HPF$ REDISTRIBUTE T(CYCLIC) ONTO P
  print *, 'v(1:4) =', v(1:4), ' sum(v+w) =', sum(v + w)
end program dynamic_remap
