"""Models for ``pd2onnx verify`` (tests/verify): built in both formats by the test harness.

``verify_amplifier`` is a correct conversion that a full-model comparison rejects: a deep
random conv stack in the chaotic regime (tanh, gain 2: a perturbation grows at every layer),
then sharp features (``sin`` of a large multiple) sampled by ``grid_sample`` at positions
the stack computes, ``exp`` box decoding and a top-k over scores closer together than the
noise. ONNX Runtime and Paddle sum the convolutions in different orders; the ~1e-7 that
makes is amplified until boxes and the top-k indices differ. Each op, fed Paddle's exact
inputs, gives Paddle's outputs.

``verify_small`` is a short network of common ops (conv, batch norm, activations, pooling,
a linear layer, softmax, top-k) for the tests that break one op on purpose.
"""

from harness.cases import case

AMPLIFIER_DEPTH = 16
AMPLIFIER_CHANNELS = 8


def _amplifier(paddle):
    nn = paddle.nn

    class Amplifier(nn.Layer):
        def __init__(self):
            super().__init__()
            ch = AMPLIFIER_CHANNELS
            self.stem = nn.Conv2D(3, ch, 3, padding=1)
            self.stack = nn.LayerList([nn.Conv2D(ch, ch, 3, padding=1) for _ in range(AMPLIFIER_DEPTH)])
            self.to_grid = nn.Conv2D(ch, 2, 1)
            self.to_feat = nn.Conv2D(ch, 3, 1)

        def forward(self, x):
            h = paddle.tanh(self.stem(x))
            for conv in self.stack:
                h = paddle.tanh(conv(h))
            grid = paddle.tanh(self.to_grid(h)).transpose([0, 2, 3, 1])
            sharp = paddle.sin(self.to_feat(h) * 40.0)
            s = paddle.nn.functional.grid_sample(sharp, grid, mode="bilinear", padding_mode="border",
                                                 align_corners=False)
            boxes = paddle.exp(s[:, :2] * 3.0)
            scores = s[:, 2].flatten(1)
            values, indices = paddle.topk(-paddle.abs(scores), k=32)  # near zero: many near-ties
            return boxes, values, indices

    return Amplifier()


def _chaotic(paddle, layer, rng, gain=2.0):
    """Random weights of standard deviation gain/sqrt(fan_in): tanh layers in the chaotic regime."""
    for sub in layer.sublayers():
        if isinstance(sub, paddle.nn.Conv2D):
            w = sub.weight
            fan_in = int(w.shape[1] * w.shape[2] * w.shape[3])
            sub.weight.set_value((rng.standard_normal(w.shape) * gain / fan_in**0.5).astype("float32"))
            sub.bias.set_value((0.1 * rng.standard_normal(sub.bias.shape)).astype("float32"))
    return layer


@case("model", name="verify_amplifier", opsets=(17,))
def amplifier(paddle, rng):
    x = rng.standard_normal((1, 3, 32, 32)).astype("float32")
    return _chaotic(paddle, _amplifier(paddle), rng), [x]


@case("model", name="verify_small", opsets=(17,))
def small(paddle, rng):
    nn = paddle.nn

    class Small(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2D(8)
            self.fc = nn.Linear(8, 6)

        def forward(self, x):  # (Paddle 2.6's dy2static sees module globals and paddle only)
            h = paddle.nn.functional.relu(self.bn(self.conv(x)))
            h = paddle.tanh(paddle.nn.functional.max_pool2d(h, 2))
            h = h.mean(axis=[2, 3])
            y = paddle.nn.functional.softmax(self.fc(h), axis=-1)
            v, i = paddle.topk(y, k=3)
            return y, v, i

    layer = Small()
    layer.eval()
    return layer, [rng.standard_normal((2, 3, 8, 8)).astype("float32")]


def _static(paddle, layer):
    return paddle.jit.to_static(layer, full_graph=True)


@case("while", name="verify_while", opsets=(17,))
def while_loop(paddle, rng):
    """A loop whose trip count is an input, between ops of the main block: the loop's own ops
    are not replayed (Paddle does not expose their values), the loop is, as a whole."""
    import numpy as np

    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            x = paddle.tanh(x) * 2.0
            i = paddle.zeros([1], "int64")
            s = x
            while i < n:
                s = s * 0.5 + paddle.cast(i, "float32")
                i = i + 1
            return paddle.exp(s), i

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x, np.array([3], "int64")], [(None, 3), (1,)]


