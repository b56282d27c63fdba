! Non-ASCII comments (Japanese, accented Latin) around directives; an inclusive
! prefix sum by recursive doubling with array sections (Hillis-Steele scan).
! 配列の分散: A と B は P の上にブロック分散される。
program nonascii_scan
  implicit none
  integer, parameter :: n = 32
  integer :: a(n), b(n)
  integer :: i, k
!HPF$ PROCESSORS P(4)          ! プロセッサ配列
!HPF$ DISTRIBUTE A(BLOCK) ONTO P  ! 配列の分散
!HPF$ ALIGN B(I) WITH A(I)     ! répartition identique, alignement « naïf »
  do i = 1, n
    a(i) = mod(5 * i, 7)        ! données initiales
  end do
  k = 1
  do while (k < n)              ! 倍々に進む
    b(1:k) = a(1:k)
    b(k+1:n) = a(k+1:n) + a(1:n-k)
    a = b
    k = 2 * k
  end do
  print *, 'scan(8)  =', a(8)
  print *, 'scan(n)  =', a(n)
  print *, 'a(1:8)   =', a(1:8)
end program nonascii_scan
