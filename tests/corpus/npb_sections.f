!     NPB style fixed form (BT/SP/LU): the fields in COMMON blocks,
!     subroutines that assign the component dimension as sections
!     inside DO nests (RHS(:, I, J, K) = ...), continued statements,
!     a dummy argument, and a recurrence along K on a 2-D grid.
      PROGRAM NPBSEC
      IMPLICIT NONE
      INTEGER NX, NY, NZ, NC
      PARAMETER (NX = 6, NY = 5, NZ = 8, NC = 5)
      DOUBLE PRECISION U(NC, NX, NY, NZ), RHS(NC, NX, NY, NZ),
     &                 FORCE(NC, NX, NY, NZ)
      DOUBLE PRECISION Q(NX, NY, NZ), DT, DSSP, CE(NC)
      COMMON /FIELDS/ U, RHS, FORCE
      COMMON /GRID2/ Q
      COMMON /CONSTS/ DT, DSSP, CE
      INTEGER STEP
!HPF$ PROCESSORS P(4)
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE U(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE RHS(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE FORCE(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE Q(BLOCK, BLOCK, *) ONTO G
      CALL SETUP
      DO 10 STEP = 1, 3
         CALL CMPRHS
         CALL ADDRHS
         CALL SWEEPQ
   10 CONTINUE
      CALL SCALE(RHS, 0.5D0)
      WRITE (*, '(A, ES24.15)') ' SUM(U)   =', SUM(U)
      WRITE (*, '(A, ES24.15)') ' SUM(RHS) =', SUM(RHS)
      WRITE (*, '(A, 5F12.6)') ' U(:,3,3,4) =', U(:, 3, 3, 4)
      WRITE (*, '(A, ES24.15)') ' SUM(Q)   =', SUM(Q)
      WRITE (*, '(A, 5F12.6)') ' Q(2,:,8)  =', Q(2, :, 8)
      END

      SUBROUTINE SETUP
      IMPLICIT NONE
      INTEGER NX, NY, NZ, NC
      PARAMETER (NX = 6, NY = 5, NZ = 8, NC = 5)
      DOUBLE PRECISION U(NC, NX, NY, NZ), RHS(NC, NX, NY, NZ),
     &                 FORCE(NC, NX, NY, NZ)
      DOUBLE PRECISION Q(NX, NY, NZ), DT, DSSP, CE(NC)
      COMMON /FIELDS/ U, RHS, FORCE
      COMMON /GRID2/ Q
      COMMON /CONSTS/ DT, DSSP, CE
      INTEGER I, J, K, M
!HPF$ PROCESSORS P(4)
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE U(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE RHS(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE FORCE(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE Q(BLOCK, BLOCK, *) ONTO G
      DT = 0.05D0
      DSSP = 0.25D0
      DO 5 M = 1, NC
         CE(M) = 1.0D0 / DBLE(M + 1)
    5 CONTINUE
      DO 30 K = 1, NZ
         DO 20 J = 1, NY
            DO 15 I = 1, NX
               DO 12 M = 1, NC
                  U(M, I, J, K) = DBLE(MOD(I + 2 * J + 3 * K + M, 7))
     &                            * 0.125D0 + 1.0D0
   12          CONTINUE
               FORCE(:, I, J, K) = CE * DBLE(I - J) * 0.01D0
               RHS(:, I, J, K) = 0.0D0
               Q(I, J, K) = DBLE(MOD(I * 3 + J * 5 + K, 11)) * 0.1D0
   15       CONTINUE
   20    CONTINUE
   30 CONTINUE
      END

      SUBROUTINE CMPRHS
      IMPLICIT NONE
      INTEGER NX, NY, NZ, NC
      PARAMETER (NX = 6, NY = 5, NZ = 8, NC = 5)
      DOUBLE PRECISION U(NC, NX, NY, NZ), RHS(NC, NX, NY, NZ),
     &                 FORCE(NC, NX, NY, NZ)
      DOUBLE PRECISION DT, DSSP, CE(NC)
      COMMON /FIELDS/ U, RHS, FORCE
      COMMON /CONSTS/ DT, DSSP, CE
      INTEGER I, J, K
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE U(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE RHS(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE FORCE(*, *, *, BLOCK) ONTO P
      DO 30 K = 2, NZ - 1
         DO 20 J = 2, NY - 1
            DO 10 I = 2, NX - 1
               RHS(:, I, J, K) = FORCE(:, I, J, K)
     &              - DSSP * (U(:, I, J, K-1)
     &              - 2.0D0 * U(:, I, J, K) + U(:, I, J, K+1))
     &              + CE * (U(:, I+1, J, K) - U(:, I-1, J, K))
     &              - 0.5D0 * (U(1:NC, I, J+1, K)
     &                         - U(1:NC, I, J-1, K))
   10       CONTINUE
   20    CONTINUE
   30 CONTINUE
      END

      SUBROUTINE ADDRHS
      IMPLICIT NONE
      INTEGER NX, NY, NZ, NC
      PARAMETER (NX = 6, NY = 5, NZ = 8, NC = 5)
      DOUBLE PRECISION U(NC, NX, NY, NZ), RHS(NC, NX, NY, NZ),
     &                 FORCE(NC, NX, NY, NZ)
      DOUBLE PRECISION DT, DSSP, CE(NC)
      COMMON /FIELDS/ U, RHS, FORCE
      COMMON /CONSTS/ DT, DSSP, CE
      INTEGER I, J, K
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE U(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE RHS(*, *, *, BLOCK) ONTO P
!HPF$ DISTRIBUTE FORCE(*, *, *, BLOCK) ONTO P
      DO 30 K = 2, NZ - 1
         DO 20 J = 2, NY - 1
            DO 10 I = 2, NX - 1
               U(:, I, J, K) = U(:, I, J, K) + DT * RHS(:, I, J, K)
   10       CONTINUE
   20    CONTINUE
   30 CONTINUE
      END

      SUBROUTINE SWEEPQ
      IMPLICIT NONE
      INTEGER NX, NY, NZ
      PARAMETER (NX = 6, NY = 5, NZ = 8)
      DOUBLE PRECISION Q(NX, NY, NZ)
      COMMON /GRID2/ Q
      INTEGER K
!HPF$ PROCESSORS G(2, 2)
!HPF$ DISTRIBUTE Q(BLOCK, BLOCK, *) ONTO G
      DO 10 K = 2, NZ
         Q(:, :, K) = Q(:, :, K) + 0.5D0 * Q(:, :, K-1)
   10 CONTINUE
      DO 20 K = NZ - 1, 1, -1
         Q(2:NX-1, :, K) = Q(2:NX-1, :, K) - 0.25D0 * Q(2:NX-1, :, K+1)
   20 CONTINUE
      END

      SUBROUTINE SCALE(W, F)
      IMPLICIT NONE
      INTEGER NX, NY, NZ, NC
      PARAMETER (NX = 6, NY = 5, NZ = 8, NC = 5)
      DOUBLE PRECISION W(NC, NX, NY, NZ), F
      INTEGER J, K
!HPF$ PROCESSORS P(4)
!HPF$ DISTRIBUTE W(*, *, *, BLOCK) ONTO P
      DO 20 K = 1, NZ
         DO 10 J = 1, NY
            W(:, :, J, K) = F * W(:, :, J, K)
   10    CONTINUE
   20 CONTINUE
      END
