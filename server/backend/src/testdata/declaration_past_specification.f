!     NPB sinlayHintProvidertyle fixed form: !HPF$+ and !hpf$x continuation marks,
!     foreign sentinels (CDVM$, C$OMP, !$omp) passed through; a 1-D
!     flux RHS with fourth-order dissipation (I-2..I+2, SHADOW 2).
      PROGRAM NPBRHS
      INTEGER N
      PARAMETER (N = 32)
      DOUBLE NPBRHS
      INTEGER N
   !HPF$ ALIGN A(I) WITH T(I+1)
   PARAMETER (N = 32)
      DOUBLE PRECISION U(N), V(N), FLUX(N), RHS(N), DSSP
      INTEGER I
!HPF$ PROCESSORS PROCS(4)
!HPF$ TEMPLATE GRID(N)
!HPF$ DISTRIBUTE GRID(BLOCK)
!HPF$+   ONTO PROCS
!hpf$ align (:) with grid(:) ::
!hpf$x      u, v, flux,
!hpf$x      rhs
!HPF$ SHADOW U(2:2)
CDVM$ DISTRIBUTE U(BLOCK)
CDVM$ ALIGN V(I) WITH U(I)
      DSSP = 0.25D0
      DO 10 I = 1, N
         U(I) = 1.0D0 + 0.5D0 * DBLE(MOD(I * 5, 8)) / 8.0D0
         V(I) = DBLE(I) / DBLE(N)
   10 CONTINUE
C$OMP PARALLEL DO
!HPF$ INDEPENDENT
      DO 20 I = 1, N
         FLUX(I) = U(I) * V(I)
   20 CONTINUE
C$OMP END PARALLEL DO
      RHS(1) = 0.0D0
      RHS(2) = 0.0D0
      RHS(N-1) = 0.0D0
      RHS(N) = 0.0D0
!$omp parallel do
!HPF$ INDEPENDENT
      DO 30 I = 3, N-2
         RHS(I) = -0.5D0 * (FLUX(I+1) - FLUX(I-1))
     &          - DSSP * (U(I-2) - 4.0D0*U(I-1) + 6.0D0*U(I)
     &                    - 4.0D0*U(I+1) + U(I+2))
   30 CONTINUE
      WRITE (*, '(A,F14.8)') ' SUM(RHS)  =', SUM(RHS)
      WRITE (*, '(A,F14.8)') ' MAX(RHS)  =', MAXVAL(RHS)
      WRITE (*, '(A,F14.8)') ' RHS(16)   =', RHS(16)
      END
