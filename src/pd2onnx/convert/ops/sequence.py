"""Recurrent networks and sequence ops: the fused ``rnn`` op -> ONNX LSTM / GRU / RNN.

Paddle's ``rnn`` op (``paddle.nn.LSTM``, ``GRU``, ``SimpleRNN``) is always time-major
(``[T, B, I]``; the layer's Python code adds the transposes for batch-major input) and
takes its weights as one flat list: ``[w_ih, w_hh]`` for every (layer, direction) in
order, then ``[b_ih, b_hh]`` in the same order (``ResetParameterVector`` in Paddle's
``paddle/phi/kernels/cpu/rnn_functor.h``). Each layer becomes one ONNX node
(bidirectional in one node), with the weights reordered into ONNX's gate order as
initializers.

Gate orders, from Paddle's CPU kernels:

- LSTM: ``i, f, c, o`` (``eigen_lstm_forward_one_sequence`` in
  ``paddle/phi/kernels/funcs/detail/lstm_cpu_kernel.h``, new API layout); ONNX ``i, o, f, c``.
- GRU: ``r, z, c`` (``forward_reset_outputV2`` / ``forward_final_outputV2`` in
  ``paddle/phi/kernels/funcs/detail/gru_cpu_kernel.h``); ONNX ``z, r, h``. The reset gate
  multiplies ``h @ W_hc^T + b_hc`` (the kernel zeroes the candidate block of ``W_hh`` for
  the gate matmul and applies it afterwards), i.e. ONNX ``linear_before_reset=1``; the new
  state is ``(1 - z) * c + z * h``, as in ONNX.

``sequence_length``: Paddle zeroes outputs past each length and keeps the state of the
last valid step (the reverse direction starts at each sequence's own last step), which is
what ONNX's ``sequence_lens`` does, so it is passed through (as int32). One difference: for
a sequence of length 0 Paddle returns the initial state and ONNX Runtime zeros, so the
final states take the initial ones there (``_keep_initial``).
"""

from __future__ import annotations

import numpy as np
import onnx_ir as ir

from pd2onnx.convert.context import OpContext
from pd2onnx.convert.registry import mapper
from pd2onnx.paddle import dtypes

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
# Paddle's gate blocks, listed in ONNX's order.
_ONNX_ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN_TANH": (0,), "RNN_RELU": (0,)}


def _reorder(array: np.ndarray, order: tuple[int, ...], hidden: int) -> np.ndarray:
    """Rows of a ``[G*H, ...]`` weight (or a ``[G*H]`` bias), gate blocks in ``order``."""
    blocks = array.reshape(len(order), hidden, *array.shape[1:])
    return np.ascontiguousarray(blocks[list(order)].reshape(array.shape))


class _Weights:
    """The flat weight list of an ``rnn`` op, checked against layers x directions."""

    def __init__(self, ctx: OpContext, mode: str, layers: int, dirs: int, hidden: int, input_size: int):
        self.ctx, self.layers, self.dirs, self.hidden = ctx, layers, dirs, hidden
        self.gates = _GATES[mode]
        names = ctx.input_names("weight_list")
        expected = 4 * layers * dirs
        if len(names) != expected:
            raise ctx.fail(
                f"weight_list holds {len(names)} tensors; {layers} layer(s) x {dirs} direction(s) "
                f"need {expected} (w_ih, w_hh per layer and direction, then b_ih, b_hh)",
                hint="the program is malformed or was edited; export the model again",
            )
        self.arrays = []
        for i, name in enumerate(names):
            value = ctx.const_value("weight_list", i)
            if value is None:
                raise ctx.fail(
                    f"weight {name!r} (layer {self._layer_of(i)}) is computed at run time; "
                    "only parameters can be reordered into ONNX's gate order",
                )
            self.arrays.append(np.asarray(value))
        self.input_size = input_size

    def _layer_of(self, i: int) -> int:
        return (i % (2 * self.layers * self.dirs)) // (2 * self.dirs)

    def get(self, layer: int, direction: int, kind: str) -> np.ndarray:
        """kind: ih / hh (weights) or bih / bhh (biases), checked for shape."""
        k = layer * self.dirs + direction
        offset = {"ih": 0, "hh": 1, "bih": 0, "bhh": 1}[kind]
        if kind.startswith("b"):
            offset += 2 * self.layers * self.dirs
        array = self.arrays[2 * k + offset]
        rows = self.gates * self.hidden
        cols = {"ih": self.input_size if layer == 0 else self.dirs * self.hidden, "hh": self.hidden}.get(kind)
        want = (rows,) if cols is None else (rows, cols)
        if tuple(array.shape) != want:
            raise self.ctx.fail(
                f"layer {layer}, direction {direction}: {kind} has shape {list(array.shape)}, "
                f"expected {list(want)} for hidden_size {self.hidden}",
                hint="the weight list does not match the op's attributes; export the model again",
            )
        return array


