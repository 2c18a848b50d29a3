"""Hand-written notes beside the generated dtype declaration (``dtype_matrix.py``).

``OUTSIDE_MATRIX``: mappers that the dtype matrix (``tests/dtypes``) cannot run, each with
why and where its own tests are. ``GAP_REASONS``: why each remaining gap of the matrix
(``dtype_matrix.GAPS``) stays, keyed ``(op, dtype)`` (dtype ``"0-D"`` for 0-D). The dtype
tests fail when a mapper is in neither the matrix nor ``OUTSIDE_MATRIX``, or when a gap has
no reason here: no gap is unexplained.
"""

OUTSIDE_MATRIX: dict[str, str] = {
    'box_clip': (
        "box_clip's kernel reads the LoD of its Input (one box list per image): run eagerly"
        ' (_C_ops.box_clip, Paddle 3.3) or in a static program fed without LoD (Paddle 2.6) it dies'
        ' with a segmentation fault in phi::BoxClipKernel<float> (measured 23:00 UTC, both Paddles),'
        " and the matrix's predictor cannot feed LoD tensors. Covered by tests/ops/cases_detection.py"
        ' det_box_clip (legacy, float32, the executor fed a one-image LoD).'
    ),
    'c_identity': (
        "no Paddle on CPU runs it, so the matrix has no reference: Paddle 3.3 and 2.6 both raise 'Do"
        " not support c_identity for cpu kernel now' (phi/kernels/cpu/c_identity_kernel.cc; measured"
        ' with the static executor). Covered with numpy references, float32: tests/ops/cases_nn2.py'
        ' misc_bookkeeping_legacy (legacy) and tests/ops/cases_tensor.py misc_bookkeeping_pir (PIR)'
    ),
    'c_sync_calc_stream': (
        "legacy only, and Paddle 2.6's CPU build has no kernel ('There are no kernels which are"
        " registered in the c_sync_calc_stream operator', measured); Paddle 3.3 has no such op."
        ' Covered by tests/ops/cases_nn2.py misc_bookkeeping_legacy (legacy, float32, numpy reference)'
    ),
    'c_sync_comm_stream': (
        "legacy only, and Paddle 2.6's CPU build has no kernel ('There are no kernels which are"
        " registered in the c_sync_comm_stream operator', measured); Paddle 3.3 has no such op."
        ' Covered by tests/ops/cases_nn2.py misc_bookkeeping_legacy (legacy, float32, numpy reference)'
    ),
    'fake_channel_wise_quantize_abs_max': (
        "Paddle cannot serve as the matrix's reference: with a constant weight X (what the mapper"
        " folds; a run-time X is refused by name) Paddle 3.3's inference predictor fails on the saved"
        " program ('Tensor holds no memory. Call Tensor::mutable_data firstly', measured), though the"
        ' op itself runs in a Paddle 2.6 static program (a linspace(-2, 3) weight gives Out [-127,'
        ' -113, ...], OutScale [2, 3]). No test compares this mapper with Paddle yet'
    ),
    'flash_attn': (
        'no CPU kernel in Paddle 3.3 (_C_ops.flash_attn, eager and PIR static,'
        ' float32/float16/bfloat16) nor 2.6 (raw legacy op); on CPU F.flash_attention /'
        ' scaled_dot_product_attention write matmul/softmax instead. Covered by'
        ' tests/ops/test_fused_no_cpu_kernel.py::test_flash_attn (causal and not, in a legacy and a'
        ' PIR program, numpy reference, float32 at the lowest opset, 13, 17, 23 (ONNX Attention) and'
        ' the newest) and float16/bfloat16 by'
        ' tests/ops/test_fused_no_cpu_kernel.py::test_half_precision (the same program retyped,'
        ' against its float32 conversion)'
    ),
    'flash_attn_unpadded': (
        'no CPU kernel in Paddle 3.3 (_C_ops.flash_attn_unpadded, eager and PIR static,'
        ' float32/float16/bfloat16) nor 2.6 (F.flash_attention.flash_attn_unpadded: kernel_factory'
        ' error). Covered by tests/ops/test_fused_no_cpu_kernel.py::test_flash_attn_unpadded (two'
        ' packed sequences, causal and not, legacy and PIR programs, numpy reference, float32 at 13'
        ' (its lowest), 17 and the newest) and float16/bfloat16 by'
        ' tests/ops/test_fused_no_cpu_kernel.py::test_half_precision (the same program retyped,'
        ' against its float32 conversion)'
    ),
    'fused_bias_act': (
        'no CPU kernel in Paddle 3.3 (incubate fused_bias_act, eager and PIR static,'
        ' float16/bfloat16/float32/float64) nor in Paddle 2.6 (no Python API; the raw legacy op has no'
        ' CPU kernel): no Paddle on CPU runs or saves it. Covered by'
        ' tests/ops/test_fused_no_cpu_kernel.py::test_fused_bias_act (gelu, relu, swiglu, geglu put'
        ' into a saved PIR program, numpy reference of the GPU kernel; float32 at the lowest opset, 17'
        ' and the newest), tests/ops/cases_llm.py::llm_fused_bias_act_legacy (legacy op appended to'
        ' the block desc; float32) and float16/bfloat16 by'
        ' tests/ops/test_fused_no_cpu_kernel.py::test_half_precision (the same program retyped,'
        ' against its float32 conversion)'
    ),
    'fused_dropout_add': (
        "Paddle 3.3's incubate fused_dropout_add on CPU writes dropout + add instead (the saved"
        ' program holds no fused_dropout_add); _C_ops.fused_dropout_add has no CPU kernel (eager and'
        " PIR static, all 4 float and 4 int dtypes tried); Paddle 2.6's op has no CPU kernel. Covered"
        ' by tests/ops/cases_nn2.py::nn2_fused_dropout_add (legacy op appended to the block desc, both'
        ' modes, numpy reference; float32) and tests/ops/test_llm_half.py (float16/bfloat16)'
    ),
    'fused_rms_norm': (
        'the PIR name of earlier Paddle 3.x releases: Paddle 3.3 writes incubate fused_rms_norm as'
        ' fused_rms_norm_quant (in the matrix) and has no _C_ops/builder for fused_rms_norm; Paddle'
        ' 2.6 writes it as legacy rms_norm (read as fused_rms_norm_quant), GPU-only. Same mapper as'
        ' fused_rms_norm_quant. Covered by'
        ' tests/ops/test_fused_no_cpu_kernel.py::test_fused_rms_norm_old_name (the op renamed in a'
        " saved PIR program, against Paddle 3.3's own output; and in the 2.6 legacy program; float32"
        ' at the lowest opset, 17, 23 and the newest)'
    ),
    'fused_rotary_position_embedding': (
        'no CPU kernel in Paddle 3.3 (incubate fused_rotary_position_embedding, eager and PIR static,'
        ' float16/bfloat16/float32/float64) nor 2.6 (kernel_factory error). Covered by'
        ' tests/ops/cases_llm.py llm_rope_* (legacy op appended to the block desc, computed tables,'
        ' tables with position_ids, plain tables; numpy rendering of the kernel; float32) and'
        ' tests/ops/test_llm_half.py (float16/bfloat16)'
    ),
    'fused_softmax_mask_upper_triangle': (
        "its CPU kernel only raises: Paddle 3.3 'Expected is_gpu_place == true'"
        ' (phi/kernels/fusion/cpu/fused_softmax_mask_upper_triangle_kernel.cc) for float32/float64 and'
        " a dtype check error for float16/bfloat16; Paddle 2.6 'Softmax mask fuse op only supports GPU"
        " now' (float32) and no kernel (float16). Paddle 2.6 still writes it for causal"
        ' scaled_dot_product_attention (3.3 writes triu/add). Covered by'
        ' tests/ops/cases_llm.py::llm_sdpa_causal_26 (a real 2.6 save, numpy reference; float32) and'
        ' tests/ops/test_llm_half.py (float16/bfloat16)'
    ),
    'gru': (
        "Paddle 2.6's save (jit.save and save_inference_model) prunes the legacy gru op's unused"
        ' outputs BatchGate/BatchResetHiddenPrev/BatchHidden, and then its own inference predictor'
        " cannot run the file it wrote: '(NotFound) No Output(BatchGate) found for GRU operator'"
        " (gru_op.cc:40; measured on the matrix's gru entry, whose input gets its LoD from lod_reset)."
        " Using those outputs to keep them is not possible either: ONNX's GRU does not expose them, so"
        ' the mapper refuses a program that reads them. PIR has no gru op. Covered by'
        ' tests/ops/cases_sequence.py seq_tagger, seq_tagger_origin_mode and seq_tagger_one_step'
        ' (legacy, float32; the case restores the pruned outputs before Paddle runs the file). The'
        ' float64 path is the one lstm uses (_fused_recurrence, computed in float32), verified'
        ' float32/float64 for lstm in the matrix.'
    ),
    'memory_efficient_attention': (
        'no CPU kernel in Paddle 3.3 (_C_ops.memory_efficient_attention, eager and PIR static,'
        ' float32/float16/bfloat16) nor 2.6 (raw legacy op: kernel_factory error). Covered by'
        ' tests/ops/test_fused_no_cpu_kernel.py::test_memory_efficient_attention (causal, scale;'
        ' legacy and PIR programs; numpy reference; float32 at the lowest opset, 17, 23 and the'
        ' newest) and float16/bfloat16 by tests/ops/test_fused_no_cpu_kernel.py::test_half_precision'
        ' (the same program retyped, against its float32 conversion)'
    ),
    'multihead_matmul': (
        "written only by Paddle's GPU inference passes; no CPU kernel in Paddle 3.3"
        ' (_C_ops.multihead_matmul in a PIR static program: dtype check with an empty kernel list) nor'
        ' 2.6 (raw legacy op: kernel_factory error). Covered by'
        ' tests/ops/cases_llm.py::llm_multihead_matmul_legacy (BiasQK [B, N, S, S] and [B, 1, 1, S];'
        ' numpy rendering of the GPU kernel; float32) and tests/ops/test_llm_half.py'
        ' (float16/bfloat16)'
    ),
    'rms_norm': (
        "Paddle 3.3's F.rms_norm (PIR rms_norm) has no CPU kernel (eager kernel_factory error; PIR"
        ' static dtype check with an empty kernel list; float32/float64/float16/bfloat16); Paddle 2.6'
        " has no such API (its legacy 'rms_norm' is incubate fused_rms_norm, read as"
        ' fused_rms_norm_quant). Covered by tests/ops/test_fused_no_cpu_kernel.py::test_rms_norm'
        ' (numpy reference; float32 at the lowest opset, 17, 23 (ONNX RMSNormalization) and the'
        ' newest) and float16/bfloat16 by tests/ops/test_fused_no_cpu_kernel.py::test_half_precision'
        ' (the same program retyped, against its float32 conversion)'
    ),
    'sync_calc_stream': (
        "PIR only (Paddle 2.6 has no sync_calc_stream op), and Paddle 3.3's CPU executor cannot run"
        " it: pd_op_to_kernel_pass fails with 'kernel output args (0) defs should equal op outputs"
        " (1)' (measured, also for sync_calc_stream_). Covered by tests/ops/cases_tensor.py"
        ' misc_bookkeeping_pir (PIR, float32, numpy reference)'
    ),
    'sync_comm_stream': (
        "no Paddle writes it in a saved program on CPU: Paddle 3.3's _C_ops.sync_comm_stream is"
        " dygraph-only (in a static program it refuses Values: 'argument x must be list of Tensors';"
        ' paddle.base.libpaddle.pir.ops has no sync_comm_stream builder), and Paddle 2.6 has no'
        ' sync_comm_stream op (only c_sync_comm_stream). No test covers it: the mapper (misc.identity)'
        ' is the shared pass-through of the other bookkeeping ops'
    ),
}

