"""The float64 referee: when an op's replay is out of tolerance, which side is right?

Replay feeds an op's ONNX nodes Paddle's own inputs and compares the result with Paddle's
output; the two sides round differently (ONNX Runtime sums a 480 x 640 mean in blocks,
Paddle in one running sum), and on a large reduction both are some way from the exact value.
The referee computes the op exactly: the same ONNX nodes, on the same Paddle inputs, in
float64 (float inputs, initializers, constants and casts widened), through ONNX Runtime's
double kernels, or where it has none, node by node through the optimizer's evaluator
(``pd2onnx.optimize.evaluator``: its numpy kernels, then onnx's reference implementation).
Then both float32 results are measured against the exact one, relative to its range, and
where every node is a sum of products, relative to each value's own sum of absolute terms
(the nodes run on absolute inputs: a mean that cancels is rounded as its terms are large).
The exact value is that of *our* nodes, so it tells rounding from meaning:

- the op is right when both sides are within what float32 rounding of the op allows (a few
  ulps per node, and for an op that sums n terms, a reduction, a matmul over k, a
  convolution, a softmax denominator, a pooling window, ``4 sqrt(n)`` ulps: the spread of n
  rounded additions), or ours is about as close to the exact value as Paddle's (at most
  twice as far) while Paddle's is within that allowance: the replay's difference is
  rounding, most often Paddle's (its running float32 sum);
- wrong when Paddle's value is farther from the exact value of our nodes than rounding
  allows (our nodes compute something else than Paddle's op: a conversion error the referee
  does not excuse), or ours is clearly farther than Paddle's and than the allowance;
- not judged (the op stays a failed replay) when the exact value cannot be computed: the
  reason is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from pd2onnx.verification.onnx_side import OnnxSide, session
from pd2onnx.verification.plan import Ref
from pd2onnx.verification.replay import Unit, batch_model

_NARROW = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16}
# inputs that ONNX types as float32 whatever the data: kept float32 behind a Cast
_FLOAT_ONLY = {"Resize": (2,), "Upsample": (1,), "DequantizeLinear": (1,), "QuantizeLinear": (1,),
               "DynamicQuantizeLinear": ()}
# ops that, run on the absolute values of their float inputs (Sub as Add, Neg as Identity),
# give each output's sum of absolute terms: the magnitude its float32 rounding scales with
_LINEAR = {"Conv", "MatMul", "Gemm", "ReduceSum", "ReduceMean", "GlobalAveragePool", "AveragePool", "Add", "Sub",
           "Mul", "Sum", "Mean", "Neg", "Abs", "Relu", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten",
           "Identity", "Concat", "Slice", "Gather", "Cast", "Expand", "Tile", "Split", "Shape", "Constant",
           "ConstantOfShape", "Max", "MaxPool", "GlobalMaxPool"}
_REDUCE = {"ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum",
           "ReduceLogSumExp", "ReduceProd"}


@dataclass
class Judgement:
    """The referee's figures for one op (relative to the range of the exact value)."""

    right: bool | None  # None: the referee could not judge
    ours: float = 0.0  # max |ours - exact| / range
    paddle: float = 0.0  # max |Paddle's - exact| / range
    allowed: float = 0.0  # what float32 rounding of this op allows
    terms: int = 1  # the most terms one output sums
    conditioned: bool = False  # ours/paddle measured against each value's sum of |terms| too
    ours_terms: float = 0.0  # max |ours - exact| / sum of |terms| (per value)
    paddle_terms: float = 0.0
    how: str = ""  # what computed the exact value
    why: str = ""  # why it could not judge
    values: list[dict] = field(default_factory=list)  # per output

    def text(self) -> str:
        if self.right is None:
            return f"the float64 referee could not judge it: {self.why}"
        what = f"a sum of {self.terms:,} terms" if self.terms > 1 else "this op"
        if self.conditioned:
            measure = (f"of the range; {_g(self.ours_terms)} and {_g(self.paddle_terms)} of each value's sum of "
                       f"|terms|, where float32 rounding of {what} allows {_g(self.allowed)}")
        else:
            measure = f"of the range; float32 rounding of {what} allows {_g(self.allowed)}"
        figures = f"ours {_g(self.ours)} from exact, Paddle's {_g(self.paddle)} ({measure}; exact by {self.how})"
        if self.right:
            who = "Paddle's float32 rounding" if self.paddle >= self.ours else "float32 rounding on both sides"
            return f"{who}: {figures}"
        if self.paddle > self.allowed:
            return ("Paddle's value is farther from the exact value of our nodes than float32 rounding allows: our "
                    f"nodes compute something else than Paddle's op: {figures}")
        return f"ours is farther from the exact value than float32 rounding explains: {figures}"

    def to_json(self) -> dict:
        out: dict = {"right": self.right}
        if self.right is None:
            out["why"] = self.why
            return out
        out.update(ours=self.ours, paddle=self.paddle, allowed=self.allowed, terms=self.terms, exact_by=self.how,
                   values=self.values)
        if self.conditioned:
            out.update(ours_terms=self.ours_terms, paddle_terms=self.paddle_terms)
        return out


