"""matrix_nms in bounded memory: PP-YOLO's settings on a 512x512 image (16128 boxes, 80
classes, nms_top_k=-1) run in ONNX Runtime within a few hundred MB, and equal Paddle.

A graph comparing every pair of boxes per class (what pd2onnx built before) needs one
[1, 80, 16128, 16128] float32 tensor, 83 GB, for the IoU alone; Paddle's kernel compares only
each class's candidates (score above the threshold). ONNX Runtime's peak resident memory is
measured in a process of its own (its ``VmHWM`` after the run), for both formats.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import onnx_ir as ir
import pytest

from harness import builder
from harness.cases import REGISTRY, load_case_files
from harness.check import compare, load_io
from pd2onnx.api import convert

load_case_files(os.path.dirname(os.path.abspath(__file__)), "opcases")

CASE = "det_matrix_nms_ppyolo"
# ONNX Runtime's process (Python, numpy and onnxruntime loaded: ~60 MB) may peak at this much.
PEAK_BUDGET_MB = 400

_RUNNER = r"""
import json, sys
import numpy as np
import onnxruntime as ort

model, feeds_file, out_file = sys.argv[1:4]
opts = ort.SessionOptions()
opts.intra_op_num_threads = 1
sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
io = np.load(feeds_file)
feeds = {i.name: io[f"in{k}"] for k, i in enumerate(sess.get_inputs())}
outs = sess.run(None, feeds)
# VmHWM: this process image's own peak. Not ru_maxrss, which Linux carries over from the
# parent across fork and exec: a pytest worker grown to 3 GB made every child report 3 GB.
with open("/proc/self/status") as f:
    peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))  # kB
np.savez(out_file, *outs)
print(json.dumps({"peak_kb": peak}))
"""


@pytest.mark.parametrize("fmt", ["pir", "legacy"])
def test_matrix_nms_ppyolo_memory(fmt, tmp_path):
    if CASE not in REGISTRY:
        pytest.skip(f"{CASE} is not loaded (PD2ONNX_CASE_FILES leaves cases_detection out)")
    built = builder.get(REGISTRY[CASE], fmt)
    assert built.error is None, built.error
    inputs, wants = load_io(os.path.join(built.dir, "io.npz"))
    boxes, scores = inputs
    n, c, m = scores.shape
    assert n * c * m * m * 4 > 2 * 2**30  # one all-pairs IoU tensor of these inputs: > 2 GB

    model = convert(built.model_file, built.params_file, opset=17, auto_opset=False, optimize=False)
    onnx_file = tmp_path / "model.onnx"
    onnx_file.write_bytes(ir.serde.serialize_model(model).SerializeToString())
    feeds = tmp_path / "feeds.npz"
    np.savez(feeds, in0=boxes, in1=scores)
    outs = tmp_path / "outs.npz"
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(onnx_file), str(feeds), str(outs)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, f"ONNX Runtime failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    peak_mb = json.loads(proc.stdout.strip().splitlines()[-1])["peak_kb"] / 1024
    print(f"{CASE}[{fmt}]: ONNX Runtime's process peaked at {peak_mb:.0f} MB")
    assert peak_mb < PEAK_BUDGET_MB, f"ONNX Runtime's process peaked at {peak_mb:.0f} MB"

    got = np.load(outs)
    gots = [got[f"arr_{k}"] for k in range(len(got.files))]
    assert len(gots) == len(wants)
    assert wants[0].shape[0] == 100  # keep_top_k reached: a real selection, not an empty one
    for k, (g, w) in enumerate(zip(gots, wants)):
        compare(f"{CASE}[{fmt}] output {k}", g, w, 1e-5, 1e-5)
