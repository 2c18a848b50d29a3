#!/usr/bin/env bash
# Creates the virtual environment the detection model tests use to build PaddleDetection models
# (tests/models/test_detection_models.py, tools/paddledet_models.py): paddledet 2.6.0, the last
# release, with Paddle 2.6.2, which writes legacy programs - or with the Paddle version given as
# the argument (tools/setup_paddledet_pir.sh: 3.3.1, which writes PIR). Test-only: pd2onnx itself
# never imports paddle or ppdet.
# paddledet's declared requirements cannot all be installed (sklearn==0.0 is a dead package,
# lap/motmetrics need compilers and serve only tracking), so it is installed without them and
# the modules its detection code imports are listed here; numpy 1.26 is the newest both Paddle 3.3
# and those modules take. Location: $PD2ONNX_PADDLEDET_VENV.
set -euo pipefail
paddle_version=${1:-2.6.2}
venv=${PD2ONNX_PADDLEDET_VENV:-$HOME/.cache/pd2onnx/paddledet}
case "$paddle_version" in
  2.*) numpy=1.23.5 ;;
  *) numpy=1.26.4 ;;
esac
check="import cv2, paddle, ppdet.engine, sys; sys.exit(paddle.__version__ != '$paddle_version')"
if "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
  exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "paddlepaddle==$paddle_version" "numpy==$numpy" \
  'opencv-python-headless==4.6.0.66' 'scipy==1.11.4' 'matplotlib==3.7.5' 'pandas==2.3.3' 'scikit-learn==1.7.2' \
  typeguard pyyaml shapely tqdm terminaltables pycocotools pyclipper requests six
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps 'paddledet==2.6.0'
"$venv/bin/python" -c "$check" >/dev/null
echo "paddledet on Paddle $paddle_version ready in $venv"
