      PROGRAM RELAX
C     Jacobi relaxation of a square plate with fixed edges, written the
C     way the F77-era HPF applications are: one routine per file, the
C     data in COMMON through a header, spaced operators, a PURE
C     EXTRINSIC(HPF_LOCAL) function.
      INCLUDE 'grid.h'
      INTEGER IT
      REAL RES, TOTAL, CLIP
      DOUBLE PRECISION T0, T1, WTIME
      EXTERNAL WTIME, CLIP
      T0 = WTIME()
      CALL INIT
      DO 10 IT = 1, NITER
         CALL SWEEP
         IF (MOD(IT, 5) . EQ . 0) THEN
            CALL RESID(RES)
            WRITE (*, '(A,I4,A,ES12.4)') ' iteration', IT,
     &         ' residual', RES
         END IF
   10 CONTINUE
      TOTAL = SUM(U)
      WRITE (*, '(A,F14.4)') ' sum of u', TOTAL
      WRITE (*, '(A,4F10.4)') ' corner', U(2,2), U(N-1,2), U(2,N-1),
     &   U(N/2,N/2)
      WRITE (*, '(A,2F10.4)') ' clipped', CLIP(U(2,2)), CLIP(TOTAL)
      T1 = WTIME()
      IF (T1 . LT . T0) WRITE (*, *) 'the clock went backwards'
      END
