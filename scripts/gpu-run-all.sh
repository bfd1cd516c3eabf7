#!/usr/bin/env bash
# On a GPU machine without Rust (the device tool): every experiment, stopped cleanly after
# STOP_AFTER seconds so that a time-limited job keeps every finished case; RESUME=<run folder>
# continues one. The run folder is packed into $OUT/run.tgz.
#   scripts/gpu-run-all.sh               a new run
#   RESUME=results/<run> scripts/gpu-run-all.sh
set -uo pipefail
cd "$(dirname "$0")/.."
./scripts/gpu-unpack.sh
. scripts/gpu-env.sh
export FEMBENCH_EXPERIMENTS=$PWD/experiments
: "${STOP_AFTER:=500}" "${OUT:=/tmp/out}"
nvidia-smi -L
start=$(date +%s)
target/release/harness validate experiments > /dev/null || exit 2
if [ -n "${RESUME:-}" ]; then
  target/release/harness run experiments --resume "$RESUME" --stop-after "$STOP_AFTER" > "$OUT/run.log" 2>&1
else
  target/release/harness run experiments --out results --stop-after "$STOP_AFTER" > "$OUT/run.log" 2>&1
fi
rc=$?
# The run folder as the harness names it ("run <folder>: ..."), not a guess from the listing.
run=${RESUME:-$(sed -n 's/^run \(.*\): [0-9]* cases.*/\1/p' "$OUT/run.log" | tail -1)}
echo "run $run: exit $rc after $(( $(date +%s) - start )) s"
grep -v "^\s*$" "$OUT/run.log" | grep -v "^FAILED" | tail -4
tar czf "$OUT/run.tgz" "$run"