def _g(x: float) -> str:
    return f"{x:.2g}"


def judge(side: OnnxSide, unit: Unit, feeds: dict[str, np.ndarray], input_types: dict[str, int],
          gots: dict[Ref, np.ndarray], wants: dict[Ref, np.ndarray], precision: str) -> Judgement:
    """Judge ``unit``'s float outputs ``gots`` (ours, replayed) and ``wants`` (Paddle's)
    against the exact value of its nodes on ``feeds`` (the replay's feeds)."""
    targets = {ref: v for ref, v in unit.targets.items() if ref in gots and ref in wants}
    if not targets:
        return Judgement(None, why="none of its differing outputs is a value its ONNX nodes compute")
    if any(np.asarray(wants[r]).dtype.kind != "f" for r in targets):
        return Judgement(None, why="an integer or boolean output differs, and those must be equal")
    if not unit.nodes:
        return Judgement(None, why="it has no ONNX nodes of its own to compute")
    model, outputs, inputs = batch_model(side, [(0, unit)], input_types)
    wide = _widened(model)
    fed = {n: _wide(feeds[n]) for n in inputs}
    values, how, why = _run_ort(wide, fed)
    if values is None:
        values, how, why2 = _run_evaluator(wide, fed)
        if values is None:
            return Judgement(None, why=f"ONNX Runtime has no float64 kernel for it ({why}), and the evaluator "
                                       f"cannot compute it ({why2})")
    eps = float(np.finfo(np.float16 if precision == "float16" else np.float32).eps) \
        if precision != "bfloat16" else 2.0 ** -7
    if precision == "float64":
        return Judgement(None, why="it computes in float64 already: there is nothing more exact to compare with")
    terms = _terms(model, {**values, **fed, **{t.name: numpy_helper.to_array(t) for t in model.graph.initializer}})
    allowed = eps * max(8.0, 4.0 * len(unit.nodes), 4.0 * math.sqrt(terms) if terms > 1 else 0.0)
    j = Judgement(True, allowed=allowed, terms=terms, how=how)
    magnitudes = _magnitudes(wide, fed, unit.op_types)
    j.conditioned = magnitudes is not None
    for ref, vname in targets.items():
        out_name = outputs.get((0, vname), "")
        exact = values.get(out_name)
        if exact is None:
            return Judgement(None, why=f"the float64 run gave no value for {vname}")
        exact = np.asarray(exact, np.float64)
        ours, theirs = np.asarray(gots[ref], np.float64), np.asarray(wants[ref], np.float64)
        if ours.shape != exact.shape or theirs.size != exact.size:
            return Judgement(None, why=f"{ref[2]}: shapes {list(ours.shape)}, Paddle's {list(theirs.shape)}, "
                                       f"exact {list(exact.shape)}")
        theirs = theirs.reshape(exact.shape)
        if not (np.isfinite(exact).all() and np.isfinite(ours).all() and np.isfinite(theirs).all()):
            return Judgement(None, why=f"{ref[2]}: infinities or NaN, which the referee does not measure")
        if not exact.size:
            continue
        scale = float(np.abs(exact).max()) or 1.0
        o = float(np.abs(ours - exact).max()) / scale
        p = float(np.abs(theirs - exact).max()) / scale
        entry = {"name": ref[2], "ours": o, "paddle": p}
        j.ours, j.paddle = max(j.ours, o), max(j.paddle, p)
        if magnitudes is not None:
            mag = np.asarray(magnitudes.get(out_name), np.float64)
            if mag.shape != exact.shape:
                j.conditioned = False
            else:
                mag = np.maximum(mag, np.abs(exact))
                with np.errstate(divide="ignore", invalid="ignore"):
                    oc = float(np.max(np.where(mag > 0, np.abs(ours - exact) / mag, np.abs(ours - exact) * np.inf)))
                    pc = float(np.max(np.where(mag > 0, np.abs(theirs - exact) / mag, np.abs(theirs - exact) * np.inf)))
                oc, pc = (0.0 if math.isnan(oc) else oc), (0.0 if math.isnan(pc) else pc)
                entry.update(ours_terms=oc, paddle_terms=pc)
                j.ours_terms, j.paddle_terms = max(j.ours_terms, oc), max(j.paddle_terms, pc)
        j.values.append(entry)
    if j.conditioned:
        # each value against its own sum of |terms|: a mean that cancels is rounded as its terms are large
        ours, theirs = j.ours_terms, j.paddle_terms
    else:
        ours, theirs = j.ours, j.paddle
    j.right = theirs <= allowed and ours <= max(allowed, 2.0 * theirs)
    return j


