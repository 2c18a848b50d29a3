"""Which file of a folder is the program: by content, not by suffix (pd2onnx/paddle/discover.py).

Built from programs Paddle saved (the smoke_cnn case, both formats) and hand-made files.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

import pd2onnx
from harness import builder
from harness.cases import REGISTRY, load_case_files
from harness.handmade import write_program
from pd2onnx.errors import ModelFormatError
from pd2onnx.paddle import discover as discover_module
from pd2onnx.paddle.discover import discover, find_model_dirs, is_pir_program

HERE = os.path.dirname(os.path.abspath(__file__))
load_case_files(os.path.join(os.path.dirname(HERE), "fixtures"), "smokecases")


def _saved(fmt: str) -> tuple[str, str]:
    """(program file, its .pdiparams) of a small CNN saved by Paddle."""
    if "smoke_cnn" not in REGISTRY:
        pytest.skip("case smoke_cnn filtered out by PD2ONNX_CASE_FILES")
    built = builder.get(REGISTRY["smoke_cnn"], fmt)
    assert built.error is None, built.error
    return built.model_file, os.path.splitext(built.model_file)[0] + ".pdiparams"


@pytest.fixture(scope="module", params=["pir", "legacy"])
def saved(request) -> tuple[str, str]:
    return _saved(request.param)


def _place(saved, folder, stem: str, weights: bool = True) -> str:
    program, params = saved
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, stem + os.path.splitext(program)[1])
    shutil.copy(program, target)
    if weights:
        shutil.copy(params, os.path.join(folder, stem + ".pdiparams"))
    return target


def test_program_with_weights_preferred(saved, tmp_path):
    """An older export kept beside the model (no weights): the one with weights is read."""
    chosen = _place(saved, tmp_path, "inference")
    _place(saved, tmp_path, "inference_old", weights=False)
    found = discover(str(tmp_path))
    assert found.model == chosen
    old = "inference_old" + os.path.splitext(chosen)[1]
    assert found.ignored == [(old, "no weights beside it (unlike " + os.path.basename(chosen) + ")")]
    program = pd2onnx.load(str(tmp_path))
    assert program.model_file == chosen and program.params


def test_two_programs_with_weights_are_ambiguous(saved, tmp_path):
    a = _place(saved, tmp_path, "det")
    b = _place(saved, tmp_path, "cls")
    with pytest.raises(ModelFormatError) as info:
        pd2onnx.load(str(tmp_path))
    text = str(info.value)
    assert f"2 different programs: {os.path.basename(b)}, {os.path.basename(a)} (each with its weights)" in text
    assert "--model_filename" in text
    assert pd2onnx.load(a).model_file == a  # naming the file settles it


def test_unreadable_program_candidates_ignored(saved, tmp_path):
    chosen = _place(saved, tmp_path, "inference")
    (tmp_path / "model").write_bytes(b"\x00\x01 not a program")  # a bare name, not a ProgramDesc
    (tmp_path / "broken.pdmodel").write_bytes(b"\xff" * 64)
    found = discover(str(tmp_path))
    assert found.model == chosen
    reasons = dict(found.ignored)
    assert set(reasons) == {"model", "broken.pdmodel"}
    assert all("ProgramDesc" in why or "no Paddle program" in why for why in reasons.values()), reasons


def test_pir_recognised_by_structure(tmp_path):
    """Paddle writes base_code first; a re-saved file may hold it last; a truncated program is
    still a program (and then a clear error), a JSON quoting the magic elsewhere is not."""
    program, params = _saved("pir")
    with open(program) as f:
        doc = json.load(f)
    last = tmp_path / "last.json"
    last.write_text(json.dumps({"program": doc["program"], "base_code": doc["base_code"]}, indent=2))
    assert is_pir_program(str(last))
    shutil.copy(params, tmp_path / "last.pdiparams")
    assert pd2onnx.load(str(tmp_path)).model_file == str(last)
    bom = tmp_path / "bom" / "model.json"  # re-saved by an editor that writes a byte order mark
    bom.parent.mkdir()
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(doc).encode())
    shutil.copy(params, bom.parent / "model.pdiparams")
    assert is_pir_program(str(bom)) and pd2onnx.load(str(bom.parent)).params
    truncated = tmp_path / "truncated.json"
    truncated.write_text(json.dumps(doc)[:200])
    assert is_pir_program(str(truncated))
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        pd2onnx.load(str(truncated))
    quoting = tmp_path / "notes.json"
    quoting.write_text(json.dumps({"notes": {"magic": "pir"}, "base_code": "see docs"}))
    assert not is_pir_program(str(quoting))


def test_large_unrelated_json_is_not_read_whole(saved, tmp_path, monkeypatch):
    chosen = _place(saved, tmp_path, "inference")
    with open(tmp_path / "metrics.json", "w") as f:  # 24 MB of JSON beside the model
        f.write('{"history": [' + ", ".join(["0.123456"] * 3_000_000) + "]}")
    read = []
    real_open = open

    class Counting:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def read(self, n=-1):
            data = self.f.read(n)
            read.append((self.f.name, len(data)))
            return data

        def __getattr__(self, name):
            return getattr(self.f, name)

    monkeypatch.setattr(discover_module, "open", lambda *a, **k: Counting(real_open(*a, **k)), raising=False)
    found = discover(str(tmp_path))
    assert found.model == chosen and dict(found.ignored)["metrics.json"].startswith("not a Paddle PIR program")
    from_metrics = sum(n for name, n in read if name.endswith("metrics.json"))
    assert 0 < from_metrics <= 2 * 65536, from_metrics


def test_no_program_lists_what_it_looked_at(tmp_path):
    (tmp_path / "config.json").write_text('{"hidden_size": 8}')
    (tmp_path / "vocab.txt").write_text("a\nb\n")
    with pytest.raises(ModelFormatError) as info:
        pd2onnx.load(str(tmp_path))
    text = str(info.value)
    assert "no Paddle program in this directory" in text
    assert "config.json: not a Paddle PIR program" in text
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelFormatError, match="none there"):
        pd2onnx.load(str(empty))


def test_bare_programs_choose_by_weights(tmp_path):
    """Hand-made legacy programs: ``__model__`` without weights beside ``det.pdmodel`` with
    ``det.pdiparams`` (a program without parameters needs none, but has none to prefer it)."""
    write_program(str(tmp_path / "__model__"), [("relu", "x", "y")])
    write_program(str(tmp_path / "det.pdmodel"), [("relu", "x", "y")])
    (tmp_path / "det.pdiparams").write_bytes(b"")
    found = discover(str(tmp_path))
    assert os.path.basename(found.model) == "det.pdmodel"
    assert found.ignored == [("__model__", "no weights beside it (unlike det.pdmodel)")]


def test_find_model_dirs(saved, tmp_path):
    _place(saved, tmp_path / "a", "inference")
    _place(saved, tmp_path / "b" / "c", "model")
    (tmp_path / "b" / "notes").mkdir()
    (tmp_path / "b" / "notes" / "config.json").write_text("{}")
    (tmp_path / "b" / "notes" / "model").write_text("not a program")
    _place(saved, tmp_path / ".hidden", "inference")
    _place(saved, tmp_path / "out" / "x", "inference")
    found = find_model_dirs(str(tmp_path), skip=(str(tmp_path / "out"),))
    assert found == [str(tmp_path / "a"), str(tmp_path / "b" / "c")]
