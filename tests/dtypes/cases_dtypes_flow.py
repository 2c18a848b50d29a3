"""The dtype matrix's control-flow, tensor-array and sequence tables.

Control flow (``cond``, ``while_loop``) runs eagerly as Python branches and loops and becomes
``if``/``while`` (PIR) or ``conditional_block`` + ``select_input``/``while`` (legacy) when
saved. The matrix varies the carried value's dtype: branch and loop bodies only move elements
(slices and concat), so each entry tests the control-flow mapping, not arithmetic the dtype
lacks. Loop counters and array indices are int64. Tensor arrays are Python lists eagerly and
arrays in static programs. ``rnn`` is Paddle's fused RNN op (as ``paddle.nn.LSTM``/``GRU``/
``SimpleRNN`` write it) with constant weights in the input's dtype; ``sequence_mask`` needs no
LoD; the legacy LoD sequence ops (``lstm``, ``crf_decoding``, ``sequence_pool``,
``sequence_softmax``, ``sequence_expand_as``) get their LoD inside the program from
``lod_reset`` (the matrix feeds plain tensors). ``gru`` is not here: Paddle 2.6 prunes its
unused batch outputs when saving and then cannot run the file it wrote (see the notes).
"""

from __future__ import annotations

import numpy as np

from harness.dtype_matrix import DTYPES, register

SHAPE = (2, 3)


def _pir(P) -> bool:
    return int(P.__version__.split(".")[0]) >= 3


def _legacy_static(P) -> bool:
    return not _pir(P) and not P.in_dynamic_mode()


def _legacy_op(P, op_type, inputs, attrs, outputs, dtype):
    """A raw legacy op appended to the current static program (Paddle 2.x)."""
    helper = P.base.layer_helper.LayerHelper(op_type)
    outs = {slot: [helper.create_variable_for_type_inference(dtype)] for slot in outputs}
    helper.append_op(type=op_type, inputs=inputs, outputs=outs, attrs=attrs)
    return [outs[slot][0] for slot in outputs]


def _i64(P, v):
    return P.full([1], v, "int64")


def _move(P, v, axis):
    """v rotated by one along ``axis`` (0 or 1) in any dtype: a concat of two slices, or (where
    a Paddle's static dtype check refuses concat: uint8 in both, int16 in 2.6) a gather, or
    else (int16 in Paddle 2.6, which has neither) an identity reshape."""
    head, tail = (v[1:], v[:1]) if axis == 0 else (v[:, 1:], v[:, :1])
    try:
        return P.concat([head, tail], axis=axis)
    except TypeError:
        pass
    try:
        return P.gather(v, P.to_tensor(np.array([1, 2, 0][: v.shape[axis]] if axis else [1, 0], "int64")), axis=axis)
    except TypeError:
        return P.reshape(v, list(v.shape))


def _roll(P, v):
    return _move(P, v, 1)


def _flip_rows(P, v):
    return _move(P, v, 0)


def _join(P, a, b):
    """a and b stacked along axis 0 (a alone where Paddle's static concat refuses the dtype:
    uint8)."""
    try:
        return P.concat([a, b], axis=0)
    except TypeError:
        return a


def _pred(P, x):
    try:
        return P.sum(P.cast(x, "float32")) > 0
    except TypeError:  # Paddle 2.6's static cast refuses int8
        return P.shape(x)[0] > 1


def _cond(P, x, p):
    return P.static.nn.cond(_pred(P, x), lambda: _flip_rows(P, x), lambda: p)


def _cond_pair(P, x, p):
    """Two results of different shapes from each branch."""
    a, b = P.static.nn.cond(_pred(P, x), lambda: (_roll(P, x), x[:1]), lambda: (p, _flip_rows(P, p)[:1]))
    return _join(P, a, b)


def _copy(P, v):
    """A new variable holding v: Paddle 2.6's static while_loop writes its results back into
    the initial loop variables (here the model's inputs)."""
    try:
        return P.assign(v)
    except TypeError:  # Paddle 2.6's static assign refuses int16
        return P.reshape(v, list(v.shape))


