#!/usr/bin/env bash
# hpf-ls run --launcher srun on a real one-node Slurm cluster that this
# script starts and tears down (issue 28, item 7).
#
#   bash tests/slurm/run.sh                 uses target/debug/hpf-ls
#   HPF_LS=/path/to/hpf-ls bash tests/slurm/run.sh
#
# Needs Debian's slurm-wlm and munge (apt-get install -y slurm-wlm munge),
# Open MPI with PMIx (openmpi-bin, libpmix2) and root (or sudo): munged
# runs as the munge user, slurmctld and slurmd as root. Everything lives in
# one temporary directory (configs, keys, sockets, state, logs) on ports of
# its own, so nothing in /etc is touched and a cluster the machine already
# runs is left alone.
#
# The cluster: one node advertising 4 CPUs whatever the machine has
# (SlurmdParameters=config_overrides), no cgroups (proctrack/linuxproc,
# task/none: containers rarely allow them) and MpiDefault=none, Slurm's
# default, under which Debian's Open MPI fails in MPI_Init unless the PMIx
# plugin is asked for: hpf-ls must do that on its own.
#
# Each check compares bytes with what the sequential program prints
# (tests/corpus/expected). Any failure prints the daemons' logs; the
# daemons are killed and the directory removed on every exit (trap).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
hpf_ls="${HPF_LS:-${CARGO_TARGET_DIR:-$repo/target}/debug/hpf-ls}"
hpf_ls="$(realpath "$hpf_ls")"
ctld_port="${SLURM_TEST_CTLD_PORT:-26817}"
slurmd_port="${SLURM_TEST_SLURMD_PORT:-26818}"

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
# A command, not a function: `$!` of a background daemon must be its own pid
# (or sudo's, which passes signals on), never a subshell's.
root=(); [ "$(id -u)" -eq 0 ] || root=(sudo)
started=$(date +%s)
say() { echo "slurm test ($(( $(date +%s) - started )) s): $*"; }

for tool in munged mungekey slurmctld slurmd srun sbatch sinfo; do
  command -v "$tool" >/dev/null || PATH="$PATH:/usr/sbin:/sbin"
  command -v "$tool" >/dev/null || { say "$tool not found (apt-get install -y slurm-wlm munge)"; exit 1; }
done
[ -x "$hpf_ls" ] || { say "$hpf_ls not found (cargo build -p hpf-ls)"; exit 1; }

# Nothing of a cluster (or job) the caller may be in: the checks assume
# this cluster, and outside a job where they say so.
unset $(compgen -v SLURM_) || true
work="$(mktemp -d /tmp/hpf-ls-slurm.XXXXXX)"
chmod 755 "$work"
pids=()
conf=""

