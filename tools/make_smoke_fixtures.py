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

from fixture_build import ROOT, harness_builds, print_sizes

OUT = os.path.join(ROOT, "tests", "fixtures", "smoke")
WANTED = (("paddlex", "pir"), ("paddledet", "legacy"), ("paddleseg", "pir"), ("paddlenlp", "legacy"),
          ("paddle1x", "legacy"))


def main() -> None:
    with harness_builds("pd2onnx-smoke-build-"):
        _build()
    print_sizes(OUT)


def _build() -> None:
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


if __name__ == "__main__":
    main()
