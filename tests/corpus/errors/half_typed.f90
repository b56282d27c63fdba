! expect: incomplete-input diagnostics only (no crash): ALIGN cut after WITH, DISTRIBUTE A( unclosed, TEMPLATE with no name, unterminated DO and PROGRAM
program half_typed
  implicit none
  integer, parameter :: n = 16
  real :: a(n), b(n), c(n)
  integer :: i
!HPF$ PROCESSORS P(4)
!HPF$ TEMPLATE
!HPF$ DISTRIBUTE A(
!HPF$ ALIGN B(I) WITH
!HPF$ ALIGN C(I) WITH A(I+
!HPF$ INDEPENDENT, NEW(
  do i = 2, n
    a(i) = b(i-1) +
!HPF$ DISTRIBUTE
  do i = 1, n
