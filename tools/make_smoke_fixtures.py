"""Regenerate tests/fixtures/smoke/: small model folders as Paddle's toolkits leave them, with
programs written by Paddle through the test harness, used by the clean-install smoke stage
(tools/smoke.sh), which has neither Paddle nor the tests.

    python tools/make_smoke_fixtures.py     (PD2ONNX_TEST_CACHE=DIR: take the builds from that cache)

Writes one folder per kind (tests/reader/folder_kinds.py: the toolkit's configs plus notes
in JSON beside the model), each with ``io.npz`` (inputs ``in0`` and Paddle's outputs ``out0``):
  paddlex/    inference.json + inference.pdiparams + inference.yml          (Paddle 3.3, PIR)
  paddledet/  model.pdmodel + model.pdiparams + infer_cfg.yml               (Paddle 2.6, ProgramDesc)
  paddleseg/  model.json + model.pdiparams + deploy.yaml                    (Paddle 3.3, PIR)
  paddlenlp/  inference.pdmodel + inference.pdiparams + config.json, tokenizer files, vocab.txt (2.6)
  paddle1x/   __model__ + one file per parameter + meta.json                (Paddle 2.6, the older layout)
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "smoke")
WANTED = (("paddlex", "pir"), ("paddledet", "legacy"), ("paddleseg", "pir"), ("paddlenlp", "legacy"),
          ("paddle1x", "legacy"))


def main() -> None:
    own_cache = "PD2ONNX_TEST_CACHE" not in os.environ  # builds are keyed by content: a shared cache serves
    if own_cache:
        os.environ["PD2ONNX_TEST_CACHE"] = tempfile.mkdtemp(prefix="pd2onnx-smoke-build-")
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    sys.path.insert(0, os.path.join(ROOT, "tests", "reader"))
    from folder_kinds import KINDS, make_folder

    from harness import builder
    from harness.cases import REGISTRY, load_case_files

    load_case_files(os.path.join(ROOT, "tests", "fixtures"), "smokecases")
    load_case_files(os.path.join(ROOT, "tests", "reader"), "readercases")
    cases = [REGISTRY[KINDS[kind].case] for kind, _ in WANTED]
    builder.build_all(cases)
    shutil.rmtree(OUT, ignore_errors=True)
    for (kind, fmt), case in zip(WANTED, cases):
        built = builder.get(case, fmt)
        if built.error:
            raise SystemExit(f"Paddle could not build {case.name} ({fmt}):\n{built.error}")
        target = make_folder(KINDS[kind], built, os.path.join(OUT, kind))
        shutil.copy(os.path.join(built.dir, "io.npz"), os.path.join(target, "io.npz"))
    if own_cache:
        shutil.rmtree(os.environ["PD2ONNX_TEST_CACHE"], ignore_errors=True)
    for dirpath, _, files in sorted(os.walk(OUT)):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            print(f"{os.path.relpath(path, ROOT)}: {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
