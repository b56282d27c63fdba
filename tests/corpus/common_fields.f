C     A shallow-water-style F77 code whose distributed fields live in
C     COMMON blocks: the main program's time loop calls subroutines
C     without arguments that update them. Every routine declares the
C     blocks it needs with the same variables (one under other names),
C     a block mixes a distributed array with replicated scalars, blank
C     COMMON holds a distributed array, and /CTRL/ is plain COMMON.
      PROGRAM SHALLOW
      INTEGER N, M
      PARAMETER (N = 40, M = 10)
      REAL H(N), Q(N)
      REAL P(M, N), PNEW(M, N)
      REAL T(N), EMAX
      INTEGER NMAX
      DIMENSION W(N)
      INTEGER NSTEP, ISTEP
      REAL DT, TOTAL
      COMMON /FIELD1/ H, Q
      COMMON /FIELD2/ P, PNEW
      COMMON /STATE/ T, EMAX, NMAX
      COMMON /CTRL/ DT, NSTEP, TOTAL
      COMMON W
      SAVE /FIELD1/
!HPF$ DISTRIBUTE H(BLOCK)
!HPF$ ALIGN Q(I) WITH H(I)
!HPF$ DISTRIBUTE P(*, BLOCK)
!HPF$ ALIGN PNEW(I, J) WITH P(I, J)
!HPF$ DISTRIBUTE T(CYCLIC)
!HPF$ DISTRIBUTE W(BLOCK)
      CALL INIT
      DO 100 ISTEP = 1, NSTEP
         CALL FLUX
         CALL SMOOTH
         CALL HEAT
         CALL DIAG
         IF (MOD(ISTEP, 3) .EQ. 0) WRITE (*, '(A,I4,2F14.5,I4)')
     &      ' STEP', ISTEP, TOTAL, EMAX, NMAX
  100 CONTINUE
      WRITE (*, '(A,4F12.6)') ' H', H(1), H(2), H(N-1), H(N)
      WRITE (*, '(A,3F12.6)') ' P', P(1, 1), P(M/2, N/2), P(M, N)
      WRITE (*, '(A,2F12.6)') ' T', T(3), T(N-2)
      WRITE (*, '(A,F12.6)') ' W', SUM(W)
      END

      SUBROUTINE INIT
      INTEGER N, M
      PARAMETER (N = 40, M = 10)
      REAL H(N), Q(N)
      REAL P(M, N), PNEW(M, N)
      REAL T(N), EMAX
      INTEGER NMAX
      DIMENSION W(N)
      INTEGER NSTEP
      REAL DT, TOTAL
      COMMON /FIELD1/ H, Q
      COMMON /FIELD2/ P, PNEW
      COMMON /STATE/ T, EMAX, NMAX
      COMMON /CTRL/ DT, NSTEP, TOTAL
      COMMON W
!HPF$ DISTRIBUTE H(BLOCK)
!HPF$ ALIGN Q(I) WITH H(I)
!HPF$ DISTRIBUTE P(*, BLOCK)
!HPF$ ALIGN PNEW(I, J) WITH P(I, J)
!HPF$ DISTRIBUTE T(CYCLIC)
!HPF$ DISTRIBUTE W(BLOCK)
      INTEGER I, J
      DT = 0.2
      NSTEP = 12
      TOTAL = 0.0
      EMAX = 0.0
      NMAX = 0
      DO 10 I = 1, N
         H(I) = 1.0 + REAL(MOD(5*I, 7)) / 7.0
         Q(I) = 0.0
         T(I) = REAL(MOD(3*I, 11))
         W(I) = 0.0
   10 CONTINUE
      DO 20 J = 1, N
         DO 20 I = 1, M
            P(I, J) = REAL(I + 2*J) / REAL(N)
            PNEW(I, J) = 0.0
   20 CONTINUE
      END

C     The 1-D stencil: it names the fields of /FIELD1/ HH and QQ.
      SUBROUTINE FLUX
      INTEGER N
      PARAMETER (N = 40)
      REAL HH(N), QQ(N)
      INTEGER NSTEP
      REAL DT, TOTAL
      COMMON /FIELD1/ HH, QQ
      COMMON /CTRL/ DT, NSTEP, TOTAL
!HPF$ DISTRIBUTE HH(BLOCK)
!HPF$ ALIGN QQ(I) WITH HH(I)
      INTEGER I
      DO 10 I = 2, N-1
         QQ(I) = HH(I) + DT * (HH(I-1) - 2.0*HH(I) + HH(I+1))
   10 CONTINUE
      DO 20 I = 2, N-1
         HH(I) = QQ(I)
   20 CONTINUE
      HH(1) = HH(2)
      HH(N) = HH(N-1)
      END

C     The 2-D stencil on the columns of P.
      SUBROUTINE SMOOTH
      INTEGER N, M
      PARAMETER (N = 40, M = 10)
      REAL P(M, N), PNEW(M, N)
      COMMON /FIELD2/ P, PNEW
!HPF$ DISTRIBUTE P(*, BLOCK)
!HPF$ ALIGN PNEW(I, J) WITH P(I, J)
      INTEGER I, J
      DO 10 J = 2, N-1
         DO 10 I = 2, M-1
            PNEW(I, J) = 0.25 * (P(I-1, J) + P(I+1, J)
     &                 + P(I, J-1) + P(I, J+1))
   10 CONTINUE
      DO 20 J = 2, N-1
         DO 20 I = 2, M-1
            P(I, J) = PNEW(I, J)
   20 CONTINUE
      END

C     Sources: T decays, W gathers what H loses at its maximum.
      SUBROUTINE HEAT
      INTEGER N
      PARAMETER (N = 40)
      REAL T(N), EMAX
      INTEGER NMAX
      DIMENSION H(N), Q(N), W(N)
      COMMON /FIELD1/ H, Q
      COMMON /STATE/ T, EMAX, NMAX
      COMMON W
!HPF$ DISTRIBUTE H(BLOCK)
!HPF$ ALIGN Q(I) WITH H(I)
!HPF$ DISTRIBUTE T(CYCLIC)
!HPF$ DISTRIBUTE W(BLOCK)
      INTEGER I
      DO 10 I = 1, N
         T(I) = 0.9 * T(I) + 0.1 * H(I)
         W(I) = W(I) + 0.5 * Q(I)
   10 CONTINUE
      END

      SUBROUTINE DIAG
      INTEGER N, M
      PARAMETER (N = 40, M = 10)
      REAL H(N), Q(N)
      REAL P(M, N), PNEW(M, N)
      REAL T(N), EMAX
      INTEGER NMAX
      INTEGER NSTEP
      REAL DT, TOTAL
      COMMON /FIELD1/ H, Q
      COMMON /FIELD2/ P, PNEW
      COMMON /STATE/ T, EMAX, NMAX
      COMMON /CTRL/ DT, NSTEP, TOTAL
!HPF$ DISTRIBUTE H(BLOCK)
!HPF$ ALIGN Q(I) WITH H(I)
!HPF$ DISTRIBUTE P(*, BLOCK)
!HPF$ ALIGN PNEW(I, J) WITH P(I, J)
!HPF$ DISTRIBUTE T(CYCLIC)
      TOTAL = SUM(H) + SUM(P) / REAL(M)
      EMAX = MAXVAL(T)
      NMAX = MAXLOC(H, 1)
      END
