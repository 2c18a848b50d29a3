#!/usr/bin/env bash
# Clean-install smoke test: build the wheel, install it into a NEW virtual environment with no
# extras and nothing else, and run every command a new user runs first, from a directory
# outside the checkout, on the small model folders in tests/fixtures/smoke/ (one per kind of
# folder Paddle's toolkits leave, with configs and JSON notes beside the model; python
# tools/make_smoke_fixtures.py regenerates them). A dependency that pd2onnx (or a package it
# pins) imports without declaring fails here, not on a user's machine.
#   bash tools/smoke.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fixtures=$root/tests/fixtures/smoke
kinds="paddlex paddledet paddleseg paddlenlp paddle1x"
work=$(mktemp -d "${TMPDIR:-/tmp}/pd2onnx-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
step() { echo "smoke: $*"; }
# the names in a folder, sorted, on one line
listing() { (cd "$1" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' '); }
expect() { [ "$1" = "$2" ] || { echo "smoke: FAILED: $3: got '$1', expected '$2'"; exit 1; }; }

step "building the wheel"
python3 -m pip wheel -q --disable-pip-version-check --no-deps -w "$work/dist" "$root" >/dev/null
step "installing it into a new venv (no extras)"
python3 -m venv "$work/venv"
bin=$work/venv/bin
"$bin/python" -m pip install -q --disable-pip-version-check "$work"/dist/pd2onnx-*.whl
"$bin/python" -m pip list --disable-pip-version-check --format=freeze 2>/dev/null | tr '\n' ' ' | sed 's/^/smoke: installed: /'
echo

cd "$work"  # outside the checkout: only the installed package can be imported
step "pd2onnx --version"; "$bin/pd2onnx" --version
step "pd2onnx ops"; "$bin/pd2onnx" ops > ops.md; grep -q '^| `conv2d` |' ops.md
step "pd2onnx info (the program is found by content; the notes beside it are named as ignored)"
"$bin/pd2onnx" info "$fixtures/paddlenlp" > info-nlp.txt
grep -q "inference.pdmodel" info-nlp.txt && grep -q "ignored:  tokenizer_config.json" info-nlp.txt
"$bin/pd2onnx" info "$fixtures/paddle1x" | grep -q "one file per parameter"

step "pd2onnx convert DIR -o OUTDIR/ (a deployment folder)"
"$bin/pd2onnx" convert "$fixtures/paddlex" -o deploy/ --check
expect "$(listing deploy)" "inference.onnx inference.yml " "deployment folder"
step "pd2onnx convert ROOT -o OUTROOT/ --recursive -j 2 (every kind of folder, one folder each)"
"$bin/pd2onnx" convert "$fixtures" -o all/ --recursive -j 2 > all.txt
cat all.txt; tail -1 all.txt | grep -q "^5 of 5 models converted$"
expect "$(listing all/paddledet)" "infer_cfg.yml model.onnx " "PaddleDetection folder"
expect "$(listing all/paddleseg)" "deploy.yaml model.onnx " "PaddleSeg folder"
expect "$(listing all/paddlenlp)" "config.json generation_config.json inference.onnx special_tokens_map.json tokenizer_config.json vocab.txt " "PaddleNLP folder"
expect "$(listing all/paddle1x)" "model.onnx " "Paddle 1.x folder"
step "pd2onnx convert MODEL -o FILE.onnx"; "$bin/pd2onnx" convert "$fixtures/paddledet" -o legacy.onnx --check
step "pd2onnx optimize"; "$bin/pd2onnx" optimize deploy/inference.onnx -o optimized.onnx
step "paddle2onnx flags (--model_dir on every kind)"
for kind in $kinds; do
  "$bin/pd2onnx" --model_dir "$fixtures/$kind" --save_file "p2o-$kind.onnx" --opset_version 13 > /dev/null
done
"$bin/pd2onnx" --model_dir "$fixtures/paddledet" --model_filename model.pdmodel --params_filename model.pdiparams \
  --save_file p2o-files.onnx > /dev/null
step "python: pd2onnx.load / export / export_folder on every kind"
"$bin/python" - "$fixtures" $kinds <<'PY'
import sys, pd2onnx
fixtures, kinds = sys.argv[1], sys.argv[2:]
for kind in kinds:
    program = pd2onnx.load(f"{fixtures}/{kind}")
    assert program.params, kind
    pd2onnx.export(f"{fixtures}/{kind}", None, f"api-{kind}.onnx", 13)
    pd2onnx.export_folder(f"{fixtures}/{kind}", f"api-folder-{kind}")
PY
step "checking every written model (onnx.checker, onnx.reference against Paddle's outputs)"
pairs="deploy/inference.onnx:paddlex legacy.onnx:paddledet optimized.onnx:paddlex p2o-files.onnx:paddledet"
for kind in $kinds; do
  onnx=$(cd "all/$kind" && ls *.onnx)
  pairs="$pairs all/$kind/$onnx:$kind p2o-$kind.onnx:$kind api-$kind.onnx:$kind api-folder-$kind/$onnx:$kind"
done
# shellcheck disable=SC2086
"$bin/python" "$root/tools/smoke_check.py" "$fixtures" $pairs
step "passed"
