C     The mapping of the fields of the main program: blocks of columns.
      INCLUDE 'dims.h'
!HPF$ PROCESSORS PROCS(NUMBER_OF_PROCESSORS())
!HPF$ TEMPLATE T(N,N)
!HPF$ DISTRIBUTE T(*,BLOCK) ONTO PROCS
!HPF$ ALIGN (I,J) WITH T(I,J) :: TEMP, TNEW
