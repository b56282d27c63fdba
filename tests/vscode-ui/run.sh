#!/usr/bin/env bash
# End-to-end test of the VS Code extension (editors/vscode) in the real VS
# Code UI: code-server (VS Code in the browser) driven by Playwright in a
# headless Chromium, with the real hpf-ls.
#
#   tests/vscode-ui/run.sh
#
# Environment:
#   VSUI_DIR     where code-server and playwright-core are installed, once
#                (default /tmp/vsui; about 330 MB); the runs' scratch
#                directories go there too
#   HPF_LS       the server (default: $VSUI_DIR/hpf-ls when present, else
#                target/release/hpf-ls, else target/debug/hpf-ls)
#   CHROMIUM     the browser (default: chromium on PATH; Debian's `chromium`)
#   SCREENSHOTS  where the PNGs go (default: $VSUI_DIR/screenshots, outside
#                the repository; SCREENSHOTS=docs/images refreshes the docs')
#   KEEP=1       keep the run's scratch directory (logs, settings, workspace)
#   HEADED=1     show the browser (needs a display)
#
# Needs Node.js 20 and npm (code-server 4.100.3 is the last release for
# Node 20), a C/C++ toolchain (its native modules are rebuilt from source,
# since no prebuilt binaries are downloaded) and Chromium. "HPF: Run
# program" is checked when `mpirun` and `mpif90` are on PATH.
# Two sessions: a trusted window (every feature, a run with MPI), then a
# window in Restricted Mode (an untrusted workspace whose settings name a
# server of its own: the user's server starts, language features work, no
# run lens, "HPF: Run program" refused; trusting it brings the lens).
# Exits non-zero when any check fails; prints "N passed, N failed" per session.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

VSUI_DIR=${VSUI_DIR:-/tmp/vsui}
mkdir -p "$VSUI_DIR"
VSUI_DIR=$(cd "$VSUI_DIR" && pwd)

fail() {
  echo "tests/vscode-ui: $*" >&2
  echo "0 passed, 1 failed"
  exit 1
}
now() { date +%s; }

# --- The server and the browser ---------------------------------------------
if [ -z "${HPF_LS:-}" ]; then
  for candidate in "$VSUI_DIR/hpf-ls" "$root/target/release/hpf-ls" "$root/target/debug/hpf-ls"; do
    if [ -x "$candidate" ]; then HPF_LS=$candidate; break; fi
  done
fi
[ -n "${HPF_LS:-}" ] && [ -x "$HPF_LS" ] ||
  fail "no hpf-ls: run cargo build --release -p hpf-ls (or set HPF_LS)"
HPF_LS=$(cd "$(dirname "$HPF_LS")" && pwd)/$(basename "$HPF_LS")
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ] || fail "no Chromium: apt-get install -y chromium (or set CHROMIUM)"
command -v node >/dev/null && command -v npm >/dev/null || fail "Node.js and npm are needed"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" = 20 ] || echo "tests/vscode-ui: warning: Node.js $node_major; code-server 4.100.3 wants Node.js 20" >&2

