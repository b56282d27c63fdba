C     Fixed form with sequence numbers in columns 73-80 on every line   HEAT0010
C     (card-deck style), comment lines in C, c and * styles, statement  HEAT0020
C     continuation with '1' and '+' in column 6; explicit 1-D heat flow.HEAT0030
c     lower-case c comment line                                         HEAT0040
*     asterisk comment line                                             HEAT0050
      PROGRAM HEATSQ                                                    HEAT0060
      INTEGER N, NSTEP                                                  HEAT0070
      PARAMETER (N = 24, NSTEP = 30)                                    HEAT0080
      DOUBLE PRECISION U(0:N+1), UN(0:N+1), R, TOTAL                    HEAT0090
      INTEGER I, K                                                      HEAT0100
!HPF$ PROCESSORS P(4)                                                   HEAT0110
!HPF$ TEMPLATE T(0:N+1)                                                 HEAT0120
!HPF$ DISTRIBUTE T(BLOCK) ONTO P                                        HEAT0130
!HPF$ ALIGN U(I) WITH T(I)                                              HEAT0140
!HPF$ ALIGN UN(I) WITH T(I)                                             HEAT0150
      R = 0.4D0                                                         HEAT0160
      DO 10 I = 0, N+1                                                  HEAT0170
         U(I) = 0.0D0                                                   HEAT0180
   10 CONTINUE                                                          HEAT0190
      U(N/2) = 100.0D0                                                  HEAT0200
      U(N/2+1) = 100.0D0                                                HEAT0210
      DO 30 K = 1, NSTEP                                                HEAT0220
!HPF$ INDEPENDENT                                                       HEAT0230
         DO 20 I = 1, N                                                 HEAT0240
            UN(I) = U(I) + R * (U(I-1)                                  HEAT0250
     1            - 2.0D0 * U(I)                                        HEAT0260
     +            + U(I+1))                                             HEAT0270
   20    CONTINUE                                                       HEAT0280
         DO 25 I = 1, N                                                 HEAT0290
            U(I) = UN(I)                                                HEAT0300
   25    CONTINUE                                                       HEAT0310
   30 CONTINUE                                                          HEAT0320
      TOTAL = 0.0D0                                                     HEAT0330
      DO 40 I = 1, N                                                    HEAT0340
         TOTAL = TOTAL + U(I)                                           HEAT0350
   40 CONTINUE                                                          HEAT0360
      WRITE (*, '(A,F12.6)') ' U(N/2) =', U(N/2)                        HEAT0370
      WRITE (*, '(A,F12.6)') ' U(1)   =', U(1)                          HEAT0380
      WRITE (*, '(A,F12.6)') ' TOTAL  =', TOTAL                         HEAT0390
      END                                                               HEAT0400
