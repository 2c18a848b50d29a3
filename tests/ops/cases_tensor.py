"""Shape-manipulation cases: reshape, flatten, squeeze, concat, split, slice, expand, tile, ...

Cases whose dynamic dims or runtime arguments need a newer opset than the op's declared
minimum (flip, roll, tril/triu emulation, runtime slice/split/unsqueeze arguments) run at the
opset the mapper requires (auto-opset), 17 and the newest; static cases cover the low opsets.
"""

from harness.cases import case


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype("float32")


def _i64(rng, *shape):
    return rng.integers(-50, 50, shape).astype("int64")


def _i32(rng, *shape):
    return rng.integers(-50, 50, shape).astype("int32")


def _bool(rng, *shape):
    return rng.random(shape) > 0.5


# ---------------------------------------------------------------------------- reshape / flatten
@case("reshape")
def tensor_reshape_copy_infer(paddle, rng):
    def fn(x):
        return paddle.reshape(x, [0, -1, 2])

    return fn, [_f32(rng, 2, 3, 4)]


@case("reshape")
def tensor_reshape_dynamic_int64(paddle, rng):
    def fn(x):
        return paddle.reshape(x, [-1, 4, 3])

    return fn, [_i64(rng, 2, 3, 4)], [(None, 3, 4)]


@case("reshape")
def tensor_reshape_shape_input(paddle, rng):
    """The shape is a runtime int32 tensor holding 0 (copy) and -1 (infer)."""

    def fn(x, s):
        return paddle.reshape(x, s)

    import numpy as np

    return fn, [_f32(rng, 2, 3, 4), np.array([4, 0, -1], dtype="int32")]


@case("reshape", "slice", "shape64", "stack")
def tensor_reshape_runtime_batch(paddle, rng):
    """reshape(x, [shape(x)[0], -1]): a list of scalar tensors (legacy ShapeTensor)."""

    def fn(x):
        return paddle.reshape(x, [paddle.shape(x)[0], -1])

    return fn, [_f32(rng, 3, 2, 4)], [(None, 2, 4)]


@case("flatten")
def tensor_flatten_middle(paddle, rng):
    def fn(x):
        return paddle.flatten(x, 1, 2)

    return fn, [_f32(rng, 2, 3, 4, 5)]


@case("flatten")
def tensor_flatten_dynamic_trailing(paddle, rng):
    """Trailing dim dynamic: its size comes from Shape, the merged dims from -1."""

    def fn(x):
        return paddle.flatten(x, 0, 1)

    return fn, [_i64(rng, 2, 3, 4, 5)], [(2, None, 4, None)]


@case("flatten")
def tensor_flatten_all_int32(paddle, rng):
    return paddle.flatten, [_i32(rng, 2, 3, 4)], [(None, 3, 4)]


@case("flatten")
def tensor_flatten_neg_axes_dynamic(paddle, rng):
    def fn(x):
        return paddle.flatten(x, -3, -2)

    return fn, [_f32(rng, 2, 3, 4, 5)], [(None, 3, None, 5)]


# ---------------------------------------------------------------------------- squeeze / unsqueeze
@case("squeeze")
def tensor_squeeze_axes(paddle, rng):
    """Axis 1 has size 3: Paddle leaves it (ONNX Squeeze would fail on it)."""

    def fn(x):
        return paddle.squeeze(x, [0, 1, -1])

    return fn, [_f32(rng, 1, 3, 4, 1)]


@case("squeeze")
def tensor_squeeze_all(paddle, rng):
    return paddle.squeeze, [_i64(rng, 1, 3, 1, 2)]


@case("squeeze")
def tensor_squeeze_all_dynamic(paddle, rng):
    return paddle.squeeze, [_f32(rng, 2, 1, 3)], [(None, 1, None)]


@case("squeeze")
def tensor_squeeze_dynamic_axis(paddle, rng):
    def fn(x):
        return paddle.squeeze(x, [1])

    return fn, [_bool(rng, 2, 1, 3)], [(None, 1, 3)]


@case("unsqueeze")
def tensor_unsqueeze_sequential(paddle, rng):
    """Paddle inserts axes one at a time: [0, 0, -1] on rank 2 gives [1, 1, a, b, 1]."""

    def fn(x):
        return paddle.unsqueeze(x, [0, 0, -1])

    return fn, [_f32(rng, 3, 4)]


@case("unsqueeze")
def tensor_unsqueeze_neg_first(paddle, rng):
    def fn(x):
        return paddle.unsqueeze(x, [-1, 1])

    return fn, [_i64(rng, 3, 4)], [(None, 4)]


