"""Benchmark: optimize a synthetic >2 GB ONNX model (external data) in a subprocess.

Builds the model in a temp dir (MatMul weights totalling ~2.3 GB, a transposed weight that
folding must materialize, Conv+BatchNorm, Identity chains and shape arithmetic), runs
``pd2onnx optimize`` (or ``python -m pd2onnx.optimize.command`` when the CLI lacks the
subcommand) and reports wall time and peak RSS of the child. Goal: peak RSS < 1.5x model size.

    python bench/optimize_large.py [--gb 2.3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx_ir as ir


def build(path: str, total_gb: float) -> int:
    n = 8192
    per = n * n * 4
    layers = max(2, int(total_gb * 1e9 // per))
    graph_inits: list[ir.Value] = []

    def const(name: str, array: np.ndarray) -> ir.Value:
        v = ir.Value(name=name, shape=ir.Shape(array.shape), type=ir.TensorType(ir.DataType.from_numpy(array.dtype)),
                     const_value=ir.tensor(array, name=name))
        graph_inits.append(v)
        return v

    x = ir.Value(name="x", shape=ir.Shape(["batch", n]), type=ir.TensorType(ir.DataType.FLOAT))
    nodes: list[ir.Node] = []
    h = x
    for i in range(layers):
        w = const(f"w{i}", np.full((n, n), 1e-4 * (i + 1), np.float32))
        if i == 0:
            t = ir.node("Transpose", [w], {"perm": [1, 0]})  # folded: materializes one weight
            nodes.append(t)
            w = t.outputs[0]
        ident = ir.node("Identity", [h])
        mm = ir.node("MatMul", [ident.outputs[0], w])
        nodes += [ident, mm]
        h = mm.outputs[0]
    # shape arithmetic over a static dim, and Conv + BN
    shape = ir.node("Shape", [h])
    gather = ir.node("Gather", [shape.outputs[0], const("one", np.array(1, np.int64))], {"axis": 0})
    unsq = ir.node("Unsqueeze", [gather.outputs[0], const("ax", np.array([0], np.int64))])
    cat = ir.node("Concat", [const("lead", np.array([-1, 1], np.int64)), unsq.outputs[0]], {"axis": 0})
    rs = ir.node("Reshape", [h, cat.outputs[0]])
    conv = ir.node("Conv", [rs.outputs[0], const("cw", np.ones((4, 1, 3), np.float32))], {"pads": [1, 1]})
    c = 4
    bn = ir.node("BatchNormalization", [conv.outputs[0], const("s", np.ones(c, np.float32)), const("b", np.zeros(c, np.float32)),
                                        const("m", np.zeros(c, np.float32)), const("v", np.ones(c, np.float32))])
    bn.outputs[0].name = "y"
    bn.outputs[0].dtype = ir.DataType.FLOAT
    nodes += [shape, gather, unsq, cat, rs, conv, bn]
    graph = ir.Graph([x], [bn.outputs[0]], nodes=nodes, initializers=graph_inits, opset_imports={"": 17}, name="large")
    ir.save(ir.Model(graph, ir_version=10), path, external_data=os.path.basename(path) + ".data")
    return os.path.getsize(path) + os.path.getsize(path + ".data")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=2.3)
    ap.add_argument("--keep", help="directory to keep the files in")
    args = ap.parse_args()
    tmp = args.keep or tempfile.mkdtemp(prefix="pd2onnx-large-")
    os.makedirs(tmp, exist_ok=True)
    try:
        src, dst = os.path.join(tmp, "large.onnx"), os.path.join(tmp, "large.opt.onnx")
        t0 = time.perf_counter()
        size = build(src, args.gb)
        print(f"built {size / 1e9:.2f} GB model in {time.perf_counter() - t0:.1f} s")
        cli = shutil.which("pd2onnx")
        cmd = [cli, "optimize", src, "-o", dst] if cli and subprocess.run([cli, "optimize", "-h"], capture_output=True).returncode == 0 \
            else [sys.executable, "-m", "pd2onnx.optimize.command", src, "-o", dst]
        # A fresh wrapper process runs the command, so RUSAGE_CHILDREN sees only its peak.
        wrap = (
            "import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
            "print('PEAK_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(rc)"
        )
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", wrap, *cmd], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        peak_kb = int(proc.stdout.rsplit("PEAK_KB", 1)[1].split()[0])
        print(proc.stdout.rsplit("PEAK_KB", 1)[0])
        if proc.returncode:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        out_size = sum(os.path.getsize(os.path.join(tmp, f)) for f in os.listdir(tmp) if f.startswith("large.opt"))
        peak = peak_kb * 1024
        print(f"command: {' '.join(os.path.basename(c) for c in cmd[:3])} ...")
        print(f"wall time: {wall:.1f} s")
        print(f"peak RSS of optimize: {peak / 1e9:.2f} GB ({peak / size:.2f}x model size {size / 1e9:.2f} GB; goal < 1.5x)")
        print(f"output: {out_size / 1e9:.2f} GB")
        return 0 if peak < 1.5 * size else 1
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