GAP_REASONS: dict[tuple[str, str], str] = {
    ('bitwise_and', 'int16'): (
        "Paddle 2.6's inference predictor hands back every int16 output as int32 (values intact):"
        ' measured on a program paddle.jit.save wrote from int16 inputs with outputs bitwise_and(a, b)'
        ' and reshape(a, [4]): the program declares int16 for both (bitwise_and_0.tmp_0 and the'
        ' save_infer_model/scale outputs are VarType.INT16), paddle.static.Executor on the same saved'
        " program returns int16 arrays, the predictor's output handles report PaddleDType.INT32 and"
        " copy_to_cpu gives int32 arrays, for the reshape as well. pd2onnx's int16 result is right (it"
        " passes in the PIR format, Paddle 3.3); the legacy comparison fails on dtype only. Paddle's"
        ' inference Tensor API has no int16 type'
        ' (paddle/fluid/inference/api/details/zero_copy_tensor.cc: Tensor::type() maps no INT16;'
        ' CopyFromCpu/CopyToCpu are instantiated for double, float, int64, int32, uint8, int8,'
        " float16, bfloat16, bool only). (Paddle 3.3's predictor cannot take int16 inputs at all: 'The"
        " type of data we are trying to retrieve (int16) does not match the type of data (int32)'.)"
    ),
    ('bitwise_or', 'int16'): (
        "Paddle 2.6's inference predictor hands back every int16 output as int32 (values intact):"
        ' measured on a program paddle.jit.save wrote from int16 inputs with outputs bitwise_and(a, b)'
        ' and reshape(a, [4]): the program declares int16 for both (bitwise_and_0.tmp_0 and the'
        ' save_infer_model/scale outputs are VarType.INT16), paddle.static.Executor on the same saved'
        " program returns int16 arrays, the predictor's output handles report PaddleDType.INT32 and"
        " copy_to_cpu gives int32 arrays, for the reshape as well. pd2onnx's int16 result is right (it"
        " passes in the PIR format, Paddle 3.3); the legacy comparison fails on dtype only. Paddle's"
        ' inference Tensor API has no int16 type'
        ' (paddle/fluid/inference/api/details/zero_copy_tensor.cc: Tensor::type() maps no INT16;'
        ' CopyFromCpu/CopyToCpu are instantiated for double, float, int64, int32, uint8, int8,'
        " float16, bfloat16, bool only). (Paddle 3.3's predictor cannot take int16 inputs at all: 'The"
        " type of data we are trying to retrieve (int16) does not match the type of data (int32)'.)"
    ),
    ('bitwise_xor', 'int16'): (
        "Paddle 2.6's inference predictor hands back every int16 output as int32 (values intact):"
        ' measured on a program paddle.jit.save wrote from int16 inputs with outputs bitwise_and(a, b)'
        ' and reshape(a, [4]): the program declares int16 for both (bitwise_and_0.tmp_0 and the'
        ' save_infer_model/scale outputs are VarType.INT16), paddle.static.Executor on the same saved'
        " program returns int16 arrays, the predictor's output handles report PaddleDType.INT32 and"
        " copy_to_cpu gives int32 arrays, for the reshape as well. pd2onnx's int16 result is right (it"
        " passes in the PIR format, Paddle 3.3); the legacy comparison fails on dtype only. Paddle's"
        ' inference Tensor API has no int16 type'
        ' (paddle/fluid/inference/api/details/zero_copy_tensor.cc: Tensor::type() maps no INT16;'
        ' CopyFromCpu/CopyToCpu are instantiated for double, float, int64, int32, uint8, int8,'
        " float16, bfloat16, bool only). (Paddle 3.3's predictor cannot take int16 inputs at all: 'The"
        " type of data we are trying to retrieve (int16) does not match the type of data (int32)'.)"
    ),
    ('roi_align', 'int32'): (
        'Paddle 3.3 has integer roi_align kernels that compute the bilinear samples in the integer'
        ' type (measured: int32 x and RoIs give all zeros where the float32 kernel on the same values'
        ' gives 1.375, -1.0, ...); ONNX RoiAlign takes float tensors only and that integer arithmetic'
        ' is not emulated: the mapper refuses integer inputs by name'
    ),
}
