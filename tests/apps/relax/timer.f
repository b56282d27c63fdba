      DOUBLE PRECISION FUNCTION WTIME()
C     Wall-clock seconds, from the counts of SYSTEM_CLOCK.
      INTEGER COUNT, RATE
      CALL SYSTEM_CLOCK(COUNT, RATE)
      IF (RATE .GT. 0) THEN
         WTIME = DBLE(COUNT) / DBLE(RATE)
      ELSE
         WTIME = 0.0D0
      END IF
      END
