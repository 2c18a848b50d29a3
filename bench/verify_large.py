"""Benchmark: ``pd2onnx verify --locate --replay`` on a model of ~1,000 ops, and what
provenance costs a conversion.

Saves ``paddle.vision.models.resnet152`` (random weights, eval mode; ~1,000 ops when saved)
with Paddle 3.3 (PIR) into a temp dir, then:

- converts it with and without provenance (time, file size);
- runs verify with --locate --replay and reports each stage's time (Paddle's run returning
  every intermediate value, ONNX Runtime's, the batched replay) and the op counts.

    python bench/verify_large.py [--model resnet152] [--size 224] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time


def save(model_name: str, size: int, out_dir: str) -> str:
    import paddle

    layer = getattr(paddle.vision.models, model_name)()
    layer.eval()
    prefix = os.path.join(out_dir, "model")
    paddle.jit.save(layer, prefix, input_spec=[paddle.static.InputSpec([1, 3, size, size], "float32", "x")])
    return prefix + ".json"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet152")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--keep", help="work in this directory and keep it")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="pd2onnx-verify-bench-")
    os.makedirs(work, exist_ok=True)
    try:
        model = os.path.join(work, "model.json")
        if not os.path.exists(model):
            model = save(args.model, args.size, work)
        import pd2onnx
        from pd2onnx.onnx_io import save_model
        from pd2onnx.paddle import load

        program = load(model)
        print(f"{args.model}: {sum(1 for _ in program.walk_ops())} Paddle ops, "
              f"{program.param_bytes / 1e6:.0f} MB of weights")
        for strip in (True, False):
            start = time.perf_counter()
            m = pd2onnx.to_onnx(model, strip_provenance=strip)
            seconds = time.perf_counter() - start
            path = os.path.join(work, f"model{'-stripped' if strip else ''}.onnx")
            save_model(m, path)
            print(f"convert {'without' if strip else 'with'} provenance: {seconds:.2f} s, "
                  f"{os.path.getsize(path):,} bytes")
        start = time.perf_counter()
        report = pd2onnx.verify(model, os.path.join(work, "model.onnx"), locate=True, replay=True)
        total = time.perf_counter() - start
        replayed = sum(1 for op in report.ops if op.replay_ok is not None)
        together = sum(1 for op in report.ops if op.replayed_with is not None)
        print(f"verify --locate --replay: {total:.1f} s in all; stages: "
              + ", ".join(f"{k} {v:.1f} s" for k, v in report.seconds.items()))
        print(f"  {len(report.ops)} ops: {replayed} replayed on their own, {together} with the op they were "
              f"fused into, {len(report.not_replayed)} not replayed; verdict {report.verdict}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
