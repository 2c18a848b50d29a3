"""Where pd2onnx's output runs besides ONNX Runtime: the one list of OpenVINO limitations.

The tests run every op case and model test that ONNX Runtime runs also in OpenVINO (CPU
plugin, f32 precision hint) at ``OPENVINO_OPSET`` and compare with Paddle with the same
tolerances (``tests/harness/check.py``). A case OpenVINO cannot run or computes differently is
listed here, under the limitation that stops it, with the evidence; the test fails on an
unlisted failure, on a listed case that now passes, and on a listed case failing otherwise
than its ``match`` says. ``docs/runtimes.md`` is generated from this module
(``python tools/gen_runtimes_doc.py``).

Case ids are the tests' names: ``<case>[pir]`` / ``<case>[legacy]`` for the op and model cases
(``tests/ops``, ``tests/models``), the model's name for the toolkit model tests.
"""

from __future__ import annotations

from dataclasses import dataclass

OPENVINO_VERSION = "2026.4.1"  # the version the listing was measured with
OPENVINO_OPSET = 17  # the default opset: OpenVINO runs what a default conversion writes

# The x86-64 CPU classes OpenVINO's CPU plugin picks kernels by (its oneDNN's instruction-set
# levels), lowest first, each with the ONEDNN_MAX_CPU_ISA value that caps the plugin there:
# the tests run OpenVINO on the machine's own class and capped to each lower one
# (tests/harness/openvino_run.py), so a difference on another CPU shows where code is written.
CPU_CLASSES: dict[str, str] = {
    "avx2": "AVX2",  # Haswell to Alder Lake client CPUs, AMD Zen 1-3
    "avx512": "AVX512_CORE",  # Skylake-SP and later Xeons (VNNI from Cascade Lake)
    "avx512_bf16": "AVX512_CORE_BF16",  # Cooper Lake, AMD Zen 4 and 5
    "amx": "AVX512_CORE_AMX",  # Sapphire Rapids and later Xeons
}


# What a cap cannot show. ONEDNN_MAX_CPU_ISA caps oneDNN's kernels, and OpenVINO's own jit
# kernels where they ask oneDNN; some of OpenVINO 2026.4's own kernels look at the real CPU
# instead. Under the AVX2 cap on an AVX-512 CPU its MVN (LayerNormalization, GroupNorm and
# InstanceNorm, over fewer than 128 values or 130) kills the process with SIGSEGV and its DFT is
# refused with Xbyak's "evex is invalid": AVX-512 (EVEX) encodings asked of an AVX2 code
# generator, which an AVX2 CPU's own detection never asks for. Such an outcome under a cap says
# nothing about CPUs of that class: the tests do not judge the case on that class (and record
# it); tests/test_openvino_limits.py shows the effect, and fails once OpenVINO no longer has it.
CAP_ARTIFACT = r"OpenVINO crashes the process|evex is invalid"


@dataclass(frozen=True)
class Limit:
    """One OpenVINO limitation and the test cases it stops."""

    key: str  # a short name
    kind: str  # "refuses" (read/compile error), "differs" (runs, other values), "crashes" (kills the process)
    match: str  # regular expression the failure (as the harness words it) must match
    why: str  # what OpenVINO does, the evidence, and why pd2onnx cannot route around it
    cases: tuple[str, ...]
    pending: str = ""  # not OpenVINO's: the change of ours expected to remove it (then empty)
    cpus: tuple[str, ...] = ()  # the CPU_CLASSES it shows on (empty: every one)

    def holds_on(self, cpu: str) -> bool:
        return not self.cpus or cpu in self.cpus


def _both(*names: str) -> tuple[str, ...]:
    return tuple(f"{n}[{fmt}]" for n in names for fmt in ("pir", "legacy"))


_DIFFERS = r"^OpenVINO differs from Paddle"
_RNN_WITH_LENGTHS = tuple(
    f"rnn_{mode}_{shape}" for mode in ("gru", "lstm", "rnn_relu", "rnn_tanh")
    for shape in ("l1_bidir_batch_major_seqlen", "l1_fwd_batch_major_seqlen", "l2_bidir_all",
                  "l2_bidir_batch_major_seqlen", "l2_bidir_empty_seq", "l2_fwd_batch_major_seqlen")
)