@case("unsqueeze")
def tensor_unsqueeze_scalar_axis(paddle, rng):
    def fn(x):
        return paddle.unsqueeze(x, -2)

    return fn, [_bool(rng, 3, 4)]


@case("transpose")
def tensor_transpose(paddle, rng):
    def fn(x):
        return paddle.transpose(x, [2, 0, 1])

    return fn, [_f32(rng, 2, 3, 4)], [(None, 3, None)]


@case("transpose")
def tensor_transpose_int64(paddle, rng):
    def fn(x):
        return paddle.transpose(x, [0, 2, 1, 3])

    return fn, [_i64(rng, 2, 3, 4, 5)]


# ---------------------------------------------------------------------------- concat / stack / split
@case("concat")
def tensor_concat_neg_axis(paddle, rng):
    def fn(x, y, z):
        return paddle.concat([x, y, z], axis=-1)

    return fn, [_f32(rng, 2, 3), _f32(rng, 2, 1), _f32(rng, 2, 4)], [(None, 3), (None, 1), (None, 4)]


@case("concat")
def tensor_concat_int64(paddle, rng):
    def fn(x, y):
        return paddle.concat([x, y], axis=0)

    return fn, [_i64(rng, 2, 3), _i64(rng, 1, 3)]


@case("stack")
def tensor_stack(paddle, rng):
    def fn(x, y):
        return paddle.stack([x, y], axis=-1)

    return fn, [_f32(rng, 2, 3), _f32(rng, 2, 3)], [(None, 3), (None, 3)]


@case("stack")
def tensor_stack_bool(paddle, rng):
    def fn(x, y):
        return paddle.stack([x, y], axis=1)

    return fn, [_bool(rng, 2, 3), _bool(rng, 2, 3)]


@case("split")
def tensor_split_sections(paddle, rng):
    def fn(x):
        return paddle.split(x, [2, -1, 1], axis=1)

    return fn, [_f32(rng, 2, 6, 3)]


@case("split")
def tensor_split_sections_dynamic(paddle, rng):
    """-1 on a dynamic dim: sliced from the front and from the back."""

    def fn(x):
        return paddle.split(x, [1, -1, 2, 1], axis=-1)

    return fn, [_i64(rng, 2, 7)], [(2, None)]


@case("split_with_num", "split")
def tensor_split_num(paddle, rng):
    def fn(x):
        return paddle.split(x, 3, axis=0)

    return fn, [_f32(rng, 6, 2)]


@case("split_with_num", "split")
def tensor_split_num_dynamic(paddle, rng):
    def fn(x):
        return paddle.split(x, 2, axis=1)

    return fn, [_f32(rng, 3, 4)], [(3, None)]


@case("unstack")
def tensor_unstack(paddle, rng):
    def fn(x):
        return paddle.unstack(x, axis=-1)

    return fn, [_f32(rng, 2, 3)], [(None, 3)]


@case("unbind")
def tensor_unbind(paddle, rng):
    def fn(x):
        return paddle.unbind(x, axis=1)

    return fn, [_i64(rng, 2, 3, 2)]


# ---------------------------------------------------------------------------- slice / strided_slice
@case("slice")
def tensor_slice_index(paddle, rng):
    """x[1:3, -2:, 0]: negative start, an end past the dim, a decreased axis."""

    def fn(x):
        return x[1:30, -2:, 0]

    return fn, [_f32(rng, 4, 3, 5)]


@case("slice")
def tensor_slice_dynamic(paddle, rng):
    def fn(x):
        return x[:, 1:-1]

    return fn, [_bool(rng, 2, 5)], [(None, None)]


@case("slice")
def tensor_slice_api(paddle, rng):
    def fn(x):
        return paddle.slice(x, axes=[0, 2], starts=[-3, 1], ends=[100, -1])

    return fn, [_i64(rng, 4, 3, 5)]


@case("slice")
def tensor_slice_to_scalar(paddle, rng):
    def fn(x):
        return x[1] * 2.0

    return fn, [_f32(rng, 4)]


@case("slice")
def tensor_slice_runtime_start(paddle, rng):
    """A start from an input tensor (legacy StartsTensorList / PIR combine)."""
    import numpy as np

    def fn(x, n):
        return paddle.slice(x, axes=[1], starts=[n], ends=[10])

    return fn, [_f32(rng, 2, 6), np.array([2], dtype="int64")]


@case("strided_slice")
def tensor_strided_reverse(paddle, rng):
    """x[::-1] (Paddle 2.6 writes end -1, Paddle 3 writes INT32_MIN)."""

    def fn(x):
        return x[::-1]

    return fn, [_f32(rng, 5, 2)]


