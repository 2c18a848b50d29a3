"""The dtype matrix's tensor tables: creation ops (the created dtype is x's dtype), the
tensor/indexing mappers (expand_as, strided_slice, unfold, unstack, broadcast_tensors, index_put, index_sample,
set_value...), the random ops (dtype and shape compared) and the bookkeeping no-ops (print,
share_data, memcpy...).

Every group takes x (any sign) and p (positive) of shape (3, 4). Ops that only Paddle 2.6's
legacy programs hold (expand_v1, flatten2, fill_zeros_like, memcpy, share_buffer, depend) are
appended by hand in ``static`` entries; under PIR those entries write the op's PIR builder
where one exists (``_C_ops``), else the modern op (which the entry does not claim).
"""

from __future__ import annotations

from harness.dtype_matrix import DTYPES, ZERO_D_DTYPES, register

SHAPE = (3, 4)

# Paddle's legacy VarType codes (framework.proto)
_LEGACY_CODE = {"bool": 0, "int16": 1, "int32": 2, "int64": 3, "float16": 4, "float32": 5, "float64": 6,
                "uint8": 20, "int8": 21, "bfloat16": 22}


def _pir(P) -> bool:
    return int(P.__version__.split(".")[0]) >= 3


def _dtype_name(P, t) -> str:
    return str(t.dtype).replace("paddle.", "").split(".")[-1]


def _legacy_op(P, op_type, inputs, attrs, outputs, dtype, in_place=None):
    """A raw legacy op appended to the current static program (Paddle 2.x); ``in_place``: the
    variable the op writes as its ``Out`` (ops that write their input)."""
    helper = P.base.layer_helper.LayerHelper(op_type)
    outs = {slot: [helper.create_variable_for_type_inference(dtype)] for slot in outputs}
    if in_place is not None:
        outs["Out"] = [in_place]
    helper.append_op(type=op_type, inputs=inputs, outputs=outs, attrs=attrs)
    return [outs[slot][0] for slot in outputs]


# ---------------------------------------------------------------------------- creation
def _full_batch_size_like(P, x):
    """Dim 1 of a [2, -1] fill from dim 0 of x (3): a [2, 3] tensor of 1 in x's dtype (1: bool
    refuses other values)."""
    if _pir(P):
        return P._C_ops.full_batch_size_like(x, [2, -1], x.dtype, 1, 0, 1, P.CPUPlace())
    name = _dtype_name(P, x)
    attrs = {"shape": [2, -1], "dtype": _LEGACY_CODE[name], "value": 1.0, "str_value": "1",
             "input_dim_idx": 0, "output_dim_idx": 1}
    return _legacy_op(P, "fill_constant_batch_size_like", {"Input": [x]}, attrs, ["Out"], x.dtype)[0]


def _fill_zeros_like(P, x):
    if _pir(P):
        return P.zeros_like(x)
    return _legacy_op(P, "fill_zeros_like", {"X": [x]}, {}, ["Out"], x.dtype)[0]


def _full_int_array(P, x):
    """[1, 2, 3] in x's dtype (PIR's full_int_array; Paddle 2.6 has no such op: assign_value)."""
    if _pir(P):
        return P._C_ops.full_int_array([1, 2, 3], x.dtype, P.CPUPlace())
    return P.to_tensor([1, 2, 3], dtype=x.dtype)


def _empty_like(P, x):
    """paddle.empty_like writes shape64 + empty in both Paddles; PIR's own empty_like op comes
    from ``_C_ops`` (Paddle 2.6 has no empty_like op: the entry writes empty there)."""
    if _pir(P):
        return P._C_ops.empty_like(x, x.dtype, P.CPUPlace())
    return P.empty_like(x)


def _creation(P):
    return [
        ("arange", lambda x, p: P.arange(0, 5, 1, dtype=x.dtype)),
        ("arange:negative-step", lambda x, p: P.arange(6, -1, -2, dtype=x.dtype)),
        ("assign_value", lambda x, p: P.to_tensor([[1, 0], [1, 1]], dtype=x.dtype)),
        ("empty:random", lambda x, p: P.empty([2, 3], dtype=x.dtype)),
        ("empty_like+empty:random", lambda x, p: _empty_like(P, x)),
        ("eye", lambda x, p: P.eye(3, 4, dtype=x.dtype)),
        ("fill_zeros_like:static", lambda x, p: _fill_zeros_like(P, x)),
        ("full", lambda x, p: P.full([2, 3], 1, dtype=x.dtype)),
        ("full_batch_size_like:static", lambda x, p: _full_batch_size_like(P, x)),
        ("full_int_array+assign_value:static", lambda x, p: _full_int_array(P, x)),
        ("full_with_tensor+full:shape-tensor", lambda x, p: P.full(P.shape(x), 1, dtype=x.dtype)),
        ("linspace", lambda x, p: P.linspace(0, 4, 5, dtype=x.dtype)),
        ("numel", lambda x, p: P.numel(x)),
    ]


