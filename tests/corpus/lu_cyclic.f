C     LU factorisation without pivoting of a diagonally dominant matrix,
C     columns CYCLIC for load balance; forward and backward substitution
C     with a negative-stride loop DO I = N, 1, -1.
      PROGRAM LUCYC
      INTEGER N
      PARAMETER (N = 16)
      DOUBLE PRECISION A(N,N), B(N), X(N), Y(N)
      INTEGER I, J, K
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE A(*, CYCLIC) ONTO P
!HPF$ ALIGN (:) WITH A(*, :) :: X, Y
!HPF$ ALIGN B(I) WITH X(I)
      DO 10 J = 1, N
      DO 10 I = 1, N
         A(I,J) = 1.0D0 / DBLE(I + J)
         IF (I .EQ. J) A(I,J) = A(I,J) + DBLE(N)
   10 CONTINUE
C     right-hand side so that the exact solution is X(I) = I
      DO 20 I = 1, N
         B(I) = 0.0D0
         DO 20 J = 1, N
            B(I) = B(I) + A(I,J) * DBLE(J)
   20 CONTINUE
C     factorise: L below the diagonal (unit), U on and above it
      DO 50 K = 1, N-1
         DO 30 I = K+1, N
            A(I,K) = A(I,K) / A(K,K)
   30    CONTINUE
!HPF$ INDEPENDENT, NEW(I)
         DO 40 J = K+1, N
            DO 40 I = K+1, N
               A(I,J) = A(I,J) - A(I,K) * A(K,J)
   40    CONTINUE
   50 CONTINUE
C     L Y = B
      DO 70 I = 1, N
         Y(I) = B(I)
         DO 60 J = 1, I-1
            Y(I) = Y(I) - A(I,J) * Y(J)
   60    CONTINUE
   70 CONTINUE
C     U X = Y, backwards
      DO 90 I = N, 1, -1
         X(I) = Y(I)
         DO 80 J = I+1, N
            X(I) = X(I) - A(I,J) * X(J)
   80    CONTINUE
         X(I) = X(I) / A(I,I)
   90 CONTINUE
      WRITE (*, '(A,4F12.8)') ' X(1:4) =', (X(I), I = 1, 4)
      WRITE (*, '(A,F12.8)')  ' X(N)   =', X(N)
      WRITE (*, '(A,L2)') ' EXACT  =', MAXVAL(ABS(X - (/ (DBLE(I),
     &     I = 1, N) /))) .LT. 1.0D-10
      END
