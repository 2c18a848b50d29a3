"""Reader benchmark: load a Paddle model with >= 1 GB of weights; wall time and peak RSS.

    python bench/read_large.py [--gb 1.0] [--format pir|legacy] [--workdir bench/work]

Builds (once, cached) an MLP of 4096x4096 float32 layers with paddle.jit.save, then runs
``pd2onnx.load`` in a fresh process and reports its wall time and peak RSS. The goal:
peak RSS < 0.25 x weights + 200 MB, i.e. the weights are memory-mapped, not copied.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

BUILD = r"""
import sys, paddle
n_layers, prefix = int(sys.argv[1]), sys.argv[2]
layers = [paddle.nn.Linear(4096, 4096) for _ in range(n_layers)]
net = paddle.nn.Sequential(*layers)
net.eval()
paddle.jit.save(net, prefix, input_spec=[paddle.static.InputSpec([None, 4096], "float32", "x")])
"""

LOAD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import pd2onnx
program = pd2onnx.load(sys.argv[1])
t1 = time.perf_counter()
print(json.dumps({"seconds": t1 - t0, "params": len(program.params), "bytes": program.param_bytes,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--format", choices=("pir", "legacy"), default="pir")
    ap.add_argument("--workdir", default=os.path.join(HERE, "work"))
    args = ap.parse_args()
    n_layers = max(1, round(args.gb * 1024**3 / (4096 * 4097 * 4)))
    prefix = os.path.join(args.workdir, f"mlp{n_layers}_{args.format}", "model")
    model_file = prefix + (".json" if args.format == "pir" else ".pdmodel")
    if not os.path.exists(model_file):
        os.makedirs(os.path.dirname(prefix), exist_ok=True)
        python = sys.executable if args.format == "pir" else os.path.expanduser("~/.cache/pd2onnx/paddle26/bin/python")
        t = time.perf_counter()
        subprocess.run([python, "-c", BUILD, str(n_layers), prefix], check=True)
        print(f"built {model_file} in {time.perf_counter() - t:.1f} s")
    # Drop the page cache's influence on RSS accounting: RSS counts only pages this process touches.
    out = subprocess.run([sys.executable, "-c", LOAD, model_file], check=True, capture_output=True, text=True)
    res = json.loads(out.stdout)
    weights_mb = res["bytes"] / 1024**2
    limit = 0.25 * weights_mb + 200
    verdict = "met" if res["peak_rss_mb"] < limit else "MISSED"
    print(f"format {args.format}: {res['params']} tensors, {weights_mb:.0f} MB of weights; "
          f"load {res['seconds']:.2f} s, peak RSS {res['peak_rss_mb']:.0f} MB "
          f"(goal < {limit:.0f} MB: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