def _keep_initial(
    ctx: OpContext, empty: ir.Value | None, final: ir.Value, initial: ir.Value | None, dtype: str | None = None
) -> ir.Value:
    """The final state, or the initial one for the sequences of length 0 (``empty``)."""
    if empty is None or initial is None:
        return final
    if ctx.opset >= 9:
        return ctx.op.Where(empty, initial, final)
    dtype = dtype or ctx.input_dtype("x")
    keep = ctx.cast(empty, dtype)  # exact for a 0/1 mask
    drop = ctx.op.Sub(ctx.const(1, dtype), keep)
    return ctx.op.Add(ctx.op.Mul(final, drop), ctx.op.Mul(initial, keep))


@mapper("rnn", min_opset=7)
def rnn(ctx: OpContext) -> None:
    """One ONNX LSTM/GRU/RNN node per layer; Paddle's time-major ``[T, B, D*H]`` output."""
    mode = str(ctx.attr("mode", "RNN_TANH"))
    if mode not in _GATES:
        raise ctx.fail(
            f"mode {mode!r} is not one Paddle defines (LSTM, GRU, RNN_TANH, RNN_RELU)",
            hint="the file is corrupt or comes from a modified Paddle",
        )
    layers = int(ctx.attr("num_layers", 1))
    dirs = 2 if ctx.attr("is_bidirec", False) else 1
    hidden = int(ctx.attr("hidden_size", 100))
    if layers < 1 or hidden < 1:
        raise ctx.fail(f"num_layers {layers} and hidden_size {hidden} must be positive")
    x_shape = ctx.input_shape("x")
    if len(x_shape) != 3:
        raise ctx.fail(f"input x has rank {len(x_shape)}; the rnn op takes [time, batch, features]")
    input_size = x_shape[2] if x_shape[2] >= 0 else int(ctx.attr("input_size", 10))
    weights = _Weights(ctx, mode, layers, dirs, hidden, input_size)
    order = _ONNX_ORDER[mode]

    seq_lens = None
    if ctx.has_input("sequence_length"):
        seq_dtype = ctx.input_dtype("sequence_length")
        if seq_dtype not in ("int32", "int64"):
            raise ctx.fail(
                f"sequence_length is {seq_dtype}; Paddle takes int32 or int64 lengths",
                hint="cast the lengths to int64 before the RNN layer and export again",
            )
        seq_lens = ctx.cast(ctx.input("sequence_length"), "int32", seq_dtype)

    n_states = 2 if mode == "LSTM" else 1
    states = ctx.inputs("pre_state")
    if states and len(states) != n_states:
        raise ctx.fail(f"pre_state holds {len(states)} tensors; mode {mode} takes {n_states}")

    # ONNX Runtime registers LSTM and GRU for double but refuses to run them ("does not
    # support double yet"): float64 LSTM/GRU run in float32 and are cast back.
    dtype = ctx.input_dtype("x")
    compute = "float32" if dtype == "float64" and mode in ("LSTM", "GRU") else dtype

    def initial(k: int, layer: int) -> ir.Value | None:
        if not states:
            return None
        state = ctx.cast(states[k], compute, dtype)
        if layers == 1:
            return state
        return ctx.slice(state, [layer * dirs], [(layer + 1) * dirs], [0])

    # A sequence of length 0 keeps its initial state in Paddle; ONNX Runtime returns zeros.
    empty = None
    if seq_lens is not None and states:
        empty = ctx.reshape(ctx.op.Equal(seq_lens, ctx.const(0, "int32")), [1, -1, 1])
    np_dtype = dtypes.to_numpy(compute)
    names = ctx.input_names("weight_list")
    direction = "bidirectional" if dirs == 2 else "forward"
    x = ctx.cast(ctx.input("x"), compute, dtype)
    finals: list[list[ir.Value]] = [[] for _ in range(n_states)]
    for layer in range(layers):

        def stacked(*kinds: str, layer: int = layer) -> np.ndarray:
            per_dir = [
                np.concatenate([_reorder(weights.get(layer, d, k), order, hidden) for k in kinds])
                for d in range(dirs)
            ]
            return np.stack(per_dir).astype(np_dtype)

        base = names[2 * layer * dirs]
        w = ctx.const(stacked("ih"), name=f"{base}.W")
        r = ctx.const(stacked("hh"), name=f"{base}.R")
        b = ctx.const(stacked("bih", "bhh"), name=f"{base}.B")
        args = [x, w, r, b, seq_lens, initial(0, layer)]
        attrs: dict = {"direction": direction, "hidden_size": hidden}
        if mode == "LSTM":
            args.append(initial(1, layer))
        while args[-1] is None:  # omitted trailing optional inputs
            args.pop()
        if mode == "LSTM":
            y, y_h, y_c = ctx.op.LSTM(*args, **attrs, _outputs=3)
            finals[1].append(_keep_initial(ctx, empty, y_c, initial(1, layer), compute))
        elif mode == "GRU":
            y, y_h = ctx.op.GRU(*args, **attrs, linear_before_reset=1, _outputs=2)
        else:
            act = "Tanh" if mode == "RNN_TANH" else "Relu"
            y, y_h = ctx.op.RNN(*args, **attrs, activations=[act] * dirs, _outputs=2)
        finals[0].append(_keep_initial(ctx, empty, y_h, initial(0, layer), compute))
        # [T, D, B, H] -> [T, B, D*H]
        x = ctx.reshape(ctx.op.Transpose(y, perm=[0, 2, 1, 3]), [0, 0, dirs * hidden])
    ctx.set_output("out", ctx.cast(x, dtype, compute))
    for k in range(n_states):
        parts = finals[k]
        state = parts[0] if len(parts) == 1 else ctx.op.Concat(*parts, axis=0)
        ctx.set_output("state", ctx.cast(state, dtype, compute), k)