# --- Install code-server and playwright-core (once) -------------------------
# code-server's postinstall would `npm install` VS Code's dependencies and
# build their native modules, fetching prebuilt binaries from GitHub where it
# can. Here everything is installed with --ignore-scripts and only the
# native modules VS Code needs on Linux are built from source (not
# `kerberos`, which needs libkrb5-dev and only serves proxy authentication;
# not ripgrep, whose binary comes from GitHub: text search is not used).
stamp=$VSUI_DIR/.installed-$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)
install_start=$(now)
if [ ! -f "$stamp" ]; then
  echo "tests/vscode-ui: installing code-server and playwright-core into $VSUI_DIR"
  cp "$here/package.json" "$here/package-lock.json" "$VSUI_DIR/"
  (
    set -e
    cd "$VSUI_DIR"
    npm ci --ignore-scripts --no-audit --no-fund
    npm rebuild --build-from-source argon2
    cd node_modules/code-server/lib/vscode
    npm install --omit=dev --ignore-scripts --no-audit --no-fund
    # node-pty's post-install also writes compile_commands.json with
    # `npx node-gyp`, which may fail without harm once pty.node is built.
    for module in @parcel/watcher @vscode/spdlog native-watchdog node-pty; do
      npm_config_yes=true npm rebuild "$module" || echo "tests/vscode-ui: npm rebuild $module exited with $?" >&2
    done
    for built in node_modules/@vscode/spdlog/build/Release/spdlog.node \
      node_modules/native-watchdog/build/Release/watchdog.node \
      node_modules/node-pty/build/Release/pty.node; do
      [ -f "$built" ] || { echo "tests/vscode-ui: $built was not built" >&2; exit 1; }
    done
    # What the rest of code-server's postinstall.sh does.
    ln -sfn node_modules node_modules.asar
    (cd bin/remote-cli && ln -sfn code-linux.sh code-server)
    (cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
    cd extensions
    npm install --omit=dev --ignore-scripts --no-audit --no-fund
  ) > "$VSUI_DIR/install.log" 2>&1 || { tail -n 40 "$VSUI_DIR/install.log" >&2; fail "installation failed (log: $VSUI_DIR/install.log)"; }
  touch "$stamp"
  echo "tests/vscode-ui: installed in $(($(now) - install_start)) s ($(du -sh "$VSUI_DIR/node_modules" | cut -f1))"
fi
code_server=$VSUI_DIR/node_modules/.bin/code-server
[ -x "$code_server" ] || fail "$code_server is missing; remove $VSUI_DIR/.installed-* and rerun"

# --- Package the extension ---------------------------------------------------
package_start=$(now)
(
  cd "$root/editors/vscode"
  [ -d node_modules ] || npm ci --no-audit --no-fund
  npm run --silent compile
  npm run --silent package
) > "$VSUI_DIR/package.log" 2>&1 || { tail -n 40 "$VSUI_DIR/package.log" >&2; fail "packaging the extension failed"; }
vsix=$root/editors/vscode/hpf-ls.vsix
echo "tests/vscode-ui: packaged $vsix in $(($(now) - package_start)) s"

# --- A fresh profile and workspace -------------------------------------------
work=$(mktemp -d "$VSUI_DIR/run.XXXXXX")
server_pid=
stop_server() {
  if [ -n "$server_pid" ]; then
    # code-server was started in a session of its own: end its group (the
    # extension host and hpf-ls with it).
    kill -TERM -- "-$server_pid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.3; done
    kill -KILL -- "-$server_pid" 2>/dev/null || true
    server_pid=
  fi
}
cleanup() {
  status=$?
  stop_server
  if [ "$status" -ne 0 ]; then
    echo "--- code-server log (last 40 lines) ---" >&2
    tail -n 40 "$work"/code-server*.log 2>/dev/null >&2 || true
    for log in "$work"/data*/logs/*/exthost*/output_logging_*/*"HPF Language Server.log"; do
      [ -f "$log" ] || continue
      echo "--- the extension's output channel (last 40 lines of $log) ---" >&2
      tail -n 40 "$log" >&2
    done
  fi
  if [ "${KEEP:-0}" = 1 ] || [ "$status" -ne 0 ]; then
    echo "tests/vscode-ui: kept $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$work/ext" "$work/data-trusted" "$work/workspace" "$work/xdg"
cp "$root/tests/corpus/seed_fig6.f90" "$work/workspace/"
: > "$work/config.yaml"
export XDG_CONFIG_HOME=$work/xdg/config XDG_DATA_HOME=$work/xdg/data XDG_CACHE_HOME=$work/xdg/cache
"$code_server" --config "$work/config.yaml" --extensions-dir "$work/ext" --user-data-dir "$work/data-trusted" \
  --install-extension "$vsix" > "$work/install-extension.log" 2>&1 ||
  { cat "$work/install-extension.log" >&2; fail "code-server --install-extension failed"; }

# One session: code-server on the workspace with a fresh profile, and
# test.mjs against it. $1: "trusted" or "restricted".
session() {
  local mode=$1 data=$work/data-$1 trust=false trust_flag=--disable-workspace-trust
  if [ "$mode" = restricted ]; then trust=true trust_flag=; fi
  mkdir -p "$data/User" "$data/Machine"
  local planted=$work/workspace/.vscode/hpf-ls marker=$work/planted-server-started
  if [ "$mode" = restricted ]; then
    # The workspace names its own server, one that would leave a marker: in
    # Restricted Mode the extension must take the user's hpf.server.path.
    mkdir -p "$work/workspace/.vscode"
    printf '#!/bin/sh\ntouch %s\nexit 1\n' "$marker" > "$planted"
    chmod +x "$planted"
    printf '{ "hpf.server.path": "%s", "hpf.mpi.compiler": "%s" }\n' "$planted" "$planted" \
      > "$work/workspace/.vscode/settings.json"
  fi
  # No Fortran extension in code-server: .f90 files are the extension's `hpf`
  # language. No welcome page, no notifications about recommendations or
  # updates. Trusted: no workspace trust at all. Restricted: trust is on and
  # never asked for, so the workspace opens in Restricted Mode.
  cat > "$data/User/settings.json" <<EOF
{
  "hpf.server.path": "$HPF_LS",
  "hpf.mpi.processes": 4,
  "files.associations": { "*.f90": "hpf" },
  "security.workspace.trust.enabled": $trust,
  "security.workspace.trust.startupPrompt": "never",
  "workbench.startupEditor": "none",
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.commandCenter.enabled": false,
  "chat.disableAIFeatures": true,
  "extensions.ignoreRecommendations": true,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "telemetry.telemetryLevel": "off",
  "editor.inlayHints.enabled": "on",
  "editor.hover.delay": 200,
  "editor.minimap.enabled": false,
  "editor.fontSize": 14,
  "window.commandCenter": false,
  "git.enabled": false,
  "remote.autoForwardPorts": false
}
EOF
  local port log=$work/code-server-$mode.log
  port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  # $trust_flag is one flag or none.
  # shellcheck disable=SC2086
  setsid "$code_server" --config "$work/config.yaml" --auth none --bind-addr "127.0.0.1:$port" \
    --disable-telemetry --disable-update-check $trust_flag --disable-getting-started-override \
    --extensions-dir "$work/ext" --user-data-dir "$data" "$work/workspace" > "$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 120); do
    if node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "http://127.0.0.1:$port/healthz"; then
      break
    fi
    kill -0 "$server_pid" 2>/dev/null || fail "code-server exited (log: $log)"
    sleep 0.5
  done
  node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "http://127.0.0.1:$port/healthz" ||
    fail "code-server did not answer on port $port within 60 s"
  echo "tests/vscode-ui: $mode window: code-server $("$code_server" --config "$work/config.yaml" --version 2>/dev/null | head -n 1) on port $port, hpf-ls $HPF_LS"

  local restricted=0 start
  if [ "$mode" = restricted ]; then restricted=1; fi
  start=$(now)
  VSUI_DIR=$VSUI_DIR URL="http://127.0.0.1:$port/?folder=$work/workspace" WORKSPACE=$work/workspace \
    CHROMIUM=$CHROMIUM SCREENSHOTS=$screenshots MPI=$mpi RESTRICTED=$restricted PLANTED_MARKER=$marker \
    EXPECTED_OUTPUT=$root/tests/corpus/expected/seed_fig6.f90.out \
    node "$here/test.mjs" || status=1
  echo "tests/vscode-ui: UI test of the $mode window took $(($(now) - start)) s"
  stop_server
}

mpi=0
if command -v mpirun >/dev/null 2>&1 && command -v mpif90 >/dev/null 2>&1; then mpi=1; fi
screenshots=${SCREENSHOTS:-$VSUI_DIR/screenshots}
status=0
session trusted
session restricted
echo "tests/vscode-ui: screenshots in $screenshots"
exit "$status"
