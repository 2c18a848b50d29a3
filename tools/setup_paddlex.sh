#!/usr/bin/env bash
# Creates the virtual environment the PaddleX model tests use to build their models
# (tests/models/test_paddlex_models.py, tools/paddlex_models.py): paddlex 3.7.2 (whose wheel holds
# the native definitions of the PaddleOCR 3.7 models) with Paddle 3.3.1, which saves PIR JSON.
# Test-only: pd2onnx itself never imports paddle or paddlex. paddlex's declared requirements pull
# in its whole pipeline stack (opencv, pydantic, ...); the build script imports only the model
# definitions (without the package __init__s above them), so paddlex is installed without its
# requirements and the modules those definitions import are listed here.
# Location: $PD2ONNX_PADDLEX_VENV.
set -euo pipefail
venv=${PD2ONNX_PADDLEX_VENV:-$HOME/.cache/pd2onnx/paddlex}
check="import paddle, colorlog, filelock, packaging, prettytable, requests, importlib.metadata as m; assert m.version('paddlex') == '3.7.2'"
if "$venv/bin/python" -c "$check" 2>/dev/null; then
  exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check 'paddlepaddle==3.3.1' 'numpy==1.26.4'
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps 'paddlex==3.7.2' 'colorlog==6.12.0' \
  'filelock==4.3.1' 'packaging==26.4' 'prettytable==3.18.0' 'requests==2.34.2' 'urllib3==2.8.0' \
  'charset-normalizer==3.4.4'
"$venv/bin/python" -c "$check" >/dev/null
echo "paddlex ready in $venv"
