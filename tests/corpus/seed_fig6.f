C     Seed example (JP2739836B2, FIG. 6-9), fixed-form twin of
C     seed_fig6.f90: same statements, same output.
      PROGRAM SEED
      REAL A(16), B(15)
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE A(BLOCK) ONTO P
!HPF$ ALIGN B(I) WITH A(I)
      DO I = 1, 15
        B(I) = REAL(10 * I)
      END DO
      A(1) = 0.0
      DO I = 2, 16
        A(I) = B(I-1)
      END DO
      PRINT '(8F7.1)', A
      END PROGRAM SEED
