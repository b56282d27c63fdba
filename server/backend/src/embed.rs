//! Alignments that change rank: which dimensions of an array are
//! distributed, once its ALIGN chain is followed to the final target.
//!
//! - A collapsed dimension of the alignee (`ALIGN A(I,*) WITH T(I)`, or a
//!   dimension that maps to a `*` axis of the target) is held whole by the
//!   owner of its other subscripts: it is a `*` dimension of the array.
//! - A constant in the target (`ALIGN U(I) WITH T(I,3)`) or a replicated
//!   target axis (`ALIGN X(J) WITH T(*,J)`) along a target axis that is not
//!   distributed changes nothing: the array is cut like an ordinary
//!   alignment along the distributed axes it maps to.
//! - Along a distributed axis, a replicated subscript means copies on
//!   every process of that axis, and a constant means the processes holding
//!   that template cell. When the array maps to no distributed axis at all,
//!   it is replicated (`X(J) WITH W(*,J)`, `W(BLOCK,*)`: a copy on every
//!   process, which is exactly HPF's mapping; an embedded constant there is
//!   held by every process instead of the cell's owner, a note says so). On
//!   a 2-D grid where the array maps to one distributed axis and is
//!   replicated or embedded along the other, the backend keeps a whole copy
//!   on every process too (a note says so). Replicated arrays stay
//!   consistent as every replicated variable does: every process runs the
//!   statements that write them, or rank 0 runs them on gathered copies and
//!   broadcasts what they wrote.

use analysis::model::{Axis, Format, ResolvedMapping};

/// Where the elements of an array live.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Cut along the target's distributed axes: per distributed axis (in the
    /// target's order) the array dimension that maps to it (0-based), the
    /// axis, and the alignment offset (stride 1).
    Distributed(Vec<(usize, usize, i64)>),
    /// A whole copy on every process; with a note when HPF would keep it on
    /// fewer processes.
    Replicated(Option<String>),
}

