#!/usr/bin/env bash
# On a GPU machine without a Rust toolchain (a cluster node, with the bundle of
# scripts/gpu-bundle.sh): every experiment, stopped cleanly after STOP_AFTER seconds so that a
# time-limited job keeps every finished case; RESUME=<run folder> continues one. The log and the
# run folder, packed as run.tgz, go to OUT_DIR.
#   scripts/gpu-run-all.sh OUT_DIR                         a new run
#   RESUME=results/<run> scripts/gpu-run-all.sh OUT_DIR    continue one
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: scripts/gpu-run-all.sh OUT_DIR" >&2
  exit 2
fi
out=$(mkdir -p "$1" && cd "$1" && pwd)
cd "$(dirname "$0")/.."
./scripts/gpu-unpack.sh
. scripts/gpu-env.sh
export FEMBENCH_EXPERIMENTS=$PWD/experiments
: "${STOP_AFTER:=500}"
nvidia-smi -L
start=$(date +%s)
target/release/harness validate experiments > /dev/null || exit 2
if [ -n "${RESUME:-}" ]; then
  target/release/harness run experiments --resume "$RESUME" --stop-after "$STOP_AFTER" > "$out/run.log" 2>&1
else
  target/release/harness run experiments --out results --stop-after "$STOP_AFTER" > "$out/run.log" 2>&1
fi
rc=$?
# The run folder as the harness names it ("run <folder>: ..."), not a guess from the listing.
run=${RESUME:-$(sed -n 's/^run \(.*\): [0-9]* cases.*/\1/p' "$out/run.log" | tail -1)}
echo "run $run: exit $rc after $(( $(date +%s) - start )) s"
grep -v "^\s*$" "$out/run.log" | grep -v "^FAILED" | tail -4
tar czf "$out/run.tgz" "$run"
