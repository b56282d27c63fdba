      SUBROUTINE SWEEP
C     One Jacobi sweep: the average of the four neighbours (INDEPENDENT
C     NEW without the comma, and an ON HOME clause, as the dialects wrote).
      INCLUDE 'grid.h'
      INTEGER I, J
!HPF$ INDEPENDENT NEW(I)
      DO 20 J = 2, N - 1
         DO 10 I = 2, N - 1
            UNEW(I,J) = 0.25 * (U(I-1,J) + U(I+1,J)
     &                        + U(I,J-1) + U(I,J+1))
   10    CONTINUE
   20 CONTINUE
!HPF$ INDEPENDENT, NEW(I)
      DO 40 J = 2, N - 1
!HPF$ INDEPENDENT, ON HOME(U(I,J))
         DO 30 I = 2, N - 1
            U(I,J) = UNEW(I,J)
   30    CONTINUE
   40 CONTINUE
      END