# ---------------------------------------------------------------------------- legacy LoD ops
# A LoD tensor holding ONE sequence is an ordinary tensor whose first dim is time; that is
# the batch these mappers convert (docs/sequence_models.md). ONNX has no LoD, so nothing at
# run time can tell one sequence from several concatenated ones: ops whose attributes show
# more than one sequence are refused here, the rest is the user's contract.
_RNN_ACTIVATIONS = {"sigmoid": "Sigmoid", "tanh": "Tanh", "relu": "Relu"}


def _activation(ctx: OpContext, attr: str, default: str) -> str:
    name = str(ctx.attr(attr, default))
    if name not in _RNN_ACTIVATIONS:
        raise ctx.fail(
            f"{attr} {name!r} has no ONNX recurrent-activation equivalent (sigmoid, tanh, relu are supported)"
        )
    return _RNN_ACTIVATIONS[name]


def _consumed(ctx: OpContext, slot: str) -> bool:
    """Whether any op of the program reads output ``slot`` of this op."""
    names = set(ctx.pd.outputs.get(slot, []))
    if not names:
        return False
    return any(n in names for op in ctx.state.program.walk_ops() for ns in op.inputs.values() for n in ns)


def _unused_outputs(ctx: OpContext, slots: tuple[str, ...], stand_in: ir.Value) -> None:
    """Training-only outputs (batch gates, reordered buffers): refused when something reads
    them; otherwise bound to ``stand_in`` so the exporter sees the op's first output."""
    for slot in slots:
        if _consumed(ctx, slot):
            raise ctx.fail(f"output {slot!r} is used by another op; ONNX's recurrent ops do not expose it")
        for name in ctx.pd.outputs.get(slot, []):
            ctx.state.bind(name, stand_in, fresh=False)


def _const_param(ctx: OpContext, slot: str) -> np.ndarray:
    value = ctx.const_value(slot)
    if value is None:
        raise ctx.fail(
            f"{slot} is computed at run time; only parameters can be reordered into ONNX's gate order"
        )
    return np.asarray(value)


