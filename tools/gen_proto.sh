#!/usr/bin/env bash
# Regenerates src/pd2onnx/paddle/framework_pb2.py from framework.proto.
# Uses a throwaway virtualenv so the project's own protobuf runtime is untouched.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install -q 'grpcio-tools==1.62.3'
cd "$here/src/pd2onnx/paddle"
"$venv/bin/python" -m grpc_tools.protoc -I. --python_out=. framework.proto
echo "wrote $here/src/pd2onnx/paddle/framework_pb2.py"
