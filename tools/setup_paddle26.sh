#!/usr/bin/env bash
# Creates the Paddle 2.6 virtual environment the tests use to write legacy .pdmodel files
# (Paddle 3.3 cannot build every legacy program; most real .pdmodel files come from 2.x).
# Test-only: pd2onnx itself never imports paddle. Location: $PD2ONNX_PADDLE26_VENV.
set -euo pipefail
venv=${PD2ONNX_PADDLE26_VENV:-$HOME/.cache/pd2onnx/paddle26}
if "$venv/bin/python" -c "import paddle, sys; sys.exit(0 if paddle.__version__.startswith('2.6') else 1)" 2>/dev/null; then
  exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check 'paddlepaddle==2.6.2' 'numpy<2'
echo "Paddle 2.6 ready in $venv"
