#!/usr/bin/env bash
# On a GPU machine without the project's build (a borrowed device, a bare node): checks the CUDA
# kernels against their CPU references, then times them, with cuBLAS and cuDNN as the
# references where copies of them are found, and leaves in OUT_DIR (default: $OUT where set, else ./cuda-run):
#   check.txt, run.txt   what calib_cuda_device printed (checks; rates and shares)
#   cuda.json            the trace's JSON form: calib_trace_convert cuda.json -o cuda.h5
#   nvidia-smi.txt       the device, its driver and clocks, before the run
#   clocks.csv           SM and memory clocks, power and temperature during the timings
# Build the binary first where nvcc is (cuda/build_for_device.sh) and bring
# build/bin/calib_cuda_device along. Exit status: calib_cuda_device's (77: no GPU).
#   calibration/cuda/run_on_device.sh [OUT_DIR [calib_cuda options: --size N --repetitions R]]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${CALIB_CUDA:-$root/build/bin/calib_cuda_device}
out=${1:-${OUT:-cuda-run}}
[ $# -gt 0 ] && shift
[ -x "$bin" ] || { echo "run_on_device.sh: $bin not found; build it with calibration/cuda/build_for_device.sh" >&2; exit 2; }
mkdir -p "$out"
nvidia-smi -q >"$out/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed" >>"$out/nvidia-smi.txt"
# The loader's cache, read once: `ldconfig -p | grep -q` under pipefail fails when grep stops
# early and ldconfig dies of the broken pipe, which took a library found for one missing.
cache=$(ldconfig -p 2>/dev/null || true)
# The copy of a library with the highest major version (the file name's last number), found
# where a Python package (PyTorch's nvidia-cublas, nvidia-cudnn) brought it.
# (SIMCORE_LIBRARY_ROOTS: where to look, /usr /opt /root /home by default.)
newest() {
  # shellcheck disable=SC2086
  find ${SIMCORE_LIBRARY_ROOTS:-/usr /opt /root /home} -name "$1" 2>/dev/null |
    awk -F/ '{ n = $NF; sub(/.*\.so\./, "", n); print n "\t" $0 }' | sort -t "$(printf '\t')" -k1,1nr -k2,2 |
    head -n 1 | cut -f 2
}
if [ -z "${SIMCORE_CUBLAS:-}" ] && ! grep -q 'libcublas\.so\.1[0-9] ' <<<"$cache"; then
  lib=$(newest 'libcublas.so.1[0-9]')
  [ -n "$lib" ] && export SIMCORE_CUBLAS=$lib
fi
if [ -z "${SIMCORE_CUDNN:-}" ] && ! grep -q 'libcudnn\.so\.9 ' <<<"$cache"; then
  # cuDNN 9 loads its parts (libcudnn_cnn, _ops, _engines_*) from the loader's path too.
  lib=$(newest 'libcudnn.so.9')
  [ -n "$lib" ] && export SIMCORE_CUDNN=$lib LD_LIBRARY_PATH=$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
"$bin" --check 2>&1 | tee "$out/check.txt"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || exit "$rc"
# The clocks, power and temperature every 200 ms while the kernels are timed.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 200 \
  >"$out/clocks.csv" 2>/dev/null &
sampler=$!
"$bin" -o "$out/cuda.json" "$@" 2>&1 | tee "$out/run.txt"
rc=${PIPESTATUS[0]}
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
exit "$rc"
