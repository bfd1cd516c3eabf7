#!/usr/bin/env bash
# The Slurm path, tested for real on this machine (as root): a one-node Slurm cluster from
# Debian's slurm-wlm runs the quick CPU cases of device-bandwidth and cecka-sizes as a 2-task job
# array and its merge job (scripts/slurm/submit.sh); the merged run must hold exactly the cases of
# an unsharded run of the same selection (the CI gate's).
#   scripts/ci-slurm.sh HARNESS UNSHARDED_RUN
set -euo pipefail
harness=$(realpath "$1")
unsharded=$(realpath "$2")
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
if ! command -v slurmctld >/dev/null 2>&1; then
  apt-get install -y -qq slurm-wlm munge >/dev/null || { apt-get update -qq && apt-get install -y -qq slurm-wlm munge >/dev/null; }
fi
mkdir -p /run/munge /etc/munge && chown munge:munge /run/munge /etc/munge
[ -f /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
state=$(mktemp -d)
/usr/sbin/munged --force --pid-file="$state/munged.pid"
h=$(hostname -s)
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=local
SlurmctldHost=$h
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmUser=root
ReturnToService=2
SlurmctldPidFile=$state/ctld.pid
SlurmdPidFile=$state/d.pid
SlurmdSpoolDir=$state/spool
StateSaveLocation=$state/state
SlurmctldLogFile=$state/ctld.log
SlurmdLogFile=$state/d.log
NodeName=$h CPUs=$(nproc) RealMemory=$(( $(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024 - 1024 )) State=UNKNOWN
PartitionName=debug Nodes=$h Default=YES MaxTime=INFINITE State=UP
CONF
stop() {
  for p in "$state/d.pid" "$state/ctld.pid" "$state/munged.pid"; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true; done
}
trap stop EXIT
/usr/sbin/slurmctld && /usr/sbin/slurmd
for _ in $(seq 30); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 1; done
sinfo
out=$(realpath -m target/ci-slurm); rm -rf "$out"; mkdir -p "$out"
ids=$(HARNESS="$harness" GRES= EXPERIMENTS="experiments/device-bandwidth.yaml experiments/cecka-sizes.yaml" \
  scripts/slurm/submit.sh 2 "$out" --quick --backend cpu)
echo "$ids"
merge=$(echo "$ids" | sed -n 's/.*merge: job \([0-9]*\).*/\1/p')
for _ in $(seq 1800); do
  st=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  case "$st" in COMPLETED) break ;; FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) echo "merge job $st"; cat "$out"/slurm-*.log; exit 1 ;; esac
  # A merge that can never run (a shard failed) stays pending with DependencyNeverSatisfied.
  scontrol show job "$merge" 2>/dev/null | grep -q DependencyNeverSatisfied && { echo "a shard failed"; cat "$out"/slurm-*.log; exit 1; }
  sleep 1
done
test "$st" = COMPLETED
cat "$out"/slurm-merge-*.log
# The same cases: no row of the unsharded run missing or failed (a regression), none added or
# removed. Timings are not judged: the two shards shared the machine's two cores.
"$harness" compare "$unsharded" "$out/merged" --force --fail-on never --all --format markdown > "$out/compare.md"
if grep -E '^\| (regression|added|removed) ' "$out/compare.md"; then
  echo "the merged run's cases differ from the unsharded run's"; exit 1
fi
echo "slurm: merged run $(ls "$out/merged/rows" | wc -l) experiments, the unsharded run's cases"
