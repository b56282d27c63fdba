!     2-D wave equation (membrane) in fixed form with !HPF$ sentinels in
!     columns 1-5: DYNAMIC arrays, REDISTRIBUTE from (BLOCK,BLOCK) to
!     (*,BLOCK) halfway through the run, REALIGN of a probe array.
      PROGRAM WAVE2D
      INTEGER N, NSTEP
      PARAMETER (N = 20, NSTEP = 40)
      REAL U0(N,N), U1(N,N), U2(N,N), PROBE(N), C2
      INTEGER I, J, K
!HPF$ PROCESSORS P2(2,2)
!HPF$ PROCESSORS P1(4)
!HPF$ DYNAMIC U0, U1, U2, PROBE
!HPF$ DISTRIBUTE (BLOCK,BLOCK) ONTO P2 :: U1
!HPF$ ALIGN U0(I,J) WITH U1(I,J)
!HPF$ ALIGN U2(I,J) WITH U1(I,J)
!HPF$ ALIGN PROBE(I) WITH U1(I,N/2)
      C2 = 0.2
      DO 10 J = 1, N
      DO 10 I = 1, N
         U1(I,J) = 0.0
   10 CONTINUE
      U1(N/2,N/2) = 1.0
      U1(N/2+1,N/2) = 0.5
      U1(N/2-1,N/2) = 0.5
      DO 15 J = 1, N
      DO 15 I = 1, N
         U0(I,J) = U1(I,J)
         U2(I,J) = 0.0
   15 CONTINUE
      DO 40 K = 1, NSTEP
         IF (K .EQ. NSTEP/2 + 1) THEN
!HPF$ REDISTRIBUTE U1(*, BLOCK) ONTO P1
!HPF$ REALIGN PROBE(I) WITH U1(N/2,I)
            CONTINUE
         END IF
!HPF$ INDEPENDENT, NEW(I)
         DO 20 J = 2, N-1
         DO 20 I = 2, N-1
            U2(I,J) = 2.0*U1(I,J) - U0(I,J) + C2*(U1(I-1,J)
     &              + U1(I+1,J) + U1(I,J-1) + U1(I,J+1) - 4.0*U1(I,J))
   20    CONTINUE
         DO 30 J = 2, N-1
         DO 30 I = 2, N-1
            U0(I,J) = U1(I,J)
            U1(I,J) = U2(I,J)
   30    CONTINUE
   40 CONTINUE
      DO 50 I = 1, N
         PROBE(I) = U1(N/2,I)
   50 CONTINUE
      WRITE (*, '(A,F10.5)') ' CENTRE =', U1(N/2,N/2)
      WRITE (*, '(A,F10.5)') ' ENERGY =', SUM(U1*U1)
      WRITE (*, '(A,5F9.4)') ' PROBE  =', (PROBE(I), I = 8, 12)
      END
