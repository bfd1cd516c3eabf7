#!/usr/bin/env bash
# On a GPU node without a Rust toolchain (the bundle of scripts/gpu-bundle.sh): `make reproduce`
# timed, as docs/cluster.md reports it.
#   scripts/gpu-scale.sh cold OUT   every GPU of the node, the prepared-problem cache emptied first
#   scripts/gpu-scale.sh warm OUT   every GPU, the cache as the last run left it
#   scripts/gpu-scale.sh one OUT    one GPU (CORES=0-15: on a one-GPU node's share of the cores)
# OUT gets LABEL.log, LABEL.tgz (the run folder) and a line in summary.txt (LABEL: the mode, or
# the third argument).
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: scripts/gpu-scale.sh cold|warm|one OUT [LABEL]" >&2
  exit 2
fi
mode=$1
out=$(mkdir -p "$2" && cd "$2" && pwd)
label=${3:-$mode}
cd "$(dirname "$0")/.."
[ -x target/release/harness ] || ./scripts/gpu-unpack.sh
. scripts/gpu-env.sh
export NCCL_NVLS_ENABLE=0
[ "$mode" = cold ] && target/release/harness cache clear
mkdir -p results
touch results/.before-"$label"
start=$(date +%s%N)
case $mode in
  one) ${CORES:+taskset -c "$CORES"} make reproduce > "$out/$label.log" 2>&1 ;;
  cold | warm) make reproduce GPUS=all > "$out/$label.log" 2>&1 ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
rc=$?
wall=$(( ($(date +%s%N) - start) / 1000000 ))
# The run folder the log names last (the merged one where there were workers).
run=$(grep -o '^run results/[^:]*' "$out/$label.log" | tail -n 1 | cut -c 5-)
echo "$label: exit $rc, wall $wall ms, run $run, $(nproc) cores, $(nvidia-smi -L | wc -l) GPUs" | tee -a "$out/summary.txt"
target/release/harness cache list | head -n 1 | tee -a "$out/summary.txt"
# The run folder, and each worker's meta.json (its own start and end) where there were workers.
metas=$(cd results && find . -path "./*-shards/*/meta.json" -newer .before-"$label")
[ -n "$run" ] && tar czf "$out/$label.tgz" -C results "${run#results/}" $metas
exit $rc