@case("strided_slice")
def tensor_strided_steps(paddle, rng):
    def fn(x):
        return x[3:0:-2, 1::2]

    return fn, [_f32(rng, 5, 6)]


@case("strided_slice")
def tensor_strided_dynamic(paddle, rng):
    def fn(x):
        return x[:, ::-2]

    return fn, [_i64(rng, 2, 5)], [(None, None)]


@case("strided_slice")
def tensor_strided_api_neg(paddle, rng):
    def fn(x):
        return paddle.strided_slice(x, axes=[0, 1], starts=[-1, 4], ends=[-10, 0], strides=[-1, -3])

    return fn, [_f32(rng, 4, 6)]


@case("strided_slice", "concat")
def tensor_strided_start_before_dim(paddle, rng):
    """start < -dim, end -1, stride -1: Paddle 3 takes nothing, Paddle 2.6 takes index 0."""

    def fn(x):
        head = paddle.strided_slice(x, axes=[0], starts=[-8], ends=[-1], strides=[-1])
        return paddle.concat([head, x], axis=0)

    return fn, [_f32(rng, 5, 2)]


@case("strided_slice", "concat")
def tensor_strided_start_before_dim_dynamic(paddle, rng):
    """Runtime corrections; end -9 < -dim: Paddle 3 runs through index 0, Paddle 2.6 stops before it."""

    def fn(x):
        head = paddle.strided_slice(x, axes=[0], starts=[-8], ends=[-1], strides=[-1])
        mid = paddle.strided_slice(x, axes=[0], starts=[4], ends=[-9], strides=[-2])
        return paddle.concat([head, mid, x], axis=0)

    return fn, [_f32(rng, 5, 2)], [(None, 2)]


# ---------------------------------------------------------------------------- expand / tile
@case("expand")
def tensor_expand_keep(paddle, rng):
    def fn(x):
        return paddle.expand(x, [2, -1, 4])

    return fn, [_f32(rng, 3, 1)]


@case("expand")
def tensor_expand_dynamic_int32(paddle, rng):
    def fn(x):
        return paddle.expand(x, [3, -1, 2])

    return fn, [_i32(rng, 4, 1)], [(None, 1)]


@case("expand")
def tensor_expand_shape_input(paddle, rng):
    import numpy as np

    def fn(x, s):
        return paddle.expand(x, s)

    return fn, [_i64(rng, 3, 1), np.array([2, -1, 5], dtype="int64")]


@case("expand")
def tensor_broadcast_to(paddle, rng):
    def fn(x):
        return paddle.broadcast_to(x, [2, 3, 4])

    return fn, [_f32(rng, 3, 1)]


@case("expand_as")
def tensor_expand_as(paddle, rng):
    def fn(x, y):
        return paddle.expand_as(x, y)

    return fn, [_f32(rng, 1, 3), _f32(rng, 2, 4, 3)], [(1, 3), (None, 4, 3)]


@case("tile")
def tensor_tile_grow(paddle, rng):
    def fn(x):
        return paddle.tile(x, [2, 1, 3])

    return fn, [_f32(rng, 2, 3)]


@case("tile")
def tensor_tile_short(paddle, rng):
    def fn(x):
        return paddle.tile(x, [2])

    return fn, [_i64(rng, 2, 3)], [(None, 3)]


@case("tile")
def tensor_tile_runtime(paddle, rng):
    import numpy as np

    def fn(x, r):
        return paddle.tile(x, r)

    return fn, [_f32(rng, 2, 3), np.array([2, 2], dtype="int32")]


# ---------------------------------------------------------------------------- flip / roll
@case("flip")
def tensor_flip(paddle, rng):
    def fn(x):
        return paddle.flip(x, [0, -1])

    return fn, [_f32(rng, 2, 3, 4)]


@case("flip")
def tensor_flip_dynamic(paddle, rng):
    def fn(x):
        return paddle.flip(x, [1])

    return fn, [_i64(rng, 2, 3)], [(None, None)]


@case("roll")
def tensor_roll_axes(paddle, rng):
    def fn(x):
        return paddle.roll(x, [1, -5], [0, 2])

    return fn, [_f32(rng, 3, 2, 4)]


@case("roll")
def tensor_roll_flat(paddle, rng):
    def fn(x):
        return paddle.roll(x, 4)

    return fn, [_i64(rng, 2, 3)]


@case("roll")
def tensor_roll_dynamic(paddle, rng):
    def fn(x):
        return paddle.roll(x, [-1, 7], [0, 1])

    return fn, [_f32(rng, 3, 4)], [(None, None)]


