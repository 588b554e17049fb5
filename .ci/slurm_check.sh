#!/usr/bin/env bash
# The work units on a real batch engine: a single-node Slurm cluster on this machine (Debian's
# slurm-wlm and munge; run as root, local only, no cgroups), `plan --help`'s four sbatch lines
# run verbatim over a survey of two overlapping files (LAS and LAZ), and the products compared
# with one `build` of the same config byte for byte.
#
#   .ci/slurm_check.sh path/to/roadscan
#
# The lines are taken from `roadscan plan --help` at run time (README points there), so the
# documentation and this check cannot drift apart. Daemons, their logs and the survey live in
# a temporary directory removed on exit (kept with SLURM_CHECK_KEEP=1); the daemons are stopped
# on exit whatever happens.
set -euo pipefail
BIN=$(realpath "${1:?usage: $0 path/to/roadscan}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
START=$SECONDS

if ! command -v sbatch >/dev/null || ! command -v munged >/dev/null || ! command -v slurmd >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

D=$(mktemp -d "${TMPDIR:-/tmp}/roadscan-slurm.XXXXXX")
chmod 700 "$D"
mkdir -p "$D/state" "$D/spool" "$D/munge" "$D/bin" "$D/survey"
export SLURM_CONF="$D/slurm.conf"
HOST=$(hostname -s)

show_logs() {
  for f in "$D"/munged.log "$D"/slurmctld.log "$D"/slurmd.log; do
    [ -e "$f" ] && { echo "--- $f (last 40 lines)"; tail -n 40 "$f"; }
  done
  return 0
}
stop() {
  local rc=$?
  command -v scancel >/dev/null && [ -e "$D/slurmctld.pid" ] && scancel --quiet --user=root 2>/dev/null || true
  for p in "$D/slurmd.pid" "$D/slurmctld.pid" "$D/munged.pid"; do
    [ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
  done
  # Wait (at most 10 s) for them to be gone: the next run reuses the ports.
  for _ in $(seq 50); do
    local alive=0
    for p in "$D/slurmd.pid" "$D/slurmctld.pid" "$D/munged.pid"; do
      [ -s "$p" ] && kill -0 "$(cat "$p")" 2>/dev/null && alive=1
    done
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  if [ "$rc" -ne 0 ]; then
    echo "slurm check failed (exit $rc)" >&2
    show_logs >&2
  fi
  if [ -n "${SLURM_CHECK_KEEP:-}" ]; then echo "slurm: kept $D" >&2; else rm -rf "$D"; fi
  exit "$rc"
}
trap stop EXIT
fail() { echo "slurm: $*" >&2; exit 1; }

# MUNGE: a key of its own and a socket in $D (the system's munged, if any, is left alone).
head -c 1024 /dev/urandom > "$D/munge/munge.key"
chmod 400 "$D/munge/munge.key"
munged --force --key-file="$D/munge/munge.key" --socket="$D/munge/munge.socket" \
  --pid-file="$D/munged.pid" --log-file="$D/munged.log" --seed-file="$D/munge/seed"

cat > "$SLURM_CONF" <<EOF
ClusterName=roadscan
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=600
DependencyParameters=kill_invalid_depend
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=512 State=UNKNOWN
PartitionName=local Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for i in $(seq 120); do
  state=$(sinfo -h -N -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  [ "$i" = 120 ] && fail "the node is not idle after 60 s (sinfo: '${state:-no answer}')"
  sleep 0.5
done

# The survey: two overlapping synthetic surveys of the bundled demo road, one LAS, one LAZ.
S="$D/survey"
XODR="$ROOT/data/opendrive/demo.xodr"
"$BIN" synth -q --scene "$XODR" --s-range 0..80 --out "$S/a" --seed 3
"$BIN" synth -q --scene "$XODR" --s-range 70..150 --out "$S/b" --seed 4 --laz
printf '%s\n' 'input = ["a/scan.las", "b/scan.laz"]' 'axis = "a/truth/road.xodr"' 'out = "out"' \
  'tile = 12.5' 'buffer = 12' 'voxel-size = 0.5' > "$S/survey.toml"

# The lines as `plan --help` gives them: its plan line, then the four sbatch lines after "On Slurm".
ln -s "$BIN" "$D/bin/roadscan"
export PATH="$D/bin:$PATH"
HELP=$(roadscan plan --help)
PLAN=$(printf '%s\n' "$HELP" | sed -n '/^  roadscan plan --config survey.toml > units.jsonl$/{s/^  //p;q}')
SBATCH=$(printf '%s\n' "$HELP" | sed -n '/^On Slurm/,/^$/{/^  /s/^  //p}')
[ -n "$PLAN" ] || fail "plan --help has no plan line"
[ "$(printf '%s\n' "$SBATCH" | grep -c '^[a-z]*=*\$*(*sbatch ')" = 4 ] || fail "plan --help: not four sbatch lines after 'On Slurm':
$SBATCH"
cd "$S"
eval "$PLAN"
N=$(grep -c '"stage":"points"' units.jsonl)
UNITS=$(grep -c . units.jsonl)
[ "$UNITS" = $((2 * N + 2)) ] || fail "the plan has $UNITS units, not 2N+2 with N = $N"
echo "plan: $UNITS units, N = $N; the sbatch lines:"
printf '%s\n' "$SBATCH" | sed 's/^/  /'
printf '%s\n' "$SBATCH" > sbatch.sh
N=$N bash -e sbatch.sh

# Every job ends (a failed one cancels those after it), then every job must have succeeded.
for i in $(seq 600); do
  [ -z "$(squeue -h -o %i)" ] && break
  [ "$i" = 600 ] && { squeue; fail "jobs still queued after 300 s"; }
  sleep 0.5
done
JOBS=$(scontrol show job -o | grep -c '^JobId=' || true)
BAD=$(scontrol show job -o | grep -v 'JobState=COMPLETED .*ExitCode=0:0' || true)
if [ -n "$BAD" ] || [ "$JOBS" != "$UNITS" ]; then
  scontrol show job -o | sed -n 's/^JobId=\([0-9]*\) .*ArrayTaskId=\([0-9]*\).*JobState=\([A-Z_]*\).*ExitCode=\([0-9:]*\).*/job \1 task \2: \3 exit \4/p;
    s/^JobId=\([0-9]*\) JobName.*JobState=\([A-Z_]*\).*ExitCode=\([0-9:]*\).*/job \1: \2 exit \3/p' >&2 || true
  for f in slurm-*.out; do [ -e "$f" ] && { echo "--- $f"; cat "$f"; }; done >&2
  fail "$JOBS jobs for $UNITS units, or some did not complete with exit 0"
fi
[ ! -e out.work ] || fail "the work directory out.work is left"

# One build of the same config, and every product compared.
rc=0
roadscan build -q --config survey.toml --out one || rc=$?
[ "$rc" = 0 ] || fail "one build of survey.toml exited $rc"
(cd one && find . -type f | sort) > one.txt
(cd out && find . -type f | sort) > out.txt
cmp -s one.txt out.txt || { diff one.txt out.txt >&2; fail "the jobs' files are not one build's"; }
n=0
while read -r f; do
  case "$f" in
    # Timings differ run to run: compared below without them.
    ./report.json | ./manifest.json | ./report.html) continue ;;
  esac
  cmp -s "one/$f" "out/$f" || fail "$f differs from one build's"
  n=$((n + 1))
done < one.txt
# Without their timings, equal: report.json without `performance` and `stages`, report.html
# without its "Throughput and memory" section, manifest.json without `timings` and the hashes
# of those two reports.
python3 - one out <<'EOF' || fail "report.json, report.html or manifest.json differ beyond their timings"
import json, sys
dirs = sys.argv[1:3]
def text(d, f):
    with open(f"{d}/{f}", encoding="utf-8") as fh:
        return fh.read()
def report(d):
    r = json.loads(text(d, "report.json"))
    r.pop("performance")
    r.pop("stages")
    return r
def html(d):
    t = text(d, "report.html")
    i = t.index("<h2>Throughput and memory</h2>")
    j = t.index("<script>", i)
    return t[:i] + t[j:]
def manifest(d):
    m = json.loads(text(d, "manifest.json"))
    m.pop("timings")
    m["outputs"] = [o for o in m["outputs"] if o["path"] not in ("report.json", "report.html")]
    return m
for name, f in [("report.json", report), ("report.html", html), ("manifest.json", manifest)]:
    a, b = (f(d) for d in dirs)
    if a != b:
        sys.exit(f"{name} differs beyond its timings")
EOF
n=$((n + 3))
echo "slurm: $UNITS units as $JOBS jobs (N = $N), $n of $(grep -c . one.txt) files the same as one build's (report.json, report.html and manifest.json but their timings), $((SECONDS - START)) s"
