#!/usr/bin/env python3
"""Random differential test of the MPI backend on 2-D grids.

Generates small INTEGER programs with two arrays distributed (BLOCK,
BLOCK(m), CYCLIC or CYCLIC(m) along each dimension) through a template onto
a 2-D arrangement, at random alignment offsets, with DO nests in both orders and with negative or
larger steps reading shifted (also diagonal) neighbours, FORALLs, shifted
section assignments, row updates with a scalar subscript along a
distributed dimension, whole-array assignments, reductions and elements,
and DO nests and FORALLs whose reads sit on the home's template cell (what
runs in parallel on CYCLIC dimensions);
builds each with `hpf-ls build`, runs it on 1 to 5 processes and compares
with the sequential program compiled by gfortran (directives are comments).
On the process count its PROCESSORS directive declares (the one the
analysis counts with), `HPF_LS_STATS=1` makes the program report what each
loop moved, which must equal the analysis's prediction.

    tests/grid_fuzz.py FIRST LAST [HPF_LS]   # seeds FIRST..LAST

Prints one line per seed (`SEED ok notes=N`, or what failed; a program
that differs is kept as grid_fuzz_SEED.f90) and exits with 1 if any seed
failed; 100 seeds (1..100) passed when the 2-D lowering was written, and
again when CYCLIC dimensions were added; seeds 1..150 passed once the DO-nest
fallback (nest_fetch.rs) counted a read as local only on its left side's
template cell (seed 4, arrays aligned one cell apart on (BLOCK, CYCLIC(2)),
had printed other values); seeds 1..60 passed once the fallback fetched lists of
the elements read where a box is not exact. Needs python3, gfortran, mpirun; as root set
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.
"""
import os
import random
import re
import subprocess
import sys
import tempfile

