"""Vision cases: interpolation (every method, align mode, size/scale source, layout) and grid_sample.

Interpolation cases with runtime sizes need ONNX Resize-11 / Range and 5-D grid_sample needs
GridSample-20: the mappers require those opsets while converting (auto-opset).
"""

import numpy as np

from harness.cases import case


def _interp(paddle, **kw):
    def fn(x):
        return paddle.nn.functional.interpolate(x, **kw)

    return fn


def _x(rng, *shape):
    return rng.standard_normal(shape).astype("float32")


# ---------------------------------------------------------------------- nearest
@case("nearest_interp", name="vision_nearest_scale2")
def vision_nearest_scale2(paddle, rng):
    return _interp(paddle, scale_factor=2, mode="nearest"), [_x(rng, 1, 2, 3, 4)]


@case("nearest_interp", name="vision_nearest_scale_half")
def vision_nearest_scale_half(paddle, rng):
    return _interp(paddle, scale_factor=0.5, mode="nearest"), [_x(rng, 1, 2, 6, 8)]


@case("nearest_interp", name="vision_nearest_size_down")
def vision_nearest_size_down(paddle, rng):
    """14 -> 2 and 21 -> 3: ONNX Resize's x/(out/in) picks 6 where Paddle's k*(in/out) picks 7."""
    return _interp(paddle, size=[2, 3], mode="nearest"), [_x(rng, 1, 2, 14, 21)]


@case("nearest_interp", name="vision_nearest_size_up")
def vision_nearest_size_up(paddle, rng):
    return _interp(paddle, size=[8, 11], mode="nearest"), [_x(rng, 1, 1, 5, 7)]


@case("nearest_interp", name="vision_nearest_scale_odd")
def vision_nearest_scale_odd(paddle, rng):
    return _interp(paddle, scale_factor=[1.5, 3], mode="nearest"), [_x(rng, 1, 1, 4, 3)]


def _raw_nearest(paddle, x, out_hw, align_corners):
    """nearest_interp with align_corners, which the Python API refuses but the op (and old models) have."""
    attrs = {
        "out_d": -1,
        "out_h": out_hw[0],
        "out_w": out_hw[1],
        "scale": [],
        "interp_method": "nearest",
        "align_corners": align_corners,
        "align_mode": 0,
        "data_layout": "NCHW",
    }
    if paddle.__version__.startswith("2."):
        helper = paddle.base.layer_helper.LayerHelper("nearest_interp_v2")
        out = helper.create_variable_for_type_inference(x.dtype)
        helper.append_op(type="nearest_interp_v2", inputs={"X": x}, outputs={"Out": out}, attrs=attrs)
        return out
    return paddle._C_ops.nearest_interp(
        x, None, None, None, "NCHW", -1, out_hw[0], out_hw[1], [], "nearest", align_corners, 0
    )


@case("nearest_interp", name="vision_nearest_align_corners")
def vision_nearest_align_corners(paddle, rng):
    return (lambda x: _raw_nearest(paddle, x, (7, 9), True)), [_x(rng, 1, 2, 4, 5)]


@case("nearest_interp", name="vision_nearest_align_corners_down")
def vision_nearest_align_corners_down(paddle, rng):
    return (lambda x: _raw_nearest(paddle, x, (3, 4), True)), [_x(rng, 1, 2, 8, 9)]


@case("nearest_interp", name="vision_nearest_align_corners_dynamic")
def vision_nearest_align_corners_dynamic(paddle, rng):
    """Runtime input dims, static output: indices from Shape arithmetic (opset 7; out 1 takes index 0)."""
    return (lambda x: _raw_nearest(paddle, x, (5, 1), True)), [_x(rng, 1, 2, 8, 3)], [(1, 2, None, None)]


@case("nearest_interp", name="vision_nearest_nhwc")
def vision_nearest_nhwc(paddle, rng):
    return _interp(paddle, size=[5, 7], mode="nearest", data_format="NHWC"), [_x(rng, 1, 3, 4, 2)]


