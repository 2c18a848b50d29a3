#!/usr/bin/env bash
# Creates the virtual environment the detection model tests use to build PaddleDetection's
# two-stage models as PIR programs (tests/models/test_detection_models.py,
# tools/paddledet_models.py, names ending in _pir): paddledet 2.6.0, the last release, with
# Paddle 3.3.1, which saves PIR JSON. The same packages as tools/setup_paddledet.sh (which has
# Paddle 2.6 and writes legacy programs) otherwise; numpy 1.26 is the newest both Paddle 3.3 and
# paddledet 2.6's dependencies take. Test-only: pd2onnx itself never imports paddle or ppdet.
# Location: $PD2ONNX_PADDLEDET_PIR_VENV.
set -euo pipefail
venv=${PD2ONNX_PADDLEDET_PIR_VENV:-$HOME/.cache/pd2onnx/paddledet_pir}
check="import cv2, paddle, ppdet.engine, sys; sys.exit(0 if paddle.__version__.startswith('3.3') else 1)"
if "$venv/bin/python" -c "$check" 2>/dev/null; then
  exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check 'paddlepaddle==3.3.1' 'numpy==1.26.4' \
  'opencv-python-headless==4.6.0.66' 'scipy==1.11.4' 'matplotlib==3.7.5' 'pandas==2.3.3' 'scikit-learn==1.7.2' \
  typeguard pyyaml shapely tqdm terminaltables pycocotools pyclipper requests six
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps 'paddledet==2.6.0'
"$venv/bin/python" -c "$check" >/dev/null
echo "paddledet (Paddle 3.3) ready in $venv"
