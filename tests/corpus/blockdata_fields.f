C     Old-style initial values of a COMMON block that holds distributed
C     fields: BLOCK DATA sets the fields (an implied DO for one of them),
C     the smoothing coefficient and the step count, all in the same block.
      PROGRAM BDINIT
      INTEGER N
      PARAMETER (N = 24)
      REAL U(N), V(N)
      REAL ALPHA
      INTEGER NSTEP
      COMMON /FIELD/ U, V, ALPHA, NSTEP
CHPF$ PROCESSORS P(4)
CHPF$ DISTRIBUTE U(BLOCK) ONTO P
CHPF$ ALIGN V(I) WITH U(I)
      INTEGER I, IT
      WRITE (*, '(A, F8.4, I4)') ' alpha, steps', ALPHA, NSTEP
      WRITE (*, '(A, 2F10.4)') ' initial sums', SUM(U), SUM(V)
      DO 20 IT = 1, NSTEP
         DO 10 I = 2, N - 1
            V(I) = U(I) + ALPHA * (U(I-1) - 2.0 * U(I) + U(I+1))
   10    CONTINUE
         DO 15 I = 2, N - 1
            U(I) = V(I)
   15    CONTINUE
   20 CONTINUE
      WRITE (*, '(A, F12.6)') ' sum', SUM(U)
      WRITE (*, '(6F11.6)') U
      END

      BLOCK DATA FINIT
      INTEGER N
      PARAMETER (N = 24)
      REAL U(N), V(N)
      REAL ALPHA
      INTEGER NSTEP
      COMMON /FIELD/ U, V, ALPHA, NSTEP
CHPF$ PROCESSORS P(4)
CHPF$ DISTRIBUTE U(BLOCK) ONTO P
CHPF$ ALIGN V(I) WITH U(I)
      DATA U /10*0.0, 4*1.0,
     &        10*0.0/
      DATA (V(I), I = 1, 24) / 24*0.5 /
      DATA ALPHA, NSTEP / 0.25, 6 /
      END
