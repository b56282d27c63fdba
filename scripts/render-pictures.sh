#!/usr/bin/env bash
# Renders the pictures in docs/images (shown in the README) with the
# `hpf-ls explain` of this repository: the seed's worked example (1-D,
# BLOCK on 4 processors) and a 2-D Jacobi halo ((BLOCK,BLOCK) on 2x2), as
# SVG and, with rsvg-convert (Debian: apt-get install librsvg2-bin), as PNG.
#
#   scripts/render-pictures.sh            # builds hpf-ls (debug) first
#   HPF_LS=path/to/hpf-ls scripts/render-pictures.sh
#
# Needs bash, cargo (unless HPF_LS is set) and rsvg-convert.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${HPF_LS:-}" ]; then
  cargo build --quiet -p hpf-ls
  HPF_LS=${CARGO_TARGET_DIR:-target}/debug/hpf-ls
fi
command -v rsvg-convert >/dev/null 2>&1 || {
  echo "render-pictures: rsvg-convert not found (apt-get install librsvg2-bin)" >&2
  exit 1
}

out=docs/images
mkdir -p "$out"

# render NAME FILE PATTERN: the loop whose header line contains PATTERN.
render() {
  local name=$1 file=$2 pattern=$3 line
  line=$(grep -n -F -- "$pattern" "$file" | head -n 1 | cut -d: -f1)
  [ -n "$line" ] || { echo "render-pictures: no '$pattern' in $file" >&2; exit 1; }
  "$HPF_LS" explain "$file" --line "$line" --svg "$out/$name.svg" >"$out/$name.txt"
  rsvg-convert --zoom 1.5 --background-color white "$out/$name.svg" -o "$out/$name.png"
  echo "$out/$name.svg $out/$name.png $out/$name.txt"
}

render seed_fig6 tests/corpus/seed_fig6.f90 "DO I = 2, 16"
render jacobi2d tests/corpus/jacobi2d_block_block.f90 "do j = 2, n-1"