@case("if", "conditional_block", "select_input", name="verify_if", opsets=(17,))
def if_else(paddle, rng):
    """Two inputs, each through a branch on its own sign (one takes each branch)."""

    class Net(paddle.nn.Layer):
        def branchy(self, x):
            if paddle.mean(x) > 0:
                y = x * 2.0 + 1.0
            else:
                y = paddle.exp(x) - 3.0
            return y

        def forward(self, a, b):
            return paddle.nn.functional.relu(self.branchy(a)), self.branchy(b)

    a = (rng.random((2, 3)) + 0.5).astype("float32")
    b = -(rng.random((2, 3)) + 0.5).astype("float32")
    return _static(paddle, Net()), [a, b], [(None, 3), (None, 3)]


@case("conv2d", name="verify_float64", opsets=(17,))
def float64(paddle, rng):
    """float64 convolution: ONNX Runtime has no double Conv kernel, so the converter computes it
    in float32 between casts (legalize); the value Paddle's output maps to is the cast back."""
    layer = paddle.nn.Conv2D(3, 4, 3)
    layer.to(dtype="float64")
    layer.eval()
    return layer, [rng.standard_normal((1, 3, 6, 6)).astype("float64")]


# ---------------------------------------------------------------- the float64 referee (issue 23)

SE_SHAPE = (1, 3, 480, 640)  # a 480 x 640 image: the SE block's mean runs over 307,200 values


