#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with seeds drawn from tests/corpus/ (not
# committed: fuzz/corpus/ is ignored). Each target's input starts with its
# option bytes (see fuzz_targets/*.rs), written here before the file.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
corpus="$here/../tests/corpus"
out="$here/corpus"
mkdir -p "$out"/{normalize_fixed,directives,analysis,lsp_transport,lsp_server}
n=0
while IFS= read -r -d '' file; do
    n=$((n + 1))
    case "${file,,}" in
        *.f | *.for | *.f77 | *.ftn | *.fpp) form='\001' ;;  # fixed form, 72 columns
        *) form='\000' ;;                                     # free form
    esac
    { printf '\001'; cat "$file"; } > "$out/normalize_fixed/$n"
    { printf "$form"; cat "$file"; } > "$out/directives/$n"
    { printf "$form"; printf '\004'; cat "$file"; } > "$out/analysis/$n"
done < <(find "$corpus" -type f \( -iname '*.f' -o -iname '*.for' -o -iname '*.f77' -o -iname '*.ftn' \
    -o -iname '*.f90' -o -iname '*.f95' -o -iname '*.f03' -o -iname '*.hpf' \) -print0 | sort -z)

# The LSP targets: sessions that open a corpus file and ask for every feature.
python3 - "$corpus" "$out" <<'PY'
import json, pathlib, sys
corpus, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
files = sorted(p for p in corpus.rglob("*") if p.suffix.lower() in {".f", ".for", ".f90", ".hpf"})
for n, path in enumerate(files):
    text = path.read_text(errors="replace")
    uri = "file:///fuzz/a" + path.suffix
    doc = {"uri": uri}
    pos = {"line": 3 + n % 10, "character": n % 12}
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}}
    messages = [
        {"method": "textDocument/didOpen", "params": {"textDocument": {**doc, "languageId": "fortran", "version": 1, "text": text}}},
        {"id": 1, "method": "textDocument/hover", "params": {"textDocument": doc, "position": pos}},
        {"id": 2, "method": "textDocument/inlayHint", "params": {"textDocument": doc, "range": rng}},
        {"id": 3, "method": "textDocument/codeAction", "params": {"textDocument": doc, "range": rng, "context": {"diagnostics": []}}},
        {"method": "textDocument/didChange", "params": {"textDocument": {**doc, "version": 2},
            "contentChanges": [{"range": {"start": pos, "end": pos}, "text": "!HPF$ ALIGN A(I) WITH T(I+1)\n"}]}},
        {"id": 4, "method": "textDocument/completion", "params": {"textDocument": doc, "position": pos}},
        {"id": 5, "method": "textDocument/rename", "params": {"textDocument": doc, "position": pos, "newName": "b2"}},
        {"id": 6, "method": "textDocument/semanticTokens/full", "params": {"textDocument": doc}},
        {"id": 7, "method": "textDocument/documentSymbol", "params": {"textDocument": doc}},
        {"id": 8, "method": "workspace/executeCommand", "params": {"command": "hpf.showTransferPattern", "arguments": [uri, pos]}},
        {"id": 9, "method": "workspace/executeCommand", "params": {"command": "hpf.showGenerated", "arguments": [uri]}},
        {"id": 10, "method": "textDocument/foldingRange", "params": {"textDocument": doc}},
        {"id": 11, "method": "textDocument/codeLens", "params": {"textDocument": doc}},
    ]
    bodies = [json.dumps({"jsonrpc": "2.0", **m}).encode() for m in messages]
    (out / "lsp_server" / str(n)).write_bytes(b"\x00" + b"\x00".join(bodies))
    framed = b"".join(b"Content-Length: %d\r\n\r\n" % len(b) + b for b in bodies)
    (out / "lsp_server" / ("raw" + str(n))).write_bytes(b"\x01" + framed)
    (out / "lsp_transport" / str(n)).write_bytes(framed + b"Content-Length: 5\r\n\r\n{bad}" + b"X: y\r\n\r\n")
PY
echo "seeded $n corpus files into $out"
