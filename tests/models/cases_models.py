"""Whole networks: every architecture in paddle.vision.models, a TransformerEncoder with and
without an attention mask, and a small U-Net with interpolation and dynamic height/width.

Weights are random but calibrated (``calibrate``): every Conv/Linear output is rescaled to
unit spread on a calibration batch and every BatchNorm gets non-trivial running statistics,
so activations neither vanish nor explode and a wrong conversion cannot hide.
"""

from harness.cases import case

# 1e-4, relative to the output's scale: these random deep networks amplify fp32 rounding
# about 100-400x (measured: a 1e-7 relative input change moves Paddle's own inception_v3
# output by 7e-3 at a scale of 183), so the last digits depend on summation order alone.
TOL = {"rtol": 1e-4, "atol": 1e-4, "scaled_atol": True}


def calibrate(paddle, model, x, rng, passes=4):
    """Rescale weights layer by layer on the batch ``x`` (forward passes with hooks, repeated
    until the statistics agree with what the next pass sees)."""
    nn = paddle.nn
    weighted = (nn.Conv2D, nn.Conv2DTranspose, nn.Linear)
    norms = (nn.BatchNorm2D, nn.BatchNorm1D, nn.BatchNorm)
    hooks = []
    seen = {}

    def post(layer, inputs, output):
        std = float(output.std())
        if std > 0 and abs(std - 1.0) > 0.05:
            with paddle.no_grad():
                layer.weight.set_value(layer.weight / std)
                if getattr(layer, "bias", None) is not None:
                    layer.bias.set_value(layer.bias / std)
            return output / std
        return output

    def pre(layer, inputs):
        if layer in seen:  # statistics from the first pass; later passes only refresh them
            gamma, beta, noise = seen[layer]
        else:
            gamma, beta, noise = None, None, None
        x0 = inputs[0]
        axes = [0] + list(range(2, len(x0.shape)))
        mean = x0.mean(axis=axes).numpy()
        var = x0.var(axis=axes).numpy()
        n = mean.shape[0]
        if gamma is None:
            gamma, beta = rng.uniform(0.5, 1.5, n), 0.1 * rng.standard_normal(n)
            noise = (0.1 * rng.standard_normal(n), rng.uniform(0.5, 2.0, n))
            seen[layer] = (gamma, beta, noise)
        layer._mean.set_value((mean + noise[0] * (var**0.5 + 1e-3)).astype("float32"))
        layer._variance.set_value((var * noise[1] + 1e-3).astype("float32"))
        with paddle.no_grad():
            layer.weight.set_value(gamma.astype("float32"))
            layer.bias.set_value(beta.astype("float32"))

    for layer in model.sublayers():
        if isinstance(layer, weighted):
            hooks.append(layer.register_forward_post_hook(post))
        elif isinstance(layer, norms):
            hooks.append(layer.register_forward_pre_hook(pre))
    model.eval()
    with paddle.no_grad():
        for _ in range(passes):
            model(paddle.to_tensor(x))
    for h in hooks:
        h.remove()
    return model


def _vision(name, channels, size, kwargs):
    def build(paddle, rng):
        model = getattr(paddle.vision.models, name)(**kwargs)
        calibrate(paddle, model, rng.standard_normal((4, channels, size, size)).astype("float32"), rng)
        x = rng.standard_normal((2, channels, size, size)).astype("float32")
        return model, [x], [(None, channels, size, size)]

    return build


# (constructor in paddle.vision.models, input channels, input size, constructor arguments)
VISION = [
    ("LeNet", 1, 28, {"num_classes": 10}),
    ("alexnet", 3, 224, {"num_classes": 10}),
    ("vgg11", 3, 64, {"num_classes": 10}),
    ("resnet18", 3, 64, {"num_classes": 10}),
    ("resnet50", 3, 64, {"num_classes": 10}),
    ("resnext50_32x4d", 3, 64, {"num_classes": 10}),
    ("wide_resnet50_2", 3, 64, {"num_classes": 10}),
    ("densenet121", 3, 64, {"num_classes": 10}),
    ("googlenet", 3, 224, {"num_classes": 10}),
    ("inception_v3", 3, 96, {"num_classes": 10}),
    ("mobilenet_v1", 3, 64, {"num_classes": 10, "scale": 0.5}),
    ("mobilenet_v2", 3, 64, {"num_classes": 10, "scale": 0.5}),
    ("mobilenet_v3_small", 3, 64, {"num_classes": 10}),
    ("mobilenet_v3_large", 3, 64, {"num_classes": 10}),
    ("shufflenet_v2_x0_25", 3, 64, {"num_classes": 10}),
    ("shufflenet_v2_swish", 3, 64, {"num_classes": 10}),
    ("squeezenet1_0", 3, 64, {"num_classes": 10}),
    ("squeezenet1_1", 3, 64, {"num_classes": 10}),
]

