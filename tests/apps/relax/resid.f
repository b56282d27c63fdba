      SUBROUTINE RESID(RES)
C     The largest change a sweep would still make.
      INCLUDE 'grid.h'
      REAL RES
      INTEGER I, J
      RES = 0.0
      DO 20 J = 2, N - 1
         DO 10 I = 2, N - 1
            RES = MAX(RES, ABS(0.25 * (U(I-1,J) + U(I+1,J)
     &                + U(I,J-1) + U(I,J+1)) - U(I,J)))
   10    CONTINUE
   20 CONTINUE
      END
