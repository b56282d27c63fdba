C     expect: fixed-form directive continuation errors (see below)
C     (continuation with nothing to continue; a Fortran statement inside
C     a continued directive; a directive truncated at column 72)
      PROGRAM FIXERR
      INTEGER N
      PARAMETER (N = 16)
      REAL A(N), B(N), C(N)
      INTEGER I
CHPF$ PROCESSORS P(4)
C     error: column-6 continuation mark but no directive to continue
CHPF$+   ONTO P
C     error: continued directive interrupted by a Fortran statement
CHPF$ DISTRIBUTE A(BLOCK) ONTO
      I = 0
CHPF$*   P
C     error: continued ALIGN ends with a dangling WITH
CHPF$ ALIGN B(I)
CHPF$+   WITH
C     error: text past column 72 is ignored, so this ends at "ONTO"
CHPF$ DISTRIBUTE C(CYCLIC)                                        ONTO  P
      DO 10 I = 1, N
         A(I) = REAL(I)
         B(I) = A(I)
         C(I) = B(I)
   10 CONTINUE
      PRINT '(F8.1)', SUM(C)
      END