OPENVINO_LIMITS: tuple[Limit, ...] = (
    Limit(
        "int64-as-int32", "differs", _DIFFERS,
        "The CPU plugin computes int64 tensors in int32 (its documented integer inference precision): "
        "values beyond +-2^31 saturate or wrap (2^40 + 2^40 gives 2147483647 + 2147483647 and "
        "worse). Integer Div, Mod and comparisons go through float32, exact only below 2^24. These "
        "cases feed or produce int64 values beyond int32 on purpose.",
        _both("creation_assign", "creation_full_dtypes", "ew_add_n_int64", "ew_arith_int64", "ew_clip_int",
              "ew_floor_divide_remainder_int64", "ew_maximum_minimum_int64", "ew_pow_tensor_int64",
              "ew_scale_int", "ew_unary_int", "ew_unary_int_float_out", "indexing_argsort_int",
              "indexing_cumsum_int", "indexing_gather_dynamic_int64", "indexing_scatter_int64_index_shapes",
              "indexing_where_int64", "lg_bitwise_int", "lg_bitwise_not_int", "masked_select_int",
              "setvalue_dtypes", "cf_opset_in_while", "nonfinite_cast_constant", "nonfinite_full_int64_text",
              "nonfinite_full_to_ints")
        + _both("cf_opset_in_if", "cf_opset_in_while_in_if") + ("setvalue_legacy_typed_values[legacy]",),
    ),
    Limit(
        "float64-as-float32", "differs", _DIFFERS,
        "The CPU plugin computes float64 in float32: -1e300 becomes -3.4e38 (saturated), 1e-300 "
        "becomes 0, 1 + 2^-40 becomes 1. The cases test float64 values outside float32 (isinf of "
        "1e300, nonzero of 1e-300, the magnitude of 3e30 - 4e30j, whose squares pd2onnx sums in "
        "float64 as Paddle's hypot does). Paddle 3 sizes an interpolation by a scale attribute as "
        "int(in * scale) in double (700 x 1.3 = 910; 909 in float32): to runtime input sizes pd2onnx "
        "multiplies in float64, which OpenVINO rounds to float32. Bicubic's source coordinate "
        "ratio * (k + 0.5) - 0.5 is rounded once from double in Paddle; for runtime sizes pd2onnx "
        "computes it in float64, which OpenVINO rounds twice in float32 (one float32 step off at "
        "coordinates just above a power of two, e.g. 256.43 at column 179 of 640 x 0.7).",
        _both("lg_isnan_isinf_isfinite_float64", "nonzero_dtypes", "complex_abs_angle",
              "vision_bicubic_edges_dynamic_scale")
        + ("vision_linear_scale_size_double_dynamic[pir]",),
    ),
    Limit(
        "nan-to-bool", "differs", _DIFFERS,
        "Cast from float to bool gives false for NaN; ONNX (and Paddle) make every nonzero value, NaN "
        "included, true. A form without Cast (x != 0) would cost ONNX Runtime an op on every "
        "float-to-bool conversion.",
        _both("lg_logical_float"),
    ),
    Limit(
        "nan-through-clip-max-min", "differs", _DIFFERS,
        "Clip, Max and Min drop NaN (Clip(NaN, -1, 1) gives -1, Max(NaN, 1) gives 1); ONNX Runtime and "
        "Paddle propagate it.",
        _both("ew_clip") + ("ew_maximum_minimum_nan[pir]",),
    ),
    Limit(
        "reduce-max-of-neg-inf", "differs", _DIFFERS,
        "ReduceMax over only -inf gives -3.4e38 (its start value), not -inf; logsumexp of such a "
        "row is then -inf instead of Paddle's NaN.",
        _both("red_logsumexp"),
    ),
    Limit(
        "topk-ties", "differs", _DIFFERS,
        "TopK orders equal values arbitrarily (16 zeros come back as 15, 14, ... , 0 or mixed), where "
        "ONNX TopK puts the lower index first and Paddle's sorts are stable. pd2onnx's own sorts "
        "whose keys repeat by construction (detection post-processing) use keys that cannot tie "
        "(ops/_sort_util.py); a user's argsort/topk on data with ties is left as one TopK, the "
        "fastest form in ONNX Runtime.",
        ("indexing_argsort_stable_ties[pir]",),
    ),
    Limit(
        "topk-nan", "differs", _DIFFERS,
        "TopK puts NaN among the numbers ([0.5, NaN, -1, 2, 0] ascending gives NaN second to last or "
        "elsewhere); ONNX Runtime and Paddle put it after every number.",
        _both("quantile_composite"),
    ),
    Limit(
        "fmod-rounding", "differs", _DIFFERS,
        "Mod with fmod=1 on floats is computed as x - trunc(x / y) * y in float32, not exactly: "
        "fmod(1, 0.1) gives 0 instead of 0.09999999 (what C's fmod, ONNX Runtime and Paddle give).",
        _both("ew_floor_divide_float", "ew_remainder_float"),
    ),
    Limit(
        "fused-multiply-add", "differs", _DIFFERS,
        "A Mul feeding an Add is computed as one fused multiply-add (one rounding, not two): 23% of "
        "float32 a * b + c differ in the last bit from ONNX Runtime. uint8 interpolation truncates "
        "Paddle's float32 sums, so a last-bit change flips whole pixel values by 1. PP-YOLO with "
        "random weights: such last-digit differences (its scores differ from ONNX Runtime's by up "
        "to 1.2e-5 on 76,704 of 77,038 candidates) meet matrix NMS over near-equal scores, which "
        "gives another detection set (a row of score 0.92 missing); every matrix_nms case fed the "
        "same inputs equals Paddle in OpenVINO.",
        _both("vision_linear_family_uint8") + ("ppyolo_r18vd",),
    ),
    Limit(
        "no-det", "refuses", r"refuses the model: .*Det-",
        "The ONNX reader has no conversion for Det, which inverse uses for matrices larger than "
        "4x4 (up to 4x4 it spells the cofactors out; for 5x5 that would take ONNX Runtime 2.5 times "
        "as long as Det).",
        _both("inverse_float64"),
    ),
    Limit(
        "no-deform-conv", "refuses", r"refuses the model: .*DeformConv",
        "The ONNX reader has no conversion for DeformConv (deformable_conv maps to it).",
        _both("nn2_deform_conv2d", "nn2_deform_conv2d_mask_groups"),
    ),
    Limit(
        "grid-sample-5d", "refuses", r"refuses the model: .*GridSample",
        "GridSample takes 4-D input only; 5-D grid_sample needs GridSample-20's N-D form.",
        _both("vision_grid_sample_5d", "vision_grid_sample_5d_border") + ("vision_grid_sample_5d_nearest[pir]",),
    ),
    Limit(
        "rnn-lengths-with-dynamic-dims", "differs", _DIFFERS,
        "RNN, GRU and LSTM ignore sequence_lens when the batch or time dim is dynamic (the same model "
        "with static dims is right): outputs past a sequence's length are not zero and the last "
        "state is taken at the wrong step (max diff 0.5-2 on these cases).",
        _both(*_RNN_WITH_LENGTHS),
    ),
    Limit(
        "lstm-peepholes", "differs", _DIFFERS,
        "LSTM with peephole weights (input P) computes other values (max diff 0.07 on a 4-unit "
        "LSTM, static shapes); without P it is right. Paddle 2's legacy dynamic_lstm uses them.",
        ("seq_tagger[legacy]", "seq_tagger_one_step[legacy]"),
    ),
    Limit(
        "qdq-16-bit", "refuses", r"FQ stripping failed",
        "A 16-bit QuantizeLinear/DequantizeLinear pair (Paddle's 16-bit quantize_linear) stops the "
        "CPU plugin's compile ('FQ stripping failed').",
        _both("qdq_16_bit"),
    ),
    Limit(
        "dynamic-rank", "refuses", r"dynamic rank|element::Type::merge",
        "The CPU plugin runs no op whose output rank is unknown; Paddle's squeeze without axes on "
        "dynamic dims removes whichever dims are 1 at run time, so its rank is only known then. "
        "A legacy while with an early return gives its result rank 1 on one path (dy2static's "
        "placeholder) and rank 2 on the other; OpenVINO's reader then pairs that If's branch "
        "outputs wrongly ('type of then_body output f32 is not equal type of else_body output "
        "i64', although both branches of the file agree). PaddleDetection's legacy RetinaNet "
        "decodes boxes with such a squeeze (no axes, dynamic dims) inside its per-image while.",
        _both("tensor_squeeze_all_dynamic") + ("cf_while_return[legacy]", "retinanet"),
    ),
    Limit(
        "sequences", "refuses", r"Sequence|sequence",
        "ONNX sequences: the ONNX reader converts Sequence* ops only in certain patterns (here: "
        "'While validating node util::SequenceInsert'). pd2onnx writes a tensor array as a tensor "
        "wherever its elements share a shape; this array's elements have dims known only at run "
        "time and nothing in the program makes them equal, so it stays a sequence (and `pd2onnx "
        "convert` says so). The two-stage detectors' proposal loops collect each image's "
        "proposals, as many as survive that image's NMS: such arrays stay sequences.",
        _both("cf_while_array_concat")
        + tuple(f"{m}{fmt}" for m in ("faster_rcnn", "cascade_rcnn", "mask_rcnn") for fmt in ("", "_pir")),
    ),
)


