"""What fuzzing found, kept as tests: edits of programs Paddle saved must give a file that passes
onnx.checker or one clear error (Pd2OnnxError: named file, no traceback, no output file).

- a PIR ``while`` body whose ``array_length`` lost its operand list (``"I": null``) was
  converted with exit 0 into a file onnx.checker rejects;
- one flipped byte in a legacy variable name reached the params reader as ``bytes`` and the
  CLI printed a traceback.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys

import onnx
import pytest

import pd2onnx
from harness import builder
from harness.cases import REGISTRY, load_case_files
from pd2onnx.errors import Pd2OnnxError

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
load_case_files(os.path.join(TESTS, "ops"), "opcases")
load_case_files(os.path.join(TESTS, "fixtures"), "smokecases")


def _inner_array_length(block: dict) -> dict | None:
    """The first ``array_length`` op inside a control-flow body."""
    for op in block["ops"]:
        for region in op.get("regions") or []:
            for inner in region["blocks"]:
                found = next((o for o in inner["ops"] if o["#"] == "1.array_length"), None)
                found = found or _inner_array_length(inner)
                if found:
                    return found
    return None


@pytest.fixture(scope="module")
def while_with_array(tmp_path_factory) -> str:
    """A PIR program Paddle saved whose while body measures a tensor array."""
    cases = [c for c in REGISTRY.values() if "control_flow" in os.path.basename(c.module) and "pir" in c.formats]
    if not cases:
        pytest.skip("the control-flow cases are filtered out by PD2ONNX_CASE_FILES")
    for case in sorted(cases, key=lambda c: c.name):
        built = builder.get(case, "pir")
        if built.error or not built.model_file.endswith(".json"):
            continue
        with open(built.model_file) as f:
            doc = json.load(f)
        if _inner_array_length(doc["program"]["regions"][0]["blocks"][0]):
            target = str(tmp_path_factory.mktemp("while") / "m")
            shutil.copytree(built.dir, target)
            return os.path.join(target, "model.json")
    pytest.fail("no control-flow case has array_length inside a while body any more")


@pytest.mark.parametrize("operands,message", [
    pytest.param(None, "(1.array_length): its operand list (I) is null, expected a list", id="null"),
    pytest.param([], "(1.array_length): 0 operand(s), but array_length takes (x): x missing", id="empty"),
    # present but absent (id 0, as for an optional input): caught by onnx.checker before writing
    pytest.param([{"%": 0}], "the node comes from Paddle op array_length (block ", id="absent"),
])
def test_array_length_without_its_operand(while_with_array, operands, message, tmp_path):
    with open(while_with_array) as f:
        doc = json.load(f)
    _inner_array_length(doc["program"]["regions"][0]["blocks"][0])["I"] = operands
    model = tmp_path / "model.json"
    model.write_text(json.dumps(doc))
    params = os.path.join(os.path.dirname(while_with_array), "model.pdiparams")
    if os.path.exists(params):
        shutil.copy(params, tmp_path)
    out = tmp_path / "out.onnx"
    proc = subprocess.run([sys.executable, "-m", "pd2onnx", "convert", str(model), "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not out.exists() and not [n for n in os.listdir(tmp_path) if n.startswith(".pd2onnx")]


def _smoke(fmt: str) -> str:
    if "smoke_cnn" not in REGISTRY:
        pytest.skip("case smoke_cnn filtered out by PD2ONNX_CASE_FILES")
    built = builder.get(REGISTRY["smoke_cnn"], fmt)
    assert built.error is None, built.error
    return built.model_file


def _outcome(folder: str, out: str) -> str:
    """'converted' (and the file passes onnx.checker) or 'refused' (a Pd2OnnxError); any
    other exception fails the test."""
    try:
        pd2onnx.export(folder, None, out, enable_onnx_checker=False)
    except Pd2OnnxError as exc:
        assert str(exc).strip() and not os.path.exists(out)
        return "refused"
    onnx.checker.check_model(out)
    return "converted"


@pytest.mark.parametrize("fmt", ["legacy", "pir"])
def test_random_edits_convert_or_fail_clearly(fmt, tmp_path):
    """Seeded: 40 random byte flips (legacy) / 40 random JSON edits (PIR) of a small CNN."""
    program = _smoke(fmt)
    folder = tmp_path / "m"
    shutil.copytree(os.path.dirname(program), folder)
    name = os.path.basename(program)
    original = (folder / name).read_bytes()
    rng = random.Random(20)
    outcomes = []
    for i in range(40):
        if fmt == "legacy":
            data = bytearray(original)
            for _ in range(rng.randint(1, 3)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            (folder / name).write_bytes(bytes(data))
        else:
            doc = json.loads(original)
            _edit_json(doc, rng)
            (folder / name).write_bytes(json.dumps(doc).encode("utf-8", "surrogatepass"))
        outcomes.append(_outcome(str(folder / name), str(tmp_path / f"out{i}.onnx")))
    assert "refused" in outcomes  # the edits do hit what matters


def _edit_json(doc: object, rng: random.Random) -> None:
    """Replace one random node of the document by null, a number, a string, a list or a dict."""
    slots: list[tuple[object, object]] = []

    def walk(node: object) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            slots.append((node, key))
            walk(child)

    walk(doc)
    parent, key = rng.choice(slots)
    parent[key] = rng.choice([None, 0, -1, 3, 1.5, "x", [], {}, True, "\ud800"])
