#!/usr/bin/env bash
# CI's CPU regression gate, proven on real runs of this machine every time CI runs: two quick CPU
# runs of the gate's experiments, back to back, then `harness compare` of the second against the
# first with a history of this runner's CPU: the committed runs of it (harness/tests/data/aa-cpu:
# thirty back-to-back runs on the 2-vCPU AMD EPYC CI machine), or, for a CPU those runs lack, ten
# runs made here first. The history gives each row its own envelope and tells the rows this
# runner cannot judge. The pair must pass. The first run with every time 25% longer (`harness
# plant`) must fail it, with at least 95% of the judged rows called slower. Prints the share of
# rows judged.
#   scripts/ci-gate.sh HARNESS OUT_DIR
set -euo pipefail
harness=$(realpath "$1")
out=$(realpath -m "$2")
cd "$(dirname "$0")/.."
experiments=(experiments/device-bandwidth.yaml experiments/cecka-sizes.yaml)
profile=harness/tests/data/aa-cpu
rm -rf "$out"
mkdir -p "$out/runs" "$out/history"
gate_run() { "$harness" run "${experiments[@]}" --backend cpu --quick --out "$1" >> "$out/runs.log"; }
# A run's devices, as `harness compare` matches a history to BASE.
devices() { python3 -c 'import json,sys; print(" | ".join(d["name"] for d in json.load(open(sys.argv[1] + "/meta.json"))["devices"]))' "$1"; }
gate_run "$out/runs"
first=$(ls -d "$out"/runs/*)
here=$(devices "$first")
known=0
for r in "$profile"/*/; do
  if [ "$(devices "$r")" = "$here" ]; then known=$((known + 1)); fi
done
if [ "$known" -lt 10 ]; then
  echo "the committed history holds $known runs of this runner ($here): ten runs here first, as its history"
  mv "$first" "$out/history/"
  for i in $(seq 2 10); do gate_run "$out/history"; done
  gate_run "$out/runs"
fi
gate_run "$out/runs"
base=$(ls -d "$out"/runs/* | sort | sed -n 1p)
new=$(ls -d "$out"/runs/* | sort | sed -n 2p)
# Rows by verdict in a Markdown comparison (every row listed).
count() { grep -cE "^\| ($2) " "$1" || true; }
if ! "$harness" compare --history "$profile" --history "$out/history" "$base" "$new" --all --format markdown > "$out/aa.md"; then
  echo "the gate failed two real back-to-back runs of one binary:"; cat "$out/aa.md"; exit 1
fi
rows=$(count "$out/aa.md" "regression|slower|noisy|not judged|faster|fixed|same|added|removed|untimed")
judged=$(count "$out/aa.md" "same|noisy|slower|faster")
echo "gate on two real runs: passed; $judged of $((rows)) rows judged ($(count "$out/aa.md" "not judged") not judged on this runner)"
"$harness" plant "$base" "$out/planted" --factor 1.25
if "$harness" compare --history "$profile" --history "$out/history" "$base" "$out/planted" --all --format markdown > "$out/planted.md"; then
  echo "the gate passed a planted 25% slowdown:"; cat "$out/planted.md"
  if [ "$judged" -eq 0 ]; then
    echo "it judged no row: every row of this runner moves beyond ±20% over its history, or the history lacks its CPU"
  fi
  exit 1
fi
slower=$(count "$out/planted.md" "slower")
planted_judged=$(count "$out/planted.md" "same|noisy|slower|faster")
echo "planted 25% slowdown: $slower of $planted_judged judged rows called slower"
test "$planted_judged" -gt 0
test $((100 * slower)) -ge $((95 * planted_judged))
