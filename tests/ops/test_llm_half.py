"""float16 and bfloat16 for the fused/LLM/loss mappers, which is where LLM exports have them.

No CPU build of Paddle runs these ops in float16/bfloat16 (their CPU kernels, where they exist,
are float32/float64 only), so the dtype matrix cannot hold those dtypes. Here a program Paddle
saved in float32 (an op case of ``cases_llm``/``cases_nn2``, or one of the hand-made programs of
``test_fused_no_cpu_kernel``) is retyped: every float32 value becomes float16/bfloat16, as a
half-precision export declares them. The converted model (float32 feeds and results cast at the
graph's edges, so that numpy can feed bfloat16) is run in ONNX Runtime on inputs rounded to the
half type and compared with the float32 conversion of the same program on the same inputs (itself
checked against Paddle by the op cases), at the half type's precision.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from harness import builder
from harness.cases import REGISTRY, load_case_files
from ops._half import HALF, check_half
from pd2onnx.paddle import load

load_case_files(os.path.dirname(os.path.abspath(__file__)), "opcases")
# (case, format, ops the program must hold)
CASES = [
    ("llm_swiglu_split", "pir", "swiglu"),
    ("llm_swiglu_two", "pir", "swiglu"),
    ("llm_fused_rms_norm", "pir", "fused_rms_norm_quant"),
    ("llm_fused_rms_norm_residual", "pir", "fused_rms_norm_quant"),
    ("llm_rms_norm_legacy_26", "legacy", "fused_rms_norm_quant"),
    ("llm_fused_layer_norm", "pir", "fused_bias_residual_layernorm"),
    ("llm_fused_layer_norm_residual", "pir", "fused_bias_residual_layernorm"),
    ("llm_fused_layer_norm_add_only", "pir", "fused_bias_residual_layernorm"),
    ("llm_softmax_mask_fuse", "pir", "fused_softmax_mask"),
    ("llm_softmax_mask_fuse", "legacy", "fused_softmax_mask"),
    ("llm_sdpa_causal_26", "legacy", "fused_softmax_mask_upper_triangle"),
    ("llm_rope_computed_tables", "legacy", "fused_rotary_position_embedding"),
    ("llm_rope_tables_position_ids", "legacy", "fused_rotary_position_embedding"),
    ("llm_rope_plain_tables", "legacy", "fused_rotary_position_embedding"),
    ("llm_multihead_matmul_legacy", "legacy", "multihead_matmul"),
    ("llm_fused_bias_act_legacy", "legacy", "fused_bias_act"),
    ("llm_sdpa_causal_pir", "pir", "matmul"),
    ("nn2_fc", "pir", "fc"),
    ("nn2_fc", "legacy", "fc"),
    ("nn2_fused_elemwise_activation", "legacy", "fused_elemwise_activation"),
    ("nn2_fused_dropout_add", "legacy", "fused_dropout_add"),
    ("loss_softmax_with_cross_entropy", "pir", "cross_entropy_with_softmax"),
    ("loss_softmax_with_cross_entropy_soft_axis", "legacy", "cross_entropy_with_softmax"),
    ("loss_partial_sum_concat", "legacy", "partial_sum"),
]

@pytest.mark.parametrize("dtype", sorted(HALF))
@pytest.mark.parametrize("name,fmt,op", CASES, ids=[f"{n}-{f}" for n, f, _ in CASES])
def test_half_precision(name, fmt, op, dtype):
    if name not in REGISTRY:
        pytest.skip(f"{name} is not loaded (PD2ONNX_CASE_FILES)")
    built = builder.get(REGISTRY[name], fmt)
    assert built.error is None, built.error
    program = load(built.model_file)
    assert op in {o.type for o in program.walk_ops()}, f"{name} ({fmt}) holds no {op}"
    io = np.load(os.path.join(built.dir, "io.npz"))
    inputs = [io[f"in{i}"] for i in range(sum(k.startswith("in") for k in io.files))]
    check_half(program, inputs, dtype, f"{name} ({fmt})")
