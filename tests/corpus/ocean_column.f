C     3-D field on a 3-D template with 2-D and 1-D arrays embedded:
C     ALIGN SURF(I,J) WITH T3(I,J,1), ALIGN DZ(K) WITH T3(*,*,K),
C     (BLOCK,BLOCK,*) distribution; vertical integrals of a column.
      PROGRAM OCEAN
      INTEGER NX, NY, NZ
      PARAMETER (NX = 12, NY = 12, NZ = 8)
      REAL TEMP(NX,NY,NZ), SURF(NX,NY), HEAT(NX,NY), DZ(NZ)
      INTEGER I, J, K
!HPF$ PROCESSORS P(2,2)
!HPF$ TEMPLATE T3(NX,NY,NZ)
!HPF$ DISTRIBUTE T3(BLOCK,BLOCK,*) ONTO P
!HPF$ ALIGN TEMP(I,J,K) WITH T3(I,J,K)
!HPF$ ALIGN SURF(I,J) WITH T3(I,J,1)
!HPF$ ALIGN HEAT(I,J) WITH T3(I,J,*)
!HPF$ ALIGN DZ(K) WITH T3(*,*,K)
      DO 10 K = 1, NZ
         DZ(K) = REAL(K) * 0.5
   10 CONTINUE
      DO 20 K = 1, NZ
      DO 20 J = 1, NY
      DO 20 I = 1, NX
         TEMP(I,J,K) = 20.0 - 2.0 * REAL(K) + 0.1 * REAL(MOD(I*J, 7))
   20 CONTINUE
!HPF$ INDEPENDENT, NEW(K)
      DO 40 J = 1, NY
         DO 40 I = 1, NX
            SURF(I,J) = TEMP(I,J,1)
            HEAT(I,J) = 0.0
            DO 30 K = 1, NZ
               HEAT(I,J) = HEAT(I,J) + TEMP(I,J,K) * DZ(K)
   30       CONTINUE
   40 CONTINUE
      WRITE (*, '(A,F10.3)') ' MEAN SURF =', SUM(SURF) / (NX * NY)
      WRITE (*, '(A,F10.3)') ' MAX HEAT  =', MAXVAL(HEAT)
      WRITE (*, '(A,F10.3)') ' MIN HEAT  =', MINVAL(HEAT)
      WRITE (*, '(A,I5)')    ' WARM COLS =', COUNT(HEAT .GT. 162.0)
      END
