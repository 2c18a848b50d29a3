"""What tools/make_fuzz_fixtures.py and tools/make_smoke_fixtures.py share: Paddle builds through
the test harness in a cache of their own unless PD2ONNX_TEST_CACHE names one (builds are keyed
by content, so a shared cache serves), and the listing of what was written."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@contextlib.contextmanager
def harness_builds(prefix: str):
    """The test harness importable (tests/ on sys.path) with a build cache: PD2ONNX_TEST_CACHE if
    set, else a temporary one, removed on the way out."""
    own_cache = "PD2ONNX_TEST_CACHE" not in os.environ
    if own_cache:
        os.environ["PD2ONNX_TEST_CACHE"] = tempfile.mkdtemp(prefix=prefix)
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    try:
        yield
    finally:
        if own_cache:
            shutil.rmtree(os.environ.pop("PD2ONNX_TEST_CACHE"), ignore_errors=True)


def print_sizes(out: str) -> None:
    """Every file under ``out`` with its size, relative to the project root."""
    for dirpath, _, files in sorted(os.walk(out)):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            print(f"{os.path.relpath(path, ROOT)}: {os.path.getsize(path)} bytes")
