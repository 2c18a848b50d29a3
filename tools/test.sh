#!/usr/bin/env bash
# Sets up everything the tests need on a fresh machine, then runs them.
#   bash tools/test.sh [pytest args...]
# Test-only environments (pd2onnx itself never imports paddle): Paddle 2.6 writes the legacy
# test models; paddledet 2.6 on Paddle 2.6 (legacy) and on Paddle 3.3 (PIR: the two-stage models)
# builds the PaddleDetection model tests; paddlenlp (LLaMA), paddlecv (PaddleClas Swin, PaddleSeg
# PP-LiteSeg) and paddlex (PaddleOCR 3.7's PP-OCRv6 and orientation classifiers), all on Paddle
# 3.3, build the toolkit model tests. All are created once (in ~/.cache/pd2onnx) and reused; they
# install side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check -e '.[test]'
bash tools/setup_paddle26.sh & p26=$!
bash tools/setup_paddledet.sh & pdet=$!
bash tools/setup_paddledet_pir.sh & pdetpir=$!
bash tools/setup_paddlenlp.sh & pnlp=$!
bash tools/setup_paddlecv.sh & pcv=$!
bash tools/setup_paddlex.sh & ppdx=$!
wait "$p26"
wait "$pdet"
wait "$pdetpir"
wait "$pnlp"
wait "$pcv"
wait "$ppdx"
# Paddle builds of the test cases are cached by content hash in ~/.cache/pd2onnx/tests (like the
# environments above: a new clone reuses them); superseded builds are pruned.
python3 tools/prune_test_cache.py
# --timeout: a converted model that never finishes in ONNX Runtime (a Loop whose condition
# never changes) fails its test instead of hanging CI; builds of a whole case module run
# inside a test, hence the generous limit.
python3 -m pytest -n 2 --dist loadgroup --timeout 1500 "$@"