@case("nearest_interp", name="vision_nearest_dynamic_scale2")
def vision_nearest_dynamic_scale2(paddle, rng):
    return _interp(paddle, scale_factor=2, mode="nearest"), [_x(rng, 1, 2, 3, 5)], [(None, 2, None, None)]


@case("nearest_interp", name="vision_nearest_dynamic_size")
def vision_nearest_dynamic_size(paddle, rng):
    """U-Net style: size from another tensor's runtime shape (14 -> 2 along H)."""

    def fn(x, y):
        return paddle.nn.functional.interpolate(x, size=paddle.shape(y)[2:], mode="nearest")

    return fn, [_x(rng, 1, 2, 14, 5), _x(rng, 1, 2, 2, 8)], [(1, 2, None, None), (1, 2, None, None)]


@case("nearest_interp", name="vision_nearest_dynamic_scale_odd")
def vision_nearest_dynamic_scale_odd(paddle, rng):
    return _interp(paddle, scale_factor=3, mode="nearest"), [_x(rng, 1, 2, 3, 5)], [(1, 2, None, None)]


@case("nearest_interp", name="vision_nearest_size_from_tensor")
def vision_nearest_size_from_tensor(paddle, rng):
    """The size of another tensor at run time, ratio 2.5 (OpenVINO was reported to differ by
    whole pixels here): Paddle's indices computed in the graph, then gathered."""

    def fn(x, y):
        return paddle.nn.functional.interpolate(x, size=paddle.shape(y)[2:], mode="nearest")

    x = _x(rng, 1, 3, 4, 6) * 3
    return fn, [x, _x(rng, 1, 1, 10, 15)], [(1, 3, None, None), (1, 1, None, None)]


@case("nearest_interp", name="vision_nearest_size_2_5")
def vision_nearest_size_2_5(paddle, rng):
    """Static sizes at ratio 2.5 (an exact float32 ratio): Resize picks Paddle's indices."""
    return _interp(paddle, size=[10, 15], mode="nearest"), [_x(rng, 1, 3, 4, 6)]


@case("nearest_interp", name="vision_nearest_dynamic_scale_2_5")
def vision_nearest_dynamic_scale_2_5(paddle, rng):
    """Scale 2.5 on a runtime input size whose product is not whole (3 * 2.5 -> 7)."""
    return _interp(paddle, scale_factor=2.5, mode="nearest"), [_x(rng, 1, 2, 3, 5)], [(1, 2, None, None)]


@case("nearest_interp", name="vision_nearest_scale_down_0_75")
def vision_nearest_scale_down_0_75(paddle, rng):
    return _interp(paddle, scale_factor=0.75, mode="nearest"), [_x(rng, 1, 2, 8, 7)]


@case("nearest_interp", name="vision_nearest_3d")
def vision_nearest_3d(paddle, rng):
    return _interp(paddle, size=[3, 5, 2], mode="nearest", data_format="NCDHW"), [_x(rng, 1, 1, 2, 3, 4)]


# ---------------------------------------------------------------------- bilinear
@case("bilinear_interp", name="vision_bilinear_align_corners")
def vision_bilinear_align_corners(paddle, rng):
    return _interp(paddle, size=[7, 9], mode="bilinear", align_corners=True), [_x(rng, 1, 2, 4, 5)]


@case("bilinear_interp", name="vision_bilinear_half_pixel")
def vision_bilinear_half_pixel(paddle, rng):
    return _interp(paddle, scale_factor=2, mode="bilinear", align_corners=False), [_x(rng, 1, 2, 3, 4)]


@case("bilinear_interp", name="vision_bilinear_asymmetric")
def vision_bilinear_asymmetric(paddle, rng):
    """align_mode=1 without align_corners: src = ratio * k (ONNX asymmetric; Upsample below 10)."""
    fn = _interp(paddle, scale_factor=[2, 3], mode="bilinear", align_corners=False, align_mode=1)
    return fn, [_x(rng, 1, 2, 3, 4)]


