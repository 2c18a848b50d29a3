"""The command line: convert, info, ops, verify and the paddle2onnx-compatible flags."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest

from harness import builder
from harness.cases import REGISTRY, load_case_files
from harness.handmade import write_program

HERE = os.path.dirname(os.path.abspath(__file__))
load_case_files(os.path.join(HERE, "ops"), "opcases")


def run(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pd2onnx", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module", params=["pir", "legacy"])
def model(request) -> str:
    built = builder.get(REGISTRY["relu"], request.param)
    assert built.error is None, built.error
    return built.model_file


def test_convert_writes_a_checked_model(model, tmp_path):
    out = tmp_path / "relu.onnx"
    proc = run("convert", model, "-o", str(out), "--check")
    assert proc.returncode == 0, proc.stderr
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)
    assert "wrote" in proc.stdout


def test_convert_is_deterministic(model, tmp_path):
    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    for out in (a, b):
        assert run("convert", model, "-o", str(out)).returncode == 0
    assert a.read_bytes() == b.read_bytes()


def test_opset_out_of_range(model, tmp_path):
    proc = run("convert", model, "-o", str(tmp_path / "x.onnx"), "--opset", "5")
    assert proc.returncode == 1
    assert "opset 5 is out of range" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "x.onnx").exists()


def test_unwritable_output(model, tmp_path):
    proc = run("convert", model, "-o", str(tmp_path / "missing_dir" / "x.onnx"))
    assert proc.returncode == 1 and "output directory does not exist" in proc.stderr


def test_no_auto_opset(tmp_path):
    """An op needing a newer opset: raised by default, refused with --no-auto-opset."""
    needy = [c for c in REGISTRY.values() if "/tests/ops/" in c.module]
    from pd2onnx.convert.registry import get_mapper

    for case in needy:
        mappers = [get_mapper(op) for op in case.ops]
        if all(m is not None and not callable(m.min_opset) and m.min_opset > 7 for m in mappers):
            built = builder.get(case, "pir")
            break
    else:
        pytest.fail("no registered case exercises an op whose minimum opset is above 7")
    need = max(get_mapper(op).min_opset for op in case.ops)
    proc = run("convert", built.model_file, "-o", str(tmp_path / "x.onnx"), "--opset", "7", "--no-auto-opset")
    assert proc.returncode == 1 and f"needs opset {need}" in proc.stderr, proc.stderr
    proc = run("convert", built.model_file, "-o", str(tmp_path / "x.onnx"), "--opset", "7", "-v")
    assert proc.returncode == 0, proc.stderr
    assert "raising the opset from 7" in proc.stderr
    assert onnx.load(str(tmp_path / "x.onnx")).opset_import[0].version >= need


def test_unsupported_ops_listed_with_exit_code_2(tmp_path):
    model = str(tmp_path / "m.pdmodel")
    write_program(model, [("relu", "x", "a"), ("made_up_op", "a", "b"), ("another_made_up_op", "b", "c"),
                          ("made_up_op", "c", "d")])
    proc = run("convert", model, "-o", str(tmp_path / "x.onnx"))
    assert proc.returncode == 2, proc.stderr
    assert "unsupported operator type(s)" in proc.stderr
    for site in ("made_up_op x2", "another_made_up_op", "block 0, op #2", "block 0, op #3", "block 0, op #4"):
        assert site in proc.stderr, (site, proc.stderr)
    assert not (tmp_path / "x.onnx").exists()


def test_info_json(model):
    proc = run("info", model, "--json")
    assert proc.returncode == 0, proc.stderr
    desc = json.loads(proc.stdout)
    assert desc["inputs"][0]["name"] == "x0"
    assert desc["inputs"][0]["dtype"] == "float32"
    assert desc["op_count"] >= 3


def test_ops_lists_mappers():
    proc = run("ops", "--json")
    rows = json.loads(proc.stdout)
    names = {r["op"] for r in rows}
    assert {"relu", "scale", "full"} <= names


def test_docs_ops_table_is_current():
    from pd2onnx.convert.support import format_ops_markdown, supported_ops

    with open(os.path.join(HERE, "..", "docs", "ops.md")) as f:
        assert f.read() == format_ops_markdown(supported_ops()), "run: python tools/gen_ops_doc.py"


def test_mapper_index_is_current():
    from pd2onnx.convert.registry import format_module_index

    path = os.path.join(HERE, "..", "src", "pd2onnx", "convert", "ops", "_index.py")
    with open(path) as f:
        assert f.read() == format_module_index(), "run: python tools/gen_mapper_index.py"


def test_convert_imports_only_the_mappers_it_needs(model, tmp_path):
    """A relu model loads the activation mappers, not the detection or LLM ones (the index
    routes each op to its module); the conversion is the same as with every module loaded."""
    code = (
        "import sys; from pd2onnx.cli import main\n"
        "try: main(['convert', sys.argv[1], '-o', sys.argv[2]])\n"
        "except SystemExit as e: assert not e.code, e.code\n"
        "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('pd2onnx.convert.ops.')))"
    )
    proc = subprocess.run([sys.executable, "-c", code, model, str(tmp_path / "a.onnx")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    loaded = set(eval(proc.stdout.strip().splitlines()[-1]))
    assert "activation" in loaded
    assert not {"detection", "llm", "sequence", "control_flow"} & loaded, loaded
    full = subprocess.run([sys.executable, "-c", "import sys; from pd2onnx.convert import registry; registry._load();"
                           + code.replace("import sys; ", ""), model, str(tmp_path / "b.onnx")],
                          capture_output=True, text=True)
    assert full.returncode == 0, full.stderr
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()


def test_verify_against_paddle(model):
    proc = run("verify", model)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok" in proc.stdout


def test_verify_rejects_wrong_inputs_file(model, tmp_path):
    path = tmp_path / "in.npz"
    np.savez(path, wrong=np.zeros((2, 3, 4), np.float32))
    proc = run("verify", model, "--inputs", str(path))
    assert proc.returncode == 1
    assert "the model's inputs are ['x0']" in proc.stderr


def test_verify_rejects_wrong_input_shape(model, tmp_path):
    path = tmp_path / "in.npz"
    np.savez(path, x0=np.zeros((2, 3), np.float32))
    proc = run("verify", model, "--inputs", str(path))
    assert proc.returncode == 1 and "has shape [2, 3]" in proc.stderr


def test_paddle2onnx_flags(model, tmp_path):
    out = tmp_path / "p2o.onnx"
    proc = run("--model_dir", os.path.dirname(model), "--model_filename", os.path.basename(model),
               "--params_filename", "model.pdiparams", "--save_file", str(out),
               "--opset_version", "13", "--enable_onnx_checker", "True")
    assert proc.returncode == 0, proc.stderr
    assert onnx.load(str(out)).opset_import[0].version == 13


def test_python_export_returns_bytes(model):
    import pd2onnx

    data = pd2onnx.export(model, opset_version=17)
    assert onnx.load_from_string(data).opset_import[0].version == 17


def test_process_entry_ends_without_teardown_but_runs_exit_handlers(model, tmp_path):
    """Called as the process's entry (no argv), a finished convert ends the process at once with
    its exit code: atexit handlers ran and the output was flushed, the code after ``main()``
    (the interpreter's teardown) never runs. Called with argv (tests, the Python API), main returns."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('atexit ran'))\n"
        "from pd2onnx.cli import main\n"
        "sys.argv = ['pd2onnx', 'convert', *sys.argv[1:]]\n"
        "main()\n"
        "print('after main')\n"
    )
    out = tmp_path / "m.onnx"
    proc = subprocess.run([sys.executable, "-c", code, model, "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "wrote" in proc.stdout and "atexit ran" in proc.stdout and "after main" not in proc.stdout
    assert out.exists() and [p.name for p in tmp_path.iterdir()] == ["m.onnx"]  # no staging left
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "missing.json"), "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "no such file" in proc.stderr and "after main" not in proc.stdout
    in_process = code.replace("main()", "print('code', main(sys.argv[1:]))")
    returned = subprocess.run([sys.executable, "-c", in_process, model, "-o", str(out)], capture_output=True, text=True)
    assert "code 0" in returned.stdout and "after main" in returned.stdout, returned.stderr