@case("roll")
def tensor_roll_flat_dynamic(paddle, rng):
    def fn(x):
        return paddle.roll(x, -2)

    return fn, [_f32(rng, 2, 3)], [(None, 3)]


# ---------------------------------------------------------------------------- tril / triu
@case("tril")
def tensor_tril(paddle, rng):
    def fn(x):
        return paddle.tril(x, 1)

    return fn, [_f32(rng, 2, 3, 4)]


@case("triu")
def tensor_triu_int64(paddle, rng):
    def fn(x):
        return paddle.triu(x, -1)

    return fn, [_i64(rng, 4, 3)]


@case("triu")
def tensor_triu_nan(paddle, rng):
    """NaN and inf stay where kept and vanish where masked (a Where, not a multiply)."""
    import numpy as np

    x = _f32(rng, 3, 3)
    x[0, 0], x[2, 0], x[1, 2] = np.nan, np.inf, -np.inf

    def fn(v):
        return paddle.triu(v)

    return fn, [x]


@case("tril")
def tensor_tril_dynamic(paddle, rng):
    def fn(x):
        return paddle.tril(x, -1)

    return fn, [_f32(rng, 2, 4, 3)], [(None, None, None)]


@case("tril")
def tensor_tril_bool_dynamic(paddle, rng):
    """A bool causal mask (PaddleNLP's LLaMA): before opset 14 an And, as ONNX Runtime has no
    bool Where before 16."""

    def fn(x):
        return paddle.tril(x)

    return fn, [_bool(rng, 5, 5)], [(None, None)]


@case("triu")
def tensor_triu_bool(paddle, rng):
    def fn(x):
        return paddle.triu(x, 1)

    return fn, [_bool(rng, 2, 3, 4)]


# ---------------------------------------------------------------------------- grids and patches
@case("meshgrid")
def tensor_meshgrid(paddle, rng):
    def fn(x, y, z):
        return paddle.meshgrid(x, y, z)

    return fn, [_f32(rng, 2), _f32(rng, 3), _f32(rng, 4)]


@case("meshgrid")
def tensor_meshgrid_dynamic(paddle, rng):
    def fn(x, y):
        return paddle.meshgrid(x, y)

    return fn, [_i64(rng, 2), _i64(rng, 3)], [(None,), (None,)]


# ---------------------------------------------------------------------------- broadcast_tensors
@case("broadcast_tensors")
def tensor_broadcast_tensors(paddle, rng):
    """Three float32 inputs of ranks 3, 1 and 2, static shapes."""

    def fn(x, y, z):
        return paddle.broadcast_tensors([x, y, z])

    return fn, [_f32(rng, 2, 1, 4), _f32(rng, 4), _f32(rng, 3, 1)]


@case("broadcast_tensors")
def tensor_broadcast_tensors_dynamic(paddle, rng):
    """Four int64 inputs whose dims are known only at run time: a dim is decided by whichever
    input has it not 1 (opset 9: Where)."""

    def fn(a, b, c, d):
        return paddle.broadcast_tensors([a, b, c, d])

    # (Paddle 2.6 checks the declared dims: a -1 may only meet -1 or 1)
    shapes = [(None, 1, 3), (None, None, 1), (None, 1), (1,)]
    return fn, [_i64(rng, 2, 1, 3), _i64(rng, 1, 5, 1), _i64(rng, 5, 1), _i64(rng, 1)], shapes


@case("broadcast_tensors", "if", "conditional_block", "select_input")
def tensor_broadcast_tensors_in_if(paddle, rng):
    """In a conditional block, as Mask R-CNN's mask head uses it; the two inputs take
    different branches."""

    class Net(paddle.nn.Layer):
        def branchy(self, m, s):
            if paddle.sum(s) > 0:
                mb, sb = paddle.broadcast_tensors([m, s])
                out = paddle.where(mb > 0, sb, paddle.zeros_like(sb))
            else:
                out = m * 0.0 + s * 2.0
            return out

        def forward(self, m, s, t):
            return self.branchy(m, s), self.branchy(m, t)

    s = (rng.random((3, 1)) + 0.5).astype("float32")
    shapes = [(2, 1, 4), (None, 1), (None, 1)]
    return paddle.jit.to_static(Net(), full_graph=True), [_f32(rng, 2, 1, 4), s, -s], shapes


@case("pixel_shuffle")
def tensor_pixel_shuffle(paddle, rng):
    def fn(x):
        return paddle.nn.functional.pixel_shuffle(x, 2)

    return fn, [_f32(rng, 2, 8, 3, 2)], [(None, 8, 3, 2)]


