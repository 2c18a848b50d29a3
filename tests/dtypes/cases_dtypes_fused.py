"""The dtype matrix for fused inference ops, LLM ops and losses (the ``fused``/``llm``/``loss``
mappers that Paddle can run on CPU).

Paddle 3.3 (PIR) runs ``swiglu``, ``fused_rms_norm_quant``, ``fused_bias_residual_layernorm``,
``fused_softmax_mask``, ``cross_entropy_with_softmax`` and ``fc`` (``_C_ops.fc`` builds only in
a static program) on CPU; Paddle 2.6 (legacy) runs ``fc``, ``fused_elemwise_(add_)activation``,
``partial_sum``/``partial_concat``, ``fused_softmax_mask`` and ``softmax_with_cross_entropy``,
the legacy-only ones appended with ``LayerHelper.append_op`` (``static`` entries). Ops no CPU
build of either Paddle can run are explained in ``dtype_notes`` (OUTSIDE_MATRIX).
"""

from __future__ import annotations

from harness.dtype_matrix import DTYPES, register


def _pir(P) -> bool:
    return int(P.__version__.split(".")[0]) >= 3


def _legacy(P, op_type, inputs, attrs, outputs=("Out",)):
    """A raw legacy op appended to the current static program (Paddle 2.6); its first output."""
    helper = P.base.layer_helper.LayerHelper(op_type)
    dtype = next(iter(inputs.values()))[0].dtype
    outs = {slot: [helper.create_variable_for_type_inference(dtype)] for slot in outputs}
    helper.append_op(type=op_type, inputs=inputs, outputs=outs, attrs=attrs)
    return outs[outputs[0]][0]


def _fc(P, x, w, b, ncol, act):
    if _pir(P):
        return P._C_ops.fc(x, w, b, ncol, act, False)
    ins = {"Input": [x], "W": [w]}
    if b is not None:
        ins["Bias"] = [b]
    return _legacy(P, "fc", ins, {"in_num_col_dims": ncol, "activation_type": act, "padding_weights": False})


def _fused_elemwise(P, x, y, functors, axis=-1, scale=0.0, op="fused_elemwise_activation", mid=False):
    attrs = {"functor_list": functors, "axis": axis, "scale": scale, "save_intermediate_out": True}
    return _legacy(P, op, {"X": [x], "Y": [y]}, attrs, ("IntermediateOut", "Out") if mid else ("Out", "IntermediateOut"))


def _fused(P):
    """Legacy fused inference ops (x, p: [3, 4])."""

    def fea(functors, **kw):
        return lambda x, p: _fused_elemwise(P, x, p, functors, **kw)

    return [
        ("fc:static-relu", lambda x, p: _fc(P, x, P.transpose(p, [1, 0]), p[0, :3], 1, "relu")),
        ("fc:static-nobias", lambda x, p: _fc(P, P.reshape(x, [3, 2, 2]), p[:2], None, 2, "")),
        ("fused_elemwise_activation:static-add-relu", fea(["elementwise_add", "relu"])),
        ("fused_elemwise_activation:static-relu-add", fea(["relu", "elementwise_add"])),
        ("fused_elemwise_activation:static-relu-add-mid", fea(["relu", "elementwise_add"], mid=True)),
        ("fused_elemwise_activation:static-mul-scale", fea(["elementwise_mul", "scale"], scale=0.5)),
        ("fused_elemwise_activation:static-add-scale-mid", fea(["elementwise_add", "scale"], scale=3.0, mid=True)),
        ("fused_elemwise_activation:static-tanh-add", fea(["tanh", "elementwise_add"])),
        ("fused_elemwise_activation:static-gelu-add", fea(["gelu", "elementwise_add"])),
        ("fused_elemwise_activation:static-mul-tanh", fea(["elementwise_mul", "tanh"])),
        ("fused_elemwise_activation:static-mul-sigmoid", fea(["elementwise_mul", "sigmoid"])),
        ("fused_elemwise_activation:static-scale-add-axis",
         lambda x, p: _fused_elemwise(P, x, p[:, 0], ["scale", "elementwise_add"], axis=0, scale=-2.0)),
        ("fused_elemwise_add_activation:static", fea(["relu", "elementwise_add"], op="fused_elemwise_add_activation")),
        ("fused_elemwise_add_activation:static-add-relu",
         fea(["elementwise_add", "relu"], op="fused_elemwise_add_activation")),
        ("partial_sum:static", lambda x, p: _legacy(P, "partial_sum", {"X": [x, p]}, {"start_index": 1, "length": 2})),
        ("partial_sum:static-rest",
         lambda x, p: _legacy(P, "partial_sum", {"X": [x, p, x]}, {"start_index": 2, "length": -1})),
        ("partial_concat:static",
         lambda x, p: _legacy(P, "partial_concat", {"X": [x, p]}, {"start_index": 0, "length": 2})),
        ("partial_concat:static-negative",
         lambda x, p: _legacy(P, "partial_concat", {"X": [p, x]}, {"start_index": -3, "length": -1})),
    ]


