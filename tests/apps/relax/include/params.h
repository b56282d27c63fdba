C     Problem size and iteration count of the relaxation.
      INTEGER N, NITER
      PARAMETER (N = 48, NITER = 20)
