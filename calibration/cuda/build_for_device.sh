#!/usr/bin/env bash
# Builds build/bin/calib_cuda_device: calib_cuda without HDF5 (it writes the JSON form of its
# trace, which calib_trace_convert turns into HDF5 here), the CUDA and C++ runtimes linked in,
# for Hopper (sm_90) and Ampere (sm_80), with PTX for later GPUs, so that the one file runs on
# a bare GPU machine with only the NVIDIA driver (cuBLAS, the reference, is loaded at run time
# where it is found). It needs the C library of this build machine or a later one (glibc 2.36
# on Debian 12: Ubuntu 24.04 runs it, Ubuntu 22.04 does not); build on the oldest system to
# carry it further.
# Needs nvcc here, no GPU; see cuda/run_on_device.sh for what to run there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
revision=$(git -C "$root" describe --always --dirty --abbrev=7 2>/dev/null || echo unknown)
echo "#define SIMCORE_GIT_REVISION \"$revision\"" >"$generated/simcore_git_revision.hpp"
flags="-O3 -std=c++17"
mkdir -p "$root/build/bin"
"$nvcc" $flags -DSIMCORE_CUDA_NO_HDF5 -DSIMCORE_BENCH_FLAGS="\"nvcc $flags, sm_80 sm_90 compute_90\"" -I"$root/calibration/include" \
  -I"$root/simcore/include" -I"$generated" \
  -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
  -gencode arch=compute_90,code=compute_90 -cudart static \
  -Xcompiler -static-libstdc++,-static-libgcc "$root/calibration/cuda/cuda_kernels.cu" \
  "$root/calibration/src/trace_json.cpp" "$root/calibration/src/machine_attributes.cpp" \
  "$root/simcore/src/json_locations.cpp" -ldl \
  -o "$root/build/bin/calib_cuda_device"
echo "built $root/build/bin/calib_cuda_device ($revision)"
