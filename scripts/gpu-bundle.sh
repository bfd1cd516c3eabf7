#!/usr/bin/env bash
# Builds the release harness and the GPU-only test binary and packs them for a GPU machine
# without a Rust toolchain (a cluster node, say): copy .bundle/ there with the checkout, and
# scripts/gpu-unpack.sh unpacks it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin harness
gpu_test=$(cargo test --release --test gpu --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "gpu" and m.get("executable"):
        print(m["executable"])')
mkdir -p .bundle
# -9e: the smallest bundle (harness: 15.4 MB at -9e against 16.2 MB at -6).
xz -T0 -9e -c target/release/harness > .bundle/harness.xz
xz -T0 -9e -c "$gpu_test" > .bundle/gpu-tests.xz
ls -la .bundle
