//! `C = MATMUL(A, B)` of whole arrays, matrix by matrix or matrix by vector
//! (`y = MATMUL(A, x)`, `y = MATMUL(x, A)`), where any of C, A and B is
//! distributed (BLOCK, CYCLIC, CYCLIC(m), over 1-D or 2-D grids) and the
//! others replicated. Every process computes the elements of C it owns:
//! the inner dimension is walked in panels (as wide as one process's share
//! of it, at least 128) of columns of A and rows of B,
//! each panel gathered from its owners by one `MPI_Allgatherv`
//! (`hpf_matmul_*` in the runtime), so a process holds its part of C and
//! one panel of each operand, never a whole distributed operand. An operand
//! that every process already holds for its part of C (replicated, or laid
//! out by rows like C and whole along the inner dimension) is read in place.
//!
//! With `--ordered-reductions` each element of C is summed over the inner
//! index in order 1..K by its owner, as the sequential loop does; by
//! default each panel's product is the intrinsic MATMUL of the panels (the
//! library's blocked kernel, whose rounding may differ in the last bits,
//! as it differs between gfortran's own inline and library MATMUL).
//!
//! A vector is seen as a matrix of one column (`MATMUL(A, x)`) or one row
//! (`MATMUL(x, A)`). C that is also A or B, sections, LOGICAL operands and
//! operands of different types take the rank-0 path; MATMUL inside an
//! expression does too, until `hoist.rs` gives it a temporary.

use std::fmt::Write;

use analysis::model::SymbolId;
use syntax::{ExprKind, Stmt, StmtKind};

use crate::element_type::{Base, ElementType};
use crate::permute::intrinsic_arguments;
use crate::Lowering;

/// How an array takes part in a product: as a matrix, or a vector seen as
/// one column or one row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum View {
    Matrix,
    Column,
    Row,
}

/// One operand or the result.
#[derive(Clone, Debug)]
struct Operand {
    id: SymbolId,
    view: View,
    /// Declared lower bounds.
    lbs: Vec<i64>,
}

/// One `C = MATMUL(A, B)`.
pub(crate) struct Matmul<'a> {
    pub(crate) stmt: &'a Stmt,
    result: Operand,
    left: Operand,
    right: Operand,
    element: ElementType,
    /// C is m x n, the inner extent k.
    m: i64,
    n: i64,
    k: i64,
}

/// The declared bounds of an array whose shape folds.
fn constant_bounds(symbol: &analysis::model::Symbol) -> Option<(Vec<i64>, Vec<i64>)> {
    symbol
        .shape
        .iter()
        .map(|dim| Some((dim.lo.known()?, dim.hi.known()?)))
        .collect::<Option<Vec<_>>>()
        .map(|bounds| bounds.into_iter().unzip())
}