def _while(P, x, p):
    _, v = P.static.nn.while_loop(lambda i, v: i < _i64(P, 2),
                                  lambda i, v: [i + 1, _roll(P, v)], [_i64(P, 0), _copy(P, x)])
    return v


def _while_two(P, x, p):
    """Two carried values of the matrix dtype (x rolled, p's rows swapped each step)."""
    _, v, w = P.static.nn.while_loop(lambda i, v, w: i < _i64(P, 3),
                                     lambda i, v, w: [i + 1, _roll(P, v), _flip_rows(P, w)],
                                     [_i64(P, 0), _copy(P, x), _copy(P, p)])
    return _join(P, v, w)


def _cond_in_while(P, x, p):
    def body(i, v):
        return [i + 1, P.static.nn.cond(i < _i64(P, 1), lambda: _roll(P, v), lambda: _flip_rows(P, v))]

    _, v = P.static.nn.while_loop(lambda i, v: i < _i64(P, 3), body, [_i64(P, 0), _copy(P, x)])
    return v


def _increment(P, x, p):
    # a copy: increment is in place, and dy2static refuses it on a view (the slice)
    return P.increment(P.assign(P.reshape(x, [-1])[:1]), 1.0)


def _select_output(P, x, p):
    """Legacy select_output + select_input (x written into Out[mask], read back; p is the
    other candidate select_input could pick)."""
    from paddle.static.nn.control_flow import select_input, select_output

    block = P.static.default_main_program().current_block()
    mask = P.full([1], 1, "int32")
    outs = [block.create_var(name=P.utils.unique_name.generate("selout"), dtype=x.dtype, shape=list(x.shape))
            for _ in range(2)]
    select_output(x, outs, mask)
    return select_input([p, outs[1]], mask)  # picks outs[1] (= x)


def _flow(P):
    return [
        ("if+conditional_block+select_input:cond", lambda x, p: _cond(P, x, p)),
        ("if+conditional_block+select_input:cond-pair", lambda x, p: _cond_pair(P, x, p)),
        ("while:loop", lambda x, p: _while(P, x, p)),
        ("while:two-carried", lambda x, p: _while_two(P, x, p)),
        ("while+if+conditional_block+select_input:cond-in-loop", lambda x, p: _cond_in_while(P, x, p)),
        ("increment", lambda x, p: _increment(P, x, p)),
        ("select_output+select_input:static", lambda x, p: _select_output(P, x, p)),
    ]


def _array(P, *values):
    arr = P.tensor.create_array(values[0].dtype)
    for k, v in enumerate(values):
        P.tensor.array_write(v, _i64(P, k), arr)
    return arr


def _length(P, arr):
    n = P.tensor.array_length(arr)
    return n if isinstance(n, (P.Tensor, P.static.Variable)) else P.full([1], n, "int64")  # eager: a list


def _array_pop(P, x, p):
    arr = _array(P, x, p, _roll(P, x))
    if _pir(P):
        return P._C_ops.array_pop(arr, 1)
    raise NotImplementedError("array_pop is a PIR op (Paddle 2.6 writes list.pop() as read + slice)")


def _slice_array(P, x, p):
    arr = _array(P, x, p, _roll(P, x))
    if _pir(P):
        part = P._C_ops.slice_array(arr, [1], [3])
    else:
        helper = P.base.layer_helper.LayerHelper("slice")
        part = helper.create_variable(name=P.utils.unique_name.generate("slice_array"),
                                      type=P.base.core.VarDesc.VarType.LOD_TENSOR_ARRAY, dtype=x.dtype)
        helper.append_op(type="slice", inputs={"Input": [arr]}, outputs={"Out": [part]},
                         attrs={"axes": [0], "starts": [1], "ends": [3], "decrease_axis": [], "infer_flags": [1]})
    return P.tensor.manipulation.tensor_array_to_tensor(part, axis=0, use_stack=True)[0]