@case("bilinear_interp", name="vision_bilinear_asymmetric_down")
def vision_bilinear_asymmetric_down(paddle, rng):
    fn = _interp(paddle, scale_factor=0.5, mode="bilinear", align_corners=False, align_mode=1)
    return fn, [_x(rng, 1, 2, 6, 8)]


@case("bilinear_interp", name="vision_bilinear_down_to_one")
def vision_bilinear_down_to_one(paddle, rng):
    """An output size of 1 takes input index 0 (ratio 0), not the centre."""
    return _interp(paddle, size=[3, 1], mode="bilinear", align_corners=False), [_x(rng, 1, 2, 7, 9)]


@case("bilinear_interp", name="vision_bilinear_size_tensor")
def vision_bilinear_size_tensor(paddle, rng):
    def fn(x, size):
        return paddle.nn.functional.interpolate(x, size=size, mode="bilinear")

    return fn, [_x(rng, 1, 2, 4, 5), np.array([6, 3], "int32")]


@case("bilinear_interp", name="vision_bilinear_size_list")
def vision_bilinear_size_list(paddle, rng):
    def fn(x, h):
        return paddle.nn.functional.interpolate(x, size=[h, 5], mode="bilinear", align_corners=True)

    return fn, [_x(rng, 1, 2, 4, 3), np.array([7], "int32")]


@case("bilinear_interp", name="vision_bilinear_scale_tensor")
def vision_bilinear_scale_tensor(paddle, rng):
    def fn(x, s):
        return paddle.nn.functional.interpolate(x, scale_factor=s, mode="bilinear", align_corners=False)

    return fn, [_x(rng, 1, 2, 4, 5), np.array([1.5, 2.0], "float32")]


@case("bilinear_interp", name="vision_bilinear_nhwc")
def vision_bilinear_nhwc(paddle, rng):
    return _interp(paddle, size=[5, 8], mode="bilinear", data_format="NHWC"), [_x(rng, 2, 3, 4, 3)]


@case("bilinear_interp", name="vision_bilinear_dynamic")
def vision_bilinear_dynamic(paddle, rng):
    return _interp(paddle, scale_factor=2, mode="bilinear"), [_x(rng, 1, 2, 3, 5)], [(None, 2, None, None)]


@case("bilinear_interp", name="vision_bilinear_unet")
def vision_bilinear_unet(paddle, rng):
    """PaddleSeg style ``F.interpolate(x, paddle.shape(skip)[2:])`` with dynamic H/W.

    (``skip.shape[2:]`` with dynamic dims cannot be saved by either Paddle: -1 sizes.)
    """

    def fn(x, skip):
        return paddle.nn.functional.interpolate(x, size=paddle.shape(skip)[2:], mode="bilinear") + skip

    return fn, [_x(rng, 1, 2, 3, 4), _x(rng, 1, 2, 7, 9)], [(1, 2, None, None), (1, 2, None, None)]


@case("bilinear_interp", name="vision_bilinear_scale_copy")
def vision_bilinear_scale_copy(paddle, rng):
    """Scale 1.5 on a 1x1 image keeps the size, and Paddle then copies the input unchanged."""
    fn = _interp(paddle, scale_factor=1.5, mode="bilinear", align_corners=False)
    return fn, [_x(rng, 1, 2, 1, 1)], [(1, 2, None, None)]


# ---------------------------------------------------------------------- bicubic, linear, trilinear
@case("bicubic_interp", name="vision_bicubic")
def vision_bicubic(paddle, rng):
    return _interp(paddle, size=[7, 9], mode="bicubic", align_corners=False), [_x(rng, 1, 2, 4, 5)]


