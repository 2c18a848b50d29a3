"""Every operator case (tests/ops/cases_*.py) in both formats, against Paddle's outputs.

Each case is converted at the lowest opset that converts it, at 17 and at the newest opset
ONNX Runtime runs (also optimized at 17), checked with onnx.checker (full) and run; the
newest opset the installed onnx knows is converted and checked too.
"""

from __future__ import annotations

import glob
import importlib.util
import os

import pytest

from harness import builder
from harness.cases import FORMATS, REGISTRY
from harness.check import check_built

HERE = os.path.dirname(os.path.abspath(__file__))
# PD2ONNX_CASE_FILES=cases_nn,cases_tensor restricts the run (and the Paddle builds) to those files.
ONLY = set(os.environ.get("PD2ONNX_CASE_FILES", "").replace(".py", "").split(",")) - {""}
for path in sorted(glob.glob(os.path.join(HERE, "cases_*.py"))):
    if ONLY and os.path.basename(path)[:-3] not in ONLY:
        continue
    spec = importlib.util.spec_from_file_location(f"opcases_{os.path.basename(path)[:-3]}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

PARAMS = [
    pytest.param(case, fmt, id=f"{name}-{fmt}")
    for name, case in sorted(REGISTRY.items())
    for fmt in FORMATS
]


@pytest.mark.parametrize("case,fmt", PARAMS)
def test_op(case, fmt):
    if fmt not in case.formats:
        pytest.skip(f"{fmt} not built for this case: {case.why}")
    check_built(builder.get(case, fmt), optimize_at=None if os.environ.get("PD2ONNX_NO_OPT") else 17)