# ---------------------------------------------------------------------------- tensor
def _expand_v1(P, x):
    if _pir(P):
        return P.tile(x, [2, 1])
    return _legacy_op(P, "expand", {"X": [x]}, {"expand_times": [2, 1]}, ["Out"], x.dtype)[0]


def _flatten2(P, x):
    if _pir(P):
        return P.flatten(P.reshape(x, [3, 2, 2]), 1)
    x3 = P.reshape(x, [3, 2, 2])
    return _legacy_op(P, "flatten2", {"X": [x3]}, {"axis": 1}, ["Out", "XShape"], x.dtype)[0]


def _no_grad(t):
    """t with stop_gradient set (Paddle refuses a bool expand_as input that needs gradients,
    as jit.save's inputs do)."""
    t.stop_gradient = True
    return t


def _tensor(P):
    F = P.nn.functional
    return [
        ("expand_as", lambda x, p: P.expand_as(_no_grad(x[:1]), p)),
        ("expand_v1:static", lambda x, p: _expand_v1(P, x)),
        ("flatten2:static", lambda x, p: _flatten2(P, x)),
        ("split_with_num+split:num", lambda x, p: P.split(x, 2, axis=-1)[0]),
        ("strided_slice", lambda x, p: P.strided_slice(x, [0, 1], [0, 1], [3, 4], [2, 2])),
        ("strided_slice:negative", lambda x, p: P.strided_slice(x, [1], [3], [0], [-2])),
        ("unfold", lambda x, p: F.unfold(P.reshape(x, [1, 1, 3, 4]), [2, 2])),
        ("unstack", lambda x, p: P.unstack(x, axis=0)[1]),
        ("unstack:last", lambda x, p: P.unstack(x, axis=-1)[3]),
        ("broadcast_tensors", lambda x, p: P.broadcast_tensors([x[:, :1], p[:1], P.reshape(x, [1, 3, 4])])[0]),
        ("broadcast_tensors:second", lambda x, p: P.broadcast_tensors([P.reshape(x, [3, 1, 4]), p[:2]])[1]),
    ]


# ---------------------------------------------------------------------------- indexing
def _setitem(P, x, index, value):
    """A copy of x with ``copy[index] = value`` (set_value / set_value_with_tensor): eagerly
    through ``__setitem__``, in a static program through ``paddle.static.setitem``, which returns
    the written value (PIR values are immutable: a plain ``y[i] = v`` outside dy2static's
    rewriting leaves the set_value op unused, and the saved program loses it)."""
    y = P.assign(x)
    if P.in_dynamic_mode():
        y[index] = value
        return y
    return P.static.setitem(y, index, value)


def _indexing(P):
    def idx(*v):
        return P.to_tensor(list(v), dtype="int64")

    return [
        ("index_put", lambda x, p: P.index_put(x, (idx(0, 2), idx(1, 3)), p[0, :2])),
        ("index_put:accumulate", lambda x, p: P.index_put(x, (idx(0, 2), idx(1, 3)), p[0, :2], accumulate=True)),
        ("index_sample", lambda x, p: P.index_sample(x, P.to_tensor([[0, 1], [2, 3], [1, 1]], dtype="int64"))),
        ("index_sample:int32", lambda x, p: P.index_sample(x, P.to_tensor([[3], [0], [2]], dtype="int32"))),
        ("repeat_interleave_with_tensor_index", lambda x, p: P.repeat_interleave(x, idx(1, 2, 1), axis=0)),
        ("set_value:scalar", lambda x, p: _setitem(P, x, (0, slice(1, 3)), 1)),
        ("set_value_with_tensor+set_value:tensor", lambda x, p: _setitem(P, x, (slice(1, None), slice(None, 2)), p[1:, :2])),
        ("set_value_with_tensor+set_value:steps", lambda x, p: _setitem(P, x, (slice(None, None, 2), slice(None, None, -2)), p[:2, :2])),
    ]


# ---------------------------------------------------------------------------- random
def _random(P):
    return [
        ("bernoulli:random", lambda x, p: P.bernoulli(P.full_like(x, 0.5))),
        ("gaussian:random", lambda x, p: P.randn([2, 3], dtype=x.dtype)),
        ("multinomial:random", lambda x, p: P.multinomial(p, 2)),
        ("randint:random", lambda x, p: P.randint(0, 5, [2, 3], dtype=x.dtype)),
        ("randperm:random", lambda x, p: P.randperm(5, dtype=x.dtype)),
        ("uniform:random", lambda x, p: P.uniform([2, 3], dtype=x.dtype)),
    ]


# ---------------------------------------------------------------------------- misc
def _share_data(P, x):
    if _pir(P):
        return P._C_ops.share_data(x)
    return _legacy_op(P, "share_data", {"X": [x]}, {}, ["Out"], x.dtype)[0]