@case("bicubic_interp", name="vision_bicubic_align_corners")
def vision_bicubic_align_corners(paddle, rng):
    return _interp(paddle, scale_factor=[1.5, 0.5], mode="bicubic", align_corners=True), [_x(rng, 1, 2, 4, 6)]


@case("bicubic_interp", name="vision_bicubic_nhwc")
def vision_bicubic_nhwc(paddle, rng):
    return _interp(paddle, size=[3, 7], mode="bicubic", data_format="NHWC"), [_x(rng, 1, 5, 4, 2)]


@case("linear_interp", name="vision_linear_ncw")
def vision_linear_ncw(paddle, rng):
    return _interp(paddle, scale_factor=2, mode="linear", data_format="NCW"), [_x(rng, 1, 2, 5)]


@case("linear_interp", name="vision_linear_nwc_align")
def vision_linear_nwc_align(paddle, rng):
    fn = _interp(paddle, size=[8], mode="linear", align_corners=True, data_format="NWC")
    return fn, [_x(rng, 2, 5, 3)]


@case("linear_interp", name="vision_linear_asymmetric")
def vision_linear_asymmetric(paddle, rng):
    fn = _interp(paddle, size=[3], mode="linear", align_corners=False, align_mode=1, data_format="NCW")
    return fn, [_x(rng, 1, 2, 7)]


@case("trilinear_interp", name="vision_trilinear")
def vision_trilinear(paddle, rng):
    fn = _interp(paddle, scale_factor=[2, 1.5, 1], mode="trilinear", data_format="NCDHW")
    return fn, [_x(rng, 1, 2, 2, 3, 4)]


@case("trilinear_interp", name="vision_trilinear_align_ndhwc")
def vision_trilinear_align_ndhwc(paddle, rng):
    fn = _interp(paddle, size=[3, 4, 2], mode="trilinear", align_corners=True, data_format="NDHWC")
    return fn, [_x(rng, 1, 2, 3, 4, 2)]


@case("trilinear_interp", name="vision_trilinear_asymmetric")
def vision_trilinear_asymmetric(paddle, rng):
    fn = _interp(
        paddle, size=[3, 5, 4], mode="trilinear", align_corners=False, align_mode=1, data_format="NCDHW"
    )
    return fn, [_x(rng, 1, 1, 2, 3, 6)]


@case("linear_interp", "bilinear_interp", "trilinear_interp", name="vision_linear_family_uint8")
def vision_linear_family_uint8(paddle, rng):
    """uint8: Paddle sums the weighted corners in float32 and truncates (sums that land within
    rounding of an integer must truncate the same way); Paddle 3's uint8 linear_interp reads
    the left neighbour only (2.6 weighs both)."""
    f = paddle.nn.functional.interpolate

    def fn(x1, x2, x3):
        return (
            f(x1, size=[11], mode="linear", data_format="NCW"),
            f(x1, scale_factor=2, mode="linear", align_mode=1, data_format="NCW"),
            f(x1, size=[13], mode="linear", align_corners=True, data_format="NWC"),
            f(x2, size=[5, 7], mode="bilinear"),
            f(x2, size=[3, 6], mode="bilinear", align_corners=True, data_format="NHWC"),
            f(x2, scale_factor=[1.5, 0.5], mode="bilinear", align_mode=1),
            f(x3, size=[3, 3, 5], mode="trilinear", data_format="NCDHW"),
            f(x3, scale_factor=2, mode="trilinear", align_corners=True, data_format="NCDHW"),
        )

    def u8(*shape):
        return rng.integers(0, 256, shape).astype("uint8")

    return fn, [u8(2, 3, 8), u8(2, 3, 4, 6), u8(1, 3, 2, 2, 4)]


