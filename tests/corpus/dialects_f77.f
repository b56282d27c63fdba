C     An F77-era HPF code in the dialects of its compilers: CHPF$ lines,
C     DISTRIBUTE without a format, several alignees in one ALIGN,
C     INDEPENDENT NEW without the comma, an ONHOME clause, PURE EXTRINSIC
C     (HPF_LOCAL) procedures, spaced operators and keywords, REAL*8,
C     DOUBLE COMPLEX, a BOZ constant, a Hollerith FORMAT and a timer.
      PROGRAM DIALEC
      INTEGER N
      PARAMETER (N = 32)
      REAL U(N), V(N), W(N)
      INTEGER IDX(N), ISQ(N)
      REAL*8 ENERGY
      DOUBLE PRECISION T0, T1
      DOUBLE COMPLEX ZSUM
      INTEGER MASK, I, K, ITER, NBIG
      REAL SQR
      EXTERNAL SQR
      DATA MASK /Z'0F'/
CHPF$ PROCESSORS PROCS(4)
CHPF$ TEMPLATE TT(N)
CHPF$ DISTRIBUTE TT ONTO PROCS
CHPF$ ALIGN U(I), V(I) WITH TT(I)
CHPF$ ALIGN W, IDX, ISQ WITH TT
      CALL WTIME(T0)
      DO 10 I = 1, N
         U(I) = 0.25 * MOD(I * 7, 13)
         V(I) = 0.0
         W(I) = 0.0
         IDX(I) = I
   10 CONTINUE
      ITER = 0
   20 CONTINUE
      ITER = ITER + 1
!HPF$ INDEPENDENT NEW(K)
      DO 30 I = 2, N - 1
         K = I
         V(K) = (U(K - 1) + U(K + 1)) * 0.5
   30 CONTINUE
!HPF$ INDEPENDENT, ONHOME(U(I))
      DO 40 I = 2, N - 1
         U(I) = V(I)
   40 CONTINUE
      IF (ITER . LT . 4) G O TO 20
!HPF$ INDEPENDENT
      DO 50 I = 1, N
         W(I) = SQR(U(I))
         ISQ(I) = IAND(IDX(I), MASK)
   50 CONTINUE
      ENERGY = 0.0D0
      NBIG = 0
      DO 60 I = 1, N
         ENERGY = ENERGY + W(I)
         IF (W (I) . GT . 0.5 .AND. ISQ(I) . NE . 0) NBIG = NB IG + 1
   60 CONTINUE
      ZSUM = (0.0D0, 0.0D0)
      DO 70 I = 1, N, 8
         ZSUM = ZSUM + DCMPLX(DBLE(U(I)), DBLE(ISQ(I)))
   70 CONTINUE
      CALL WTIME(T1)
      PRINT 100, ENERGY, NBIG
  100 FORMAT (9HENERGY = , F12.6, 8H  BIG = , I4)
      PRINT 110, DBLE(ZSUM), DIMAG(ZSUM)
  110 FORMAT (7HZSUM = , 2F10.4)
      PRINT 120, (U(I), I = 1, 4)
  120 FORMAT (4HU = , 4F9.4)
      IF (T1 . LT . T0) PRINT *, 'CLOCK WENT BACKWARDS'
      E N D
C     The square of a value: run on each process's own data.
      PURE EXTRINSIC (HPF_LOCAL) REAL FUNCTION SQR(X)
      REAL X
      INTENT(IN) X
      SQR = X * X
      END
C     Elapsed seconds, from SYSTEM_CLOCK.
      SUBROUTINE WTIME(T)
      DOUBLE PRECISION T
      INTEGER COUNT, RATE
      CALL SYSTEM_CLOCK(COUNT, RATE)
      T = DBLE(COUNT) / DBLE(MAX(RATE, 1))
      END
