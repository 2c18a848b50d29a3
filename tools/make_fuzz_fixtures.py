"""Regenerate tests/fixtures/fuzz/: small programs Paddle saved, the seeds that tools/fuzz.py
mutates beside the smoke folders (tests/fixtures/smoke/). Written through the test harness:

    python tools/make_fuzz_fixtures.py     (PD2ONNX_TEST_CACHE=DIR: take the builds from that cache)

One folder per case and format, ``<case>-<pir|legacy>/``, holding exactly the files the build
saved for pd2onnx (program and weights, ``files.json`` for cases that saved their own layout):
control flow (an ``if`` inside a ``while``; a tensor array stacked in a loop), detection
(``multiclass_nms3``, ``yolo_box``) and a quantized program (a per-channel dequantized conv
weight). The fuzzer needs no Paddle: it only reads these files.
"""

from __future__ import annotations

import os
import shutil
import sys

from fixture_build import ROOT, harness_builds, print_sizes

OUT = os.path.join(ROOT, "tests", "fixtures", "fuzz")
# (case module under tests/ops, case name)
WANTED = (("cases_control_flow", "cf_if_in_while"), ("cases_control_flow", "cf_while_array_stack"),
          ("cases_detection", "det_nms3_basic"), ("cases_detection", "det_yolo_box"),
          ("cases_quant", "dequantize_conv_weight_axis_0"))
SKIP = {"io.npz", "view.json", "error.txt", "meta.json", "status.json"}


def main() -> None:
    with harness_builds("pd2onnx-fuzz-build-"):
        _build()
    print_sizes(OUT)


def _build() -> None:
    from harness import builder
    from harness.cases import REGISTRY, load_case_files

    os.environ["PD2ONNX_CASE_FILES"] = ",".join(sorted({m for m, _ in WANTED}))
    load_case_files(os.path.join(ROOT, "tests", "ops"), "opcases")
    cases = [REGISTRY[name] for _, name in WANTED]
    builder.build_all(cases)
    shutil.rmtree(OUT, ignore_errors=True)
    for case in cases:
        for fmt in case.formats:
            built = builder.get(case, fmt)
            if built.error:
                print(f"skipped {case.name} ({fmt}): Paddle could not build it", file=sys.stderr)
                continue
            target = os.path.join(OUT, f"{case.name}-{fmt}")
            os.makedirs(target)
            for name in sorted(os.listdir(built.dir)):
                src = os.path.join(built.dir, name)
                if name in SKIP or not os.path.isfile(src):
                    continue
                shutil.copy(src, os.path.join(target, name))


if __name__ == "__main__":
    main()