# ---------------------------------------------------------------------- Paddle's coordinates, sharp edges
# Paddle computes each source coordinate from its float32 ratio (ratio * (k + 0.5) - 0.5);
# ONNX Resize divides by out / in instead. On an image of sharp edges (pixels 0 or 255) a
# last-bit difference of a coordinate above 256 is a value difference of 3e-5 of the range, so
# these cases allow 1e-5 of the range and nothing relative. 480 x 640 -> 712 x 488 is the
# resize of UVDoc, the document-unwarping model where the difference was seen.
_EDGE_TOL = dict(rtol=0.0, atol=1e-5, scaled_atol=True)


def _edges(rng, *shape):
    return (rng.integers(0, 2, shape) * 255).astype("float32")


def _linear_variants(paddle, mode, size, scale, fmt):
    f = paddle.nn.functional.interpolate

    def fn(x):
        return (
            f(x, size=size, mode=mode, data_format=fmt),
            f(x, scale_factor=scale, mode=mode, data_format=fmt),
            f(x, size=size, mode=mode, align_corners=True, data_format=fmt),
            f(x, size=size, mode=mode, align_mode=1, data_format=fmt),
            f(x, scale_factor=scale, mode=mode, align_mode=1, data_format=fmt),
        )

    return fn


@case("bilinear_interp", name="vision_bilinear_edges", **_EDGE_TOL)
def vision_bilinear_edges(paddle, rng):
    """Output size and scale (1.3 x 0.7), align_corners, align_mode 0 and 1, static shapes."""
    return _linear_variants(paddle, "bilinear", [712, 488], [1.3, 0.7], "NCHW"), [_edges(rng, 1, 2, 480, 640)]


@case("bilinear_interp", name="vision_bilinear_edges_dynamic", **_EDGE_TOL)
def vision_bilinear_edges_dynamic(paddle, rng):
    """The same on an input of runtime height and width (the graph computes the coordinates)."""
    fn = _linear_variants(paddle, "bilinear", [712, 488], [1.3, 0.7], "NCHW")
    return fn, [_edges(rng, 1, 2, 480, 640)], [(1, 2, None, None)]


@case("bilinear_interp", name="vision_bilinear_edges_size_of", **_EDGE_TOL)
def vision_bilinear_edges_size_of(paddle, rng):
    """The output size read from another tensor at run time (NHWC)."""

    def fn(x, y):
        return paddle.nn.functional.interpolate(x, size=paddle.shape(y)[1:3], mode="bilinear", data_format="NHWC")

    return fn, [_edges(rng, 1, 480, 640, 2), _x(rng, 1, 712, 488, 1)], [(1, None, None, 2), (1, None, None, 1)]


@case("bilinear_interp", name="vision_bilinear_edges_short_ratios", **_EDGE_TOL)
def vision_bilinear_edges_short_ratios(paddle, rng):
    """Ratios that are short binary fractions (20 -> 8: 2.5, 36 -> 48: 0.75, 30 -> 20: 1.5), where
    Resize computes Paddle's coordinates exactly (checked at conversion time), and 7 -> 4 (1.75),
    where the runtime's quotient does not round to them (Gathers)."""
    f = paddle.nn.functional.interpolate

    def fn(x):
        return (f(x, size=[8, 48], mode="bilinear"), f(x[:, :, :, :30], size=[48, 20], mode="bilinear"),
                f(x[:, :, :7, :7], size=[4, 4], mode="bilinear"))
    return fn, [_edges(rng, 1, 2, 20, 36)]


@case("linear_interp", name="vision_linear_edges_short_ratio", **_EDGE_TOL)
def vision_linear_edges_short_ratio(paddle, rng):
    return _interp(paddle, size=[16], mode="linear", data_format="NCW"), [_edges(rng, 1, 2, 40)]


@case("bicubic_interp", name="vision_bicubic_edges", **_EDGE_TOL)
def vision_bicubic_edges(paddle, rng):
    """Bicubic reads four taps per axis from the same coordinates (clamped at the borders, a = -0.75)."""
    return _linear_variants(paddle, "bicubic", [712, 488], [1.3, 0.7], "NCHW"), [_edges(rng, 1, 2, 480, 640)]


