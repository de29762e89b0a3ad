#!/usr/bin/env bash
# Calibrate, then predict, on this machine (see predict_loop.py, which does the work).
#   calibration/predict_loop.sh [OUT_DIR] [--rounds N] [--sizes 16,32,64,128] [--hosts A,B]
#                               [--max-bytes B] [--buffers per-size|shared] [--periodic] [--stencil 7|27]
#                               [--unbundled] [--smpi-ois]
exec /usr/bin/python3 "$(dirname "$0")/predict_loop.py" "$@"