show_logs() {
  for log in "$work"/munge/munged.log "$work"/log/*.log "$work"/log/*.out; do
    [ -f "$log" ] || continue
    echo "----- $log"
    as_root tail -n 60 "$log" || true
  done
}

tear_down() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    say "FAILED (status $status); the daemons' logs:"
    show_logs
  fi
  # Jobs first: slurmstepd and the tasks outlive slurmd.
  if [ -n "$conf" ] && [ -n "$(SLURM_CONF="$conf" squeue -h 2>/dev/null)" ]; then
    as_root env SLURM_CONF="$conf" scancel --user="$(id -un)" || true
    for _ in $(seq 20); do [ -z "$(SLURM_CONF="$conf" squeue -h 2>/dev/null)" ] && break; sleep 0.5; done
  fi
  for pid in "${pids[@]}"; do as_root kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do as_root kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    as_root kill -9 "$pid" 2>/dev/null || true
  done
  as_root rm -rf "$work"
  exit "$status"
}
trap tear_down EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$work"/{log,state,spool,etc}
host="$(hostname -s)"

say "munged (as munge, key from mungekey, socket directory of mode 755)"
munge_dir="$work/munge"
mkdir -p "$munge_dir"
chmod 755 "$munge_dir"
as_root chown munge:munge "$munge_dir"
as_root runuser -u munge -- mungekey --create --keyfile="$munge_dir/munge.key"
as_root runuser -u munge -- munged \
  --socket="$munge_dir/munge.socket" --key-file="$munge_dir/munge.key" \
  --pid-file="$munge_dir/munged.pid" --seed-file="$munge_dir/munged.seed" \
  --log-file="$munge_dir/munged.log"
pids+=("$(cat "$munge_dir/munged.pid")")
unmunge --socket="$munge_dir/munge.socket" < <(munge --socket="$munge_dir/munge.socket" -n) >/dev/null

conf="$work/etc/slurm.conf"
export SLURM_CONF="$conf"
cat > "$SLURM_CONF" <<EOF
ClusterName=hpfls
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_dir/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
KillWait=5
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=10 State=UP
EOF

say "slurmctld -D and slurmd -D (as root)"
"${root[@]}" slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=("$!")
"${root[@]}" slurmd -D -f "$SLURM_CONF" -N "$host" >"$work/log/slurmd.out" 2>&1 &
pids+=("$!")

for _ in $(seq 60); do
  state="$(sinfo -h -n "$host" -o %t 2>/dev/null || true)"
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || { say "the node is not idle after 60 s (state: '${state:-none}')"; exit 1; }
sinfo

# --- the checks: each prints "ok" or "FAIL" with what differs; all run.
corpus="$repo/tests/corpus"
expected="$corpus/expected"
runs="$work/runs"
mkdir -p "$runs"
chmod 755 "$runs"
cd "$runs"
failures=0
fail() { say "FAIL: $*"; failures=$((failures + 1)); }

# same_output NAME EXPECTED-FILE COMMAND...: COMMAND succeeds and prints
# exactly EXPECTED-FILE on stdout.
same_output() {
  local name=$1 want=$2
  shift 2
  local status=0
  "$@" >"$runs/$name.out" 2>"$runs/$name.err" || status=$?
  if [ "$status" -eq 0 ] && cmp -s "$want" "$runs/$name.out"; then
    say "ok: $name"
  else
    fail "$name (status $status): $*"
    diff "$want" "$runs/$name.out" | head -20 || true
    tail -n 30 "$runs/$name.err"
  fi
}

# no_job_left NAME: Slurm runs no job any more (within 20 s).
no_job_left() {
  for _ in $(seq 40); do
    [ -z "$(squeue -h)" ] && { say "ok: $1: no job left"; return; }
    sleep 0.5
  done
  fail "$1: jobs left: $(squeue -h)"
  scancel --user="$(id -un)" || true
}

run=("$hpf_ls" run --ordered-reductions --timeout 120)

# Outside a job: srun makes the allocation; MpiDefault=none, so hpf-ls's
# --mpi=pmix is what lets Open MPI start.
same_output "srun --np 2, 1-D" "$expected/seed_fig6.f90.out" \
  "${run[@]}" --launcher srun --np 2 "$corpus/seed_fig6.f90"
# A 2x2 grid, and launcher words with options of srun's own.
same_output "srun --np 4, 2-D (BLOCK,BLOCK)" "$expected/jacobi2d_block_block.f90.out" \
  "${run[@]}" --launcher "srun --partition=debug --job-name 'hpf ls'" --np 4 "$corpus/jacobi2d_block_block.f90"
no_job_left "srun"

# Inside an allocation of 2 CPUs, 4 processes: hpf-ls adds --overcommit.
same_output "salloc -n 2, --np 4 (overcommitted)" "$expected/seed_fig6.f90.out" \
  salloc --ntasks=2 --quiet "${run[@]}" --launcher srun --np 4 "$corpus/seed_fig6.f90"

# A batch job that runs hpf-ls in its allocation; its output file is compared.
cat >"$runs/job.sh" <<JOB
#!/bin/sh
#SBATCH --ntasks=2
#SBATCH --output=$runs/job.out
#SBATCH --error=$runs/job.err
set -e
"$hpf_ls" run --ordered-reductions --launcher srun --np 2 "$corpus/jacobi2d_star_block.f90"
"$hpf_ls" run --ordered-reductions --launcher srun --np 4 "$corpus/seed_fig6.f90"
JOB
cat "$expected/jacobi2d_star_block.f90.out" "$expected/seed_fig6.f90.out" >"$runs/job.expected"
status=0
timeout 300 sbatch --wait --quiet "$runs/job.sh" || status=$?
if [ "$status" -eq 0 ] && cmp -s "$runs/job.expected" "$runs/job.out"; then
  say "ok: sbatch --wait job (--np 2, then --np 4 on 2 CPUs)"
else
  fail "sbatch job (status $status)"
  diff "$runs/job.expected" "$runs/job.out" | head -20 || true
  tail -n 30 "$runs/job.err" || true
fi
no_job_left "sbatch"

# --hostfile means nothing to srun: refused with the documented message.
echo "localhost slots=4" >"$runs/hosts"
status=0
"${run[@]}" --launcher srun --np 2 --hostfile hosts "$corpus/seed_fig6.f90" >"$runs/hostfile.out" 2>"$runs/hostfile.err" || status=$?
if [ "$status" -ne 0 ] && grep -q -- "--hostfile means nothing to srun" "$runs/hostfile.err" && [ ! -s "$runs/hostfile.out" ]; then
  say "ok: --hostfile refused with srun"
else
  fail "--hostfile with srun (status $status): $(cat "$runs/hostfile.err")"
fi

# A run past --timeout (rank 0 waits for input that never comes): hpf-ls
# kills srun, and Slurm ends the job and its tasks.
mkfifo "$runs/never"
exec 3<>"$runs/never" # open for writing too: no end of file
status=0
"$hpf_ls" run --launcher srun --np 2 --timeout 12 "$corpus/read_input.f90" <&3 >/dev/null 2>"$runs/timeout.err" || status=$?
if [ "$status" -ne 0 ] && grep -q "the program timed out" "$runs/timeout.err"; then
  say "ok: --timeout stops the srun run"
else
  fail "--timeout with srun (status $status): $(cat "$runs/timeout.err")"
fi
no_job_left "timeout"

# The same run, hpf-ls terminated (SIGTERM) while its job runs.
"$hpf_ls" run --launcher srun --np 2 "$corpus/read_input.f90" <&3 >/dev/null 2>"$runs/sigterm.err" &
hpf_ls_pid=$!
for _ in $(seq 120); do [ -n "$(squeue -h -t running)" ] && break; sleep 0.5; done
sleep 1
kill -TERM "$hpf_ls_pid"
status=0
wait "$hpf_ls_pid" || status=$?
if [ "$status" -eq 143 ]; then
  say "ok: SIGTERM stops hpf-ls (status 143)"
else
  fail "SIGTERM to hpf-ls: status $status: $(cat "$runs/sigterm.err")"
fi
no_job_left "SIGTERM"
exec 3>&-

# The language server's hpf.run with hpf.mpi.launcher "srun": the output,
# then a run past hpf.mpi.timeoutSeconds, which must leave no job behind.
lsp_run() { python3 "$repo/tests/slurm/lsp_run.py" "$hpf_ls" "$@" 2>>"$runs/lsp.err"; }
reply="$(lsp_run "$corpus/seed_fig6.f90" 2 120 || true)"
if python3 -c 'import json, sys; r = json.loads(sys.argv[1]); sys.exit(r.get("exitCode") != 0 or r.get("stdout") != open(sys.argv[2]).read())' \
  "$reply" "$expected/seed_fig6.f90.out"; then
  say "ok: the server's hpf.run through srun"
else
  fail "the server's hpf.run through srun: ${reply:-no answer} $(tail -n 20 "$runs/lsp.err")"
fi
reply="$(lsp_run "$repo/tests/slurm/spin.f90" 2 12 || true)"
if [[ "$reply" == *"the program timed out"* ]]; then
  say "ok: the server's hpf.run past its timeout"
else
  fail "the server's hpf.run past its timeout: ${reply:-no answer} $(tail -n 20 "$runs/lsp.err")"
fi
no_job_left "the server's timeout"

if [ "$failures" -ne 0 ]; then
  say "$failures check(s) failed"
  exit 1
fi
say "all checks passed"