def _memcpy(P, x, op):
    if _pir(P):
        return getattr(P._C_ops, op)(x, 0)
    return _legacy_op(P, op, {"X": [x]}, {"dst_place_type": 0}, ["Out"], x.dtype)[0]


def _depend(P, x, p):
    y = P.assign(x)
    return _legacy_op(P, "depend", {"X": [y], "Dep": [p]}, {}, ["Out"], x.dtype, in_place=y)[0]


def _share_buffer(P, x):
    y = P.assign(x)
    blk = P.static.default_main_program().global_block()
    out, xout = (blk.create_var(name=P.utils.unique_name.generate(n), shape=list(x.shape), dtype=x.dtype)
                 for n in ("share_buffer_out", "share_buffer_xout"))
    P.base.layer_helper.LayerHelper("share_buffer").append_op(
        type="share_buffer", inputs={"X": [y]}, outputs={"Out": [out], "XOut": [xout]},
        attrs={"share_dims_and_dtype": [True]})
    return out


def _assign_out(P, x, p):
    """``assign(p, output=out)``: PIR's assign_out_ returns the written value (Paddle 2.6 writes
    assign into ``out``)."""
    out = P.full_like(x, 0)
    return P.assign(p, output=out)


def _misc(P):
    return [
        ("print:static", lambda x, p: P.static.Print(x, message="pd2onnx dtype matrix")),
        ("assign_out+assign:output", lambda x, p: _assign_out(P, x, p)),
        ("share_data:static", lambda x, p: _share_data(P, x)),
        ("memcpy_d2h:static", lambda x, p: _memcpy(P, x, "memcpy_d2h")),
        ("memcpy_h2d:static", lambda x, p: _memcpy(P, p, "memcpy_h2d")),
        ("memcpy:static", lambda x, p: _memcpy(P, x, "memcpy")),
    ] + ([] if _pir(P) else [  # legacy only: PIR's depend has no CPU kernel that runs outside
        # distributed passes, and share_buffer no PIR builder
        ("depend:static", lambda x, p: _depend(P, x, p)),
        ("share_buffer:static", lambda x, p: _share_buffer(P, x)),
    ])


def _zero_d(P):
    """Creation and tensor ops on 0-D inputs (x, p are 0-D)."""
    return [
        ("full:0-d", lambda x, p: P.full([], 1, dtype=x.dtype)),
        ("assign_value:0-d", lambda x, p: P.to_tensor(1, dtype=x.dtype)),
        ("empty:random-0-d", lambda x, p: P.empty([], dtype=x.dtype)),
        ("empty_like+empty:random-0-d", lambda x, p: _empty_like(P, x)),
        ("fill_zeros_like:static-0-d", lambda x, p: _fill_zeros_like(P, x)),
        ("full_with_tensor+full:shape-tensor-0-d", lambda x, p: P.full(P.shape(x), 1, dtype=x.dtype)),
        ("expand_as:0-d", lambda x, p: P.expand_as(_no_grad(P.assign(x)), P.stack([p, p]))),
        ("unstack:to-0-d", lambda x, p: P.unstack(P.stack([x, p]))[1]),
        ("set_value_with_tensor+set_value:0-d", lambda x, p: _setitem(P, P.stack([x, x]), 1, p)),
        ("numel:0-d", lambda x, p: P.numel(x)),
    ]


def _with_x(table):
    """The table plus an entry that uses x in every dtype (the generator's shape entries are
    not kept in all of them, e.g. Paddle 2.6's int8, and creation entries only read x's dtype:
    an unused input makes the save fail)."""
    return lambda P: table(P) + [("assign:x", lambda x, p: P.assign(x))]


# int16 is left out of the bookkeeping and random groups: Paddle's inference predictor holds int16 feeds as
# int32 data (Paddle 3.3: "The type of data we are trying to retrieve (int16) does not match the
# type of data (int32)"), so ops that pass their input through (assign, memcpy*) return int32
# there: measured, values equal to the int16 input, dtype int32 in both Paddles. The other
# groups' int16 cases are skipped for the same reason (the predictor fails on them).
_NO_INT16 = tuple(d for d in DTYPES if d != "int16")

for _group, _table, _shape, _dtypes in (
    ("tcreate", _creation, SHAPE, DTYPES),
    ("ttensor", _tensor, SHAPE, DTYPES),
    ("tindex", _indexing, SHAPE, DTYPES),
    ("trandom", _random, SHAPE, _NO_INT16),  # no random op takes int16: only the assign entries ran
    ("tmisc", _misc, SHAPE, _NO_INT16),
    ("tcreate0d", _zero_d, (), ZERO_D_DTYPES),
):
    register(__file__, _group, _with_x(_table), _shape, _dtypes)
