C     Problem size and step count, shared by every routine.
      INTEGER N, NSTEP
      PARAMETER (N = 40, NSTEP = 12)