def _magnitudes(wide: onnx.ModelProto, feeds: dict, op_types: set[str]) -> dict | None:
    """Each value's sum of absolute terms (the float64 nodes on absolute float inputs, Sub as
    Add), where every node is a sum of products; None otherwise."""
    if not op_types <= _LINEAR:
        return None
    mag = onnx.ModelProto()
    mag.CopyFrom(wide)
    for t in mag.graph.initializer:
        if t.data_type == TensorProto.DOUBLE:
            t.CopyFrom(numpy_helper.from_array(np.abs(numpy_helper.to_array(t)), t.name))
    for node in mag.graph.node:
        if node.op_type == "Sub":
            node.op_type = "Add"
        elif node.op_type == "Neg":
            node.op_type = "Identity"
        for a in node.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.DOUBLE:
                a.t.CopyFrom(numpy_helper.from_array(np.abs(numpy_helper.to_array(a.t)), a.t.name))
    fed = {n: (np.abs(v) if v.dtype.kind == "f" else v) for n, v in feeds.items()}
    values, _, _ = _run_ort(mag, fed)
    if values is None:
        values, _, _ = _run_evaluator(mag, fed)
    return values


# ---------------------------------------------------------------------------- float64 model


def _wide(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a.astype(np.float64) if a.dtype.kind == "f" and a.dtype != np.float64 else a


def _wide_tensor(t: TensorProto) -> TensorProto:
    if t.data_type not in _NARROW:
        return t
    return numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name)


def _widen_graph(g: onnx.GraphProto, counter: list[int]) -> None:
    for i, t in enumerate(g.initializer):
        if t.data_type in _NARROW:
            g.initializer[i].CopyFrom(_wide_tensor(t))
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type in _NARROW:
            vi.type.tensor_type.elem_type = TensorProto.DOUBLE
    nodes = list(g.node)
    del g.node[:]
    for node in nodes:
        for a in node.attribute:
            if node.op_type in ("Cast", "EyeLike", "RandomNormalLike") and a.name in ("to", "dtype") \
                    and a.i in _NARROW:
                a.i = TensorProto.DOUBLE
            elif a.type == onnx.AttributeProto.TENSOR and a.t.data_type in _NARROW:
                a.t.CopyFrom(_wide_tensor(a.t))
            elif a.type == onnx.AttributeProto.FLOATS and node.op_type == "Constant" and a.name == "value_floats":
                pass  # Constant value_floats is float32 by definition: cast below
            elif a.type == onnx.AttributeProto.GRAPH:
                _widen_graph(a.g, counter)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    _widen_graph(sub, counter)
        for pos in _FLOAT_ONLY.get(node.op_type, ()):
            if len(node.input) > pos and node.input[pos]:
                counter[0] += 1
                name = f"referee/f32_{counter[0]}"
                g.node.append(helper.make_node("Cast", [node.input[pos]], [name], to=TensorProto.FLOAT))
                node.input[pos] = name
        if node.op_type == "Constant" and any(a.name in ("value_float", "value_floats") for a in node.attribute):
            counter[0] += 1
            out = node.output[0]
            node.output[0] = f"referee/c32_{counter[0]}"
            g.node.append(node)
            g.node.append(helper.make_node("Cast", [node.output[0]], [out], to=TensorProto.DOUBLE))
            continue
        g.node.append(node)


