#!/usr/bin/env bash
# What `harness compare` can judge on a runner, measured on real runs of it (docs/ci.md): given
# a folder of back-to-back runs of one binary (RUNS) and, optionally, a folder of earlier runs of
# the same experiments on the same machine (PROFILE), prints for every consecutive pair in RUNS
# the exit of `harness compare` without history, with the three runs before it as history (the
# 3-run windows), and with PROFILE as history; the rows judged; and, with PROFILE, how many judged
# rows a 25% slowdown planted in the pair's NEW run brings out as slower.
#   scripts/gate-study.sh HARNESS RUNS [PROFILE]
set -uo pipefail
harness=$(realpath "$1")
mapfile -t runs < <(find "$2" -mindepth 1 -maxdepth 1 -type d -exec test -f {}/meta.json \; -print | sort)
profile=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
count() { grep -cE "^\| ($2) " "$1" || true; }
judged="same|noisy|slower|faster"
fails=(0 0 0); pairs=(0 0 0); caught=0; planted=0; judged_rows=0; all_rows=0
for ((i = 1; i < ${#runs[@]}; i++)); do
  base=${runs[i-1]}; new=${runs[i]}
  "$harness" compare "$base" "$new" --all --format markdown > "$tmp/plain.md" 2>/dev/null || fails[0]=$((fails[0] + 1))
  pairs[0]=$((pairs[0] + 1))
  if ((i >= 4)); then
    "$harness" compare "${runs[i-4]}" "${runs[i-3]}" "${runs[i-2]}" "$base" "$new" --all --format markdown > "$tmp/w3.md" 2>/dev/null ||
      fails[1]=$((fails[1] + 1))
    pairs[1]=$((pairs[1] + 1))
  fi
  if [ -n "$profile" ]; then
    "$harness" compare --history "$profile" "$base" "$new" --all --format markdown > "$tmp/p.md" 2>/dev/null || fails[2]=$((fails[2] + 1))
    pairs[2]=$((pairs[2] + 1))
    judged_rows=$((judged_rows + $(count "$tmp/p.md" "$judged"))); all_rows=$((all_rows + $(count "$tmp/p.md" "regression|slower|noisy|not judged|faster|fixed|same|added|removed|untimed")))
    rm -rf "$tmp/planted"
    "$harness" plant "$new" "$tmp/planted" --factor 1.25 > /dev/null
    "$harness" compare --history "$profile" "$base" "$tmp/planted" --all --format markdown > "$tmp/pl.md" 2>/dev/null
    caught=$((caught + $(count "$tmp/pl.md" slower))); planted=$((planted + $(count "$tmp/pl.md" "$judged")))
  fi
done
echo "pairs without history: ${fails[0]} of ${pairs[0]} exit 1"
echo "3-run-history windows: ${fails[1]} of ${pairs[1]} exit 1"
if [ -n "$profile" ]; then
  echo "with the history $profile: ${fails[2]} of ${pairs[2]} pairs exit 1; rows judged: $judged_rows of $all_rows"
  echo "25% slowdown planted in NEW: $caught of $planted judged rows called slower"
fi
