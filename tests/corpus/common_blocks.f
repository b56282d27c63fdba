C     F77-style shared state in COMMON blocks across a main program and
C     its subroutines: parameters set by a BLOCK DATA and by a routine that
C     prints (it runs on rank 0, then its blocks are broadcast), a monitor
C     whose COMMON flag ends the time loop, blank COMMON, IMPLICIT DOUBLE
C     PRECISION for the distributed arrays (DIMENSION only) and the
C     replicated variables, and a GO TO time loop.
      PROGRAM OCEAN
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      PARAMETER (N = 20)
      DIMENSION U(N), V(N)
      LOGICAL LSTOP
      COMMON /PARAMS/ DT, VISC, NSTEPS
      COMMON /STATS/ UMAX, ISTEP, NCALLS, LSTOP
      COMMON TOTAL, HIST(4)
!HPF$ DISTRIBUTE U(BLOCK)
!HPF$ ALIGN V(I) WITH U(I)
      CALL SETUP
      DO 10 I = 1, N
         U(I) = DBLE(MOD(7*I, 11)) / DBLE(N)
         V(I) = 0.0D0
   10 CONTINUE
      ISTEP = 0
   20 CONTINUE
      ISTEP = ISTEP + 1
      IF (ISTEP .GT. NSTEPS) GO TO 30
      DO 25 I = 2, N-1
         V(I) = U(I) + DT * VISC * (U(I-1) - 2.0D0*U(I) + U(I+1))
   25 CONTINUE
      DO 26 I = 2, N-1
         U(I) = V(I)
   26 CONTINUE
      CALL DIAG(U)
      CALL MONITOR
      IF (LSTOP) GO TO 30
      GO TO 20
   30 CONTINUE
      WRITE (*, '(A,2I3,2F14.8)') ' END', ISTEP, NCALLS, UMAX, TOTAL
      WRITE (*, '(4F12.6)') HIST
      WRITE (*, '(A,F12.8)') ' ENERGY', ENERGY(U, N)
      END

      SUBROUTINE SETUP
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      COMMON /PARAMS/ DT, VISC, NSTEPS
      COMMON TOTAL, HIST(4)
      DT = DT * 2.0D0
      NSTEPS = 9
      TOTAL = 0.0D0
      DO 5 K = 1, 4
         HIST(K) = 0.0D0
    5 CONTINUE
      WRITE (*, '(A,2F8.4,I4)') ' SETUP', DT, VISC, NSTEPS
      END

      SUBROUTINE DIAG(U)
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      PARAMETER (N = 20)
      DIMENSION U(N)
      LOGICAL LSTOP
!HPF$ INHERIT U
      COMMON /STATS/ UMAX, ISTEP, NCALLS, LSTOP
      COMMON TOTAL, HIST(4)
      UMAX = MAXVAL(U)
      TOTAL = TOTAL + UMAX
      HIST(MOD(ISTEP, 4) + 1) = UMAX
      WRITE (*, '(A,I3,F12.8)') ' STEP', ISTEP, UMAX
      END

C     Runs on rank 0 (it prints); what it sets in /STATS/ is broadcast.
      SUBROUTINE MONITOR
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      LOGICAL LSTOP
      COMMON /STATS/ UMAX, ISTEP, NCALLS, LSTOP
      NCALLS = NCALLS + 1
      LSTOP = NCALLS .GE. 6
      IF (LSTOP) WRITE (*, '(A,I3)') ' MONITOR STOPS AT', ISTEP
      END

      DOUBLE PRECISION FUNCTION ENERGY(U, N)
      INTEGER N, I
      DOUBLE PRECISION U(N)
!HPF$ INHERIT U
      ENERGY = 0.0D0
      DO 40 I = 1, N
         ENERGY = ENERGY + U(I) * U(I)
   40 CONTINUE
      END

      BLOCK DATA INIT
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      LOGICAL LSTOP
      COMMON /PARAMS/ DT, VISC, NSTEPS
      COMMON /STATS/ UMAX, ISTEP, NCALLS, LSTOP
      DATA DT, VISC, NSTEPS / 0.05D0, 0.8D0, 3 /
      DATA NCALLS, LSTOP / 0, .FALSE. /
      END
