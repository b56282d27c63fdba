*     Fixed form with *HPF$ / *hpf$ sentinels and a *HPF$ directive
*     continued by column-6 marks: red-black SOR for the 2-D Laplace
*     equation on (BLOCK,*) with a SHADOW; DO WHILE convergence loop.
      PROGRAM SORSTR
      INTEGER N
      PARAMETER (N = 16)
      REAL U(0:N+1,0:N+1), OMEGA, DMAX, OLD
      INTEGER I, J, IC, NIT
*HPF$ PROCESSORS P(4)
*HPF$ DISTRIBUTE (BLOCK,*)
*HPF$1  ONTO P
*HPF$2  :: U
*hpf$ shadow u(1,0)
      OMEGA = 1.6
      DO 10 J = 0, N+1
      DO 10 I = 0, N+1
         U(I,J) = 0.0
   10 CONTINUE
      DO 20 J = 0, N+1
         U(N+1,J) = 1.0
   20 CONTINUE
      DMAX = 1.0
      NIT = 0
      DO WHILE (DMAX .GT. 1.0E-4 .AND. NIT .LT. 500)
         NIT = NIT + 1
         DMAX = 0.0
         DO 40 IC = 0, 1
*HPF$ INDEPENDENT, NEW(J, OLD), REDUCTION(DMAX)
            DO 30 I = 1, N
               DO 30 J = 2 - MOD(I + IC, 2), N, 2
                  OLD = U(I,J)
                  U(I,J) = (1.0 - OMEGA) * OLD + OMEGA * 0.25 *
     +                 (U(I-1,J) + U(I+1,J) + U(I,J-1) + U(I,J+1))
                  DMAX = MAX(DMAX, ABS(U(I,J) - OLD))
   30       CONTINUE
   40    CONTINUE
      END DO
      WRITE (*, '(A,I5)') ' ITERATIONS =', NIT
      WRITE (*, '(A,F9.5)') ' U(8,8)     =', U(8,8)
      WRITE (*, '(A,F9.5)') ' U(16,8)    =', U(16,8)
      END
