#!/usr/bin/env bash
# HPF through hpf-ls against hand-written MPI, on the programs of this folder.
#
#   bench/mpi/run.sh [NP] [REPEATS]      (default: 2 processes, 3 repeats)
#
# Needs target/release/hpf-ls (cargo build --release -p hpf-ls), mpif90,
# mpirun and gfortran. Each program is built twice, with its sweep count and
# with 0 sweeps: kernel time = median wall time with sweeps - median without
# (start-up, allocation, initialisation and output cancel out). Peak memory is
# the largest resident set of one process (GNU time on mpirun reports the
# maximum over mpirun and its ranks). Elements moved come from
# `hpf-ls run --stats`; the minimum is the halo alone (for the histogram, the
# counts of the other processes' bins). Prints a Markdown table.
# BENCHES="shallow_water" runs only the named programs.
set -euo pipefail
cd "$(dirname "$0")/../.."
np=${1:-2}
repeats=${2:-3}
hpf_ls=${HPF_LS:-target/release/hpf-ls}
[ -x "$hpf_ls" ] || { echo "build $hpf_ls first: cargo build --release -p hpf-ls" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
launch=(mpirun --oversubscribe -np "$np")

# seconds and peak RSS (KiB) of one run; the output goes to $work/out
measure() {
  local start end
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$work/rss" "$@" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  end=$(date +%s%N)
  echo "$(( (end - start) / 1000000 )) $(tail -1 "$work/rss")"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# name sweeps minimum-elements
# (histogram: every process sends each other one its counts of that one's bins)
# (shallow_water: what the hand-written version sends, 7 halo columns each
# way between neighbours and 7 periodic boundary columns per step)
# (swm_cshift: one 512-element column of each of 7 fields per process and step)
# (gauss: step k broadcasts the pivot's index and the n - k multipliers)
# (cg: one element of p each way between neighbours per iteration; its two
# dot products per iteration move partial sums, which --stats does not count)
# (gather2d: the rows of C each process reads that the others own, 4000 / np
# rows of 400 per process and step, (np - 1) / np of them remote)
# (matmul: each sweep brings every process the columns of A it does not own)
# (sor: per sweep and boundary between processes, the old first row of the
# process above, n elements, and the new last row below, n - 2, in strips)
benches=("shift1d 20 $((2 * 20 * (np - 1)))" "jacobi2d 100 $((2 * 4000 * 100 * (np - 1)))" "histogram 10 $((10 * 1000 * (np - 1)))"
  "shallow_water 100 $((100 * 2049 * (14 * (np - 1) + 7)))"
  "swm_cshift 100 $((np > 1 ? 100 * 7 * 512 * np : 0))"
  "gauss 1199 $(((np - 1) * (1200 * 1201 / 2 - 1)))"
  "cg 200 $((200 * 2 * (np - 1)))"
  "gather2d 50 $((50 * 4000 * 400 * (np - 1) / np))"
  "matmul 5 $((5 * 1200 * 1200 * (np - 1)))"
  "sor 20 $((20 * (np - 1) * (2 * 2000 - 2)))")

echo "| program | variant | kernel ms (median of $repeats) | ratio to hand-written | peak RSS per process MB | ratio to sequential | elements moved (minimum) |"
echo "|---|---|---|---|---|---|---|"
for bench in "${benches[@]}"; do
  read -r name sweeps minimum <<<"$bench"
  if [ -n "${BENCHES:-}" ] && [[ " $BENCHES " != *" $name "* ]]; then continue; fi
  for s in "$sweeps" 0; do
    sed "s/@SWEEPS@/$s/" "bench/mpi/$name.f90" >"$work/${name}_$s.f90"
    sed "s/@SWEEPS@/$s/" "bench/mpi/${name}_mpi.f90" >"$work/${name}_mpi_$s.f90"
    gfortran -O2 -o "$work/seq_$s" "$work/${name}_$s.f90"
    "$hpf_ls" build "$work/${name}_$s.f90" -o "$work/hpf_$s" 2>"$work/notes_$s"
    mpif90 -O2 -o "$work/mpi_$s" "$work/${name}_mpi_$s.f90"
  done
  declare -A kernel rss
  for variant in seq hpf mpi; do
    for s in "$sweeps" 0; do
      : >"$work/times"
      for _ in $(seq "$repeats"); do
        if [ "$variant" = seq ]; then result=$(measure "$work/seq_$s"); else result=$(measure "${launch[@]}" "$work/${variant}_$s"); fi
        echo "${result% *}" >>"$work/times"
        if [ "$s" = "$sweeps" ]; then peak=${result#* }; fi
        cp "$work/out" "$work/out_${variant}_$s"
      done
      eval "t_$s=$(median <"$work/times")"
    done
    kernel[$variant]=$(( t_$sweeps - t_0 ))
    rss[$variant]=$peak
  done
  cmp -s "$work/out_seq_$sweeps" "$work/out_hpf_$sweeps" || { echo "$name: HPF output differs from the sequential program's" >&2; exit 1; }
  cmp -s "$work/out_seq_$sweeps" "$work/out_mpi_$sweeps" || { echo "$name: hand-written output differs from the sequential program's" >&2; exit 1; }
  moved=$("$hpf_ls" run --np "$np" --stats "$work/${name}_$sweeps.f90" 2>&1 >/dev/null | grep -o '[0-9]* element(s)' | tail -1 | cut -d' ' -f1)
  for variant in seq hpf mpi; do
    ratio_time=$(awk -v a="${kernel[$variant]}" -v b="${kernel[mpi]}" 'BEGIN { printf "%.2f", a / b }')
    ratio_rss=$(awk -v a="${rss[$variant]}" -v b="${rss[seq]}" 'BEGIN { printf "%.2f", a / b }')
    case $variant in seq) label="sequential (gfortran -O2)"; elements="-";; hpf) label="HPF via hpf-ls, np=$np"; elements="$moved ($minimum)";; mpi) label="hand-written MPI, np=$np"; elements="$minimum ($minimum)";; esac
    echo "| $name | $label | ${kernel[$variant]} | $ratio_time | $(( rss[$variant] / 1024 )) | $ratio_rss | $elements |"
  done
  unset kernel rss
done
