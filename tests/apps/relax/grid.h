C     The grid every routine works on: two fields in COMMON, mapped by
C     rows onto the processors (the usual layout of the F77 HPF codes).
      INCLUDE 'params.h'
      REAL U(N,N), UNEW(N,N)
      COMMON /FIELDS/ U, UNEW
!HPF$ PROCESSORS PROCS(NUMBER_OF_PROCESSORS())
!HPF$ TEMPLATE GRID(N,N)
!HPF$ DISTRIBUTE GRID(*,BLOCK) ONTO PROCS
!HPF$ ALIGN U(I,J) WITH GRID(I,J)
!HPF$ ALIGN UNEW(I,J) WITH GRID(I,J)
