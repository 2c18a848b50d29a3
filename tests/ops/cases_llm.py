"""Large-language-model ops: swiglu, RMS norm, fused layer norm.

Paddle 2.6 has no ``swiglu`` and no CPU kernels for its fused norms (its ``rms_norm`` and
``fused_bias_residual_layernorm`` are GPU-only there), so those cases are PIR-only. Paddle 2.6's CPU
build cannot append its legacy ``rms_norm`` through the API (infer_shape looks the kernel up):
that spelling, and the rotary embedding, are appended to the block desc directly and checked
against numpy renderings of Paddle's kernels.
"""

import numpy as np

from harness.cases import case

_NO_26 = "Paddle 2.6 has no swiglu op"


# numpy renderings of Paddle 3.3's CPU kernels of the fused norms (the references on CPUs
# without AVX-512, where those kernels die with SIGILL: harness.cpu), in float64
def _pre_added(x, begin, bias=None, residual=None, alpha=1.0):
    """x + residual * alpha + bias (one bias value per normalized element, flattened)."""
    s = x.astype(np.float64)
    if residual is not None:
        s = s + residual.astype(np.float64) * alpha
    if bias is not None:
        s = s + bias.astype(np.float64).reshape(s.shape[begin:])
    return s


def _trailing(v, begin):
    """v as rows x (the normalized trailing dims, flattened)."""
    return v.reshape(int(np.prod(v.shape[:begin], dtype=np.int64)), -1)


def _ref_layer_norm(x, w, b, eps, begin, bias=None, residual=None, alpha=1.0):
    """(out, residual_out, mean, inverse std) of fused_layer_norm."""
    s = _pre_added(x, begin, bias, residual, alpha)
    if w is None and b is None:
        return s, s, None, None
    rows = _trailing(s, begin)
    mean = rows.mean(axis=1, keepdims=True)
    inv = 1.0 / np.sqrt(((rows - mean) ** 2).mean(axis=1, keepdims=True) + eps)
    y = (rows - mean) * inv
    if w is not None:
        y = y * w.astype(np.float64).reshape(1, -1)
    if b is not None:
        y = y + b.astype(np.float64).reshape(1, -1)
    return y.reshape(s.shape), s, mean.reshape(-1), inv.reshape(-1)


def _ref_rms_norm(x, w, b, eps, begin, bias=None, residual=None):
    """(out, residual_out) of fused_rms_norm."""
    s = _pre_added(x, begin, bias, residual)
    rows = _trailing(s, begin)
    y = rows / np.sqrt((rows * rows).mean(axis=1, keepdims=True) + eps) * w.astype(np.float64).reshape(1, -1)
    if b is not None:
        y = y + b.astype(np.float64).reshape(1, -1)
    return y.reshape(s.shape), s


def _f32(*arrays):
    return [np.asarray(a, dtype=np.float32) for a in arrays]
_NO_26_CPU = "Paddle 2.6 has no CPU kernel for it (GPU only), so its predictor cannot give a reference"


def _x(rng, *shape):
    return rng.standard_normal(shape).astype("float32")


@case("swiglu", name="llm_swiglu_split", formats=("pir",), why=_NO_26)
def llm_swiglu_split(paddle, rng):
    from paddle.incubate.nn.functional import swiglu

    return swiglu, [_x(rng, 2, 3, 8)]


@case("swiglu", name="llm_swiglu_split_dynamic", formats=("pir",), why=_NO_26)
def llm_swiglu_split_dynamic(paddle, rng):
    from paddle.incubate.nn.functional import swiglu

    return swiglu, [_x(rng, 2, 6)], [(None, 6)]


@case("swiglu", name="llm_swiglu_two", formats=("pir",), why=_NO_26)
def llm_swiglu_two(paddle, rng):
    from paddle.incubate.nn.functional import swiglu

    return swiglu, [_x(rng, 3, 5), _x(rng, 3, 5)], [(None, 5), (None, 5)]


@case("fused_rms_norm_quant", name="llm_fused_rms_norm", formats=("pir",), why=_NO_26_CPU,
      reference=lambda x, w: _f32(_ref_rms_norm(x, w, None, 1e-6, 2)[0]))