def _slice_array_dense(P, x, p):
    """arr[-2]: PIR slice_array_dense; legacy slice with decrease_axis, a tensor out."""
    arr = _array(P, x, p, _roll(P, x))
    if _pir(P):
        return P._C_ops.slice_array_dense(arr, [-2])
    helper = P.base.layer_helper.LayerHelper("slice")
    out = helper.create_variable_for_type_inference(dtype=x.dtype)
    helper.append_op(type="slice", inputs={"Input": [arr]}, outputs={"Out": [out]},
                     attrs={"axes": [0], "starts": [-2], "ends": [-1], "decrease_axis": [0], "infer_flags": [1]})
    return out


def _arrays(P):
    stack = P.tensor.manipulation.tensor_array_to_tensor
    return [
        ("create_array+array_write+array_read:rw", lambda x, p: P.tensor.array_read(_array(P, x, p), _i64(P, 0))),
        ("create_array+array_write+array_read:overwrite", lambda x, p: P.tensor.array_read(
            _array(P, x, p, _roll(P, x), _flip_rows(P, p)), _i64(P, 2))),
        ("create_array+array_write+array_length:len", lambda x, p: _length(P, _array(P, x, p, x))),
        ("array_to_tensor+create_array+array_write:stack", lambda x, p: stack(_array(P, x, p), axis=0, use_stack=True)[0]),
        ("array_to_tensor+create_array+array_write:concat", lambda x, p: stack(_array(P, x, p), axis=1)[0]),
        ("array_pop:static", lambda x, p: _array_pop(P, x, p)),
        ("slice_array:static", lambda x, p: _slice_array(P, x, p)),
        ("slice_array_dense:static", lambda x, p: _slice_array_dense(P, x, p)),
    ]


# ------------------------------------------------------------------------------ rnn
_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _rnn(P, x, mode, hidden=3, bidirec=False):
    """Paddle's fused rnn op on x [time, batch, features] (x viewed as [2, 1, 3]: time-major),
    weights constant in x's dtype, zero initial states; the output sequence."""
    np_dtype = "float64" if x.dtype == P.float64 else "float32"
    seq = P.reshape(x, [2, 1, 3])
    dirs = 2 if bidirec else 1
    rows = _GATES[mode] * hidden
    rng = np.random.default_rng(7)

    def const(shape):
        value = rng.uniform(-0.6, 0.6, shape).astype(np_dtype)
        if _legacy_static(P) and np_dtype == "float64":  # paddle.to_tensor would write float32 + cast
            return _legacy_op(P, "assign_value", {}, {"shape": list(shape), "dtype": P.base.core.VarDesc.VarType.FP64,
                                                      "fp64_values": [float(v) for v in value.reshape(-1)]},
                              ["Out"], "float64")[0]
        return P.to_tensor(value)

    weights = []
    for _ in range(dirs):
        weights += [const((rows, 3)), const((rows, hidden))]
    for _ in range(dirs):
        weights += [const((rows,)), const((rows,))]
    n_states = 2 if mode == "LSTM" else 1
    states = [P.full([dirs, 1, hidden], 0.0, x.dtype) for _ in range(n_states)]
    if _legacy_static(P):
        helper = P.base.layer_helper.LayerHelper("rnn")
        out = helper.create_variable_for_type_inference(x.dtype)
        state = [helper.create_variable_for_type_inference(x.dtype) for _ in range(n_states)]
        reserve = helper.create_variable_for_type_inference(dtype=P.base.core.VarDesc.VarType.UINT8,
                                                            stop_gradient=True)
        dropout_state = helper.create_variable_for_type_inference(dtype=P.base.core.VarDesc.VarType.UINT8,
                                                                  stop_gradient=True)
        helper.append_op(type="rnn", inputs={"Input": seq, "WeightList": weights, "PreState": states},
                         outputs={"Out": out, "State": state, "Reserve": reserve, "DropoutState": dropout_state},
                         attrs={"dropout_prob": 0.0, "is_bidirec": bidirec, "input_size": 3, "hidden_size": hidden,
                                "num_layers": 1, "mode": mode, "is_test": True})
        return out
    dropout_state = P.zeros([0], "uint8")
    return P._C_ops.rnn(seq, states, weights, None, dropout_state, 0.0, bidirec, 3, hidden, 1, mode, 0, True)[0]


