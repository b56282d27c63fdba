#!/usr/bin/env bash
# Compile every (non-error) program of the HPF corpus with gfortran, run it
# sequentially (HPF directives are comments to gfortran) and compare what it
# prints with expected/<file>.out when that file exists. A program that
# READs gets <name>.in (next to it) on its standard input.
#
#   tests/corpus/check_sequential.sh            check all programs
#   tests/corpus/check_sequential.sh --update   rewrite expected/*.out
#   FC=gfortran-13 tests/corpus/check_sequential.sh
#
# Form flags by extension: .f90/.hpf free form, .f/.for fixed form
# (-std=legacy -ffixed-form). Binaries and .mod files go to a temp dir.
# Exit status 1 if any compile, run or comparison fails.
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FC="${FC:-gfortran}"
update=0
[ "${1:-}" = "--update" ] && update=1

if ! command -v "$FC" >/dev/null 2>&1; then
  echo "check_sequential.sh: $FC not found (apt-get install -y gfortran)" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$here/expected"

pass=0
fail=0
failed=()
shopt -s nullglob
for src in "$here"/*.f90 "$here"/*.hpf "$here"/*.f "$here"/*.for; do
  name="$(basename "$src")"
  case "$name" in
    *.f90)     flags=(-ffree-form) ;;
    *.hpf)     flags=(-x f95 -ffree-form) ;;   # gfortran does not know .hpf
    *.f|*.for) flags=(-std=legacy -ffixed-form) ;;
    *)         continue ;;
  esac
  work="$tmp/${name//./_}"
  mkdir -p "$work"
  # gfortran does not know HPF's EXTRINSIC(...) procedure prefix; without
  # it, the procedure is the sequential program's.
  sed -E 's/[Ee][Xx][Tt][Rr][Ii][Nn][Ss][Ii][Cc] *\([A-Za-z0-9_ ]*\)//' "$src" >"$work/$name"
  if ! (cd "$work" && "$FC" -O1 -fno-range-check "${flags[@]}" "$work/$name" \
          -J "$work" -o "$work/prog") >"$work/compile.log" 2>&1; then
    echo "FAIL $name (compile)"
    sed 's/^/    /' "$work/compile.log" | head -20
    fail=$((fail + 1)); failed+=("$name"); continue
  fi
  # A program that READs gets <file>.in on its standard input.
  input=/dev/null
  [ -f "$here/${name%.*}.in" ] && input="$here/${name%.*}.in"
  (cd "$work" && timeout 60 ./prog) <"$input" >"$work/out" 2>"$work/err"
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL $name (run, exit status $rc)"
    sed 's/^/    /' "$work/err" | head -20
    fail=$((fail + 1)); failed+=("$name"); continue
  fi
  exp="$here/expected/$name.out"
  if [ "$update" = 1 ]; then
    cp "$work/out" "$exp"
  elif [ -f "$exp" ] && ! diff -u "$exp" "$work/out" >"$work/diff"; then
    echo "FAIL $name (output differs from expected/$name.out)"
    sed 's/^/    /' "$work/diff" | head -20
    fail=$((fail + 1)); failed+=("$name"); continue
  fi
  echo "ok   $name"
  pass=$((pass + 1))
done

echo "$pass passed, $fail failed"
if [ "$fail" -ne 0 ]; then
  echo "failed: ${failed[*]}"
  exit 1
fi
exit 0