/// The placement of the array `name` whose chain resolves to `resolved`,
/// on a target distributed by `formats`, or why the backend refuses it.
pub(crate) fn placement(name: &str, resolved: &ResolvedMapping, formats: &[Format]) -> Result<Placement, String> {
    let mut dims: Vec<(usize, usize, i64)> = Vec::new();
    // The distributed axes the array is embedded in (constant) or replicated along.
    let mut embedded: Vec<usize> = Vec::new();
    let mut replicated: Vec<usize> = Vec::new();
    for (axis, format) in formats.iter().enumerate() {
        if *format == Format::Collapsed {
            continue;
        }
        match resolved.axes.get(axis).copied().unwrap_or(Axis::Unknown) {
            Axis::Affine { source_dim, stride: 1, offset } => dims.push((source_dim, axis, offset)),
            Axis::Affine { .. } => {
                return Err(format!(
                    "`{name}`: only alignments of stride 1 without transposition are supported by the MPI backend yet"
                ))
            }
            Axis::Constant(_) => embedded.push(axis),
            Axis::Replicated => replicated.push(axis),
            Axis::Unknown => {
                return Err(format!(
                    "`{name}`: its alignment subscript along a distributed dimension of the target is not known at compile time"
                ))
            }
        }
    }
    // The array's distributed dimensions in the order of the target's axes.
    if dims.windows(2).any(|it| it[0].0 >= it[1].0) {
        return Err(format!(
            "`{name}`: only alignments of stride 1 without transposition are supported by the MPI backend yet"
        ));
    }
    if embedded.is_empty() && replicated.is_empty() {
        return Ok(Placement::Distributed(dims));
    }
    let axes = |list: &[usize]| list.iter().map(|it| (it + 1).to_string()).collect::<Vec<_>>().join(" and ");
    let note = if dims.is_empty() && embedded.is_empty() {
        // Replicated along every distributed axis: HPF's own mapping.
        None
    } else if dims.is_empty() {
        Some(format!(
            "`{name}` is aligned with a constant subscript along the distributed dimension {} of its target: the MPI backend keeps a copy on every process (not only on the owner of that template cell), kept consistent like every replicated variable",
            axes(&embedded[..])
        ))
    } else {
        let what = match (embedded.is_empty(), replicated.is_empty()) {
            (false, true) => format!("a constant subscript along the distributed dimension {}", axes(&embedded[..])),
            (true, false) => format!("`*` along the distributed dimension {}", axes(&replicated[..])),
            _ => format!(
                "a constant subscript along the distributed dimension {} and `*` along {}",
                axes(&embedded[..]),
                axes(&replicated[..])
            ),
        };
        Some(format!(
            "`{name}` is aligned with {what} of its target and distributed along the other: the MPI backend does not cut such arrays yet and keeps a whole copy on every process, kept consistent like every replicated variable"
        ))
    };
    Ok(Placement::Replicated(note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::model::SymbolId;

    fn resolved(axes: Vec<Axis>) -> ResolvedMapping {
        ResolvedMapping { target: SymbolId { unit: 0, index: 0 }, axes }
    }

    fn affine(source_dim: usize, offset: i64) -> Axis {
        Axis::Affine { source_dim, stride: 1, offset }
    }

    #[test]
    fn collapsed_dimension_of_the_alignee() {
        // ALIGN A(I,*) WITH R(I), R(BLOCK)
        let placed = placement("a", &resolved(vec![affine(0, 0)]), &[Format::Block]);
        assert_eq!(placed, Ok(Placement::Distributed(vec![(0, 0, 0)])));
        // ALIGN X(:) WITH A(*, :), A(*, CYCLIC): dimension 1 of X on axis 2
        let placed = placement(
            "x",
            &resolved(vec![Axis::Replicated, affine(0, 2)]),
            &[Format::Collapsed, Format::Cyclic(Some(1))],
        );
        assert_eq!(placed, Ok(Placement::Distributed(vec![(0, 1, 2)])));
    }

    #[test]
    fn constants_and_stars_along_axes_that_are_not_distributed() {
        // ALIGN SURF(I,J) WITH T3(I,J,1), T3(BLOCK,BLOCK,*)
        let formats = [Format::Block, Format::Block, Format::Collapsed];
        let placed = placement("surf", &resolved(vec![affine(0, 0), affine(1, 0), Axis::Constant(1)]), &formats);
        assert_eq!(placed, Ok(Placement::Distributed(vec![(0, 0, 0), (1, 1, 0)])));
        // ALIGN DZ(K) WITH T3(*,*,K): replicated over both distributed axes, exactly.
        let placed = placement("dz", &resolved(vec![Axis::Replicated, Axis::Replicated, affine(0, 0)]), &formats);
        assert_eq!(placed, Ok(Placement::Replicated(None)));
    }

    #[test]
    fn constants_and_stars_along_distributed_axes() {
        // ALIGN U(I) WITH T2(I,5), T2(BLOCK,BLOCK): whole copies, with a note.
        let formats = [Format::Block, Format::Block];
        let Ok(Placement::Replicated(Some(note))) =
            placement("u", &resolved(vec![affine(0, 0), Axis::Constant(5)]), &formats)
        else {
            panic!("a replicated placement with a note")
        };
        assert!(note.contains("constant subscript along the distributed dimension 2"), "{note}");
        let Ok(Placement::Replicated(Some(note))) =
            placement("x", &resolved(vec![Axis::Replicated, affine(0, 0)]), &formats)
        else {
            panic!("a replicated placement with a note")
        };
        assert!(note.contains("`*` along the distributed dimension 1"), "{note}");
        // ALIGN W(J) WITH T(5, J), T(BLOCK, *): one owner in HPF, copies here.
        let placed =
            placement("w", &resolved(vec![Axis::Constant(5), affine(0, 0)]), &[Format::Block, Format::Collapsed]);
        assert!(matches!(placed, Ok(Placement::Replicated(Some(_)))), "{placed:?}");
    }

    #[test]
    fn refusals() {
        let formats = [Format::Block, Format::Block];
        // Transposed.
        assert!(placement("t", &resolved(vec![affine(1, 0), affine(0, 0)]), &formats).is_err());
        // Stride 2 along a distributed axis.
        let strided = Axis::Affine { source_dim: 0, stride: 2, offset: 0 };
        assert!(placement("s", &resolved(vec![strided]), &[Format::Block]).is_err());
        assert!(placement("q", &resolved(vec![Axis::Unknown]), &[Format::Block]).is_err());
    }

    /// The notes as `line: message`, and the generated source.
    fn lower(text: &str) -> (Vec<String>, String) {
        let config = analysis::model::ModelConfig { number_of_processors: None };
        let analysis = analysis::analyze(text, syntax::SourceForm::Free, config);
        let generated = crate::lower(&analysis, text).unwrap_or_else(|errors| panic!("refused: {errors:?}"));
        let index = syntax::LineIndex::new(text);
        let notes = generated
            .notes
            .iter()
            .map(|it| format!("{}: {}", index.line_col(text, it.range.start).0 + 1, it.message))
            .collect();
        (notes, generated.source)
    }

    #[test]
    fn collapsed_and_replicated_arrays_run_in_parallel() {
        let (notes, source) = lower(
            "program p
  implicit none
  integer, parameter :: n = 12, m = 4
  integer :: a(n, m), y(n), x(m), u(n), g(n, n), i, j
!HPF$ TEMPLATE R(N)
!HPF$ TEMPLATE, DISTRIBUTE(BLOCK, *) :: W(N, M)
!HPF$ TEMPLATE, DISTRIBUTE(BLOCK, BLOCK) :: T2(N, N)
!HPF$ DISTRIBUTE R(BLOCK)
!HPF$ ALIGN A(I,*) WITH R(I)
!HPF$ ALIGN Y(I) WITH W(I,2)
!HPF$ ALIGN X(J) WITH W(*,J)
!HPF$ ALIGN G(I,J) WITH T2(I,J)
!HPF$ ALIGN U(I) WITH T2(I,3)
  x = 1
  do j = 1, m
    do i = 1, n
      a(i, j) = i + j
    end do
  end do
!HPF$ INDEPENDENT, NEW(J)
  do i = 1, n
    y(i) = 0
    do j = 1, m
      y(i) = y(i) + a(i, j) * x(j)
    end do
  end do
  print *, sum(y)
end program p
",
        );
        // A is cut along its first dimension and held whole along the second.
        assert!(source.contains("integer, allocatable :: a(:,:), hpf_g_a(:,:)"), "{source}");
        assert!(source.contains("allocate (a(hpf_lo:hpf_hi, 1:4))"), "{source}");
        assert!(source.contains("allocate (y(hpf_lo:hpf_hi))"), "{source}");
        // X is replicated (its declaration stays), and so is U, with a note.
        assert!(!source.contains("hpf_d_x") && !source.contains("hpf_d_u"), "{source}");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("13: `u` is aligned with a constant subscript along the distributed dimension 2"),
            "{notes:?}"
        );
        assert!(!source.contains("call hpf_gather"), "{source}");
    }
}