def _llm(P):
    """LLM ops Paddle 3.3 runs on CPU, and the softmax-mask fusion (both Paddles)."""
    from paddle.incubate.nn import functional as IF

    def img(t, shape):
        return P.reshape(t, shape)

    return [
        ("swiglu", lambda x, p: IF.swiglu(x)),
        ("swiglu:two", lambda x, p: IF.swiglu(x, p)),
        ("fused_rms_norm_quant", lambda x, p: IF.fused_rms_norm(x, p[0], None, 1e-5, 1)[0]),
        ("fused_rms_norm_quant:norm-bias", lambda x, p: IF.fused_rms_norm(x, p[0], x[1], 1e-6, 1)[0]),
        ("fused_rms_norm_quant:residual",
         lambda x, p: IF.fused_rms_norm(x, p[0], None, 1e-5, 1, bias=p[1], residual=p)[0]),
        ("fused_rms_norm_quant:residual-out",
         lambda x, p: IF.fused_rms_norm(x, p[0], None, 1e-5, 1, bias=p[1], residual=p)[1]),
        ("fused_bias_residual_layernorm", lambda x, p: IF.fused_layer_norm(x, p[0], x[0], 1e-5, begin_norm_axis=1)[0]),
        ("fused_bias_residual_layernorm:mean",
         lambda x, p: IF.fused_layer_norm(x, p[0], x[0], 1e-5, begin_norm_axis=1)[2]),
        ("fused_bias_residual_layernorm:variance",
         lambda x, p: IF.fused_layer_norm(x, p[0], x[0], 1e-5, begin_norm_axis=1)[3]),
        ("fused_bias_residual_layernorm:residual",
         lambda x, p: IF.fused_layer_norm(x, p[0], None, 1e-5, begin_norm_axis=1, bias=p[2], residual=p,
                                          residual_alpha=0.5)[0]),
        ("fused_bias_residual_layernorm:residual-out",
         lambda x, p: IF.fused_layer_norm(x, p[0], None, 1e-5, begin_norm_axis=1, bias=p[2], residual=p,
                                          residual_alpha=0.5)[1]),
        ("fused_bias_residual_layernorm:add-only",
         lambda x, p: IF.fused_layer_norm(x, None, None, 1e-5, begin_norm_axis=1, bias=p[2], residual=p,
                                          residual_alpha=2.0)[0]),
        ("fused_softmax_mask",
         lambda x, p: P.incubate.softmax_mask_fuse(img(x, [1, 1, 3, 4]), img(-p, [1, 1, 3, 4]))),
        ("fused_softmax_mask:broadcast-heads",
         lambda x, p: P.incubate.softmax_mask_fuse(img(P.concat([x, p], 0), [1, 2, 3, 4]), img(-p, [1, 1, 3, 4]))),
    ]


def _loss(P):
    """softmax with cross entropy (x logits [3, 4]; p gives soft labels)."""
    F = P.nn.functional

    def hard():
        return P.to_tensor([[1], [0], [3]], dtype="int64")

    return [
        ("cross_entropy_with_softmax", lambda x, p: F.softmax_with_cross_entropy(x, hard())),
        ("cross_entropy_with_softmax:softmax",
         lambda x, p: F.softmax_with_cross_entropy(x, hard(), return_softmax=True)[1]),
        ("cross_entropy_with_softmax:ignore", lambda x, p: F.softmax_with_cross_entropy(x, hard(), ignore_index=0)),
        ("cross_entropy_with_softmax:soft",
         lambda x, p: F.softmax_with_cross_entropy(x, F.softmax(p), soft_label=True)),
        ("cross_entropy_with_softmax:axis0",
         lambda x, p: F.softmax_with_cross_entropy(x, P.to_tensor([[2, 0, 1, 2]], dtype="int64"), axis=0)),
    ]


for _group, (_table, _dims, _dtypes) in {
    "fusedlegacy": (_fused, (3, 4), DTYPES),
    "fusedllm": (_llm, (3, 4), DTYPES),
    # cross_entropy_with_softmax's mapper needs opset 13: its own group
    "fusedloss": (_loss, (3, 4), DTYPES),
}.items():
    register(__file__, _group, _table, _dims, _dtypes)
