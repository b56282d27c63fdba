      SUBROUTINE INIT
C     Boundary values on the edges, zero inside.
      INCLUDE 'grid.h'
      INTEGER I, J
!HPF$ INDEPENDENT, NEW(I)
      DO 20 J = 1, N
         DO 10 I = 1, N
            U(I,J) = 0.0
            IF (I .EQ. 1) U(I,J) = 1.0
            IF (J .EQ. 1) U(I,J) = 0.5 + REAL(I) / REAL(N)
            UNEW(I,J) = U(I,J)
   10    CONTINUE
   20 CONTINUE
      END
