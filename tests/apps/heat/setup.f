      SUBROUTINE SETUP(TEMP, TNEW)
C     A hot edge and a warm spot, zero elsewhere.
      INCLUDE 'dims.h'
      REAL TEMP(N,N), TNEW(N,N)
!HPF$ INHERIT TEMP, TNEW
      INTEGER I, J
!HPF$ INDEPENDENT, NEW(I)
      DO 20 J = 1, N
         DO 10 I = 1, N
            TEMP(I,J) = 0.0
            IF (I .EQ. 1) TEMP(I,J) = 100.0
            IF (ABS(I - N/2) + ABS(J - N/3) .LT. 4) TEMP(I,J) = 50.0
            TNEW(I,J) = TEMP(I,J)
   10    CONTINUE
   20 CONTINUE
      END