impl<'a> Lowering<'a> {
    /// The plan of `stmt` when it is `X = MATMUL(Y, Z)` of whole arrays, at
    /// least one of them distributed; `None` otherwise.
    pub(crate) fn matmul_plan<'s>(&self, stmt: &'s Stmt) -> Option<Matmul<'s>> {
        let StmtKind::Assign { lhs, rhs } = &stmt.kind else { return None };
        let ExprKind::Name(target) = &lhs.kind else { return None };
        let ExprKind::Ref { name, args } = &rhs.kind else { return None };
        // The intrinsic, not a function of the program with its name.
        if name.key() != "matmul" || self.lookup(&name.key()).is_some() {
            return None;
        }
        let values = intrinsic_arguments(args, &["matrix_a", "matrix_b"])?;
        let operand_name = |at: usize| match &values.get(at).copied().flatten()?.kind {
            ExprKind::Name(name) => Some(name.key()),
            _ => None,
        };
        let ids = [target.key(), operand_name(0)?, operand_name(1)?].map(|key| self.lookup(&key));
        let [Some(c), Some(a), Some(b)] = ids else { return None };
        if c == a || c == b || ![c, a, b].iter().any(|id| self.distributed.contains_key(id)) {
            return None;
        }
        let model = &self.analysis.model;
        let mut shapes = Vec::new();
        let mut elements = Vec::new();
        for id in [c, a, b] {
            let symbol = model.symbol(id);
            if !symbol.is_array() {
                return None;
            }
            let (lbs, ubs) = constant_bounds(symbol)?;
            let element = match self.distributed.get(&id) {
                Some(distributed) => distributed.suffix,
                None => crate::element_suffix(symbol)?,
            };
            elements.push(element);
            shapes.push((lbs.clone(), lbs.iter().zip(&ubs).map(|(lo, hi)| hi - lo + 1).collect::<Vec<_>>()));
        }
        let element = elements[0];
        if elements.iter().any(|it| *it != element) || !element.is_numeric() {
            return None;
        }
        let (c_extents, a_extents, b_extents) = (&shapes[0].1, &shapes[1].1, &shapes[2].1);
        // (views of C, A, B), m, n, k.
        let (views, m, n, k) = match (a_extents.len(), b_extents.len()) {
            (2, 2) => ([View::Matrix; 3], a_extents[0], b_extents[1], a_extents[1]),
            (2, 1) => ([View::Column, View::Matrix, View::Column], a_extents[0], 1, a_extents[1]),
            (1, 2) => ([View::Row, View::Row, View::Matrix], 1, b_extents[1], a_extents[0]),
            _ => return None,
        };
        let inner_fits = b_extents[0] == k;
        let result_fits = match views[0] {
            View::Matrix => *c_extents == [m, n],
            View::Column => *c_extents == [m],
            View::Row => *c_extents == [n],
        };
        if !inner_fits || !result_fits || m * n * k == 0 {
            return None;
        }
        let operand = |at: usize, id: SymbolId| Operand { id, view: views[at], lbs: shapes[at].0.clone() };
        Some(Matmul { stmt, result: operand(0, c), left: operand(1, a), right: operand(2, b), element, m, n, k })
    }

    /// The arguments that describe `operand` to `hpf_matmul_*`: the array,
    /// the local bounds of its matrix view, its descriptors, the view
    /// dimension each descriptor cuts, and the view's first global indices.
    fn matmul_view(&self, operand: &Operand) -> String {
        let name = &self.analysis.model.symbol(operand.id).name.text;
        let ints = |it: &[i64]| it.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        let (lo, hi, first) = match operand.view {
            View::Matrix => (format!("lbound({name})"), format!("ubound({name})"), ints(&operand.lbs)),
            View::Column => {
                (format!("[lbound({name}, 1), 1]"), format!("[ubound({name}, 1), 1]"), format!("{}, 1", operand.lbs[0]))
            }
            View::Row => {
                (format!("[1, lbound({name}, 1)]"), format!("[1, ubound({name}, 1)]"), format!("1, {}", operand.lbs[0]))
            }
        };
        // The view dimension (1-based) of array dimension `dim` (0-based).
        let view_dim = |dim: usize| if operand.view == View::Row { 2 } else { dim + 1 };
        let (descriptors, dims) = match self.distributed.get(&operand.id) {
            None => ("[hpf_desc ::]".to_string(), "[integer ::]".to_string()),
            Some(distributed) => match &distributed.second {
                Some(second) => (
                    format!("hpf_d_{}", distributed.name),
                    format!("[{}, {}]", view_dim(distributed.dim), view_dim(second.dim)),
                ),
                None => (format!("[hpf_d_{}]", distributed.name), format!("[{}]", view_dim(distributed.dim))),
            },
        };
        format!("{name}, {lo}, {hi}, {descriptors}, {dims}, [{first}]")
    }

    pub(crate) fn emit_matmul(&self, out: &mut String, matmul: &Matmul) {
        let one_line = self.copy(matmul.stmt.range).replace(['&', '\n'], " ");
        let _ = writeln!(
            out,
            "  ! hpf-ls: {} (each process computes its part from panels of the operands)",
            one_line.trim()
        );
        // Integer products are exact in any order.
        let ordered = self.ordered_reductions && matmul.element.base != Base::Integer;
        let _ = writeln!(
            out,
            "  call hpf_matmul_{suffix}({a}, &\n    {b}, &\n    {c}, &\n    {m}, {n}, {k}, {ordered})",
            suffix = matmul.element,
            a = self.matmul_view(&matmul.left),
            b = self.matmul_view(&matmul.right),
            c = self.matmul_view(&matmul.result),
            m = matmul.m,
            n = matmul.n,
            k = matmul.k,
            ordered = if ordered { ".true." } else { ".false." },
        );
    }
}