@case("bicubic_interp", name="vision_bicubic_edges_dynamic", **_EDGE_TOL)
def vision_bicubic_edges_dynamic(paddle, rng):
    f = paddle.nn.functional.interpolate

    def fn(x):
        return f(x, size=[712, 488], mode="bicubic"), f(x, size=[712, 488], mode="bicubic", align_corners=True)

    return fn, [_edges(rng, 1, 2, 480, 640)], [(1, 2, None, None)]


@case("bicubic_interp", name="vision_bicubic_edges_dynamic_scale", **_EDGE_TOL)
def vision_bicubic_edges_dynamic_scale(paddle, rng):
    """A constant scale on a runtime size: the coordinate is computed in float64 in the graph."""
    return _interp(paddle, scale_factor=[1.3, 0.7], mode="bicubic"), [_edges(rng, 1, 2, 480, 640)], [(1, 2, None, None)]


@case("bicubic_interp", name="vision_bicubic_x2_and_half", **_EDGE_TOL)
def vision_bicubic_x2_and_half(paddle, rng):
    """Power-of-two ratios, which bicubic computes with Gathers too (ONNX Runtime's cubic Resize
    is about 10x slower): static sizes, x2 and x0.5, plain and with align_corners."""
    f = paddle.nn.functional.interpolate

    def fn(x):
        return (f(x, scale_factor=2, mode="bicubic"), f(x, scale_factor=0.5, mode="bicubic"),
                f(x, scale_factor=2, mode="bicubic", align_corners=True))
    return fn, [_edges(rng, 1, 2, 24, 40)]


@case("bicubic_interp", name="vision_bicubic_x2_dynamic", **_EDGE_TOL)
def vision_bicubic_x2_dynamic(paddle, rng):
    """Scale 2 on a runtime size: the runtime Gather form."""
    return _interp(paddle, scale_factor=2, mode="bicubic"), [_edges(rng, 1, 2, 24, 40)], [(1, 2, None, None)]


@case("bicubic_interp", name="vision_bicubic_to_one")
def vision_bicubic_to_one(paddle, rng):
    """An output size of 1 reads coordinate -0.5 (Paddle's ratio 0; no clamping in bicubic)."""
    return _interp(paddle, size=[1, 3], mode="bicubic"), [_x(rng, 1, 2, 5, 7)], [(1, 2, None, None)]


@case("linear_interp", name="vision_linear_edges", **_EDGE_TOL)
def vision_linear_edges(paddle, rng):
    return _linear_variants(paddle, "linear", [1000], [1.3], "NCW"), [_edges(rng, 1, 2, 700)]


@case("linear_interp", name="vision_linear_edges_dynamic", **_EDGE_TOL)
def vision_linear_edges_dynamic(paddle, rng):
    """Scale 1.45: the output size is the same in float32 and double (see the next case)."""
    return _linear_variants(paddle, "linear", [1000], [1.45], "NCW"), [_edges(rng, 1, 2, 700)], [(1, 2, None)]


def _double_sizes(paddle):
    f = paddle.nn.functional.interpolate

    def fn(x, y):
        return f(x, scale_factor=1.3, mode="linear", data_format="NCW"), f(y, scale_factor=0.7, mode="linear", data_format="NCW")

    return fn


@case("linear_interp", name="vision_linear_scale_size_double")
def vision_linear_scale_size_double(paddle, rng):
    """Output size int(in * scale): Paddle 3 multiplies in double (700 x 1.3 = 910, 90 x 0.7 = 62),
    Paddle 2.6 in float32 (909 and 63)."""
    return _double_sizes(paddle), [_x(rng, 1, 2, 700), _x(rng, 1, 2, 90)]


@case("linear_interp", name="vision_linear_scale_size_double_dynamic")
def vision_linear_scale_size_double_dynamic(paddle, rng):
    return _double_sizes(paddle), [_x(rng, 1, 2, 700), _x(rng, 1, 2, 90)], [(1, 2, None), (1, 2, None)]


