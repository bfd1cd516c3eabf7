#!/usr/bin/env bash
# A/A runs on a GPU machine: the experiments of the GPU workflow template (device-bandwidth,
# cecka-sizes, banas-integration) on CUDA, RUNS times back to back, each in its own process,
# compacted and packed as OUT/aa-<host>-<i>.tgz as soon as it ends, for `harness compare` and
# scripts/gate-study.sh on another machine.
#   scripts/gpu-aa.sh OUT [RUNS]
set -euo pipefail
out=$(realpath -m "$1")
n=${2:-2}
cd "$(dirname "$0")/.."
harness=${HARNESS:-target/release/harness}
mkdir -p "$out"
work=$(mktemp -d)
for i in $(seq "$n"); do
  start=$(date +%s)
  "$harness" run experiments/device-bandwidth.yaml experiments/cecka-sizes.yaml experiments/banas-integration.yaml \
    --backend cuda --out "$work/$i" > "$work/run-$i.log" 2>&1 || echo "run $i exited $?"
  tail -n 3 "$work/run-$i.log"
  "$harness" compact "$work/$i"/* > /dev/null
  rm -f "$work/$i"/*/lock
  tar -C "$work/$i" -czf "$out/aa-$(hostname)-$i.tgz" .
  echo "run $i: $(( $(date +%s) - start )) s"
done
