! CHARACTER(len=8) labels of the cells of a block-distributed mesh: set
! from a replicated table, rotated by one cell (a halo), compared and
! printed whole.
program label_gather
  implicit none
  integer, parameter :: n = 20
  character(len=8), parameter :: kinds(4) = ['inlet   ', 'fluid   ', 'wall    ', 'outlet  ']
  character(len=8) :: label(n), shifted(n)
  character*8 :: first, last
  integer :: cells(n), i
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE label(BLOCK) ONTO P
!HPF$ ALIGN (i) WITH label(i) :: shifted, cells

  do i = 1, n
    label(i) = kinds(mod(i * 3, 4) + 1)
    cells(i) = i
  end do
  label(1) = 'inlet'
  label(n) = 'outlet'
  do i = 1, n - 1
    shifted(i) = label(i + 1)
  end do
  shifted(n) = label(1)
  first = label(1)
  last = shifted(n - 1)
  print '(a, i3)', 'fluid cells', count(label == 'fluid')
  print '(a, i3)', 'walls after shift', count(shifted == 'wall')
  print '(a, a, a)', first, ' -> ', last
  print '(5(a8, 1x))', label
  print '(5(a8, 1x))', shifted(1:10)
end program label_gather
