C     Fixed form with CHPF$ / chpf$ sentinels and a CHPF$* continued
C     directive; 2-D Jacobi on (BLOCK,BLOCK) with labelled DO loops that
c     share one terminal CONTINUE.
      PROGRAM JACCHP
      INTEGER N
      PARAMETER (N = 16)
      REAL U(0:N+1,0:N+1), V(0:N+1,0:N+1)
      REAL RES
      INTEGER I, J, IT
CHPF$ PROCESSORS PG(2,2)
CHPF$ TEMPLATE TG(0:N+1,0:N+1)
CHPF$ DISTRIBUTE TG(BLOCK,BLOCK)
CHPF$*   ONTO PG
chpf$ align u(i,j) with tg(i,j)
chpf$ align v(i,j) with tg(i,j)
c     zero everywhere, then a hot west boundary
      DO 10 J = 0, N+1
      DO 10 I = 0, N+1
         U(I,J) = 0.0
   10 CONTINUE
      DO 20 I = 0, N+1
         U(I,0) = 4.0
   20 CONTINUE
      DO 25 J = 0, N+1
      DO 25 I = 0, N+1
         V(I,J) = U(I,J)
   25 CONTINUE
C     Jacobi sweeps: V from U, then copy back
      DO 40 IT = 1, 25
CHPF$ INDEPENDENT, NEW(I)
      DO 30 J = 1, N
      DO 30 I = 1, N
         V(I,J) = 0.25*(U(I-1,J) + U(I+1,J)
     &          + U(I,J-1) + U(I,J+1))
   30 CONTINUE
chpf$ independent(i,j)
      DO 35 J = 1, N
      DO 35 I = 1, N
         U(I,J) = V(I,J)
   35 CONTINUE
   40 CONTINUE
      RES = 0.0
      DO 50 J = 1, N
      DO 50 I = 1, N
         RES = RES + U(I,J)
   50 CONTINUE
      WRITE (*, '(A,F10.5)') ' U(8,1)  =', U(8,1)
      WRITE (*, '(A,F10.5)') ' U(8,8)  =', U(8,8)
      WRITE (*, '(A,F10.4)') ' SUM     =', RES
      END
