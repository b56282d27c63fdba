! Particle-in-cell style indirect access: a gather through an index array
! (A(I) = B(IDX(I))), a scatter-add charge deposit, periodic push; INTEGER
! field and cell arrays, particles CYCLIC, grid BLOCK.
program gather_particles
  implicit none
  integer, parameter :: ng = 16, np = 48
  integer :: field(ng), charge(ng), cell(np), vel(np), force(np)
  integer :: p, step
!HPF$ PROCESSORS P4(4)
!HPF$ DISTRIBUTE FIELD(BLOCK) ONTO P4
!HPF$ ALIGN CHARGE(I) WITH FIELD(I)
!HPF$ DISTRIBUTE (CYCLIC) ONTO P4 :: CELL, VEL
!HPF$ ALIGN FORCE(I) WITH CELL(I)
  do p = 1, np
    cell(p) = mod(7 * p, ng) + 1
    vel(p) = mod(p, 3) - 1
  end do
  do p = 1, ng
    field(p) = mod(p, 4) - 2
  end do
  do step = 1, 5
!HPF$ INDEPENDENT
    do p = 1, np
      force(p) = field(cell(p))        ! gather
    end do
!HPF$ INDEPENDENT
    do p = 1, np
      vel(p) = max(-2, min(2, vel(p) + force(p)))
      cell(p) = modulo(cell(p) - 1 + vel(p), ng) + 1
    end do
  end do
  charge = 0
  do p = 1, np                          ! scatter-add: not independent
    charge(cell(p)) = charge(cell(p)) + 1
  end do
  print *, 'charge =', charge
  print *, 'total =', sum(charge), ' momentum =', sum(vel)
  print *, 'cells 1..6 =', cell(1:6)
end program gather_particles