/// The runtime routine of one numeric element type.
pub(crate) fn runtime(suffix: &str, fortran_type: &str, mpi: &str) -> String {
    format!(
        r#"
  ! c = matmul(a, b). Each of a, b, c is seen as a matrix (a vector as one
  ! column or one row): lo:hi its local bounds, g the global index of its
  ! first element, and, when it is distributed, descriptors d along the
  ! view's dimensions dims (none: replicated). c is m x n, the inner extent
  ! kk. Each process computes the elements of c it owns over panels of nb
  ! columns of a and rows of b, which it reads in place when every process
  ! holds what it needs of them, else gathers by one MPI_Allgatherv per
  ! panel. ordered: each element is summed over k in order 1..kk; else the
  ! intrinsic multiplies each pair of panels. Every process calls it.
  subroutine hpf_matmul_{suffix}(a, alo, ahi, da, adims, ag, b, blo, bhi, db, bdims, bg, &
      c, clo, chi, dc, cdims, cg, m, n, kk, ordered)
    {fortran_type}, intent(in) :: a(*), b(*)
    {fortran_type}, intent(inout) :: c(*)
    integer, intent(in) :: alo(2), ahi(2), adims(:), ag(2), blo(2), bhi(2), bdims(:), bg(2)
    integer, intent(in) :: clo(2), chi(2), cdims(:), cg(2), m, n, kk
    type(hpf_desc), intent(in) :: da(:), db(:), dc(:)
    logical, intent(in) :: ordered
    integer, allocatable :: rloc(:), rows(:), cloc(:), cols(:), arow(:), bcol(:)
    integer :: acoords(2, 0:hpf_nprocs - 1), bcoords(2, 0:hpf_nprocs - 1)
    integer :: mine(6), everyone(6, 0:hpf_nprocs - 1)
    {fortran_type}, allocatable :: acc(:, :), apan(:, :), bpan(:, :), ablk(:, :), bblk(:, :)
    logical :: in_place(2)
    integer :: nb, k0, k1, w, i, j, k, lda

    call axis(dc, cdims, me(dc), 1, clo, chi, cg, rloc, rows)
    call axis(dc, cdims, me(dc), 2, clo, chi, cg, cloc, cols)
    ! One collective tells every process where the others sit along a's and
    ! b's descriptors and whether each holds what it needs of them.
    mine = [me(da), me(db), 0, 0]
    if (holds(da, adims, alo, ahi, ag, 1, rows, m)) mine(5) = 1
    if (holds(db, bdims, blo, bhi, bg, 2, cols, n)) mine(6) = 1
    call MPI_Allgather(mine, 6, MPI_INTEGER, everyone, 6, MPI_INTEGER, MPI_COMM_WORLD)
    acoords = everyone(1:2, :)
    bcoords = everyone(3:4, :)
    in_place = [all(everyone(5, :) == 1), all(everyone(6, :) == 1)]
    ! Panels as wide as a process's share of the inner dimension: about the
    ! size of a local part, and few collectives.
    nb = max(128, (kk + hpf_nprocs - 1) / hpf_nprocs)
    allocate (acc(size(rows), size(cols)), ablk(size(rows), nb), bblk(nb, size(cols)))
    if (in_place(1)) then
      ! Where row i of c starts in a(*), whose inner dimension is not cut.
      lda = ahi(1) - alo(1) + 1
      allocate (arow(size(rows)))
      do i = 1, size(rows)
        arow(i) = at(alo, ahi, local(da, adims, 1, ag(1) + rows(i) - 1), ag(2))
      end do
    else
      allocate (apan(m, nb))
    end if
    if (in_place(2)) then
      allocate (bcol(size(cols)))
      do j = 1, size(cols)
        bcol(j) = at(blo, bhi, bg(1), local(db, bdims, 2, bg(2) + cols(j) - 1))
      end do
    else
      allocate (bpan(nb, n))
    end if
    acc = 0
    do k0 = 1, kk, nb
      k1 = min(kk, k0 + nb - 1)
      w = k1 - k0 + 1
      if (in_place(1)) then
        do k = 1, w
          do i = 1, size(rows)
            ablk(i, k) = a(arow(i) + (k0 + k - 2) * lda)
          end do
        end do
      else
        call gather(a, alo, ahi, da, adims, ag, acoords, 2, k0, k1, apan)
        if (size(rows) /= m) ablk(:, 1:w) = apan(rows, 1:w)
      end if
      if (in_place(2)) then
        do j = 1, size(cols)
          bblk(1:w, j) = b(bcol(j) + k0 - 1:bcol(j) + k1 - 1)
        end do
      else
        call gather(b, blo, bhi, db, bdims, bg, bcoords, 1, k0, k1, bpan)
        if (size(cols) /= n) bblk(1:w, :) = bpan(1:w, cols)
      end if
      ! Every row of c here (its rows are not cut): the gathered panel of a
      ! as it is, rows in order; likewise every column and b's panel.
      if (.not. in_place(1) .and. size(rows) == m) call move_alloc(apan, ablk)
      if (.not. in_place(2) .and. size(cols) == n) call move_alloc(bpan, bblk)
      if (ordered) then
        do j = 1, size(cols)
          do k = 1, w
            do i = 1, size(rows)
              acc(i, j) = acc(i, j) + ablk(i, k) * bblk(k, j)
            end do
          end do
        end do
      else if (k0 == 1) then
        acc = matmul(ablk(:, 1:w), bblk(1:w, :))
      else
        acc = acc + matmul(ablk(:, 1:w), bblk(1:w, :))
      end if
      if (.not. in_place(1) .and. size(rows) == m) call move_alloc(ablk, apan)
      if (.not. in_place(2) .and. size(cols) == n) call move_alloc(bblk, bpan)
    end do
    do j = 1, size(cols)
      do i = 1, size(rows)
        c(at(clo, chi, rloc(i), cloc(j))) = acc(i, j)
      end do
    end do

  contains

    ! The position in x(*) of local element (l1, l2).
    pure integer function at(lo, hi, l1, l2)
      integer, intent(in) :: lo(2), hi(2), l1, l2
      at = 1 + (l1 - lo(1)) + (hi(1) - lo(1) + 1) * (l2 - lo(2))
    end function at

    ! This process's coordinates along the descriptors d.
    function me(d) result(coords)
      type(hpf_desc), intent(in) :: d(:)
      integer :: coords(2), k
      coords = 0
      do k = 1, size(d)
        coords(k) = hpf_me(d(k))
      end do
    end function me

    ! The local index of global index i along view dimension v (on its owner).
    pure integer function local(d, dims, v, i)
      type(hpf_desc), intent(in) :: d(:)
      integer, intent(in) :: dims(:), v, i
      integer :: k
      local = i
      do k = 1, size(d)
        if (dims(k) == v) local = hpf_lx(d(k), i)
      end do
    end function local

    ! Along view dimension v, the local indices loc of the elements the
    ! process at coordinates coords holds, and their positions rel (from 1).
    subroutine axis(d, dims, coords, v, lo, hi, g, loc, rel)
      type(hpf_desc), intent(in) :: d(:)
      integer, intent(in) :: dims(:), coords(2), v, lo(2), hi(2), g(2)
      integer, allocatable, intent(out) :: loc(:), rel(:)
      integer :: k, p, plo, phi
      plo = lo(v)
      phi = hi(v)
      do k = 1, size(d)
        if (dims(k) == v) call hpf_owned_local(d(k), coords(k), plo, phi)
      end do
      allocate (loc(max(0, phi - plo + 1)), rel(max(0, phi - plo + 1)))
      do p = plo, phi
        loc(p - plo + 1) = p
        rel(p - plo + 1) = p - g(v) + 1
        do k = 1, size(d)
          if (dims(k) == v) rel(p - plo + 1) = hpf_gx(d(k), coords(k), p) - g(v) + 1
        end do
      end do
    end subroutine axis

    ! Whether this process holds the operand whole along the inner
    ! dimension (3 - v) at the positions need along view dimension v.
    logical function holds(d, dims, lo, hi, g, v, need, extent)
      type(hpf_desc), intent(in) :: d(:)
      integer, intent(in) :: dims(:), lo(2), hi(2), g(2), v, need(:), extent
      integer, allocatable :: loc(:), rel(:)
      logical :: mine(extent)
      holds = .not. any(dims == 3 - v)
      if (.not. holds .or. size(d) == 0) return
      call axis(d, dims, me(d), v, lo, hi, g, loc, rel)
      mine = .false.
      mine(rel) = .true.
      holds = all(mine(need))
    end function holds

    ! The panel k0..k1 (positions from 1) along view dimension kdim of x,
    ! whole along the other: each distinct holder sends its elements to
    ! every process, in the order both sides walk them.
    subroutine gather(x, lo, hi, d, dims, g, coords, kdim, k0, k1, pan)
      {fortran_type}, intent(in) :: x(*)
      integer, intent(in) :: lo(2), hi(2), dims(:), g(2), coords(:, 0:), kdim, k0, k1
      type(hpf_desc), intent(in) :: d(:)
      {fortran_type}, intent(inout) :: pan(:, :)
      integer :: counts(0:hpf_nprocs - 1), displs(0:hpf_nprocs - 1), r, q, pos, i1, i2
      integer, allocatable :: loc1(:), rel1(:), loc2(:), rel2(:)
      logical :: holder(0:hpf_nprocs - 1)
      {fortran_type}, allocatable :: sendbuf(:), recvbuf(:)
      ! One copy of each part: replicas along a grid axis do not send it twice.
      do r = 0, hpf_nprocs - 1
        holder(r) = .true.
        do q = 0, r - 1
          if (all(coords(:, q) == coords(:, r))) holder(r) = .false.
        end do
      end do
      counts = 0
      do r = 0, hpf_nprocs - 1
        if (.not. holder(r)) cycle
        call window(d, dims, coords(:, r), lo, hi, g, kdim, k0, k1, loc1, rel1, loc2, rel2)
        counts(r) = size(loc1) * size(loc2)
      end do
      displs(0) = 0
      do r = 1, hpf_nprocs - 1
        displs(r) = displs(r - 1) + counts(r - 1)
      end do
      allocate (sendbuf(max(1, counts(hpf_rank))), recvbuf(max(1, sum(counts))))
      if (holder(hpf_rank)) then
        call window(d, dims, coords(:, hpf_rank), lo, hi, g, kdim, k0, k1, loc1, rel1, loc2, rel2)
        pos = 0
        do i2 = 1, size(loc2)
          do i1 = 1, size(loc1)
            pos = pos + 1
            sendbuf(pos) = x(at(lo, hi, loc1(i1), loc2(i2)))
          end do
        end do
      end if
      call MPI_Allgatherv(sendbuf, counts(hpf_rank), {mpi}, recvbuf, counts, displs, {mpi}, MPI_COMM_WORLD)
      do r = 0, hpf_nprocs - 1
        if (counts(r) == 0) cycle
        call window(d, dims, coords(:, r), lo, hi, g, kdim, k0, k1, loc1, rel1, loc2, rel2)
        pos = displs(r)
        do i2 = 1, size(loc2)
          do i1 = 1, size(loc1)
            pos = pos + 1
            if (kdim == 2) then
              pan(rel1(i1), rel2(i2) - k0 + 1) = recvbuf(pos)
            else
              pan(rel1(i1) - k0 + 1, rel2(i2)) = recvbuf(pos)
            end if
          end do
        end do
      end do
      call hpf_stat_sent(spread(counts(hpf_rank), 1, hpf_nprocs))
    end subroutine gather

    ! What the holder at coordinates coords has of the panel k0..k1 along kdim.
    subroutine window(d, dims, coords, lo, hi, g, kdim, k0, k1, loc1, rel1, loc2, rel2)
      type(hpf_desc), intent(in) :: d(:)
      integer, intent(in) :: dims(:), coords(2), lo(2), hi(2), g(2), kdim, k0, k1
      integer, allocatable, intent(out) :: loc1(:), rel1(:), loc2(:), rel2(:)
      logical, allocatable :: keep(:)
      call axis(d, dims, coords, 1, lo, hi, g, loc1, rel1)
      call axis(d, dims, coords, 2, lo, hi, g, loc2, rel2)
      if (kdim == 1) then
        keep = rel1 >= k0 .and. rel1 <= k1
        loc1 = pack(loc1, keep)
        rel1 = pack(rel1, keep)
      else
        keep = rel2 >= k0 .and. rel2 <= k1
        loc2 = pack(loc2, keep)
        rel2 = pack(rel2, keep)
      end if
    end subroutine window
  end subroutine hpf_matmul_{suffix}
"#
    )
}

