# Source this on a GPU machine before running the harness: it finds NVRTC and NVIDIA's OpenCL
# driver and points the dynamic loaders at them (cudarc and opencl3 open both at run time).
_fb_find() { find /usr /opt /lib /lib64 -name "$1" 2>/dev/null | head -n 1; }

if ! ldconfig -p | grep -q 'libnvrtc\.so'; then
  _nvrtc=$(_fb_find 'libnvrtc.so.1[0-9]')
  [ -n "$_nvrtc" ] && export LD_LIBRARY_PATH="$(dirname "$_nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# cuSPARSE (the vendor peers): the toolkit's, or the one pip's nvidia packages carry.
if ! ldconfig -p | grep -q 'libcusparse\.so'; then
  _sp=$(_fb_find 'libcusparse.so.1[0-9]')
  [ -n "$_sp" ] && export LD_LIBRARY_PATH="$(dirname "$_sp")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# cuBLAS (the CG peer's dot products and updates): same places.
if ! ldconfig -p | grep -q 'libcublas\.so'; then
  _bl=$(_fb_find 'libcublas.so.1[0-9]')
  [ -n "$_bl" ] && export LD_LIBRARY_PATH="$(dirname "$_bl")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# NCCL (the multi-GPU study): cudarc opens libnccl.so, and pip's nvidia-nccl package ships only
# libnccl.so.2: link it under the name cudarc asks for. NVLink multicast stays off.
if ! ldconfig -p | grep -q 'libnccl\.so '; then
  _nc=$(_fb_find 'libnccl.so.2')
  if [ -n "$_nc" ]; then
    mkdir -p /tmp/fembench-nccl
    ln -sf "$_nc" /tmp/fembench-nccl/libnccl.so
    export LD_LIBRARY_PATH="/tmp/fembench-nccl${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi
export NCCL_NVLS_ENABLE=0
if ! ldconfig -p | grep -q 'libOpenCL\.so\.1'; then
  _ocl=$(_fb_find 'libOpenCL.so.1')
  [ -n "$_ocl" ] && export LD_LIBRARY_PATH="$(dirname "$_ocl")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# NVIDIA's OpenCL driver may be installed without an ICD file: make one.
if [ -z "${OCL_ICD_VENDORS:-}" ] && [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  _icd_lib=$(_fb_find 'libnvidia-opencl.so.1')
  if [ -n "$_icd_lib" ]; then
    mkdir -p /tmp/fembench-icd
    echo "$_icd_lib" > /tmp/fembench-icd/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/fembench-icd
  fi
fi
unset -f _fb_find
