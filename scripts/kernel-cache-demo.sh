#!/usr/bin/env bash
# Runs one order-6 Cecka case (SharedAtomic, CUDA, f32) twice, each in a new process, with an
# empty kernel cache before the first: the first run compiles, the second loads the compiled
# kernels from the disk cache. Prints each run's wall time; the rows' compile_s and case_wall_s
# columns give the split. Usage: scripts/kernel-cache-demo.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-/tmp/kernel-cache-demo}"
mkdir -p "$out"
export FEMBENCH_KERNEL_CACHE="$out/kernels"
rm -rf "$FEMBENCH_KERNEL_CACHE"
cat > "$out/demo.yaml" <<'YAML'
id: kernel-cache-demo
title: "One order-6 Cecka case, to show the kernel cache"
paper: "Cecka, Lew, Darve 2011"
benchmark: cecka-assembly
sweep:
  method: [shared-atomic]
  level: [4]
  order: [6]
backends: [cuda]
precisions: [f32]
measure: { warmup: 1, min_reps: 5, min_time_s: 0.02, max_reps: 100 }
outputs:
  tables: [timings]
  figures: []
YAML
harness="${CARGO_TARGET_DIR:-target}/release/harness"
for n in 1 2; do
  s=$(date +%s.%N)
  "$harness" run "$out/demo.yaml" --out "$out/run$n" >/dev/null
  e=$(date +%s.%N)
  echo "run $n: $(awk "BEGIN{printf \"%.1f\", $e - $s}") s wall, $(ls "$FEMBENCH_KERNEL_CACHE" | wc -l) kernels in the cache"
done
