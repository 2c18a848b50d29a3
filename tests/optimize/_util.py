"""Helpers for optimizer tests: build models, run ONNX Runtime before/after, compare."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import onnx_ir as ir
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from pd2onnx.optimize import optimize

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def vi(name: str, dtype: int = F, shape=None):
    return helper.make_tensor_value_info(name, dtype, shape)


def init(name: str, array) -> TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, inits=(), opset: int = 17, value_info=(), ir_version: int | None = None):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits), value_info=list(value_info))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir_version or min(m.ir_version, 10)
    onnx.checker.check_model(m)
    return m


def full_check_ok(proto: onnx.ModelProto) -> bool:
    try:
        onnx.checker.check_model(proto, full_check=True)
        return True
    except onnx.checker.ValidationError:
        return False


def random_feeds(proto: onnx.ModelProto, seed: int = 0, dim: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    inits = {i.name for i in proto.graph.initializer}
    feeds = {}
    for inp in proto.graph.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else dim for d in tt.shape.dim]
        dt = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if dt.kind == "f":
            feeds[inp.name] = rng.standard_normal(shape).astype(dt)
        elif dt.kind == "b":
            feeds[inp.name] = rng.random(shape) > 0.5
        else:
            feeds[inp.name] = rng.integers(0, 3, shape).astype(dt)
    return feeds


def run(proto: onnx.ModelProto, feeds) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(proto.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def assert_close(ref, got, rtol: float = 1e-5) -> None:
    assert len(ref) == len(got)
    for r, g in zip(ref, got):
        assert r.shape == g.shape, (r.shape, g.shape)
        assert r.dtype == g.dtype, (r.dtype, g.dtype)
        if r.dtype.kind == "f":
            scale = max(1.0, float(np.max(np.abs(r)))) if r.size else 1.0
            diff = float(np.max(np.abs(r.astype(np.float64) - g.astype(np.float64)))) if r.size else 0.0
            assert diff <= rtol * scale, f"max diff {diff} > {rtol} * {scale}"
        else:
            np.testing.assert_array_equal(r, g)


def ops(proto: onnx.ModelProto) -> Counter:
    """Op type histogram including subgraphs."""
    counts: Counter = Counter()

    def walk(graph):
        for n in graph.node:
            counts[n.op_type] += 1
            for a in n.attribute:
                if a.HasField("g"):
                    walk(a.g)
                for g in a.graphs:
                    walk(g)

    walk(proto.graph)
    return counts


def check(proto: onnx.ModelProto, feeds=None, rtol: float = 1e-5, seeds=(0, 1), **kwargs):
    """Optimize ``proto``; assert outputs unchanged on random inputs and the model valid.

    Returns (optimized proto, report).
    """
    feed_sets = [feeds] if feeds is not None else [random_feeds(proto, s) for s in seeds]
    refs = [run(proto, f) for f in feed_sets]
    full = full_check_ok(proto)
    m = ir.serde.deserialize_model(proto)
    report = optimize(m, **kwargs)
    out = ir.serde.serialize_model(m)
    onnx.checker.check_model(out, full_check=full)
    for f, ref in zip(feed_sets, refs):
        assert_close(ref, run(out, f), rtol)
    assert [o.name for o in out.graph.output] == [o.name for o in proto.graph.output]
    return out, report