def _rnns(P):
    return [
        ("rnn:lstm", lambda x, p: _rnn(P, x, "LSTM")),
        ("rnn:gru", lambda x, p: _rnn(P, x, "GRU")),
        ("rnn:tanh", lambda x, p: _rnn(P, x, "RNN_TANH")),
        ("rnn:relu-bidirec", lambda x, p: _rnn(P, x, "RNN_RELU", hidden=2, bidirec=True)),
    ]


def _masks(P):
    F = P.nn.functional
    return [
        ("sequence_mask", lambda x, p: F.sequence_mask(p, maxlen=4)),
        ("sequence_mask:out-dtype", lambda x, p: F.sequence_mask(p, maxlen=5, dtype=p.dtype)),
        ("sequence_mask:max", lambda x, p: F.sequence_mask(p)),
    ]


def _lod_reset(P, x, p):
    """Legacy lod_reset (target_lod: the batch as one sequence, what pd2onnx converts); the transpose drops the LoD
    again (Paddle's executor refuses to fetch a LoD tensor as an array; the transpose passes
    no LoD on)."""
    if _pir(P):
        raise NotImplementedError("lod_reset is a legacy op (PIR has no LoD ops)")
    out = _legacy_op(P, "lod_reset", {"X": [x]}, {"target_lod": [0, 2], "append": False}, ["Out"], x.dtype)[0]
    return P.transpose(out, [1, 0])


def _lod(P):
    return [("lod_reset:static", lambda x, p: _lod_reset(P, x, p))]


# ------------------------------------------------------------------------------ LoD sequence ops
# Legacy only. Paddle's predictor is fed plain tensors here, so each entry gives its input a
# LoD inside the program: lod_reset with target_lod [0, rows] (the batch as ONE sequence, the
# form pd2onnx converts); a transpose drops the LoD of the result again (Paddle's executor
# cannot fetch a LoD tensor as an array).
def _seq(P, t):
    if _pir(P):
        raise NotImplementedError("LoD sequence ops are legacy ops (PIR has none)")
    rows = int(t.shape[0])
    return _legacy_op(P, "lod_reset", {"X": [t]}, {"target_lod": [0, rows], "append": False}, ["Out"], t.dtype)[0]


def _unlod(P, t):
    return P.transpose(t, [1, 0])


def _const(P, value, dtype):
    """A constant in ``dtype`` (float32/float64) from a numpy array: assign_value (Paddle 2.6
    writes float64 constants as float32 + cast with paddle.to_tensor)."""
    value = np.asarray(value, dtype)
    if dtype == "float64":
        attrs = {"shape": list(value.shape), "dtype": P.base.core.VarDesc.VarType.FP64,
                 "fp64_values": [float(v) for v in value.reshape(-1)]}
    else:
        attrs = {"shape": list(value.shape), "dtype": P.base.core.VarDesc.VarType.FP32,
                 "fp32_values": [float(v) for v in value.reshape(-1)]}
    return _legacy_op(P, "assign_value", {}, attrs, ["Out"], dtype)[0]


def _float_name(P, x):
    return "float64" if x.dtype == P.float64 else "float32"


def _seq_pool(P, x, kind):
    seq = _seq(P, x)
    pooled = _legacy_op(P, "sequence_pool", {"X": [seq]}, {"pooltype": kind, "is_test": True, "pad_value": 0.0},
                        ["Out", "MaxIndex"], x.dtype)[0]
    return _unlod(P, pooled)


def _seq_softmax(P, x):
    seq = _seq(P, P.reshape(x, [6, 1]))
    return _unlod(P, _legacy_op(P, "sequence_softmax", {"X": [seq]}, {}, ["Out"], x.dtype)[0])


def _seq_expand_as(P, x, p):
    out = _legacy_op(P, "sequence_expand_as", {"X": [p[:1]], "Y": [_seq(P, x)]}, {}, ["Out"], x.dtype)[0]
    return _unlod(P, out)