for _name, _channels, _size, _kwargs in VISION:
    case("model", name=f"model_{_name.lower()}", opsets=(17,), **TOL)(_vision(_name, _channels, _size, _kwargs))


def _encoder(paddle, d_model=32, layers=2):
    layer = paddle.nn.TransformerEncoderLayer(d_model=d_model, nhead=4, dim_feedforward=64, dropout=0.1,
                                              activation="gelu", normalize_before=False)
    return paddle.nn.TransformerEncoder(layer, num_layers=layers, norm=paddle.nn.LayerNorm(d_model))


@case("model", name="model_transformer_encoder", opsets=(17,), **TOL)
def transformer_encoder(paddle, rng):
    model = _encoder(paddle)
    model.eval()
    return model, [rng.standard_normal((2, 7, 32)).astype("float32")], [(None, None, 32)]


@case("model", name="model_transformer_encoder_mask", opsets=(17,), **TOL)
def transformer_encoder_mask(paddle, rng):
    class Masked(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.encoder = _encoder(paddle)

        def forward(self, x, lengths):
            steps = paddle.arange(paddle.shape(x)[1]).unsqueeze(0)
            keep = steps < lengths.unsqueeze(1)  # [B, T]
            mask = paddle.where(keep, paddle.zeros_like(keep, "float32"), paddle.full_like(keep, -1e9, "float32"))
            return self.encoder(x, mask.unsqueeze(1).unsqueeze(1))

    model = Masked()
    model.eval()
    x = rng.standard_normal((2, 7, 32)).astype("float32")
    lengths = paddle.to_tensor([7, 4]).numpy().astype("int64")
    return model, [x, lengths], [(None, None, 32), (None,)]


@case("model", name="model_unet", opsets=(17,), **TOL)
def unet(paddle, rng):
    nn = paddle.nn

    def block(cin, cout):
        return nn.Sequential(nn.Conv2D(cin, cout, 3, padding=1), nn.BatchNorm2D(cout), nn.ReLU(),
                             nn.Conv2D(cout, cout, 3, padding=1), nn.BatchNorm2D(cout), nn.ReLU())

    class UNet(nn.Layer):
        def __init__(self):
            super().__init__()
            self.enc1, self.enc2, self.enc3 = block(3, 8), block(8, 16), block(16, 32)
            self.dec2, self.dec1 = block(32 + 16, 16), block(16 + 8, 8)
            self.head = nn.Conv2D(8, 2, 1)

        def forward(self, x):
            e1 = self.enc1(x)
            e2 = self.enc2(paddle.nn.functional.max_pool2d(e1, 2))
            e3 = self.enc3(paddle.nn.functional.max_pool2d(e2, 2))
            d2 = paddle.nn.functional.interpolate(e3, size=paddle.shape(e2)[2:], mode="bilinear", align_corners=False)
            d2 = self.dec2(paddle.concat([d2, e2], axis=1))
            d1 = paddle.nn.functional.interpolate(d2, scale_factor=2, mode="nearest")
            d1 = self.dec1(paddle.concat([d1, e1], axis=1))
            return self.head(d1)

    model = UNet()
    calibrate(paddle, model, rng.standard_normal((2, 3, 32, 48)).astype("float32"), rng)
    return model, [rng.standard_normal((1, 3, 32, 40)).astype("float32")], [(None, 3, None, None)]


@case("model", name="model_bn_large_variance", opsets=(17,), **TOL)
def bn_large_variance(paddle, rng):
    """BatchNorm running variances above the fp16 range (65504): fp16 conversion must not clamp."""
    nn = paddle.nn
    model = nn.Sequential(nn.Conv2D(3, 8, 1), nn.BatchNorm2D(8), nn.ReLU(), nn.Conv2D(8, 4, 3, padding=1))
    x = (300.0 * rng.standard_normal((2, 3, 8, 8))).astype("float32")
    with paddle.no_grad():
        conv, bn = model[0], model[1]
        conv.weight.set_value((rng.standard_normal((8, 3, 1, 1)) * 0.8).astype("float32"))
        y = conv(paddle.to_tensor(x)).numpy()
        var = y.var(axis=(0, 2, 3))
        bn._mean.set_value(y.mean(axis=(0, 2, 3)).astype("float32"))
        bn._variance.set_value(var.astype("float32"))
    assert float(var.max()) > 65504.0
    return model, [x], [(None, 3, 8, 8)]
