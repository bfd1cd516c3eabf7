#!/usr/bin/env bash
# The device tool carries the working tree and the bundle (about 15 MB), 64 MiB in all, and the
# tracked tree is larger than what is left (about 65 MB, most of it committed figures). Before a
# device call, `scripts/gpu-slim.sh out` moves the committed figure folders that no command there
# reads out of the tree; after it, `scripts/gpu-slim.sh in` puts them back (git status is then
# clean again). The runs' rows stay: `make reproduce` reads their kernels.json.
set -euo pipefail
cd "$(dirname "$0")/.."
park="${FEMBENCH_SLIM_DIR:-/tmp/fembench-slim}"
case "${1:-}" in
  out)
    mkdir -p "$park"
    for d in $(git ls-files plots | cut -d/ -f2 | sort -u); do
      [ -d "plots/$d" ] && mv "plots/$d" "$park/"
    done
    git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -n 1 | sed 's/total/bytes of tracked files left in the tree/'
    ;;
  in)
    [ -d "$park" ] && for d in "$park"/*; do [ -e "$d" ] && mv "$d" plots/; done
    git status --short plots | head -n 5
    ;;
  *)
    echo "usage: $0 out|in" >&2
    exit 2
    ;;
esac
