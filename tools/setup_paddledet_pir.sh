#!/usr/bin/env bash
# Creates the virtual environment that builds PaddleDetection's two-stage models as PIR programs
# (tools/paddledet_models.py, names ending in _pir): the paddledet environment of
# tools/setup_paddledet.sh with Paddle 3.3.1, which saves PIR JSON. Location:
# $PD2ONNX_PADDLEDET_PIR_VENV.
set -euo pipefail
PD2ONNX_PADDLEDET_VENV=${PD2ONNX_PADDLEDET_PIR_VENV:-$HOME/.cache/pd2onnx/paddledet_pir} \
  exec bash "$(dirname "$0")/setup_paddledet.sh" 3.3.1
