#!/usr/bin/env bash
# NVIDIA Warp (warp-lang, about 150 MB) for a GPU machine that cannot fetch it, in parts small
# enough for a transfer of limited size (the device README: 64 MiB a call with the checkout):
#   here:   scripts/warp-wheel.sh split [VERSION]    downloads the wheel into .w/ and splits it
#                                                     into .w/part.aa, .w/part.ab, ... of
#                                                     PART_BYTES (default 22 MB: a call carries
#                                                     the checkout, about 44 MB, and one part;
#                                                     the harness bundle goes in a call of its own)
#   there:  scripts/warp-wheel.sh park               copies the .w/part.* this call carried to
#                                                     /tmp/warp-parts (one call a part, machine warm)
#           scripts/warp-wheel.sh install            joins the parts, checks the wheel's SHA-256
#                                                     (.w/SHA256, written by split) and installs
#                                                     it into /tmp/site; then
#                                                     export PYTHONPATH=/tmp/site
# `.w/` is git-ignored (.git/info/exclude); each call names the part it carries in `carry`.
set -euo pipefail
cd "$(dirname "$0")/.."
parts=/tmp/warp-parts
case "${1:-}" in
split)
  version=${2:-1.19.0}
  mkdir -p .w && rm -f .w/part.* .w/*.whl
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 -d .w "warp-lang==$version"
  wheel=$(ls .w/warp_lang-*.whl)
  basename "$wheel" > .w/NAME
  sha256sum "$wheel" | cut -d' ' -f1 > .w/SHA256
  (cd .w && split -b "${PART_BYTES:-22000000}" "$(cat NAME)" part. && rm "$(cat NAME)")
  ls -l .w
  ;;
park)
  mkdir -p "$parts"
  # The call that carries the first part also carries NAME and SHA256.
  for f in .w/part.* .w/NAME .w/SHA256; do [ -f "$f" ] && cp "$f" "$parts"/; done
  ls -l "$parts"
  ;;
install)
  name=$(cat "$parts/NAME")
  cat "$parts"/part.* > "/tmp/$name"
  echo "$(cat "$parts/SHA256")  /tmp/$name" | sha256sum -c -
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "/tmp/$name"
  PYTHONPATH=/tmp/site python3 -c 'import warp; print("Warp", warp.__version__)'
  ;;
*)
  sed -n 2,13p "$0" >&2
  exit 2
  ;;
esac
