#!/usr/bin/env bash
# Builds build/bin/calib_cuda_device: the CUDA kernels without HDF5 (checks and rates printed,
# no trace), the C++ runtime linked in, for Hopper (sm_90) and Ampere (sm_80), so that the one
# file runs on a bare GPU machine with only the NVIDIA driver. Needs nvcc here, no GPU:
#   calibration/cuda/build_for_device.sh && build/bin/calib_cuda_device --check   (on the GPU machine)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$root/build/bin"
"$nvcc" -O3 -std=c++17 -DSIMCORE_CUDA_NO_TRACE -I"$root/calibration/include" -I"$root/simcore/include" \
  -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -cudart static \
  -Xcompiler -static-libstdc++,-static-libgcc "$root/calibration/cuda/cuda_kernels.cu" \
  -o "$root/build/bin/calib_cuda_device"
echo "built $root/build/bin/calib_cuda_device"
