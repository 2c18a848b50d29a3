"""Remove superseded builds from the test cache (``tools/test.sh`` runs it before pytest).

The cache (``$PD2ONNX_TEST_CACHE``, by default ``~/.cache/pd2onnx/tests``) holds one directory
per built case module or toolkit model, named ``<stem>-<content hash>``: every change to a
case module or the harness makes a new one and leaves the old one behind. For each stem the
newest directory stays, and so does any other written to in the last ``--days`` days (another
checkout of the project may be using it); the rest go.

    python tools/prune_test_cache.py [CACHE] [--days N] [--dry-run]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import time

_KEYED = re.compile(r"^(?P<stem>.+)-(?P<key>[0-9a-f]{16})$")


def superseded(cache: str, days: float, now: float | None = None) -> list[str]:
    """The directories of ``cache`` that a newer build of the same stem replaced, unused for
    ``days`` days."""
    now = time.time() if now is None else now
    stale: list[str] = []
    for group in sorted(os.listdir(cache)) if os.path.isdir(cache) else []:
        gdir = os.path.join(cache, group)
        if not os.path.isdir(gdir):
            continue
        by_stem: dict[str, list[tuple[float, str]]] = {}
        for entry in os.listdir(gdir):
            m = _KEYED.match(entry)
            path = os.path.join(gdir, entry)
            if m and os.path.isdir(path):
                by_stem.setdefault(m["stem"], []).append((os.path.getmtime(path), path))
        for builds in by_stem.values():
            builds.sort()
            stale += [path for mtime, path in builds[:-1] if now - mtime > days * 86400]
    return stale


def main() -> int:
    default = os.environ.get("PD2ONNX_TEST_CACHE", os.path.expanduser("~/.cache/pd2onnx/tests"))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache", nargs="?", default=default)
    ap.add_argument("--days", type=float, default=3.0, help="keep superseded builds younger than this (default 3)")
    ap.add_argument("--dry-run", action="store_true", help="list what would go")
    args = ap.parse_args()
    stale = superseded(args.cache, args.days)
    for path in stale:
        if args.dry_run:
            print(path)
        else:
            shutil.rmtree(path, ignore_errors=True)
    if stale and not args.dry_run:
        print(f"test cache: removed {len(stale)} superseded build(s) from {args.cache}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
