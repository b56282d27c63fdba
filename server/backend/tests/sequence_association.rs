//! F77 sequence association (an element passed as the start of an array
//! dummy): an element of a replicated array is lowered as the sequential
//! program passes it, a CALL with an element of a distributed array runs on
//! rank 0 on a gathered copy, and a function reference with one is refused
//! at the argument, never turned into a call the compiler rejects.

use analysis::ModelConfig;
use syntax::{LineIndex, SourceForm};

const PROGRAM: &str = r"      PROGRAM SEQA
      INTEGER N
      PARAMETER (N = 16)
      REAL A(N), R(N), AMIN, REDMIN
      EXTERNAL REDMIN
!HPF$ DISTRIBUTE A(BLOCK)
      INTEGER I
      DO 10 I = 1, N
         A(I) = I
         R(I) = I
   10 CONTINUE
      AMIN = REDMIN(R(3), 1, N - 2)
      CALL SCALE(R(1), N)
      AMIN = REDMIN(A, 1, N)
      PRINT *, AMIN, R(N)
      END
      REAL FUNCTION REDMIN(X, LO, HI)
      INTEGER LO, HI, I
      REAL X(*)
      REDMIN = X(LO)
      DO 20 I = LO, HI
         REDMIN = MIN(REDMIN, X(I))
   20 CONTINUE
      END
      SUBROUTINE SCALE(Y, M)
      INTEGER M, I
      REAL Y(M)
      DO 30 I = 1, M
         Y(I) = 2 * Y(I)
   30 CONTINUE
      END
";

/// The backend's errors as `line:column: message`.
fn errors(text: &str) -> Vec<String> {
    let analysis = analysis::analyze(text, SourceForm::FIXED, ModelConfig { number_of_processors: Some(4) });
    let index = LineIndex::new(text);
    match backend::lower(&analysis, text) {
        Ok(_) => Vec::new(),
        Err(errors) => errors
            .iter()
            .map(|it| {
                let (line, column) = index.line_col(text, it.range.start);
                format!("{}:{}: {}", line + 1, column + 1, it.message)
            })
            .collect(),
    }
}

#[test]
fn elements_of_replicated_arrays_and_whole_distributed_arrays_are_lowered() {
    // `CALL SCALE(A(1), N)` with A distributed: rank 0, gathered copy.
    assert_eq!(errors(&PROGRAM.replace("CALL SCALE(R(1), N)", "CALL SCALE(A(1), N)")), Vec::<String>::new());
    assert_eq!(errors(PROGRAM), Vec::<String>::new());
}

#[test]
fn an_element_of_a_distributed_array_is_refused_at_a_function_reference() {
    let text = PROGRAM
        .replace("AMIN = REDMIN(A, 1, N)", "AMIN = REDMIN(A(2), 1, N-1)")
        .replace("CALL SCALE(R(1), N)", "CALL SCALE(A(1), N)");
    assert_eq!(
        errors(&text),
        ["14:21: `A(2)` is an element of the distributed array `A`, passed to the array dummy `X` of `REDMIN` \
             (sequence association: the rest of the array from there), which the MPI backend does not support; \
             pass a section, such as `A(2:)`, or the whole array",]
    );
}
