"""A PP-OCR-like text detector for conversion timing (LCNet-style backbone with hardswish,
depthwise convs and SE blocks, an FPN-like neck with nearest upsampling, a DB head with
transposed convs), random weights, dynamic H and W, saved as PIR JSON:

    python bench/ppocr_like_det.py OUT_DIR     # writes OUT_DIR/inference.json, .pdiparams

Not in the bench model set (bench/run.py): docs/benchmarks.md, "Conversion speed".
"""

from __future__ import annotations

import sys

import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F


class ConvBN(nn.Layer):
    def __init__(self, cin, cout, k, stride=1, groups=1, act="hardswish"):
        super().__init__()
        self.c = nn.Conv2D(cin, cout, k, stride, k // 2, groups=groups, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)
        self.act = act

    def forward(self, x):
        x = self.bn(self.c(x))
        if self.act == "hardswish":
            return F.hardswish(x)
        return F.relu(x) if self.act == "relu" else x


class SE(nn.Layer):
    def __init__(self, c):
        super().__init__()
        self.a = nn.Conv2D(c, c // 4, 1)
        self.b = nn.Conv2D(c // 4, c, 1)

    def forward(self, x):
        y = F.adaptive_avg_pool2d(x, 1)
        return x * F.hardsigmoid(self.b(F.relu(self.a(y))))


class DW(nn.Layer):
    def __init__(self, cin, cout, stride, se=False):
        super().__init__()
        self.dw = ConvBN(cin, cin, 3, stride, cin)
        self.se = SE(cin) if se else None
        self.pw = ConvBN(cin, cout, 1)

    def forward(self, x):
        x = self.dw(x)
        if self.se:
            x = self.se(x)
        return self.pw(x)


class Det(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = ConvBN(3, 16, 3, 2)
        cfg = [[(16, 32, 1)], [(32, 64, 2), (64, 64, 1)], [(64, 128, 2), (128, 128, 1)],
               [(128, 256, 2)] + [(256, 256, 1)] * 5, [(256, 512, 2, True), (512, 512, 1, True)]]
        self.stages = nn.LayerList([nn.Sequential(*[DW(*c) for c in stage]) for stage in cfg])
        chs, d = [64, 128, 256, 512], 96
        self.ins = nn.LayerList([nn.Sequential(nn.Conv2D(c, d, 1, bias_attr=False)) for c in chs])
        self.inse = nn.LayerList([SE(d) for _ in chs])
        self.outs = nn.LayerList([nn.Conv2D(d, d // 4, 3, padding=1, bias_attr=False) for _ in chs])
        self.h1 = ConvBN(d, d // 4, 3, act="relu")
        self.t1 = nn.Conv2DTranspose(d // 4, d // 4, 2, 2)
        self.bn1 = nn.BatchNorm2D(d // 4)
        self.t2 = nn.Conv2DTranspose(d // 4, 1, 2, 2)

    def forward(self, x):
        x = self.stem(x)
        feats = []
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i >= 1:
                feats.append(x)
        ins = [se(c(f)) + c(f) for c, se, f in zip(self.ins, self.inse, feats)]
        for i in range(3, 0, -1):
            ins[i - 1] = ins[i - 1] + F.upsample(ins[i], scale_factor=2, mode="nearest")
        outs = [o(v) for o, v in zip(self.outs, ins)]
        outs = [F.upsample(v, scale_factor=2**i, mode="nearest") for i, v in enumerate(outs)]
        y = paddle.concat(outs[::-1], axis=1)
        y = F.relu(self.bn1(self.t1(self.h1(y))))
        return F.sigmoid(self.t2(y))


def main() -> None:
    paddle.seed(0)
    model = Det()
    model.eval()
    for p in model.parameters():
        if len(p.shape) >= 2:
            p.set_value(p.numpy() * 0.5)
    x = paddle.static.InputSpec([None, 3, None, None], "float32", "x")
    paddle.jit.save(model, sys.argv[1] + "/inference", input_spec=[x])
    print(f"{sum(int(np.prod(p.shape)) for p in model.parameters()) * 4 / 1e6:.1f} MB of weights")


if __name__ == "__main__":
    main()