def _gate_rows(order: tuple[int, ...], hidden: int) -> np.ndarray:
    """Row indices that put Paddle's gate blocks into ``order``."""
    return np.concatenate([np.arange(g * hidden, (g + 1) * hidden) for g in order])


def _fused_recurrence(
    ctx: OpContext, op_type: str, gate_count: int, weight: np.ndarray, rows: np.ndarray, sign: np.ndarray,
    bias: np.ndarray, hidden: int, states: list[ir.Value | None], peepholes: np.ndarray | None, **attrs,
) -> tuple[ir.Value, ...]:
    """An ONNX LSTM/GRU on a pre-projected ``[T, G*H]`` input (Paddle's dynamic lstm/gru).

    W is a signed permutation (gate reorder of the projected input; exact in float),
    R the recurrent weight, B the input bias in ONNX gate order. float64 runs in float32 (as
    the rnn op: ONNX Runtime's LSTM/GRU refuse double at run time); outputs are cast back by
    the callers (``_recurrence_out``)."""
    dtype = ctx.input_dtype("input")
    compute = _recurrence_dtype(dtype)
    np_dtype = dtypes.to_numpy(compute)
    size = gate_count * hidden
    w = np.zeros((1, size, size), np_dtype)
    w[0, np.arange(size), rows] = sign
    r = (weight.T[rows] * sign[:, None])[None].astype(np_dtype)
    b = np.concatenate([bias.reshape(-1)[:size][rows] * sign, np.zeros(size)])[None].astype(np_dtype)
    x = ctx.unsqueeze(ctx.cast(ctx.input("input"), compute, dtype), [1])  # [T, 1, G*H]: one sequence
    states = [None if v is None else ctx.cast(v, compute, dtype) for v in states]
    args = [x, ctx.const(w), ctx.const(r), ctx.const(b), None, *states]
    if peepholes is not None:
        args.append(ctx.const(peepholes[None].astype(np_dtype)))
    while args[-1] is None:
        args.pop()
    n_out = 3 if op_type == "LSTM" else 2
    return getattr(ctx.op, op_type)(*args, hidden_size=hidden, _outputs=n_out, **attrs)


def _recurrence_dtype(dtype: str) -> str:
    """The dtype an ONNX LSTM/GRU computes a Paddle ``dtype`` in (ONNX Runtime registers
    them for double but raises "does not support double yet" when run)."""
    return "float32" if dtype == "float64" else dtype


def _recurrence_out(ctx: OpContext, y: ir.Value, hidden: int) -> ir.Value:
    """``[T, 1, 1, H]`` -> Paddle's ``[T, H]`` hidden sequence in the input's dtype."""
    dtype = ctx.input_dtype("input")
    return ctx.cast(ctx.reshape(y, [-1, hidden]), dtype, _recurrence_dtype(dtype))


def _initial(ctx: OpContext, slot: str) -> ir.Value | None:
    """A ``[N, H]`` initial state as ONNX's ``[1, N, H]``."""
    return ctx.unsqueeze(ctx.input(slot), [0]) if ctx.has_input(slot) else None


@mapper("lstm", min_opset=7)
def lstm(ctx: OpContext) -> None:
    """Paddle's dynamic LSTM (pre-projected ``[T, 4H]`` input, gates ``c, i, f, o``, optional
    peepholes ``W_ic, W_fc, W_oc`` after the bias) -> ONNX LSTM (``i, o, f, c``; P = i, o, f)."""
    weight = _const_param(ctx, "weight")
    hidden = weight.shape[0]
    if weight.shape != (hidden, 4 * hidden):
        raise ctx.fail(f"weight has shape {list(weight.shape)}; expected [H, 4H]")
    bias = _const_param(ctx, "bias").reshape(-1)
    peepholes = None
    if ctx.attr("use_peepholes", True):
        if bias.size != 7 * hidden:
            raise ctx.fail(f"use_peepholes needs a bias of 7H = {7 * hidden} values, got {bias.size}")
        i, f, o = bias[4 * hidden :].reshape(3, hidden)
        peepholes = np.concatenate([i, o, f])
    rows = _gate_rows((1, 3, 2, 0), hidden)
    acts = [_activation(ctx, a, d) for a, d in
            (("gate_activation", "sigmoid"), ("candidate_activation", "tanh"), ("cell_activation", "tanh"))]
    y, _, _ = _fused_recurrence(
        ctx, "LSTM", 4, weight, rows, np.ones(4 * hidden), bias, hidden,
        [_initial(ctx, "h0"), _initial(ctx, "c0")], peepholes,
        direction="reverse" if ctx.attr("is_reverse", False) else "forward", activations=acts,
    )
    hidden_out = _recurrence_out(ctx, y, hidden)
    ctx.set_output("hidden", hidden_out)
    _unused_outputs(ctx, ("cell", "batch_gate", "batch_cell_pre_act"), hidden_out)


