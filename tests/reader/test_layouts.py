"""Older model layouts written by Paddle (tests/reader/cases_layouts.py): found with no flags,
converted, and equal to Paddle's own outputs. The parameters themselves are compared byte for
byte with Paddle's loading by tests/reader/test_reader_vs_paddle.py."""

from __future__ import annotations

import os

import pytest

import pd2onnx
from harness import builder
from harness.cases import REGISTRY, load_case_files, params
from harness.check import check_built

load_case_files(os.path.dirname(os.path.abspath(__file__)), "readercases")
LAYOUT_CASES = [n for n, c in REGISTRY.items() if n.startswith("layout_")]
EXPECTED_LAYOUT = {"layout_separate_files": "separate", "layout_model_and___params__": "combined",
                   "layout_bare_model_and_params": "combined", "layout_pir_separate": "separate"}


@pytest.mark.parametrize("case,fmt", params(names=LAYOUT_CASES))
def test_layout_converts_like_paddle(case, fmt):
    if fmt not in case.formats:
        pytest.skip(f"{fmt} not built for this case: {case.why}")
    built = builder.get(case, fmt)
    assert built.error is None, built.error
    program = pd2onnx.load(built.model_file)  # the directory alone: no flags
    assert program.params_layout == EXPECTED_LAYOUT[case.name]
    assert program.params, "no parameters were read"
    check_built(built)


@pytest.mark.parametrize("case,fmt", params(names=LAYOUT_CASES))
def test_info_names_the_layout(case, fmt, capsys):
    if fmt not in case.formats:
        pytest.skip(f"{fmt} not built for this case: {case.why}")
    from pd2onnx.cli import main

    built = builder.get(case, fmt)
    assert built.error is None, built.error
    assert main(["info", built.model_file]) == 0
    text = capsys.readouterr().out
    phrase = {"separate": "one file per parameter", "combined": "one combined file"}[EXPECTED_LAYOUT[case.name]]
    assert phrase in text, text
    assert main(["info", built.model_file, "--json"]) == 0
    assert f'"params_layout": "{EXPECTED_LAYOUT[case.name]}"' in capsys.readouterr().out


@pytest.mark.parametrize("case,fmt", params(names=LAYOUT_CASES))
def test_verify_runs_paddle_on_the_layout(case, fmt):
    """pd2onnx verify feeds the same directory to Paddle's predictor and to ONNX Runtime."""
    if fmt not in case.formats:
        pytest.skip(f"{fmt} not built for this case: {case.why}")
    from pd2onnx import verify

    built = builder.get(case, fmt)
    report = verify(built.model_file, batch=2)
    assert report.ok(1e-5, 1e-5), report
