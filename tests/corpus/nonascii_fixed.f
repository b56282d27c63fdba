C     Fixed form with non-ASCII comments (accents, 日本語): many
C     independent tridiagonal systems solved by the Thomas algorithm,
C     systems distributed (*, BLOCK), one system per column.
C     Système tridiagonal : élimination de Gauss sans pivot.
      PROGRAM THOMAS
      INTEGER N, NS
      PARAMETER (N = 16, NS = 8)
      DOUBLE PRECISION D(N,NS), X(N,NS), CP(N,NS), DP(N,NS)
      DOUBLE PRECISION A, B, C, DEN
      INTEGER I, J
!HPF$ PROCESSORS P(4)
C     配列の分散 : 列ごとにブロック分散
!HPF$ DISTRIBUTE (*, BLOCK) ONTO P :: D, X
!HPF$ ALIGN (:,:) WITH D(:,:) :: CP, DP
      A = -1.0D0
      B = 4.0D0
      C = -1.0D0
      DO 10 J = 1, NS
      DO 10 I = 1, N
         D(I,J) = DBLE(MOD(I + J, 5)) + DBLE(J)
   10 CONTINUE
C     chaque colonne est un système indépendant
!HPF$ INDEPENDENT, NEW(I, DEN)
      DO 40 J = 1, NS
         CP(1,J) = C / B
         DP(1,J) = D(1,J) / B
         DO 20 I = 2, N
            DEN = B - A * CP(I-1,J)
            CP(I,J) = C / DEN
            DP(I,J) = (D(I,J) - A * DP(I-1,J)) / DEN
   20    CONTINUE
         X(N,J) = DP(N,J)
C        remontée (back substitution), pas négatif
         DO 30 I = N-1, 1, -1
            X(I,J) = DP(I,J) - CP(I,J) * X(I+1,J)
   30    CONTINUE
   40 CONTINUE
      WRITE (*, '(A,F12.8)') ' X(1,1)   =', X(1,1)
      WRITE (*, '(A,F12.8)') ' X(8,5)   =', X(8,5)
      WRITE (*, '(A,F12.6)') ' SUM(X)   =', SUM(X)
      END
