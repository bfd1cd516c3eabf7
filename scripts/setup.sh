#!/usr/bin/env bash
# Installs what fembench's tests and CPU runs need on a Debian or Ubuntu machine:
# - PoCL and the OpenCL loader (the tests run every kernel on the CPU through OpenCL);
# - NVRTC from NVIDIA's nvidia-cuda-nvrtc wheel, into ~/.cache/fembench/nvrtc (the tests compile
#   every kernel to PTX, so a CUDA compile error fails them even without a GPU).
# - NumPy and SciPy for the Python peer that runs on the host (scipy-tocsr; pip, where missing),
#   JAX's CPU build for the JAX routes (jax-cpu) and NVIDIA Warp for the Warp routes (warp-cpu;
#   the same wheel runs on a GPU).
# A GPU machine needs the NVIDIA driver and NVRTC (CUDA toolkit 13, or the same wheel) instead;
# its Python peers need CuPy and PyTorch, which are not installed here (their rows say skipped).
# Run as root, or with sudo available. Rust comes from rustup (https://rustup.rs), not from here.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust with rustup (https://rustup.rs), then run this again" >&2
  exit 1
fi
if ! dpkg -s pocl-opencl-icd ocl-icd-opencl-dev >/dev/null 2>&1; then
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq pocl-opencl-icd ocl-icd-opencl-dev >/dev/null
fi
# pip, for NVRTC's wheel and the Python peers: Debian's python3-pip where Python has none.
if ! python3 -m pip --version >/dev/null 2>&1; then
  { $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-pip >/dev/null; } ||
    echo "setup: pip could not be installed; NVRTC and the Python peers need it (their tests and rows will say so)" >&2
fi
nvrtc_dir="${FEMBENCH_NVRTC_DIR:-$HOME/.cache/fembench/nvrtc}"
if ! find "$nvrtc_dir" -name 'libnvrtc.so.*' 2>/dev/null | grep -q .; then
  python3 -m pip install -q --disable-pip-version-check --target "$nvrtc_dir" 'nvidia-cuda-nvrtc>=13,<14' ||
    echo "setup: NVRTC could not be installed into $nvrtc_dir; the NVRTC compile tests will say skipped" >&2
fi
if ! python3 -c "import numpy, scipy" >/dev/null 2>&1; then
  python3 -m pip install -q --disable-pip-version-check numpy scipy ||
    echo "setup: NumPy and SciPy could not be installed; the scipy-tocsr rows will say skipped" >&2
fi
# JAX's CPU build: the JAX routes run on its CPU device here (on a GPU machine, its CUDA build).
if ! python3 -c "import jax" >/dev/null 2>&1; then
  python3 -m pip install -q --disable-pip-version-check jax ||
    echo "setup: JAX could not be installed; the jax-cpu rows will say skipped" >&2
fi
# NVIDIA Warp (warp-lang, about 150 MB): the Warp routes run on its CPU device here.
if ! python3 -c "import warp" >/dev/null 2>&1; then
  python3 -m pip install -q --disable-pip-version-check warp-lang ||
    echo "setup: Warp could not be installed; the warp-cpu rows will say skipped" >&2
fi
echo "setup: Python peers: $(python3 -c 'import numpy, scipy; print("NumPy", numpy.__version__, "SciPy", scipy.__version__)' 2>/dev/null || echo none), $(python3 -c 'import jax; print("JAX", jax.__version__)' 2>/dev/null || echo 'no JAX'), $(python3 -c 'import warp; print("Warp", warp.__version__)' 2>/dev/null || echo 'no Warp')"
echo "setup: PoCL $(dpkg-query -W -f '${Version}' pocl-opencl-icd), NVRTC in $nvrtc_dir"