def llm_fused_rms_norm(paddle, rng):
    from paddle.incubate.nn.functional import fused_rms_norm

    def fn(x, w):
        return fused_rms_norm(x, w, None, 1e-6, 2)[0]

    return fn, [_x(rng, 2, 3, 20), rng.uniform(0.5, 1.5, 20).astype("float32")], [(None, None, 20), (20,)]


@case("fused_rms_norm_quant", name="llm_fused_rms_norm_residual", formats=("pir",), why=_NO_26_CPU,
      reference=lambda x, r, w, b: _f32(*_ref_rms_norm(x, w, b, 1e-5, 1, bias=b, residual=r)))
def llm_fused_rms_norm_residual(paddle, rng):
    """Residual, bias and norm bias; normalized over the last two dims."""
    from paddle.incubate.nn.functional import fused_rms_norm

    def fn(x, r, w, b):
        out, res = fused_rms_norm(x, w, b, 1e-5, 1, bias=b, residual=r)[:2]
        return out, res

    return fn, [_x(rng, 2, 3, 4), _x(rng, 2, 3, 4), rng.uniform(0.5, 1.5, 12).astype("float32"), _x(rng, 12)]


@case("fused_bias_residual_layernorm", name="llm_fused_layer_norm", formats=("pir",), why=_NO_26_CPU,
      reference=lambda x, w, b: _f32(*(_ref_layer_norm(x, w, b, 1e-5, 2)[i] for i in (0, 2, 3))))
def llm_fused_layer_norm(paddle, rng):
    from paddle.incubate.nn.functional import fused_layer_norm

    def fn(x, w, b):
        out, _, mean, inv_std = fused_layer_norm(x, w, b, 1e-5, begin_norm_axis=2)
        return out, mean, inv_std

    return fn, [_x(rng, 2, 3, 24) + 0.5, rng.uniform(0.5, 1.5, 24).astype("float32"), _x(rng, 24)]


@case("fused_bias_residual_layernorm", name="llm_fused_layer_norm_residual", formats=("pir",), why=_NO_26_CPU,
      reference=lambda x, r, w, b: _f32(*_ref_layer_norm(x, w, b, 1e-5, 1, bias=b, residual=r, alpha=0.5)[:2]))
def llm_fused_layer_norm_residual(paddle, rng):
    from paddle.incubate.nn.functional import fused_layer_norm

    def fn(x, r, w, b):
        out, res, _, _ = fused_layer_norm(
            x, w, b, 1e-5, begin_norm_axis=1, bias=b, residual=r, residual_alpha=0.5
        )
        return out, res

    return fn, [_x(rng, 3, 16), _x(rng, 3, 16), rng.uniform(0.5, 1.5, 16).astype("float32"), _x(rng, 16)]


@case("fused_bias_residual_layernorm", name="llm_fused_layer_norm_add_only", formats=("pir",), why=_NO_26_CPU,
      reference=lambda x, r, b: _f32(_ref_layer_norm(x, None, None, 1e-5, 1, bias=b, residual=r, alpha=2.0)[0]))
def llm_fused_layer_norm_add_only(paddle, rng):
    """No norm weight/bias: the kernel returns the residual-bias sum unnormalized."""
    from paddle.incubate.nn.functional import fused_layer_norm

    def fn(x, r, b):
        return fused_layer_norm(
            x, None, None, 1e-5, begin_norm_axis=1, bias=b, residual=r, residual_alpha=2.0
        )[0]

    return fn, [_x(rng, 3, 16), _x(rng, 3, 16), _x(rng, 16)]


