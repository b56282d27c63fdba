! The seed loop after applying the tool's advice: ALIGN B(I) WITH A(I+1)
! (dummy form with an offset), so A(I) = B(I-1) needs no communication.
program seed_optimal
  implicit none
  real :: a(16), b(15)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
!HPF$ ALIGN B(I) WITH A(I+1)
  do i = 1, 15
    b(i) = real(10 * i)
  end do
  a(1) = 0.0
  do i = 2, 16
    a(i) = b(i-1)
  end do
  print '(8F7.1)', a
end program seed_optimal
