C     GAUSS-SEIDEL AND RED-BLACK SOR SWEEPS, F77 STYLE: TEMPORARIES
C     (GS, T) ASSIGNED BEFORE THE ELEMENT IN EVERY ITERATION, A STRIDED
C     INNER LOOP WHOSE START (K) THE OUTER BODY COMPUTES, LABELLED LOOPS;
C     T IS REUSED FOR A CHECKSUM AFTER THE SWEEPS (ASSIGNED ANEW FIRST).
C     THE SWEEPS CARRY A DEPENDENCE ALONG THE DISTRIBUTED DIMENSION: THEY
C     RUN AS PIPELINES (U BY ROWS: A WAVEFRONT; W BY COLUMNS: A CHAIN).
      PROGRAM GSF77
      IMPLICIT NONE
      INTEGER N
      PARAMETER (N = 37)
      DOUBLE PRECISION U(0:N+1,0:N+1), W(0:N+1,0:N+1), GS, S, T
      INTEGER I, J, IT, K
CHPF$ PROCESSORS P(4)
CHPF$ DISTRIBUTE U(BLOCK,*) ONTO P
CHPF$ DISTRIBUTE W(*,BLOCK) ONTO P
      DO 2 J = 0, N+1
         DO 1 I = 0, N+1
            U(I,J) = DBLE(MOD(I*7+J*3, 11)) / 10.0D0
            W(I,J) = U(I,J)
    1    CONTINUE
    2 CONTINUE
      DO 100 IT = 1, 5
C        GAUSS-SEIDEL SWEEP, DEPENDENCE ALONG THE DISTRIBUTED I (INNER)
         DO 20 J = 1, N
            DO 10 I = 1, N
               GS = U(I-1,J) + U(I,J-1)
               T = U(I+1,J) + U(I,J+1)
               U(I,J) = 0.25D0 * (GS + T)
   10       CONTINUE
   20    CONTINUE
C        SAME ON W, DISTRIBUTED ALONG J (OUTER), STEP 2 INNER LOOP
         DO 40 J = 1, N
            K = 1 + MOD(J + IT, 2)
            DO 30 I = K, N, 2
               GS = W(I-1,J) + W(I+1,J)
               W(I,J) = 0.3D0 * (GS + W(I,J-1) + W(I,J+1))
     &                  - 0.2D0*W(I,J)
   30       CONTINUE
   40    CONTINUE
  100 CONTINUE
      S = 0.0D0
      T = 0.0D0
      DO 60 J = 1, N
         DO 50 I = 1, N
            S = S + U(I,J)
            T = T + W(I,J)
   50    CONTINUE
   60 CONTINUE
      WRITE(*,'(2F20.10)') S, T
      WRITE(*,'(5F14.10)') (U(I,N/2), I = 1, N, 7)
      WRITE(*,'(5F14.10)') (W(N/3,J), J = 1, N, 7)
      END