@case("trilinear_interp", name="vision_trilinear_edges", **_EDGE_TOL)
def vision_trilinear_edges(paddle, rng):
    fn = _linear_variants(paddle, "trilinear", [47, 333, 71], [1.3, 0.7, 1.7], "NCDHW")
    return fn, [_edges(rng, 1, 1, 30, 400, 50)]


@case("trilinear_interp", name="vision_trilinear_edges_dynamic", **_EDGE_TOL)
def vision_trilinear_edges_dynamic(paddle, rng):
    fn = _linear_variants(paddle, "trilinear", [47, 333, 71], [1.3, 0.7, 1.7], "NCDHW")
    return fn, [_edges(rng, 1, 1, 30, 400, 50)], [(1, 1, None, None, None)]


# ---------------------------------------------------------------------- grid_sample
def _grid_case(paddle, rng, mode, padding_mode, align_corners):
    def fn(x, grid):
        return paddle.nn.functional.grid_sample(
            x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners
        )

    grid = rng.uniform(-1.3, 1.3, (2, 3, 5, 2)).astype("float32")
    return fn, [_x(rng, 2, 3, 4, 6), grid]


@case("grid_sample", name="vision_grid_sample_bilinear_zeros")
def vision_grid_sample_bilinear_zeros(paddle, rng):
    return _grid_case(paddle, rng, "bilinear", "zeros", True)


@case("grid_sample", name="vision_grid_sample_bilinear_border")
def vision_grid_sample_bilinear_border(paddle, rng):
    return _grid_case(paddle, rng, "bilinear", "border", False)


@case("grid_sample", name="vision_grid_sample_bilinear_reflection")
def vision_grid_sample_bilinear_reflection(paddle, rng):
    return _grid_case(paddle, rng, "bilinear", "reflection", True)


@case("grid_sample", name="vision_grid_sample_reflection_noalign")
def vision_grid_sample_reflection_noalign(paddle, rng):
    return _grid_case(paddle, rng, "bilinear", "reflection", False)


@case("grid_sample", name="vision_grid_sample_nearest")
def vision_grid_sample_nearest(paddle, rng):
    return _grid_case(paddle, rng, "nearest", "zeros", False)


@case("grid_sample", name="vision_grid_sample_nearest_border")
def vision_grid_sample_nearest_border(paddle, rng):
    return _grid_case(paddle, rng, "nearest", "border", True)


@case("grid_sample", name="vision_grid_sample_dynamic")
def vision_grid_sample_dynamic(paddle, rng):
    fn, inputs = _grid_case(paddle, rng, "bilinear", "zeros", False)
    return fn, inputs, [(None, 3, None, None), (None, None, None, 2)]


def _grid_case_3d(paddle, rng, mode, padding_mode, align_corners):
    def fn(x, grid):
        return paddle.nn.functional.grid_sample(
            x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners
        )

    grid = rng.uniform(-1.2, 1.2, (1, 2, 3, 4, 3)).astype("float32")
    return fn, [_x(rng, 1, 2, 3, 4, 5), grid]


@case("grid_sample", name="vision_grid_sample_5d")
def vision_grid_sample_5d(paddle, rng):
    return _grid_case_3d(paddle, rng, "bilinear", "zeros", True)


@case("grid_sample", name="vision_grid_sample_5d_border")
def vision_grid_sample_5d_border(paddle, rng):
    return _grid_case_3d(paddle, rng, "bilinear", "border", False)


@case(
    "grid_sample",
    name="vision_grid_sample_5d_nearest",
    formats=("pir",),
    why="Paddle 2.6's 5-D nearest grid_sample kernel disagrees with Paddle 3.3's (and ONNX's) rounding",
)
def vision_grid_sample_5d_nearest(paddle, rng):
    return _grid_case_3d(paddle, rng, "nearest", "zeros", False)
