C     Fixed-form external subroutines and a function after the main
C     program, called through an INTERFACE block: INHERIT, descriptive
C     DISTRIBUTE *(BLOCK) ONTO *P, transcriptive DISTRIBUTE W *.
      PROGRAM INHFIX
      INTEGER N
      PARAMETER (N = 32)
      REAL A(N), B(N)
      INTEGER I
      INTERFACE
         SUBROUTINE RELAX(X, Y, M)
         INTEGER M
         REAL X(M), Y(M)
CHPF$    INHERIT X, Y
         END SUBROUTINE RELAX
         SUBROUTINE DAMP(W, M, F)
         INTEGER M
         REAL W(M), F
CHPF$    DISTRIBUTE W *
         END SUBROUTINE DAMP
         REAL FUNCTION TOTAL(Z, M)
         INTEGER M
         REAL Z(M)
CHPF$    PROCESSORS P(4)
CHPF$    DISTRIBUTE *(BLOCK) ONTO *P :: Z
         END FUNCTION TOTAL
      END INTERFACE
CHPF$ PROCESSORS P(4)
CHPF$ DISTRIBUTE A(BLOCK) ONTO P
CHPF$ ALIGN B(I) WITH A(I)
      DO 10 I = 1, N
         A(I) = REAL(MOD(I * 11, 17))
   10 CONTINUE
      DO 20 I = 1, 5
         CALL RELAX(A, B, N)
         CALL RELAX(B, A, N)
   20 CONTINUE
      CALL DAMP(A, N, 0.5)
      WRITE (*, '(A,F10.4)') ' TOTAL(A) =', TOTAL(A, N)
      WRITE (*, '(A,4F9.4)') ' A(1:4)   =', (A(I), I = 1, 4)
      END

      SUBROUTINE RELAX(X, Y, M)
C     one damped-Jacobi relaxation step, Y from X; ends fixed
      INTEGER M, I
      REAL X(M), Y(M)
CHPF$ INHERIT X, Y
      Y(1) = X(1)
      Y(M) = X(M)
CHPF$ INDEPENDENT
      DO 10 I = 2, M-1
         Y(I) = 0.5 * X(I) + 0.25 * (X(I-1) + X(I+1))
   10 CONTINUE
      END

      SUBROUTINE DAMP(W, M, F)
      INTEGER M
      REAL W(M), F
CHPF$ DISTRIBUTE W *
      W = F * W
      END

      REAL FUNCTION TOTAL(Z, M)
      INTEGER M
      REAL Z(M)
CHPF$ PROCESSORS P(4)
CHPF$ DISTRIBUTE *(BLOCK) ONTO *P :: Z
      TOTAL = SUM(Z)
      END
