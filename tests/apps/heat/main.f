      PROGRAM HEAT
C     Explicit heat diffusion on a plate, one routine per file; the
C     routines take the fields as they are mapped (INHERIT).
      INCLUDE 'layout.h'
      REAL TEMP(N,N), TNEW(N,N)
      INTEGER ISTEP
      REAL TOTAL
      DOUBLE PRECISION T0, T1, WTIME
      EXTERNAL WTIME
      T0 = WTIME()
      CALL SETUP(TEMP, TNEW)
      DO 10 ISTEP = 1, NSTEP
         CALL STEP(TEMP, TNEW)
         IF (MOD(ISTEP, 4) .EQ. 0) THEN
            TOTAL = SUM(TEMP)
            WRITE (*, '(A,I4,A,F14.5)') ' step', ISTEP, ' heat', TOTAL
         END IF
   10 CONTINUE
      WRITE (*, '(A,3F10.5)') ' probes', TEMP(2,2), TEMP(N/2,N/2),
     &   TEMP(N-1,N-1)
      T1 = WTIME()
      IF (T1 .LT. T0) WRITE (*, *) 'the clock went backwards'
      END