@mapper("gru", min_opset=7)
def gru(ctx: OpContext) -> None:
    """Paddle's dynamic GRU (pre-projected ``[T, 3H]`` input, gates ``u, r, c``; the weight
    buffer holds ``[H, 2H]`` gate weights then ``[H, H]`` candidate weights; reset applied to
    the state before its matmul) -> ONNX GRU (``z, r, h``, linear_before_reset 0).

    ``origin_mode`` gives ``h = u*h' + (1-u)*c``, ONNX's form with z = u; otherwise
    ``h = (1-u)*h' + u*c``, i.e. z = 1 - u = sigmoid(-pre-activation): the update gate's
    rows of W, R and B are negated."""
    weight = _const_param(ctx, "weight")
    hidden = weight.shape[0]
    if weight.size != 3 * hidden * hidden:
        raise ctx.fail(f"weight has shape {list(weight.shape)}; expected [H, 3H]")
    flat = weight.reshape(-1)
    gates = flat[: 2 * hidden * hidden].reshape(hidden, 2 * hidden)
    cand = flat[2 * hidden * hidden :].reshape(hidden, hidden)
    matrix = np.concatenate([gates, cand], axis=1)  # [H, 3H]: column blocks u, r, c
    bias = _const_param(ctx, "bias") if ctx.has_input("bias") else np.zeros(3 * hidden, weight.dtype)
    gate_act = _activation(ctx, "gate_activation", "sigmoid")
    sign = np.ones(3 * hidden)
    if not ctx.attr("origin_mode", False):
        if gate_act != "Sigmoid":
            raise ctx.fail("origin_mode=False is converted through 1 - sigmoid(a) = sigmoid(-a), "
                           f"which needs gate_activation sigmoid, not {ctx.attr('gate_activation')!r}")
        sign[:hidden] = -1
    y, _ = _fused_recurrence(
        ctx, "GRU", 3, matrix, _gate_rows((0, 1, 2), hidden), sign, bias, hidden,
        [_initial(ctx, "h0")], None,
        direction="reverse" if ctx.attr("is_reverse", False) else "forward",
        activations=[gate_act, _activation(ctx, "activation", "tanh")], linear_before_reset=0,
    )
    hidden_out = _recurrence_out(ctx, y, hidden)
    ctx.set_output("hidden", hidden_out)
    _unused_outputs(ctx, ("batch_gate", "batch_reset_hidden_prev", "batch_hidden"), hidden_out)


class _Body:
    """Nodes of a Loop body, built apart from the main graph (values of the enclosing graph
    are used by reference, as ONNX's outer-scope rule allows)."""

    def __init__(self, ctx: OpContext, name: str):
        self.ctx, self.name, self.nodes = ctx, name, []

    def input(self, tag: str, dtype: ir.DataType, dims: list[int]) -> ir.Value:
        return ir.Value(name=self.ctx.state.unique_name(f"{self.name}/{tag}"), type=ir.TensorType(dtype),
                        shape=ir.Shape(dims))

    def __call__(self, op_type: str, *inputs: ir.Value, **attrs) -> ir.Value:
        node = ir.Node("", op_type, list(inputs), ir.convenience.convert_attributes(attrs),
                       name=f"{self.name}/{op_type}_{len(self.nodes) + 1}")
        node.outputs[0].name = self.ctx.state.unique_name(f"{node.name}:0")
        self.nodes.append(node)
        return node.outputs[0]

    def reduce_max0(self, x: ir.Value) -> ir.Value:
        if self.ctx.opset >= 18:
            return self("ReduceMax", x, self.ctx.const_i64([0]), keepdims=0)
        return self("ReduceMax", x, axes=[0], keepdims=0)

    def graph(self, inputs: list[ir.Value], outputs: list[ir.Value]) -> ir.Graph:
        return ir.Graph(inputs, outputs, nodes=self.nodes, name=self.name)