def openvino_limit(case_id: str, cpu: str | None = None) -> Limit | None:
    """The limitation listed for a test case (on the CPU class ``cpu``, if given), if any."""
    for limit in OPENVINO_LIMITS:
        if case_id in limit.cases and (cpu is None or limit.holds_on(cpu)):
            return limit
    return None


# ---------------------------------------------------------------------- TensorRT
# Not run here (no GPU). What its ONNX parser documents (onnx-tensorrt docs/operators.md, the
# TensorRT 10.1 GA release: "operators in the inclusive range of opset 9 to opset 20"); the
# generated docs/runtimes.md checks pd2onnx's converted test cases against it.
TENSORRT_DOC = "onnx-tensorrt docs/operators.md, TensorRT 10.1 GA (2024-06)"
TENSORRT_OPSETS = (9, 20)
# ONNX operators its parser does not support ("N" in the matrix)
TENSORRT_NO_OPS: tuple[str, ...] = (
    "AffineGrid", "Bernoulli", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor",
    "BlackmanWindow", "Col2Im", "CenterCropPad", "Compress", "ConcatFromSequence", "ConvInteger", "DFT",
    "Det", "DynamicQuantizeLinear", "HammingWindow", "HannWindow", "ImageDecoder", "MatMulInteger",
    "MaxRoiPool", "MaxUnpool", "MelWeightMatrix", "Multinomial", "NegativeLogLikelihoodLoss", "Optional",
    "OptionalGetElement", "OptionalHasElement", "QLinearConv", "QLinearMatMul", "RegexFullMatch", "STFT",
    "SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert",
    "SequenceLength", "SequenceMap", "SoftmaxCrossEntropyLoss", "SplitToSequence", "StringConcat",
    "StringNormalizer", "StringSplit", "TfIdfVectorizer", "Unique",
)
# Restrictions of supported operators that pd2onnx's output can meet (the matrix's words, shortened)
TENSORRT_RESTRICTIONS: dict[str, str] = {
    "Resize": "modes nearest and linear only (no cubic)",
    "TopK": "K below 3840; sorted output only",
    "Loop": "scan outputs of a static length; carried values keep their shape across iterations",
    "If": "both branches' outputs of the same rank",
    "NonZero": "float32/float16 input only",
    "GridSample": "4-D input only",
    "ScatterND": "no reduction",
    "CumSum": "axis must be an initializer",
    "Slice": "axes must be an initializer",
    "Squeeze": "axes must be an initializer",
    "Unsqueeze": "axes must be a constant",
    "MaxPool": "2-D/3-D only; no Indices output",
    "LSTM": "input_forget 0, layout 0",
    "DequantizeLinear": "x_zero_point 0; int8/fp8/int4 only",
    "QuantizeLinear": "y_zero_point 0",
}
# Element types: float64 is cast down to float32 (clamped to +-FLT_MAX); int8/int4/fp8 only as
# quantized types; uint8 only as network input or output; no int16, uint16, uint32, uint64
TENSORRT_TYPES = {
    "float64": "cast down to float32 (clamped to +-FLT_MAX)",
    "int8": "only through quantization (Q/DQ)",
    "uint8": "only as a network input or output",
    "int16": "not supported", "uint16": "not supported", "uint32": "not supported", "uint64": "not supported",
    "complex64": "not supported", "complex128": "not supported", "string": "not supported",
}

# Measured once (not by the tests, which run OpenVINO at OPENVINO_OPSET only): every op case
# converted at the lowest opset it converts at and at 28, each run in OpenVINO and compared
# with the run at 17.
OPENVINO_OPSET_RANGE = (
    "Opsets: OpenVINO's ONNX reader accepts any opset a model declares (1 to 30 probed) and reads "
    "each node with the newest version of the operator it knows. Every op case converted at the "
    "lowest opset it converts at (7 to 21) and at 28 (the newest ONNX Runtime 1.32 runs), each "
    "run in OpenVINO, fails in the cases it fails at 17 and in these: below 11, Pad-2's "
    "-inf padding value is refused (`max_pool2d_with_index`, 6 cases) and Clip-6 drops NaN "
    "(`clip` with tensor bounds, 2); at 19 and above, Pad's wrap mode is not supported "
    "(circular `pad3d`, 6) and DFT-20 ignores `onesided` (`fft_r2c`, 2). Opset 17, pd2onnx's "
    "default, is the one to use with OpenVINO."
)
