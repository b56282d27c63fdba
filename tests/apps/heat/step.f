      SUBROUTINE STEP(TEMP, TNEW)
C     One explicit step of the five-point stencil, then the copy back.
      INCLUDE 'dims.h'
      REAL TEMP(N,N), TNEW(N,N)
!HPF$ INHERIT TEMP, TNEW
      INTEGER I, J
!HPF$ INDEPENDENT, NEW(I)
      DO 20 J = 2, N - 1
         DO 10 I = 2, N - 1
            TNEW(I,J) = TEMP(I,J) + 0.2 * (TEMP(I-1,J) + TEMP(I+1,J)
     &                + TEMP(I,J-1) + TEMP(I,J+1) - 4.0 * TEMP(I,J))
   10    CONTINUE
   20 CONTINUE
!HPF$ INDEPENDENT, NEW(I)
      DO 40 J = 2, N - 1
         DO 30 I = 2, N - 1
            TEMP(I,J) = TNEW(I,J)
   30    CONTINUE
   40 CONTINUE
      END
