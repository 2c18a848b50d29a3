"""Regenerate src/pd2onnx/convert/ops/_index.py (which ops module converts which op) from the
mapper registry: python tools/gen_mapper_index.py

The converter imports only the mapper modules a model's ops need through this index;
tests/test_cli.py fails when it is stale."""

import os

from pd2onnx.convert.registry import format_module_index

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "pd2onnx", "convert", "ops", "_index.py")
with open(path, "w") as f:
    f.write(format_module_index())
print(f"wrote {os.path.normpath(path)}")