#[cfg(test)]
mod tests {
    use analysis::model::ModelConfig;
    use syntax::{LineIndex, SourceForm};

    /// The notes as `line: message`, and the generated source (ordered
    /// reductions or the default).
    fn lower(text: &str, ordered_reductions: bool) -> (Vec<String>, String) {
        let analysis = analysis::analyze(text, SourceForm::Free, ModelConfig { number_of_processors: None });
        let options = crate::LowerOptions { ordered_reductions };
        let generated = crate::lower_with(&analysis, text, &options).unwrap_or_else(|errors| panic!("{errors:?}"));
        let index = LineIndex::new(text);
        let notes = generated
            .notes
            .iter()
            .map(|it| format!("{}: {}", index.line_col(text, it.range.start).0 + 1, it.message))
            .collect();
        (notes, generated.source)
    }

    /// A program over A(m,k), B(k,n), C(m,n), x(k), y(m), v(m) and the
    /// INTEGER matrices I(m,k), J(k,n), K(m,n); `mapping` distributes them,
    /// `body` is the statements (line 11 on).
    fn program(mapping: &str, body: &str) -> String {
        format!(
            "program p
  implicit none
  integer, parameter :: m = 6, k = 5, n = 4
  double precision :: a(m, k), b(k, n), c(m, n), x(k), y(m), v(m)
  integer :: i(m, k), j(k, n), kk(m, n)
!HPF$ PROCESSORS G(2, 2)
{mapping}
  a = 1.0d0; b = 2.0d0; x = 3.0d0; v = 1.0d0; i = 1; j = 2
  c = 0.0d0; y = 0.0d0; kk = 0
  continue
{body}
  print *, sum(c), sum(y), sum(kk)
end program p
"
        )
    }

