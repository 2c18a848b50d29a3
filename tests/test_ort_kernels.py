"""The committed ONNX Runtime kernel table (src/pd2onnx/convert/ort_kernels.py) is what the
installed onnxruntime registers (regenerate it with tools/gen_ort_kernels.py)."""

from __future__ import annotations

import importlib.util
import os

import pytest

from pd2onnx.convert import ort_kernels

ort = pytest.importorskip("onnxruntime")

TOOL = os.path.join(os.path.dirname(__file__), "..", "tools", "gen_ort_kernels.py")


def _tool():
    spec = importlib.util.spec_from_file_location("gen_ort_kernels", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_table_matches_installed_onnxruntime():
    version, table = _tool().collect()
    assert ort_kernels.ORT_VERSION == version, (
        f"the table is from onnxruntime {ort_kernels.ORT_VERSION}, {version} is installed: "
        "rerun tools/gen_ort_kernels.py")
    committed = {op: [(a, b, dict(c)) for a, b, c in ks] for op, ks in ort_kernels.KERNELS.items()}
    assert committed == {op: [(a, b, dict(c)) for a, b, c in ks] for op, ks in table.items()}


def test_table_file_is_what_the_tool_writes():
    tool = _tool()
    version, table = tool.collect()
    with open(ort_kernels.__file__) as f:
        assert f.read() == tool.render(version, table), "rerun tools/gen_ort_kernels.py"


def test_onnxruntime_stays_a_test_dependency():
    """The converter reads the table, never onnxruntime."""
    import subprocess
    import sys

    code = ("import sys; import pd2onnx.convert.legalize, pd2onnx.convert.exporter; "
            "sys.exit(1 if 'onnxruntime' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