@case(
    "fused_softmax_mask_upper_triangle",
    name="llm_sdpa_causal_26",
    formats=("legacy",),
    custom=True,
    why="Paddle 2.6 writes causal attention as this op (3.3 decomposes it: covered by matmul/softmax); "
    "its CPU kernel is a stub that raises, so the reference is numpy",
)
def llm_sdpa_causal_26(paddle, rng, out_dir):
    import os

    import numpy as np

    q, k, v = (rng.standard_normal((2, 5, 3, 8)).astype("float32") for _ in range(3))

    class Attn(paddle.nn.Layer):
        def forward(self, q, k, v):
            return paddle.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    spec = [paddle.static.InputSpec([None, 5, 3, 8], "float32", n) for n in ("q", "k", "v")]
    paddle.jit.save(Attn(), os.path.join(out_dir, "model"), input_spec=spec)
    qt, kt, vt = (a.transpose(0, 2, 1, 3).astype(np.float64) for a in (q, k, v))
    s = qt @ kt.transpose(0, 1, 3, 2) / np.sqrt(8.0)
    s = np.where(np.triu(np.ones((5, 5), bool), 1), -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = (p @ vt).transpose(0, 2, 1, 3).astype("float32")
    return {"model": "model.pdmodel", "inputs": [q, k, v], "outputs": [out]}


@case(
    "matmul",
    "softmax",
    name="llm_sdpa_causal_pir",
    formats=("pir",),
    why="Paddle 2.6 writes causal attention as fused_softmax_mask_upper_triangle (llm_sdpa_causal_26)",
)
def llm_sdpa_causal_pir(paddle, rng):
    """Causal scaled-dot-product attention as Paddle 3.3's CPU build writes it (matmul, triu mask,
    softmax); also the PIR host of test_fused_no_cpu_kernel's attention ops."""

    def fn(q, k, v):
        return paddle.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    return fn, [rng.standard_normal((2, 5, 3, 8)).astype("float32") for _ in range(3)], [(None, 5, 3, 8)] * 3


def _rope_reference(x, sin, cos, pos_ids, neox, time_major, base=10000.0):
    """Paddle's fused_rotary_position_embedding kernel (phi fused_rope_utils.h), element by element."""
    import numpy as np

    xt = x.transpose(1, 0, 2, 3) if time_major else x  # [B, S, H, D]
    b_n, s_n, h_n, d = xt.shape
    out = np.zeros_like(xt, dtype=np.float32)
    for b in range(b_n):
        for s in range(s_n):
            pos = int(pos_ids[b, s]) if pos_ids is not None else s
            if sin is not None:
                sn, cs = sin.reshape(-1, d)[pos], cos.reshape(-1, d)[pos]
            else:
                idx = (np.arange(d) // 2 * 2).astype(np.float32)
                freq = np.float32(pos) * (np.float32(1) / np.power(np.float32(base), idx / np.float32(d)))
                sn, cs = np.sin(freq), np.cos(freq)
            for i in range(d):
                v = xt[b, s, :, i]
                if neox:
                    rot = -xt[b, s, :, i + 1] if i % 2 == 0 else xt[b, s, :, i - 1]
                else:
                    rot = -xt[b, s, :, i + d // 2] if i < d // 2 else xt[b, s, :, i - d // 2]
                out[b, s, :, i] = v * cs[i] + rot * sn[i]
    return out.transpose(1, 0, 2, 3) if time_major else out


def _rope_program(paddle, out_dir, feeds, attrs, names):
    """A legacy program holding one fused_rotary_position_embedding, appended to the block
    desc directly (Paddle 2.6's CPU build cannot infer its shape: no CPU kernel)."""
    import os

    from harness.static import static_program

    def build(paddle):
        ins = {n: paddle.static.data(n, list(a.shape), str(a.dtype)) for n, a in zip(names, feeds)}
        blk = paddle.static.default_main_program().global_block()
        op = blk.desc.append_op()
        op.set_type("fused_rotary_position_embedding")
        outs = []
        for n, v in ins.items():
            op.set_input(n, [v.name])
            if n in ("q", "k", "v"):
                o = blk.create_var(name=f"out_{n}", shape=v.shape, dtype="float32")
                op.set_output(f"out_{n}", [o.name])
                outs.append(o)
        for key, value in attrs.items():
            op._set_attr(key, value)
        paddle.static.default_main_program()._sync_with_cpp()
        return list(ins.values()), [paddle.scale(o, 1.0) for o in outs]

    with static_program(paddle, build) as (main, exe, (inputs, outputs)):
        paddle.static.save_inference_model(os.path.join(out_dir, "model"), inputs, outputs, exe, program=main)


_ROPE_WHY = (
    "legacy only, reference computed from Paddle's kernel in numpy: no CPU kernel in Paddle 2.6 or 3.3, "
    "so neither can run it and Paddle 3.3 refuses to build it for a CPU dtype"
)


@case(
    "fused_rotary_position_embedding",
    name="llm_rope_computed_tables",
    custom=True,
    formats=("legacy",),
    why=_ROPE_WHY,
)
def llm_rope_computed_tables(paddle, rng, out_dir):
    """No sin/cos: Paddle's own angles; adjacent pairs (use_neox_rotary_style=True)."""
    q, k = _x(rng, 2, 5, 2, 8), _x(rng, 2, 5, 2, 8)
    _rope_program(paddle, out_dir, [q, k], {"use_neox_rotary_style": True}, ["q", "k"])
    outs = [_rope_reference(a, None, None, None, True, False) for a in (q, k)]
    return {"model": "model.pdmodel", "inputs": [q, k], "outputs": outs}


@case(
    "fused_rotary_position_embedding",
    name="llm_rope_tables_position_ids",
    custom=True,
    formats=("legacy",),
    why=_ROPE_WHY,
)
def llm_rope_tables_position_ids(paddle, rng, out_dir):
    """q, k, v with [1, S, 1, D] tables picked by position_ids; halves (neox style False)."""
    import numpy as np

    q, k, v = (_x(rng, 2, 4, 3, 6) for _ in range(3))
    sin, cos = _x(rng, 1, 7, 1, 6), _x(rng, 1, 7, 1, 6)
    pos = rng.integers(0, 7, (2, 4)).astype(np.int64)
    feeds = [q, k, v, sin, cos, pos]
    _rope_program(
        paddle,
        out_dir,
        feeds,
        {"use_neox_rotary_style": False},
        ["q", "k", "v", "sin", "cos", "position_ids"],
    )
    outs = [_rope_reference(a, sin, cos, pos, False, False) for a in (q, k, v)]
    return {"model": "model.pdmodel", "inputs": feeds, "outputs": outs}


@case(
    "fused_rotary_position_embedding",
    name="llm_rope_plain_tables",
    custom=True,
    formats=("legacy",),
    why=_ROPE_WHY,
)
def llm_rope_plain_tables(paddle, rng, out_dir):
    """[S, D] tables longer than the sequence (its first S rows), adjacent pairs. (Paddle 2.6's
    op has no time_major attribute: its files are always batch-major.)"""
    q = _x(rng, 2, 5, 2, 4)
    sin, cos = _x(rng, 9, 4), _x(rng, 9, 4)
    feeds = [q, sin, cos]
    _rope_program(paddle, out_dir, feeds, {"use_neox_rotary_style": True}, ["q", "sin", "cos"])
    return {
        "model": "model.pdmodel",
        "inputs": feeds,
        "outputs": [_rope_reference(q, sin, cos, None, True, False)],
    }


def _decoder_block(paddle, norm):
    """A LLaMA-style decoder block with RMS norms ``norm(x, weight)`` (seeded weights)."""
    from paddle.incubate.nn.functional import swiglu

    hidden, heads, inner = 16, 2, 24
    paddle.seed(3)

    class Block(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.qkv = paddle.nn.Linear(hidden, 3 * hidden, bias_attr=False)
            self.o = paddle.nn.Linear(hidden, hidden, bias_attr=False)
            self.gate_up = paddle.nn.Linear(hidden, 2 * inner, bias_attr=False)
            self.down = paddle.nn.Linear(inner, hidden, bias_attr=False)
            self.n1 = self.create_parameter([hidden], default_initializer=paddle.nn.initializer.Constant(1.1))
            self.n2 = self.create_parameter([hidden], default_initializer=paddle.nn.initializer.Constant(0.9))

        def forward(self, x):
            h = norm(x, self.n1)
            b, s = paddle.shape(x)[0], paddle.shape(x)[1]
            qkv = self.qkv(h).reshape([b, s, 3, heads, hidden // heads])
            q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
            a = paddle.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.o(a.reshape([b, s, hidden]))
            h = norm(x, self.n2)
            return x + self.down(swiglu(self.gate_up(h)))

    return Block()


def _decoder_block_reference(x):
    """The block run eagerly with fused_rms_norm spelled out in Paddle ops (CPUs where the
    fused kernel cannot run)."""
    import paddle

    def norm(v, w):
        return v * paddle.rsqrt((v * v).mean(axis=-1, keepdim=True) + 1e-6) * w

    block = _decoder_block(paddle, norm)
    block.eval()
    return [block(paddle.to_tensor(x)).numpy()]


@case(
    "swiglu",
    "fused_rms_norm_quant",
    name="llm_tiny_decoder_block",
    formats=("pir",),
    why=_NO_26,
    scaled_atol=True,
    reference=_decoder_block_reference,
)
def llm_tiny_decoder_block(paddle, rng):
    """A LLaMA-style decoder block as PaddleNLP writes it with fused ops: fused RMS norms,
    causal scaled-dot-product attention, a swiglu MLP, residuals; dynamic batch and length."""
    from paddle.incubate.nn.functional import fused_rms_norm

    block = _decoder_block(paddle, lambda x, w: fused_rms_norm(x, w, None, 1e-6, 2)[0])
    return block, [_x(rng, 2, 5, 16)], [(None, None, 16)]


@case(
    "fused_rms_norm_quant",
    name="llm_rms_norm_legacy_26",
    custom=True,
    formats=("legacy",),
    why="Paddle 2.6's spelling of incubate fused_rms_norm (legacy rms_norm); GPU-only there, so the op is "
    "appended to the block desc and the reference is numpy",
)
def llm_rms_norm_legacy_26(paddle, rng, out_dir):
    import os

    import numpy as np

    from harness.static import static_program

    x, r = _x(rng, 2, 3, 8), _x(rng, 2, 3, 8)
    w, nb, bias = rng.uniform(0.5, 1.5, 8).astype("float32"), _x(rng, 8), _x(rng, 8)
    feeds = [x, r, w, nb, bias]
    slots = ["x", "residual", "norm_weight", "norm_bias", "bias"]

    def build(paddle):
        ins = [paddle.static.data(n, list(a.shape), "float32") for n, a in zip(slots, feeds)]
        blk = paddle.static.default_main_program().global_block()
        op = blk.desc.append_op()
        op.set_type("rms_norm")
        for slot, v in zip(slots, ins):
            op.set_input(slot, [v.name])
        outs = [
            blk.create_var(name=n, shape=[2, 3, 8], dtype="float32") for n in ("rms_out", "rms_residual_out")
        ]
        op.set_output("out", [outs[0].name])
        op.set_output("residual_out", [outs[1].name])
        op._set_attr("epsilon", 1e-6)
        op._set_attr("begin_norm_axis", 2)
        op._set_attr("quant_scale", -1.0)
        paddle.static.default_main_program()._sync_with_cpp()
        return ins, [paddle.scale(o, 1.0) for o in outs]

    with static_program(paddle, build) as (main, exe, (inputs, outputs)):
        paddle.static.save_inference_model(os.path.join(out_dir, "model"), inputs, outputs, exe, program=main)
    s = (x + r + bias).astype(np.float64)
    out = s / np.sqrt(np.mean(s * s, axis=-1, keepdims=True) + 1e-6) * w + nb
    return {
        "model": "model.pdmodel",
        "inputs": feeds,
        "outputs": [out.astype("float32"), s.astype("float32")],
    }


@case(
    "multihead_matmul",
    name="llm_multihead_matmul_legacy",
    custom=True,
    formats=("legacy",),
    why="written only by Paddle's GPU inference passes (no CPU kernel): appended to the block desc, reference "
    "is a numpy rendering of the GPU kernel",
)
def llm_multihead_matmul_legacy(paddle, rng, out_dir):
    """BiasQK as a full [B, N, S, S] bias and as a [B, 1, 1, S] key mask."""
    import os

    import numpy as np

    from harness.static import static_program

    b, s, hidden, heads = 2, 4, 8, 2
    x = _x(rng, b, s, hidden)
    w = (_x(rng, hidden, 3, hidden) * 0.5).astype("float32")
    bias = _x(rng, 3, hidden)
    full = _x(rng, b, heads, s, s)
    keys = np.where(rng.random((b, 1, 1, s)) < 0.3, -1e4, 0.0).astype("float32")
    feeds = [x, w, bias, full, keys]
    names = ["x", "w", "bias", "qk_full", "qk_keys"]

    def build(paddle):
        ins = [paddle.static.data(n, list(a.shape), "float32") for n, a in zip(names, feeds)]
        blk = paddle.static.default_main_program().global_block()
        outs = []
        for k, qk in enumerate(ins[3:]):
            op = blk.desc.append_op()
            op.set_type("multihead_matmul")
            for slot, v in zip(("Input", "W", "Bias", "BiasQK"), [*ins[:3], qk]):
                op.set_input(slot, [v.name])
            o = blk.create_var(name=f"mha_out{k}", shape=[b, s, hidden], dtype="float32")
            op.set_output("Out", [o.name])
            op._set_attr("alpha", 0.5)
            op._set_attr("head_number", heads)
            op._set_attr("transpose_Q", False)
            op._set_attr("transpose_K", True)
            op._set_attr("transpose_V", False)
            outs.append(o)
        paddle.static.default_main_program()._sync_with_cpp()
        return ins, [paddle.scale(o, 1.0) for o in outs]

    with static_program(paddle, build) as (main, exe, (inputs, outputs)):
        paddle.static.save_inference_model(os.path.join(out_dir, "model"), inputs, outputs, exe, program=main)

    def reference(qk_bias):
        qkv = (x.astype(np.float64) @ w.reshape(hidden, -1) + bias.reshape(-1)).reshape(b, s, 3, heads, -1)
        q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
        scores = 0.5 * q @ k.transpose(0, 1, 3, 2) + qk_bias
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        return (p @ v).transpose(0, 2, 1, 3).reshape(b, s, hidden).astype("float32")

    return {"model": "model.pdmodel", "inputs": feeds, "outputs": [reference(full), reference(keys)]}


@case("fused_softmax_mask", name="llm_softmax_mask_fuse")
def llm_softmax_mask_fuse(paddle, rng):
    import numpy as np

    def fn(x, mask):
        return paddle.incubate.softmax_mask_fuse(x, mask)

    mask = np.where(rng.random((2, 1, 4, 8)) < 0.3, -1e4, 0.0).astype("float32")
    return fn, [_x(rng, 2, 3, 4, 8), mask]


@case(
    "fused_bias_act",
    name="llm_fused_bias_act_legacy",
    custom=True,
    formats=("legacy",),
    why="no CPU kernel in Paddle 2.6 or 3.3 (and no 2.6 Python API): the legacy op is appended to the block "
    "desc and the reference is numpy (the PIR form: tests/ops/test_fused_no_cpu_kernel.py)",
)
def llm_fused_bias_act_legacy(paddle, rng, out_dir):
    """gelu with a bias, and swiglu without one, as a Paddle 2.6 GPU program carries them."""
    import math
    import os

    import numpy as np

    from harness.static import static_program

    x, b = _x(rng, 2, 8), _x(rng, 8)

    def build(paddle):
        xv, bv = paddle.static.data("x", [2, 8], "float32"), paddle.static.data("b", [8], "float32")
        blk = paddle.static.default_main_program().global_block()
        outs = []
        for k, (act, width, bias) in enumerate((("gelu", 8, True), ("swiglu", 4, False))):
            op = blk.desc.append_op()
            op.set_type("fused_bias_act")
            op.set_input("x", [xv.name])
            if bias:
                op.set_input("bias", [bv.name])
            o = blk.create_var(name=f"fba_out{k}", shape=[2, width], dtype="float32")
            op.set_output("out", [o.name])
            op._set_attr("act_method", act)
            op._set_attr("compute_dtype", "default")
            op._set_attr("quant_scale", -1.0)
            outs.append(o)
        paddle.static.default_main_program()._sync_with_cpp()
        return [xv, bv], [paddle.scale(o, 1.0) for o in outs]

    with static_program(paddle, build) as (main, exe, (inputs, outputs)):
        paddle.static.save_inference_model(os.path.join(out_dir, "model"), inputs, outputs, exe, program=main)
    v = (x + b).astype(np.float64)
    gelu = v * 0.5 * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))
    a, g = x[:, :4].astype(np.float64), x[:, 4:].astype(np.float64)
    swiglu = a / (1.0 + np.exp(-a)) * g
    return {"model": "model.pdmodel", "inputs": [x, b], "outputs": [gelu.astype("float32"), swiglu.astype("float32")]}