@case("pixel_shuffle")
def tensor_pixel_shuffle_nhwc(paddle, rng):
    def fn(x):
        return paddle.nn.functional.pixel_shuffle(x, 3, data_format="NHWC")

    return fn, [_f32(rng, 1, 2, 3, 18)]


@case("unfold")
def tensor_unfold(paddle, rng):
    def fn(x):
        return paddle.nn.functional.unfold(x, [2, 3])

    return fn, [_f32(rng, 2, 3, 4, 5)], [(None, 3, 4, 5)]


@case("unfold")
def tensor_unfold_stride_pad_dilation(paddle, rng):
    def fn(x):
        return paddle.nn.functional.unfold(x, [2, 2], strides=[2, 1], paddings=[1, 0, 2, 1], dilations=[1, 2])

    return fn, [_f32(rng, 1, 2, 5, 6)]


# ---------------------------------------------------------------------------- runtime IntArrays
@case("split")
def tensor_split_runtime_sections(paddle, rng):
    """A section from an input tensor (legacy SectionsTensorList); -1 resolved at run time."""
    import numpy as np

    def fn(x, n):
        return paddle.split(x, [n, -1], axis=1)

    return fn, [_f32(rng, 2, 5), np.array([2], dtype="int32")]


@case("unsqueeze")
def tensor_unsqueeze_runtime_axes(paddle, rng):
    import numpy as np

    def fn(x, a):
        return paddle.unsqueeze(x, a)

    return fn, [_f32(rng, 2, 3), np.array([0, 3], dtype="int64")]


# ---------------------------------------------------------------------------- legacy-only ops
def _append_legacy(paddle, op_type, x, attrs, xshape=False):
    """Append a legacy op that Paddle 2.6's Python API no longer emits (old 1.x models)."""
    from paddle.base.layer_helper import LayerHelper

    helper = LayerHelper(op_type)
    out = helper.create_variable_for_type_inference(x.dtype)
    outputs = {"Out": out}
    if xshape:
        outputs["XShape"] = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(type=op_type, inputs={"X": x}, outputs=outputs, attrs=attrs)
    return out


@case("flatten2", formats=("legacy",), why="flatten2 is a legacy-only op (no PIR form)")
def tensor_legacy_flatten2(paddle, rng):
    def fn(x):
        return _append_legacy(paddle, "flatten2", x, {"axis": 2}, xshape=True)

    return fn, [_f32(rng, 2, 3, 4)], [(None, 3, 4)]


@case("expand_v1", formats=("legacy",), why="expand (v1, a tile) is a legacy-only op")
def tensor_legacy_expand_v1(paddle, rng):
    def fn(x):
        return _append_legacy(paddle, "expand", x, {"expand_times": [1, 2, 3]})

    return fn, [_i64(rng, 2, 3, 1)]


# ---------------------------------------------------------------------------- PIR bookkeeping ops
@case(
    "sync_calc_stream",
    "c_identity",
    "depend",
    name="misc_bookkeeping_pir",
    custom=True,
    formats=("pir",),
    why="PIR only (Paddle 2.6 has no sync_calc_stream; its c_identity/depend are in "
    "cases_nn2.misc_bookkeeping_legacy), numpy reference: Paddle 3.3's CPU executor runs none of "
    "the three (no c_identity CPU kernel; sync_calc_stream: 'kernel output args (0) defs should "
    "equal op outputs (1)'; depend: 'Input(X) and Output(Out) variable should be the same')",
)
def misc_bookkeeping_pir(paddle, rng, out_dir):
    import os

    import numpy as np

    from harness.static import static_program

    def build(paddle):
        x = paddle.static.data("x", [2, 3], "float32")
        y = paddle.static.data("y", [-1, 3], "float32")
        a = paddle._C_ops.sync_calc_stream(x * 2.0)
        b = paddle._C_ops.c_identity(a + 1.0, 0, True, True)
        c = paddle._C_ops.depend(b * 3.0, [y])
        return [x, y], [c + 0.0, paddle._C_ops.sync_calc_stream(y) - 1.0]

    with static_program(paddle, build) as (main, exe, (inputs, outputs)):
        paddle.static.save_inference_model(os.path.join(out_dir, "model"), inputs, outputs, exe, program=main)
    x, y = _f32(rng, 2, 3), _f32(rng, 4, 3)
    return {"model": "model.json", "inputs": [x, y],
            "outputs": [(x * np.float32(2) + np.float32(1)) * np.float32(3), y - np.float32(1)]}
