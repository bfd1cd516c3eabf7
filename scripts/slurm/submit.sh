#!/bin/bash
# Submits a fembench run as a Slurm job array of N shards (one GPU each) and a merge job that
# runs when every shard succeeded. Prints both job ids.
#   scripts/slurm/submit.sh N OUT_DIR [harness run flags]
#   GRES=gpu:1 (default; GRES= for CPU-only nodes) PARTITION=... (optional)
set -euo pipefail
n=${1:?usage: submit.sh N OUT_DIR [harness run flags]}
out=${2:?usage: submit.sh N OUT_DIR [harness run flags]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
opts=()
[ -n "${GRES-gpu:1}" ] && opts+=(--gres="${GRES-gpu:1}")
[ -n "${PARTITION:-}" ] && opts+=(--partition="$PARTITION")
shards=$(sbatch --parsable "${opts[@]}" --array=0-$(( n - 1 )) --output="$out/slurm-%A_%a.log" "$here/reproduce.sbatch" "$out" "$@")
merge=$(sbatch --parsable --dependency=afterok:"$shards" --output="$out/slurm-merge-%j.log" "$here/merge.sbatch" "$out")
echo "shards: job $shards (array of $n), merge: job $merge"