def _se_block(paddle, pool: str):
    nn = paddle.nn

    class SEBlock(nn.Layer):
        """A squeeze-and-excitation block (PP-OCR's PPLCNet): a global average over H x W by
        ``mean`` or by an adaptive average ``pool2d`` to 1 x 1, then a gate on the channels."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(3, 4, 3, padding=1)
            self.squeeze = nn.Conv2D(4, 4, 1)
            self.by_mean = pool == "mean"

        def forward(self, x):  # (Paddle 2.6's dy2static sees module globals and paddle only)
            h = paddle.nn.functional.relu(self.conv(x))
            if self.by_mean:
                s = paddle.mean(h, axis=[2, 3], keepdim=True)
            else:
                s = paddle.nn.functional.adaptive_avg_pool2d(h, 1)
            return h * paddle.nn.functional.hardsigmoid(self.squeeze(s))

    layer = SEBlock()
    layer.eval()
    return layer


def _se_input(rng):
    # post-ReLU values of one sign and a wide spread: float32 sums of them round off steadily
    return (rng.random(SE_SHAPE) * 4.0 + 0.5).astype("float32")


@case("mean", "reduce_mean", name="verify_se_mean", opsets=(17,))
def se_mean(paddle, rng):
    return _se_block(paddle, "mean"), [_se_input(rng)]


@case("pool2d", name="verify_se_pool", opsets=(17,))
def se_pool(paddle, rng):
    return _se_block(paddle, "pool"), [_se_input(rng)]


@case("stack", "shape", "slice", name="verify_stack_shapes", opsets=(17,), formats=("pir",),
      why="the 0-D shape values stacked are what PIR hands over (RT-DETR's deformable attention)")
def stack_shapes(paddle, rng):
    """Shapes built from ``paddle.shape`` scalars (0-D in PIR) and ``stack``ed, as RT-DETR's
    deformable attention does, on an input whose dims are dynamic (so nothing folds)."""

    class Net(paddle.nn.Layer):
        def forward(self, x):
            shape = paddle.shape(x)
            b, n, c = shape[0], shape[1], shape[2]
            target = paddle.stack([b, n * c // 4, paddle.full([], 4, "int64").astype(b.dtype)])
            y = paddle.reshape(x * 2.0, target)
            two = paddle.stack([b * n, c])
            return paddle.reshape(y, two) + 1.0

    x = rng.standard_normal((2, 5, 8)).astype("float32")
    return _static(paddle, Net()), [x], [(None, None, 8)]


TOPK_CANDIDATES, TOPK_KEEP, TOPK_TERMS = 1000, 300, 1024


@case("top_k_v2", "topk", name="verify_topk_head", opsets=(17,))
def topk_head(paddle, rng):
    """An RT-DETR-like head with no NMS: each query's score is a base level (40 queries per
    level) plus the mean of a permutation of one vector of 1,024 values, which is one number
    mathematically but rounds differently per query and per runtime: near-tied scores whose
    order (and which queries of the last level the top 300 keeps) differ between the runtimes.
    Output: [300, 6] rows of (label, score, box)."""
    import numpy as np

    class Head(paddle.nn.Layer):
        def forward(self, feats, base, boxes):
            logits = base + paddle.mean(feats, axis=1)
            scores, idx = paddle.topk(logits, k=TOPK_KEEP)
            labels = paddle.cast(idx % 7, "float32")
            picked = paddle.gather(boxes, idx)
            return paddle.concat([labels.unsqueeze(1), scores.unsqueeze(1), picked], axis=1)

    vec = (rng.standard_normal(TOPK_TERMS) * 10.0).astype("float32")
    feats = np.stack([rng.permutation(vec) for _ in range(TOPK_CANDIDATES)]).astype("float32")
    base = (np.arange(TOPK_CANDIDATES) // 40 * 0.05).astype("float32")[rng.permutation(TOPK_CANDIDATES)]
    boxes = (rng.random((TOPK_CANDIDATES, 4)) * 640.0).astype("float32")
    return _static(paddle, Head()), [feats, base, boxes], [(TOPK_CANDIDATES, TOPK_TERMS), (TOPK_CANDIDATES,),
                                                            (TOPK_CANDIDATES, 4)]


# ------------------------------------------------- NMS candidates and batched detections (issue 23)

NMS_IMAGES, NMS_CLASSES, NMS_CANDIDATES, NMS_TIER, NMS_PICK = 2, 3, 40, 8, 24


def _grid_boxes(rng, images, n):
    """[images, n, 4] normalized boxes (x1, y1, x2, y2), one per cell of a grid, in random
    order: no two overlap, so NMS suppresses none (which of two tied overlapping boxes it
    keeps would be float noise of its own)."""
    import numpy as np

    cols = int(np.ceil(np.sqrt(n)))
    cells = np.array([(k % cols, k // cols) for k in range(n)], "float32") / cols
    size = 0.8 / cols
    boxes = np.concatenate([cells, cells + size], axis=1)
    return np.stack([boxes[rng.permutation(n)] for _ in range(images)]).astype("float32")


def _nms3(paddle, boxes, scores, keep_top_k):
    """multiclass_nms3 (batched boxes [B, M, 4], scores [B, C, M]): its rows and rows per image."""
    args = dict(score_threshold=0.05, nms_top_k=-1, keep_top_k=keep_top_k, nms_threshold=0.5, normalized=True,
                nms_eta=1.0, background_label=-1)
    if int(paddle.__version__.split(".")[0]) >= 3:
        out, _, num = paddle._C_ops.multiclass_nms3(boxes, scores, None, *args.values())
        return out, num
    helper = paddle.base.layer_helper.LayerHelper("multiclass_nms3")
    out = helper.create_variable_for_type_inference("float32")
    index = helper.create_variable_for_type_inference("int32")
    num = helper.create_variable_for_type_inference("int32")
    helper.append_op(type="multiclass_nms3", inputs={"BBoxes": boxes, "Scores": scores},
                     outputs={"Out": out, "Index": index, "NmsRoisNum": num}, attrs=args)
    return out, num


@case("while", "top_k_v2", "topk", "array_to_tensor", "multiclass_nms3", name="verify_nms_tied_candidates",
      opsets=(17,))
def nms_tied_candidates(paddle, rng):
    """RetinaNet's post-processing in small: a loop over the images keeps each image's top 24
    of 40 candidates by their best class score (gathering their boxes and scores), appends
    them to two lists, stacks the lists after the loop and runs a batched NMS on them. The
    best scores come in tiers of 8 equal values (the top 24 are three whole tiers): Paddle's
    top-k orders equal values otherwise than ONNX Runtime's (lowest index first), so the
    stacked candidates differ in order though not as a set. The loop's own ops are not
    replayed (Paddle does not expose their values), so the stacks' replay runs the whole
    loop and sees the order."""
    import numpy as np

    class Net(paddle.nn.Layer):
        def forward(self, boxes, scores):
            picked_boxes, picked_scores = [], []
            i = paddle.zeros([1], "int64")
            n = paddle.shape(boxes)[0]
            while i < n:
                b = paddle.squeeze(paddle.gather(boxes, i), axis=[0])
                s = paddle.squeeze(paddle.gather(scores, i), axis=[0])
                _, idx = paddle.topk(paddle.max(s, axis=0), k=NMS_PICK)
                picked_boxes.append(paddle.gather(b, idx))
                picked_scores.append(paddle.gather(s, idx, axis=1))
                i = i + 1
            return _nms3(paddle, paddle.stack(picked_boxes), paddle.stack(picked_scores), -1)

    boxes = _grid_boxes(rng, NMS_IMAGES, NMS_CANDIDATES)
    tiers = 0.9 - 0.1 * (np.arange(NMS_CANDIDATES) // NMS_TIER)
    scores = np.empty((NMS_IMAGES, NMS_CLASSES, NMS_CANDIDATES), "float32")
    for b in range(NMS_IMAGES):
        best = tiers[rng.permutation(NMS_CANDIDATES)]
        scores[b] = rng.uniform(0, 1, (NMS_CLASSES, NMS_CANDIDATES)) * (best - 0.1) + 0.06
        scores[b, rng.integers(0, NMS_CLASSES, NMS_CANDIDATES), np.arange(NMS_CANDIDATES)] = best
    return _static(paddle, Net()), [boxes, scores], [(None, NMS_CANDIDATES, 4),
                                                     (None, NMS_CLASSES, NMS_CANDIDATES)]


@case("multiclass_nms3", name="verify_nms_batch_rows", opsets=(17,))
def nms_batch_rows(paddle, rng):
    """PaddleDetection's outputs in small: a batched NMS over 2 images, its rows [label,
    score, box] scaled to the image size as the detectors' post-processing does (so the
    output is not the NMS op's own), and each image's row count (bbox_num). Each score is a
    quarter plus the mean of a permutation of one vector (as ``verify_topk_head``): near ties
    that round differently per candidate and per runtime, so the runtimes order an image's
    rows differently, and keep_top_k cuts among them."""
    import numpy as np

    class Net(paddle.nn.Layer):
        def forward(self, boxes, base, feats):
            out, num = _nms3(paddle, boxes, base + paddle.mean(feats, axis=-1), 40)
            scale = paddle.to_tensor(np.array([1.0, 1.0, 640.0, 480.0, 640.0, 480.0], "float32"))
            return out * scale, num

    boxes = _grid_boxes(rng, NMS_IMAGES, 30)
    base = (np.round(rng.uniform(0, 1, (NMS_IMAGES, NMS_CLASSES, 30)) * 4) / 4).astype("float32")
    vec = rng.standard_normal(TOPK_TERMS) * 10.0
    vec = (vec - vec.mean()).astype("float32")  # a mean of ~0 whose float32 rounding varies
    feats = np.stack([rng.permutation(vec) for _ in range(base.size)]).reshape(*base.shape, TOPK_TERMS)
    return _static(paddle, Net()), [boxes, base, feats.astype("float32")], [
        (None, 30, 4), (None, NMS_CLASSES, 30), (None, NMS_CLASSES, 30, TOPK_TERMS)]