def prog(seed):
    r = random.Random(seed)
    # CYCLIC dimensions and owner-local statements come from a stream of
    # their own: the rest of a seed's program is what it was before them.
    rc = random.Random(seed * 7919 + 1)
    n = r.randint(5, 14); m = r.randint(4, 12)
    p1, p2 = r.choice([(2,2),(1,3),(3,1),(2,3),(4,1)])
    # template with margins
    t1lo, t1hi = r.randint(-1, 1), n + r.randint(0, 2)
    t2lo, t2hi = r.randint(0, 1), m + r.randint(0, 2)
    ext1, ext2 = t1hi - t1lo + 1, t2hi - t2lo + 1
    def fmt(ext, p):
        if r.random() < 0.5: return "BLOCK"
        k = -(-ext // p) + r.randint(0, 3)
        return f"BLOCK({k})"
    f1, f2 = fmt(ext1, p1), fmt(ext2, p2)
    def cyclic(ext):
        k = rc.choice([1, 1, 2, 3, 4, ext + 1])
        return "CYCLIC" if k == 1 and rc.random() < 0.5 else f"CYCLIC({k})"
    if rc.random() < 0.4: f1 = cyclic(ext1)
    if rc.random() < 0.4: f2 = cyclic(ext2)
    # alignments: a(i,j) with T(i+oa1, j+oa2), within template bounds
    def off(lo, hi, tlo, thi):
        cands = [o for o in range(-2, 3) if lo + o >= tlo and hi + o <= thi]
        return r.choice(cands)
    oa = (off(1, n, t1lo, t1hi), off(1, m, t2lo, t2hi))
    ob = (off(1, n, t1lo, t1hi), off(1, m, t2lo, t2hi))
    def al(o1, o2):
        s = lambda o: "" if o == 0 else (f"+{o}" if o > 0 else f"{o}")
        return f"T(I{s(o1)}, J{s(o2)})"
    L = []
    L.append(f"program fz")
    L.append("  implicit none")
    L.append(f"  integer, parameter :: n = {n}, m = {m}")
    L.append("  integer :: a(n, m), b(n, m), i, j, k, s")
    L.append(f"!HPF$ PROCESSORS P({p1}, {p2})")
    L.append(f"!HPF$ TEMPLATE T({t1lo}:{t1hi}, {t2lo}:{t2hi})")
    L.append(f"!HPF$ DISTRIBUTE T({f1}, {f2}) ONTO P")
    L.append(f"!HPF$ ALIGN A(I, J) WITH {al(*oa)}")
    L.append(f"!HPF$ ALIGN B(I, J) WITH {al(*ob)}")
    L.append("  do j = 1, m\n    do i = 1, n")
    L.append(f"      a(i, j) = mod(i * {r.randint(1,9)} + j * {r.randint(1,9)}, 17)")
    L.append(f"      b(i, j) = mod(i * {r.randint(1,9)} - j * {r.randint(1,9)}, 13)")
    L.append("    end do\n  end do")
    def sh(): return r.randint(-2, 2)
    def idx(v, c): return v if c == 0 else (f"{v}+{c}" if c > 0 else f"{v}{c}")
    offsets = {"a": oa, "b": ob}
    for step in range(r.randint(3, 7)):
        kind = r.choice(["nest", "nest2", "forall", "section", "row", "whole", "red", "elem"])
        src, dst = r.choice([("a", "b"), ("b", "a")])
        if rc.random() < 0.4:
            # Reads on the home's template cell: src at the alignment's distance.
            c1 = offsets[dst][0] - offsets[src][0]; c2 = offsets[dst][1] - offsets[src][1]
            lo1, hi1 = 1 + max(0, -c1), n - max(0, c1)
            lo2, hi2 = 1 + max(0, -c2), m - max(0, c2)
            read = f"{src}({idx('i', c1)}, {idx('j', c2)})"
            if rc.random() < 0.3:
                L.append(f"  forall (i = {lo1}:{hi1}, j = {lo2}:{hi2}) {dst}(i, j) = mod({read} - {dst}(i, j), 97)")
            else:
                st1 = rc.choice([1, 2, -1]); st2 = rc.choice([1, -1, 3])
                c_i = f"i = {lo1}, {hi1}, {st1}" if st1 > 0 else f"i = {hi1}, {lo1}, {st1}"
                c_j = f"j = {lo2}, {hi2}, {st2}" if st2 > 0 else f"j = {hi2}, {lo2}, {st2}"
                outer, inner = (c_j, c_i) if rc.random() < 0.5 else (c_i, c_j)
                L.append(f"  do {outer}\n    do {inner}")
                L.append(f"      {dst}(i, j) = mod({dst}(i, j) * 2 + {read} + i - j, 103)")
                L.append("    end do\n  end do")
        if kind in ("nest", "nest2"):
            reads = [(sh(), sh()) for _ in range(r.randint(1, 4))]
            lo1 = 1 + max(0, -min(c[0] for c in reads)); hi1 = n - max(0, max(c[0] for c in reads))
            lo2 = 1 + max(0, -min(c[1] for c in reads)); hi2 = m - max(0, max(c[1] for c in reads))
            expr = " + ".join(f"{src}({idx('i', c1)}, {idx('j', c2)})" for c1, c2 in reads)
            st1 = r.choice([1, 1, 2, -1]); st2 = r.choice([1, 1, -1, 3])
            ctl = lambda v, lo, hi, st: f"{v} = {lo}, {hi}" + ("" if st == 1 else f", {st}") if st > 0 else f"{v} = {hi}, {lo}, {st}"
            if kind == "nest":
                L.append(f"  do {ctl('j', lo2, hi2, st2)}\n    do {ctl('i', lo1, hi1, st1)}")
            else:
                L.append(f"  do {ctl('i', lo1, hi1, st1)}\n    do {ctl('j', lo2, hi2, st2)}")
            e1 = r.randint(-(lo1 - 1), n - hi1); e2 = r.randint(-(lo2 - 1), m - hi2)
            extra = f" + {dst}({idx('i', e1)}, {idx('j', e2)})" if r.random() < 0.2 else ""
            L.append(f"      {dst}(i, j) = mod({dst}(i, j) + {expr}{extra}, 101)")
            L.append("    end do\n  end do")
        elif kind == "forall":
            reads = [(sh(), sh()) for _ in range(r.randint(1, 3))]
            arr = [r.choice(["a", "b"]) for _ in reads]
            lo1 = 1 + max(0, -min(c[0] for c in reads)); hi1 = n - max(0, max(c[0] for c in reads))
            lo2 = 1 + max(0, -min(c[1] for c in reads)); hi2 = m - max(0, max(c[1] for c in reads))
            expr = " + ".join(f"{x}({idx('i', c1)}, {idx('j', c2)})" for x, (c1, c2) in zip(arr, reads))
            L.append(f"  forall (i = {lo1}:{hi1}, j = {lo2}:{hi2}) {dst}(i, j) = mod({expr}, 97)")
        elif kind == "section":
            c1, c2 = sh(), sh()
            lo1, hi1 = 1 + max(0, -c1), n - max(0, c1)
            lo2, hi2 = 1 + max(0, -c2), m - max(0, c2)
            L.append(f"  {dst}({lo1}:{hi1}, {lo2}:{hi2}) = mod({src}({lo1+c1}:{hi1+c1}, {lo2+c2}:{hi2+c2}) * 3 + {dst}({lo1}:{hi1}, {lo2}:{hi2}), 89)")
        elif kind == "row":
            c1, c2 = sh(), sh()
            lo2, hi2 = 1 + max(0, -c2), m - max(0, c2)
            lo1, hi1 = 1 + max(0, -c1), n - max(0, c1)
            L.append(f"  do k = {lo1}, {hi1}\n    {dst}(k, {lo2}:{hi2}) = {src}(k{'+' if c1>=0 else ''}{c1}, {lo2+c2}:{hi2+c2}) + 1\n  end do")
        elif kind == "whole":
            L.append(f"  {dst} = {src} + {dst} - {r.randint(0,5)}")
        elif kind == "red":
            L.append(f"  s = sum({src}) + count({dst} > {r.randint(0, 10)}) + maxval({src}(2:n, :) - {dst}(1:n-1, :))")
            L.append("  print *, s")
        elif kind == "elem":
            L.append(f"  {dst}({r.randint(1,n)}, {r.randint(1,m)}) = {r.randint(-9, 9)}")
            L.append(f"  print *, {src}({r.randint(1,n)}, {r.randint(1,m)}), minval({dst})")
    L.append("  print *, a\n  print *, b")
    L.append("end program fz")
    return "\n".join(L) + "\n"


def stats_agree(line):
    """`hpf-ls stats: line L: M message(s), E element(s) per execution (...); the analysis predicts M message(s), E element(s)`"""
    moved = line.split(": ", 2)[2].split(" per execution")[0]
    predicted = line.split("the analysis predicts ")[1]
    return moved == predicted


def main():
    first, last = int(sys.argv[1]), int(sys.argv[2])
    hpf_ls = sys.argv[3] if len(sys.argv) > 3 else "target/debug/hpf-ls"
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(first, last + 1):
            src = os.path.join(tmp, f"fz{seed}.f90")
            with open(src, "w") as f:
                f.write(prog(seed))
            seq, par = os.path.join(tmp, f"seq{seed}"), os.path.join(tmp, f"par{seed}")
            subprocess.run(["gfortran", "-O1", src, "-o", seq], check=True, cwd=tmp)
            expected = subprocess.run([seq], capture_output=True, check=True).stdout
            build = subprocess.run([hpf_ls, "build", "--ordered-reductions", src, "-o", par], capture_output=True, text=True)
            if build.returncode != 0:
                print(f"{seed} build failed: {build.stderr.strip()}")
                failed += 1
                continue
            notes = build.stderr.count("note:")
            declared = re.search(r"PROCESSORS P\((\d+), (\d+)\)", prog(seed))
            declared = int(declared.group(1)) * int(declared.group(2))
            for np in range(1, 6):
                env = dict(os.environ, HPF_LS_STATS="1" if np == declared else "0")
                run = subprocess.run(
                    ["mpirun", "--oversubscribe", "-np", str(np), par], capture_output=True, timeout=120, env=env
                )
                wrong_stats = [
                    line
                    for line in run.stderr.decode(errors="replace").splitlines()
                    if line.startswith("hpf-ls stats: line ") and "predicts" in line and not stats_agree(line)
                ]
                if wrong_stats:
                    with open(f"grid_fuzz_{seed}.f90", "w") as f:
                        f.write(prog(seed))
                    print(f"{seed} moves other than predicted on {np} processes: grid_fuzz_{seed}.f90")
                    print("\n".join(wrong_stats))
                    failed += 1
                    break
                if run.stdout != expected:
                    # Kept in the current directory to reproduce.
                    with open(f"grid_fuzz_{seed}.f90", "w") as f:
                        f.write(prog(seed))
                    print(f"{seed} differs on {np} processes: grid_fuzz_{seed}.f90")
                    failed += 1
                    break
            else:
                print(f"{seed} ok notes={notes}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