    #[test]
    fn products_of_matrices_on_a_grid_run_on_every_process() {
        let text = program("!HPF$ DISTRIBUTE (BLOCK, CYCLIC) ONTO G :: a, b, c", "  c = matmul(a, b)");
        let (notes, source) = lower(&text, true);
        assert_eq!(notes, Vec::<String>::new());
        assert!(
            source.contains(
                "  call hpf_matmul_r8(a, lbound(a), ubound(a), hpf_d_a, [1, 2], [1, 1], &\n    \
                 b, lbound(b), ubound(b), hpf_d_b, [1, 2], [1, 1], &\n    \
                 c, lbound(c), ubound(c), hpf_d_c, [1, 2], [1, 1], &\n    6, 4, 5, .true.)"
            ),
            "{source}"
        );
        // The default mode multiplies panels with the intrinsic.
        let (_, source) = lower(&text, false);
        assert!(source.contains("6, 4, 5, .false.)"), "{source}");
    }

    #[test]
    fn vectors_are_one_column_or_one_row_and_replicated_operands_have_no_descriptors() {
        let text = program(
            "!HPF$ DISTRIBUTE a(CYCLIC(2), *)\n!HPF$ DISTRIBUTE y(BLOCK)",
            "  y = matmul(a, x)\n  x = matmul(v, a)",
        );
        let (notes, source) = lower(&text, true);
        assert_eq!(notes, Vec::<String>::new());
        assert!(
            source.contains("    x, [lbound(x, 1), 1], [ubound(x, 1), 1], [hpf_desc ::], [integer ::], [1, 1], &"),
            "{source}"
        );
        assert!(source.contains("    y, [lbound(y, 1), 1], [ubound(y, 1), 1], [hpf_d_y], [1], [1, 1], &"), "{source}");
        // MATMUL(v, A): v is one row, the result x too.
        assert!(
            source.contains(
                "  call hpf_matmul_r8(v, [1, lbound(v, 1)], [1, ubound(v, 1)], [hpf_desc ::], [integer ::], [1, 1], &"
            ),
            "{source}"
        );
        assert!(source.contains("    1, 5, 6, .true.)"), "{source}");
    }

    #[test]
    fn integer_products_are_exact_in_any_order() {
        let text = program("!HPF$ DISTRIBUTE (BLOCK, *) :: i, kk", "  kk = matmul(i, j)");
        let (notes, source) = lower(&text, true);
        assert_eq!(notes, Vec::<String>::new());
        assert!(source.contains("call hpf_matmul_i4(i, "), "{source}");
        assert!(source.contains("6, 4, 5, .false.)"), "{source}");
    }

    #[test]
    fn products_into_an_operand_sections_and_mixed_types_run_on_rank_0() {
        for body in ["  a(:, 1:4) = matmul(a(:, 1:4), b(1:4, :))", "  c = matmul(a, j)", "  c = c + matmul(a, b)"] {
            let text = program("!HPF$ DISTRIBUTE (BLOCK, *) :: a, c", body);
            let (notes, source) = lower(&text, true);
            assert!(notes.iter().any(|it| it.starts_with("11: runs on one process")), "{body}: {notes:?}");
            assert!(!source.contains("call hpf_matmul"), "{body}: {source}");
        }
    }
}
