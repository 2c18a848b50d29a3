"""Every operator case (tests/ops/cases_*.py) in both formats, against Paddle's outputs.

Each case is converted at the lowest opset that converts it, at 17 and at the newest opset
ONNX Runtime runs (also optimized at 17), checked with onnx.checker (full) and run; the
newest opset the installed onnx knows is converted and checked too.
"""

from __future__ import annotations

import os

import pytest

from harness import builder
from harness.cases import REGISTRY, load_case_files, params
from harness.check import check_built

load_case_files(os.path.dirname(os.path.abspath(__file__)), "opcases")
OP_CASES = [n for n, c in REGISTRY.items() if "/tests/ops/" in c.module]


@pytest.mark.parametrize("case,fmt", params(names=OP_CASES))
def test_op(case, fmt):
    if fmt not in case.formats:
        pytest.skip(f"{fmt} not built for this case: {case.why}")
    check_built(builder.get(case, fmt), optimize_at=None if os.environ.get("PD2ONNX_NO_OPT") else 17)
