"""Whole networks in both formats with dynamic batch, against Paddle within 1e-4."""

from __future__ import annotations

import os

import pytest

from harness import builder
from harness.cases import REGISTRY, load_case_files, params
from harness.check import check_built

load_case_files(os.path.dirname(os.path.abspath(__file__)), "modelcases")
MODEL_CASES = [n for n, c in REGISTRY.items() if "/tests/models/" in c.module]


@pytest.mark.slow
@pytest.mark.parametrize("case,fmt", params(names=MODEL_CASES))
def test_model(case, fmt):
    check_built(builder.get(case, fmt), optimize_at=None if os.environ.get("PD2ONNX_NO_OPT") else 17)