@mapper("crf_decoding", min_opset=11)
def crf_decoding(ctx: OpContext) -> None:
    """Viterbi decoding of one sequence as two Loops: forward max-plus recursion (scanning out
    the best predecessor of every tag) and the backtrack; the same float operations in the
    same order as Paddle's ``CRFDecoding`` (first maximum wins), so the path is exact.

    Transition rows: 0 = start weights, 1 = end weights, 2.. = tag-to-tag weights."""
    if ctx.has_input("length"):
        raise ctx.fail(
            "the padded form (Length input) is not supported; pd2onnx converts the LoD form for one sequence",
        )
    emission = ctx.input("emission")  # [T, D]
    dtype = ctx.input_dtype("emission")
    fdtype = ir.DataType.from_numpy(dtypes.to_numpy(dtype))
    tags = ctx.input_shape("emission")[-1]
    transition = ctx.input("transition")
    start = ctx.reshape(ctx.slice(transition, [0], [1], [0]), [-1])
    end = ctx.reshape(ctx.slice(transition, [1], [2], [0]), [-1])
    trans = ctx.slice(transition, [2], [2**62], [0])  # [D(from), D(to)]
    steps = ctx.shape_of(emission, 0, 1)  # [1]
    one = ctx.const_i64(1)
    moves = ctx.reshape(ctx.op.Sub(steps, one), [])  # T - 1 transitions
    first = ctx.op.Gather(emission, ctx.const_i64(0), axis=0)
    alpha0 = ctx.op.Add(start, first)

    # forward: alpha'[i] = max_j(alpha[j] + trans[j, i]) + x[t, i]; track[t-1, i] = argmax_j
    body = _Body(ctx, f"{ctx.pd.type}_{ctx.pd.block_idx}_{ctx.pd.index}/forward")
    it = body.input("i", ir.DataType.INT64, [])
    cond = body.input("cond", ir.DataType.BOOL, [])
    alpha = body.input("alpha", fdtype, [tags])
    scores = body("Add", body("Reshape", alpha, ctx.const_i64([-1, 1])), trans)
    best = body("ArgMax", scores, axis=0, keepdims=0)
    x_t = body("Gather", emission, body("Add", it, one), axis=0)
    new_alpha = body("Add", body.reduce_max0(scores), x_t)
    graph = body.graph([it, cond, alpha], [body("Identity", cond), new_alpha, best])
    true = ctx.const(np.array(True))
    last_alpha, track = ctx.op.Loop(moves, true, alpha0, body=graph, _outputs=2)  # track [T-1, D]

    last = ctx.op.ArgMax(ctx.op.Add(last_alpha, end), axis=0, keepdims=1)  # [1]
    # backtrack: label[t-1] = track[t-1][label[t]], t = T-1 .. 1
    back = _Body(ctx, f"{ctx.pd.type}_{ctx.pd.block_idx}_{ctx.pd.index}/backtrack")
    it = back.input("i", ir.DataType.INT64, [])
    cond = back.input("cond", ir.DataType.BOOL, [])
    cur = back.input("tag", ir.DataType.INT64, [1])
    row = back("Gather", track, back("Sub", back("Sub", moves, one), it), axis=0)  # track[T-2-i]
    prev = back("Gather", row, cur, axis=0)  # [1]
    graph = back.graph([it, cond, cur], [back("Identity", cond), prev, back("Identity", prev)])
    _, earlier = ctx.op.Loop(moves, true, last, body=graph, _outputs=2)  # [T-1, 1], times T-2 .. 0
    forward_order = ctx.slice(earlier, [-1], [-(2**62)], [0], [-1])
    path = ctx.op.Concat(forward_order, ctx.reshape(last, [1, 1]), axis=0)  # [T, 1]
    if ctx.has_input("label"):
        label = ctx.reshape(ctx.cast(ctx.input("label"), "int64", ctx.input_dtype("label")), [-1, 1])
        path = ctx.cast(ctx.op.Equal(label, path), "int64")
    ctx.set_output("viterbi_path", path)