def _widened(model: onnx.ModelProto) -> onnx.ModelProto:
    wide = onnx.ModelProto()
    wide.CopyFrom(model)
    _widen_graph(wide.graph, [0])
    seen = {o.name for o in wide.graph.output}
    for node in wide.graph.node:  # every value, for counting the terms each node sums
        for o in node.output:
            if o and o not in seen:
                seen.add(o)
                wide.graph.output.append(onnx.ValueInfoProto(name=o))
    return wide


def _run_ort(model: onnx.ModelProto, feeds: dict) -> tuple[dict | None, str, str]:
    try:
        sess = session(model)
        names = [o.name for o in sess.get_outputs()]
        got = sess.run(names, {i.name: feeds[i.name] for i in sess.get_inputs()})
    except Exception as exc:  # noqa: BLE001  (onnxruntime's own exception types)
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        return None, "", text[:300]
    return dict(zip(names, got)), "ONNX Runtime in float64", ""


def _run_evaluator(model: onnx.ModelProto, feeds: dict) -> tuple[dict | None, str, str]:
    import onnx_ir as ir

    from pd2onnx.optimize.evaluator import evaluate

    try:
        irm = ir.serde.deserialize_model(model)
    except Exception as exc:  # noqa: BLE001
        return None, "", f"cannot read the op's nodes: {exc}"
    opsets = dict(irm.opset_imports)
    env: dict[str, np.ndarray] = dict(feeds)
    for name, v in irm.graph.initializers.items():
        env[name] = v.const_value.numpy()
    for node in irm.graph:
        args = [None if v is None else env.get(v.name) for v in node.inputs]
        if any(v is not None and a is None for v, a in zip(node.inputs, args)):
            return None, "", f"{node.op_type} reads a value the evaluator has not computed"
        out = evaluate(node, args, opsets)
        if out is None:
            return None, "", f"no evaluator rule for {node.op_type} in float64"
        for v, arr in zip(node.outputs, out):
            env[v.name] = arr
    return env, "the optimizer's evaluator in float64", ""


# ---------------------------------------------------------------------------- terms summed


def _attr(node: onnx.NodeProto, name: str, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _node_terms(node: onnx.NodeProto, shape) -> int:
    """How many terms one output element of ``node`` sums (1 for elementwise ops)."""
    op = node.op_type
    x = shape(node.input[0]) if node.input else None
    if op in _REDUCE or op in ("Einsum",):
        y = shape(node.output[0])
        if x is not None and y is not None:
            return max(1, int(np.prod(x)) // max(1, int(np.prod(y))))
    elif op in ("GlobalAveragePool", "GlobalLpPool") and x is not None:
        return int(np.prod(x[2:]))
    elif op in ("AveragePool", "LpPool"):
        return int(np.prod(_attr(node, "kernel_shape", [1])))
    elif op in ("Conv", "ConvTranspose", "ConvInteger", "DeformConv"):
        w = shape(node.input[1]) if len(node.input) > 1 else None
        if w is not None:
            return int(np.prod(w[1:])) if op != "ConvTranspose" else int(w[0] * np.prod(w[2:]))
    elif op in ("MatMul", "MatMulInteger") and x is not None and len(x):
        return int(x[-1])
    elif op == "Gemm" and x is not None and len(x) == 2:
        return int(x[0] if _attr(node, "transA", 0) else x[1])
    elif op in ("Softmax", "LogSoftmax", "CumSum", "Hardmax") and x is not None and len(x):
        axis = _attr(node, "axis", -1)
        return int(x[axis % len(x)])
    elif op in ("LayerNormalization", "SkipLayerNormalization", "RMSNormalization") and x is not None:
        axis = _attr(node, "axis", -1)
        return int(np.prod(x[axis % len(x):]))
    elif op in ("InstanceNormalization", "MeanVarianceNormalization") and x is not None:
        return int(np.prod(x[2:]))
    elif op == "GroupNormalization" and x is not None:
        return int(np.prod(x[1:]) // max(1, _attr(node, "num_groups", 1)))
    return 1


def _terms(model: onnx.ModelProto, values: dict) -> int:
    def shape(name: str):
        v = values.get(name)
        return None if v is None else tuple(np.shape(v))

    return max((_node_terms(n, shape) for n in model.graph.node), default=1)