def _lstm(P, x, peepholes):
    dt, h = _float_name(P, x), 2
    rng = np.random.default_rng(3)
    seq = _seq(P, P.concat([x, x, x[:, :2]], axis=1))  # [2, 4h]
    w = _const(P, rng.uniform(-0.5, 0.5, (h, 4 * h)), dt)
    b = _const(P, rng.uniform(-0.2, 0.2, (1, (7 if peepholes else 4) * h)), dt)
    attrs = {"use_peepholes": peepholes, "is_reverse": False, "is_test": True, "gate_activation": "sigmoid",
             "cell_activation": "tanh", "candidate_activation": "tanh"}
    hidden = _legacy_op(P, "lstm", {"Input": [seq], "Weight": [w], "Bias": [b]}, attrs,
                        ["Hidden", "Cell", "BatchGate", "BatchCellPreAct"], x.dtype)[0]
    return _unlod(P, hidden)


def _crf(P, x, with_label=False):
    """Viterbi path (or, with a gold label sequence, 1 where the path agrees with it)."""
    transition = _const(P, np.random.default_rng(5).uniform(-1, 1, (5, 3)), _float_name(P, x))
    inputs = {"Emission": [_seq(P, x)], "Transition": [transition]}
    if with_label:
        label = _legacy_op(P, "assign_value", {}, {"shape": [2, 1], "dtype": P.base.core.VarDesc.VarType.INT64,
                                                   "int64_values": [2, 0]}, ["Out"], "int64")[0]
        inputs["Label"] = [_seq(P, label)]
    path = _legacy_op(P, "crf_decoding", inputs, {}, ["ViterbiPath"], "int64")[0]
    return _unlod(P, path)


def _seqs(P):
    return [
        ("sequence_pool:static-sum", lambda x, p: _seq_pool(P, x, "SUM")),
        ("sequence_pool:static-max", lambda x, p: _seq_pool(P, x, "MAX")),
        ("sequence_pool:static-average", lambda x, p: _seq_pool(P, x, "AVERAGE")),
        ("sequence_pool:static-last", lambda x, p: _seq_pool(P, x, "LAST")),
        ("sequence_pool:static-first", lambda x, p: _seq_pool(P, x, "FIRST")),
        ("sequence_pool:static-sqrt", lambda x, p: _seq_pool(P, x, "SQRT")),
        ("sequence_softmax:static", lambda x, p: _seq_softmax(P, x)),
        ("sequence_expand_as:static", lambda x, p: _seq_expand_as(P, x, p)),
    ]


def _recurrent(P):
    return [
        ("lstm:static", lambda x, p: _lstm(P, x, False)),
        ("lstm:static-peepholes", lambda x, p: _lstm(P, x, True)),
        ("crf_decoding:static", lambda x, p: _crf(P, x)),
        ("crf_decoding:static-label", lambda x, p: _crf(P, x, with_label=True)),
    ]


def _int16_out(P, table):
    """The table with int16 results cast to int32 in Paddle 2.6's static programs: its
    inference predictor hands int16 outputs back as int32 (PaddleDType has no INT16;
    measured: a reshape of an int16 input comes back int32), so a model ending in int16
    could never match its own reference dtype. The ops before the cast still run in int16."""

    def wrap(fn):
        def run(x, p):
            out = fn(x, p)
            if _legacy_static(P) and out.dtype == P.int16:
                out = P.cast(out, "int32")
            return out

        return run

    return [(name, wrap(fn)) for name, fn in table(P)]


for _group, _table, _dtypes in (
    ("flowcf", _flow, DTYPES),
    ("flowarray", _arrays, DTYPES),
    ("flowrnn", _rnns, DTYPES),
    ("flowmask", _masks, DTYPES),
    ("flowlod", _lod, DTYPES),
    ("flowseq", _seqs, DTYPES),
    ("flowrec", _recurrent, DTYPES),
):
    register(__file__, _group, lambda P, _t=_table: _int16_out(P, _t), SHAPE, _dtypes)
