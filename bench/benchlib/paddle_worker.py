"""Runs inside a Python that has paddle (3.3 for PIR .json, 2.6 for legacy .pdmodel).

Sub-commands (each in a fresh process, driven by ``benchlib.models``):

* ``build NAME OUTDIR --weights W.npz``: build the network, load the shared weights when
  ``W.npz`` exists (else make them: seeded init, BatchNorm calibrated on a random batch, and
  write ``W.npz``), then ``paddle.jit.save`` it as ``OUTDIR/model``. Paddle 3.x writes PIR
  JSON, Paddle 2.6 writes a legacy ProgramDesc.
* ``inputs NAME OUTDIR``: only write ``OUTDIR/inputs.npz`` (models built elsewhere: the PaddleX
  builds).
* ``ref PREFIX INPUTS.npz OUT.npz``: run the saved inference model on the inputs with the
  runner ``pd2onnx verify`` uses (``run_program`` of src/pd2onnx/verification/paddle_worker.py,
  Paddle's static loader and Executor): the reference every ONNX output is compared with.

This file must stay importable by Paddle 2.6 / numpy 1.26 and by Paddle 3.3 / numpy 2.x. It
imports nothing from the bench, nor pd2onnx as a package (Paddle 2.6's venv has none): it
loads verify's runner by its path, a file that imports nothing from pd2onnx either.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import zlib

import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F

SEED = 2024
RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "src", "pd2onnx",
                      "verification", "paddle_worker.py")

# name -> (input specs [(name, shape with -1 batch, dtype)], concrete batch shapes for the run)
MODELS = {
    "small_cnn": ([("x", [-1, 3, 64, 64], "float32")], [[1, 3, 64, 64]]),
    "resnet50": ([("x", [-1, 3, 224, 224], "float32")], [[1, 3, 224, 224]]),
    "mobilenet_v3_large": ([("x", [-1, 3, 224, 224], "float32")], [[1, 3, 224, 224]]),
    "transformer_encoder": ([("ids", [-1, 128], "int64")], [[1, 128]]),
    "unet": ([("x", [-1, 3, 128, 128], "float32")], [[1, 3, 128, 128]]),
    "mlp_1g": ([("x", [-1, 4096], "float32")], [[1, 4096]]),
    "mlp_2g": ([("x", [-1, 4096], "float32")], [[1, 4096]]),
    # PaddleX 3.7 builds (``benchlib.models``: built by tools/paddlex_models.py, not here); the
    # sizes PaddleOCR feeds them: a 640 x 640 page for the detectors, a 48 x 320 line for the
    # recognizers (its rec image shape [3, 48, 320])
    "pp_ocrv6_small_det": ([("x", [-1, 3, -1, -1], "float32")], [[1, 3, 640, 640]]),
    "pp_ocrv6_medium_det": ([("x", [-1, 3, -1, -1], "float32")], [[1, 3, 640, 640]]),
    "pp_ocrv6_small_rec": ([("x", [-1, 3, 48, -1], "float32")], [[1, 3, 48, 320]]),
    "pp_ocrv6_tiny_rec": ([("x", [-1, 3, 48, -1], "float32")], [[1, 3, 48, 320]]),
}
MLP_LAYERS = {"mlp_1g": 16, "mlp_2g": 32}
MLP_WIDTH = 4096
VOCAB = 1000


def conv_bn(cin, cout, k=3, stride=1):
    return [nn.Conv2D(cin, cout, k, stride=stride, padding=k // 2, bias_attr=False),
            nn.BatchNorm2D(cout), nn.ReLU()]


class SmallCNN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            *conv_bn(3, 16), nn.MaxPool2D(2, 2),
            *conv_bn(16, 32), nn.MaxPool2D(2, 2),
            *conv_bn(32, 64), nn.AdaptiveAvgPool2D(1))
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        y = self.features(x)
        y = paddle.flatten(y, 1)
        return F.softmax(self.fc(y), axis=-1)

class Block(nn.Layer):
    def __init__(self, cin, cout):
        super().__init__()
        self.body = nn.Sequential(*conv_bn(cin, cout), *conv_bn(cout, cout))

    def forward(self, x):
        return self.body(x)

class UNet(nn.Layer):
    """A small U-Net: 3 down steps, bilinear and nearest resize on the way up."""

    def __init__(self):
        super().__init__()
        self.e1, self.e2, self.e3 = Block(3, 16), Block(16, 32), Block(32, 64)
        self.mid = Block(64, 128)
        self.d3, self.d2, self.d1 = Block(128 + 64, 64), Block(64 + 32, 32), Block(32 + 16, 16)
        self.pool = nn.MaxPool2D(2, 2)
        self.head = nn.Conv2D(16, 2, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(self.pool(e1))
        e3 = self.e3(self.pool(e2))
        m = self.mid(self.pool(e3))
        up = F.interpolate(m, scale_factor=2.0, mode="bilinear", align_corners=False)
        d3 = self.d3(paddle.concat([up, e3], axis=1))
        up = F.interpolate(d3, scale_factor=2.0, mode="nearest")
        d2 = self.d2(paddle.concat([up, e2], axis=1))
        up = F.interpolate(d2, size=e1.shape[2:], mode="bilinear", align_corners=True)
        d1 = self.d1(paddle.concat([up, e1], axis=1))
        return self.head(d1)

class Encoder(nn.Layer):
    def __init__(self, d=256, heads=8, ff=1024, layers=4, seq=128):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, d)
        self.pos = self.create_parameter([1, seq, d], default_initializer=nn.initializer.Normal(std=0.02))
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, activation="gelu")
        self.enc = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d))
        self.head = nn.Linear(d, 2)

    def forward(self, ids):
        h = self.emb(ids) + self.pos
        h = self.enc(h)
        return self.head(h)

class MLP(nn.Layer):
    def __init__(self, n):
        super().__init__()
        init = nn.initializer.Normal(std=math.sqrt(2.0 / MLP_WIDTH))
        self.layers = nn.LayerList([
            nn.Linear(MLP_WIDTH, MLP_WIDTH, weight_attr=paddle.ParamAttr(initializer=init))
            for _ in range(n)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = F.relu(x)
        return x


def _net(name):
    if name == "small_cnn":
        return SmallCNN()
    if name == "resnet50":
        return paddle.vision.models.resnet50()
    if name == "mobilenet_v3_large":
        return paddle.vision.models.mobilenet_v3_large()
    if name == "transformer_encoder":
        return Encoder()
    if name == "unet":
        return UNet()
    if name in MLP_LAYERS:
        return MLP(MLP_LAYERS[name])
    raise SystemExit(f"unknown model {name}")


def random_inputs(name, seed=SEED + 1):
    rng = np.random.RandomState(seed)
    specs, shapes = MODELS[name]
    feeds = {}
    for (iname, _, dtype), shape in zip(specs, shapes):
        if dtype == "int64":
            feeds[iname] = rng.randint(0, VOCAB, size=shape).astype("int64")
        else:
            feeds[iname] = rng.standard_normal(shape).astype(dtype)
    return feeds


def _calibrate(net, name):
    """Non-trivial BatchNorm: random affine, running stats = stats of a random batch."""
    rng = np.random.RandomState(SEED + 7)
    bns = [m for m in net.sublayers() if isinstance(m, (nn.BatchNorm2D, nn.BatchNorm1D, nn.BatchNorm))]
    if not bns:
        return
    for bn in bns:
        c = bn.weight.shape[0]
        bn.weight.set_value(rng.uniform(0.5, 1.5, size=[c]).astype("float32"))
        bn.bias.set_value(rng.uniform(-0.2, 0.2, size=[c]).astype("float32"))
        bn._momentum = 0.0  # running stat := the batch stat
    specs, shapes = MODELS[name]
    shape = [4] + list(shapes[0][1:])
    x = paddle.to_tensor(rng.standard_normal(shape).astype("float32"))
    net.train()
    with paddle.no_grad():
        net(x)
    net.eval()


def _save_weights(net, path):
    arrays = {k: v.numpy() for k, v in net.state_dict().items()}
    np.savez(path, **arrays)


def _load_weights(net, path):
    data = np.load(path)
    state = net.state_dict()
    missing = [k for k in state if k not in data.files]
    if missing:
        raise SystemExit(f"weights file {path} lacks {missing[:5]}")
    net.set_state_dict({k: data[k] for k in state})


def _tensor_record_header(shape, dtype_code=5):
    """Header of one save_combine record (FP32 = 5): LoD version/levels, TensorDesc proto."""
    import struct

    def varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            if v:
                out.append(b | 0x80)
            else:
                out.append(b)
                return bytes(out)

    desc = b"\x08" + varint(dtype_code) + b"".join(b"\x10" + varint(d) for d in shape)
    return struct.pack("<IQ", 0, 0) + struct.pack("<Ii", 0, len(desc)) + desc


def _build_mlp_legacy_lean(name, outdir):
    """Legacy deep MLP without holding its weights in memory.

    The program is built in static mode and serialized with ``paddle.static.serialize_program``
    (what ``save_inference_model`` writes); the startup program never runs, and the
    ``.pdiparams`` stream is written here one tensor at a time (records sorted by name, as
    Paddle's loaders expect), so peak memory is one layer, not two copies of the model.
    """
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    n = MLP_LAYERS[name]
    params = []
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [-1, MLP_WIDTH], "float32")
        h = x
        for i in range(n):
            w = paddle.static.create_parameter([MLP_WIDTH, MLP_WIDTH], "float32", name=f"linear_{i}.w_0")
            b = paddle.static.create_parameter([MLP_WIDTH], "float32", name=f"linear_{i}.b_0")
            params += [(w.name, [MLP_WIDTH, MLP_WIDTH]), (b.name, [MLP_WIDTH])]
            h = paddle.add(paddle.matmul(h, w), b)
            if i + 1 < n:
                h = paddle.nn.functional.relu(h)
    prefix = os.path.join(outdir, "model")
    with open(prefix + ".pdmodel", "wb") as f:
        f.write(paddle.static.serialize_program([x], [h], program=main))
    std = math.sqrt(2.0 / MLP_WIDTH)
    with open(prefix + ".pdiparams", "wb") as f:
        for pname, shape in sorted(params):
            rng = np.random.RandomState(zlib.crc32(pname.encode()))
            if len(shape) == 1:
                data = (rng.standard_normal(shape) * 0.01).astype("<f4")
            else:
                data = (rng.standard_normal(shape) * std).astype("<f4")
            f.write(_tensor_record_header(shape))
            f.write(data.tobytes())
            del data


def cmd_build(args):
    paddle.seed(SEED)
    np.random.seed(SEED)
    t0 = time.time()
    big = args.name in MLP_LAYERS
    os.makedirs(args.outdir, exist_ok=True)
    specs, _ = MODELS[args.name]
    if big and paddle.__version__.startswith("2."):
        _build_mlp_legacy_lean(args.name, args.outdir)
        return _finish_build(args, specs, t0)
    net = _net(args.name)
    net.eval()
    if not big:
        if args.weights and os.path.exists(args.weights):
            _load_weights(net, args.weights)
        else:
            _calibrate(net, args.name)
            if args.weights:
                _save_weights(net, args.weights)
    input_spec = [paddle.static.InputSpec(shape=s, dtype=d, name=n) for n, s, d in specs]
    prefix = os.path.join(args.outdir, "model")
    try:
        static = paddle.jit.to_static(net, input_spec=input_spec, full_graph=True)
    except TypeError:  # older signature
        static = paddle.jit.to_static(net, input_spec=input_spec)
    paddle.jit.save(static, prefix)
    del net, static
    return _finish_build(args, specs, t0)


def _finish_build(args, specs, t0):
    feeds = random_inputs(args.name)
    np.savez(os.path.join(args.outdir, "inputs.npz"), **feeds)
    info = {"paddle": paddle.__version__, "build_seconds": round(time.time() - t0, 2),
            "inputs": [n for n, _, _ in specs]}
    with open(os.path.join(args.outdir, "build.json"), "w") as f:
        json.dump(info, f)
    print(json.dumps(info))


def _runner():
    """verify's Paddle runner (src/pd2onnx/verification/paddle_worker.py), loaded by path: it
    imports nothing from pd2onnx, so Paddle 2.6's venv runs it as well as this interpreter."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("pd2onnx_paddle_runner", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cmd_ref(args):
    fmt = "legacy" if os.path.exists(args.prefix + ".pdmodel") else "pir"
    model = args.prefix + (".pdmodel" if fmt == "legacy" else ".json")
    with np.load(args.inputs) as data:
        feeds = {n: data[n] for n in data.files}
    ran = _runner().run_program(paddle, fmt, model, args.prefix + ".pdiparams", feeds)
    outs = [ran["values"][f"out{i}"] for i in range(len(ran["values"]))]
    result = {f"out{i}": np.asarray(o) for i, o in enumerate(outs)}
    np.savez(args.out, **result)
    meta = {"feed_names": ran["feed_names"], "n_outputs": len(outs),
            "output_shapes": [list(np.shape(o)) for o in outs], "seconds": round(ran["seconds"], 3),
            "finite": bool(all(np.isfinite(o).all() for o in result.values())),
            "std": [float(np.std(o)) for o in result.values()]}
    print(json.dumps(meta))


def main(argv=None):
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("name")
    b.add_argument("outdir")
    b.add_argument("--weights")
    i = sub.add_parser("inputs")
    i.add_argument("name")
    i.add_argument("outdir")
    r = sub.add_parser("ref")
    r.add_argument("prefix")
    r.add_argument("inputs")
    r.add_argument("out")
    args = p.parse_args(argv)
    if args.cmd == "build":
        cmd_build(args)
    elif args.cmd == "inputs":
        feeds = random_inputs(args.name)
        np.savez(os.path.join(args.outdir, "inputs.npz"), **feeds)
        print(json.dumps({"inputs": {k: list(v.shape) for k, v in feeds.items()}}))
    else:
        cmd_ref(args)


if __name__ == "__main__":
    sys.exit(main())
