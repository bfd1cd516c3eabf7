#!/usr/bin/env bash
# On the GPU machine: unpack the carried binaries into target/release, where the Makefile looks.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target/release
xz -d -c .bundle/harness.xz > target/release/harness
chmod +x target/release/harness
if [ -f .bundle/gpu-tests.xz ]; then
  xz -d -c .bundle/gpu-tests.xz > target/release/gpu-tests
  chmod +x target/release/gpu-tests
fi