@mapper("sequence_pool", min_opset=7)
def sequence_pool(ctx: OpContext) -> None:
    """Pool the one sequence over time: ``[T, ...] -> [1, ...]``."""
    x = ctx.input("x")
    kind = str(ctx.attr("pooltype", "AVERAGE")).upper()
    dtype = ctx.input_dtype("x")
    if kind == "AVERAGE":
        out = ctx.reduce("ReduceMean", x, [0], keepdims=True)
    elif kind == "SUM":
        out = ctx.reduce("ReduceSum", x, [0], keepdims=True)
    elif kind == "SQRT":
        length = ctx.cast(ctx.shape_of(x, 0, 1), dtype)
        out = ctx.op.Div(ctx.reduce("ReduceSum", x, [0], keepdims=True), ctx.op.Sqrt(length))
    elif kind == "MAX":
        out = ctx.reduce("ReduceMax", x, [0], keepdims=True)
        if ctx.has_output("max_index"):
            ctx.set_output("max_index", ctx.cast(ctx.op.ArgMax(x, axis=0, keepdims=1), "int32"))
    elif kind == "FIRST":
        out = ctx.slice(x, [0], [1], [0])
    elif kind == "LAST":
        out = ctx.slice(x, [-1], [2**62], [0])
    else:
        raise ctx.fail(f"pooltype {kind!r} is not one Paddle defines (AVERAGE, SUM, SQRT, MAX, FIRST, LAST)")
    ctx.set_output("out", out)


@mapper("sequence_softmax", min_opset=7)
def sequence_softmax(ctx: OpContext) -> None:
    """Softmax over all the elements of the one sequence (``[T]`` or ``[T, 1]``)."""
    x = ctx.input("x")
    flat = ctx.op.Softmax(ctx.reshape(x, [1, -1]), axis=1)
    ctx.set_output("out", ctx.reshape(flat, ctx.op.Shape(x)))


@mapper("sequence_expand_as", min_opset=7)
def sequence_expand_as(ctx: OpContext) -> None:
    """Repeat x's row (one per sequence of y) over y's length."""
    rows = ctx.input_shape("x")[0]
    if rows > 1:
        raise ctx.fail(
            f"x has {rows} rows, so y holds {rows} sequences; pd2onnx converts one sequence per batch",
            hint="serve one query at a time (docs/sequence_models.md)",
        )
    rank = ctx.input_rank("x")
    repeats = ctx.shape_of(ctx.input("y"), 0, 1)
    if rank > 1:
        repeats = ctx.op.Concat(repeats, ctx.const_i64([1] * (rank - 1)), axis=0)
    ctx.set_output("out", ctx.op.Tile(ctx.input("x"), repeats))


@mapper("lod_reset", min_opset=7)
def lod_reset(ctx: OpContext) -> None:
    """Only the LoD changes; at one sequence the data passes through."""
    target = list(ctx.attr("target_lod", []) or [])
    if len(target) > 2:
        raise ctx.fail(
            f"target_lod {target} describes {len(target) - 1} sequences; "
            "pd2onnx converts one sequence per batch",
            hint="serve one query at a time (docs/sequence_models.md)",
        )
    ctx.set_output("out", ctx.op.Identity(ctx.input("x")))


@mapper("sequence_mask", min_opset=11)
def sequence_mask(ctx: OpContext) -> None:
    """``y[..., j] = j < x[...]`` for j < max_len (max_len <= 0: the largest length)."""
    x = ctx.input("x")
    x_dtype = ctx.input_dtype("x")
    max_len = ctx.scalar("max_len", -1)
    if isinstance(max_len, ir.Value):
        limit = ctx.cast(ctx.reshape(max_len, []), x_dtype, ctx.input_dtype("max_len"))
    elif int(max_len) > 0:
        limit = ctx.const(int(max_len), x_dtype)
    else:
        limit = ctx.reduce("ReduceMax", x, None, keepdims=False)
        if x_dtype in ("float16", "bfloat16", "float32", "float64"):  # Paddle: static_cast<int>(max)
            limit = ctx.cast(ctx.cast(limit, "int64", x_dtype), x_dtype, "int64")
    steps = ctx.op.Range(ctx.const(0, x_dtype), limit, ctx.const(1, x_dtype))
    mask = ctx.op.Less(steps, ctx.unsqueeze(x, [ctx.input_rank("x")]))
    ctx.set_output("y", ctx.cast(mask, str(ctx.attr("out_dtype", "int64"))))
