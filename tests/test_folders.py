"""Real model folders in, deployable folders out (docs/deployment.md).

Every folder kind Paddle's toolkits leave (tests/reader/folder_kinds.py: PaddleX / PaddleOCR
3.x, PaddleDetection, PaddleSeg, PaddleNLP, Paddle 1.x one file per parameter, each with
JSON notes beside the model) converts with no flags through the ``pd2onnx`` command (run
as users run it, in a subprocess), the paddle2onnx flags and the Python API; every result
runs in ONNX Runtime and equals Paddle's own outputs. Deployment folders get the configs
and nothing else; several models convert in one call, also in worker processes and over a
whole tree; failures never leave partial outputs.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest

import pd2onnx
from harness import builder
from harness.cases import REGISTRY, load_case_files
from harness.check import compare, load_io

HERE = os.path.dirname(os.path.abspath(__file__))
load_case_files(os.path.join(HERE, "fixtures"), "smokecases")
load_case_files(os.path.join(HERE, "reader"), "readercases")
sys.path.insert(0, os.path.join(HERE, "reader"))
from folder_kinds import KINDS, ONNX_NAME, UNRELATED, make_folder  # noqa: E402

KIND_PARAMS = [pytest.param(k, f, id=f"{k}-{f}") for k, kind in KINDS.items() for f in kind.formats]


def run_cli(*args: str, cwd: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pd2onnx", *args], capture_output=True, text=True, cwd=cwd,
                          env=env)


def _built(kind_name: str, fmt: str):
    kind = KINDS[kind_name]
    if kind.case not in REGISTRY:
        pytest.skip(f"case {kind.case} filtered out by PD2ONNX_CASE_FILES")
    built = builder.get(REGISTRY[kind.case], fmt)
    assert built.error is None, built.error
    return built


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[tuple[str, str], str]:
    """Every folder kind in both formats where Paddle writes it, built once per module."""
    root = tmp_path_factory.mktemp("models")
    return {(k, f): make_folder(KINDS[k], _built(k, f), str(root / f"{k}-{f}"))
            for k, kind in KINDS.items() for f in kind.formats}


def assert_equals_paddle(onnx_file: str, kind_name: str, fmt: str) -> None:
    import onnxruntime as ort

    inputs, wants = load_io(os.path.join(_built(kind_name, fmt).dir, "io.npz"))
    sess = ort.InferenceSession(onnx_file, providers=["CPUExecutionProvider"])
    gots = sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), inputs)})
    assert len(gots) == len(wants)
    for k, (got, want) in enumerate(zip(gots, wants)):
        compare(f"{kind_name}-{fmt} output {k}", got, want, 1e-5, 1e-5)


def assert_deployment_folder(out_dir: str, kind_name: str) -> None:
    """The model and the toolkit's configs, byte for byte; no weights, nothing unrelated."""
    kind = KINDS[kind_name]
    assert sorted(os.listdir(out_dir)) == sorted([ONNX_NAME[kind_name], *kind.configs])
    for name, text in kind.configs.items():
        with open(os.path.join(out_dir, name)) as f:
            assert f.read() == text


# ---------------------------------------------------------------- every kind, every entry point
@pytest.mark.parametrize("kind,fmt", KIND_PARAMS)
def test_cli_deployment_folder(folders, kind, fmt, tmp_path):
    """``pd2onnx convert DIR -o OUTDIR/``: the model named after the program, the configs beside it."""
    out = tmp_path / "deploy"
    proc = run_cli("convert", folders[kind, fmt], "-o", f"{out}/")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr  # no warnings, no progress line (not a terminal)
    assert_deployment_folder(str(out), kind)
    assert_equals_paddle(str(out / ONNX_NAME[kind]), kind, fmt)
    onnx.checker.check_model(str(out / ONNX_NAME[kind]), full_check=True)


@pytest.mark.parametrize("kind,fmt", KIND_PARAMS)
def test_paddle2onnx_flags(folders, kind, fmt, tmp_path):
    """``--model_dir DIR --save_file X.onnx``: one file, as paddle2onnx writes it."""
    out = tmp_path / "p2o" / "x.onnx"
    proc = run_cli("--model_dir", folders[kind, fmt], "--save_file", str(out))
    assert proc.returncode == 0, proc.stderr
    assert os.listdir(out.parent) == ["x.onnx"]
    assert_equals_paddle(str(out), kind, fmt)


@pytest.mark.parametrize("kind,fmt", KIND_PARAMS)
def test_python_api(folders, kind, fmt, tmp_path):
    folder = folders[kind, fmt]
    program = pd2onnx.load(folder)
    taken = os.path.basename(program.model_file)
    assert taken not in UNRELATED and not taken.endswith("config.json")
    assert {name for name, _ in program.ignored_files} >= {n for n in UNRELATED if n.endswith(".json")}
    pd2onnx.export(folder, None, str(tmp_path / "api.onnx"))
    assert_equals_paddle(str(tmp_path / "api.onnx"), kind, fmt)
    import onnx_ir as ir

    ir.save(pd2onnx.to_onnx(folder), str(tmp_path / "to_onnx.onnx"))
    assert_equals_paddle(str(tmp_path / "to_onnx.onnx"), kind, fmt)
    result = pd2onnx.export_folder(folder, str(tmp_path / "folder"))
    assert result.onnx_file == str(tmp_path / "folder" / ONNX_NAME[kind])
    assert_deployment_folder(str(tmp_path / "folder"), kind)


def test_info_names_the_program_and_what_it_ignored(folders):
    proc = run_cli("info", folders["paddlenlp", "pir"])
    assert proc.returncode == 0, proc.stderr
    assert "inference.json" in proc.stdout.splitlines()[0]
    for name in ("config.json", "tokenizer_config.json", "notes.json", "metrics.json"):
        assert f"ignored:  {name} (not a Paddle PIR program" in proc.stdout, proc.stdout
    proc = run_cli("info", folders["paddle1x", "legacy"], "--json")
    import json

    desc = json.loads(proc.stdout)
    assert os.path.basename(desc["model_file"]) == "__model__" and desc["params_layout"] == "separate"
    assert {e["file"] for e in desc["ignored_files"]} == {"meta.json", "metrics.json", "notes.json"}


# ---------------------------------------------------------------- deployment folder rules
def test_existing_output_refused_unless_overwrite(folders, tmp_path):
    folder = folders["paddledet", "legacy"]
    out = tmp_path / "out"
    assert run_cli("convert", folder, "-o", f"{out}/").returncode == 0
    before = {n: (out / n).read_bytes() for n in os.listdir(out)}
    proc = run_cli("convert", folder, "-o", str(out))  # an existing folder, no trailing slash
    assert proc.returncode == 1 and "already holds model.onnx, infer_cfg.yml" in proc.stderr, proc.stderr
    assert "--overwrite" in proc.stderr and "Traceback" not in proc.stderr
    assert {n: (out / n).read_bytes() for n in os.listdir(out)} == before
    (out / "model.onnx").write_bytes(b"stale")
    proc = run_cli("convert", folder, "-o", str(out), "--overwrite")
    assert proc.returncode == 0, proc.stderr
    assert (out / "model.onnx").read_bytes() == before["model.onnx"]
    assert sorted(os.listdir(out)) == ["infer_cfg.yml", "model.onnx"]  # no staging folder left


def test_no_copy_configs_and_output_into_the_model_folder(folders, tmp_path):
    import shutil

    proc = run_cli("convert", folders["paddlex", "pir"], "-o", f"{tmp_path}/bare/", "--no-copy-configs")
    assert proc.returncode == 0, proc.stderr
    assert os.listdir(tmp_path / "bare") == ["inference.onnx"]
    # into the Paddle folder itself: the configs are already there, the model lands beside them
    own = shutil.copytree(folders["paddlex", "legacy"], tmp_path / "own")
    before = sorted(os.listdir(own))
    proc = run_cli("convert", str(own), "-o", f"{own}/")
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(own)) == sorted([*before, "inference.onnx"])
    assert_equals_paddle(str(own / "inference.onnx"), "paddlex", "legacy")


def test_single_file_flags_without_effect_are_named(folders, tmp_path):
    proc = run_cli("convert", folders["paddlex", "pir"], "-o", str(tmp_path / "x.onnx"), "--no-copy-configs")
    assert proc.returncode == 0 and "--no-copy-configs has no effect" in proc.stderr, proc.stderr


# ---------------------------------------------------------------- many models
def test_many_models_in_worker_processes(folders, tmp_path):
    """Every kind in one call, two at a time: one folder each, one summary line each."""
    out = tmp_path / "all"
    sources = [folders[key] for key in sorted(folders)]
    proc = run_cli("convert", *sources, "-o", f"{out}/", "-j", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == len(sources) + 1 and lines[-1] == f"{len(sources)} of {len(sources)} models converted"
    assert sorted(line.split()[1] for line in lines[:-1]) == sorted(os.path.basename(s) for s in sources)
    assert all(line.startswith("ok ") for line in lines[:-1]), proc.stdout
    for (kind, fmt) in folders:
        assert_deployment_folder(str(out / f"{kind}-{fmt}"), kind)
        assert_equals_paddle(str(out / f"{kind}-{fmt}" / ONNX_NAME[kind]), kind, fmt)


def test_many_models_go_on_past_a_failure(folders, tmp_path):
    """A broken model: reported, the others converted, exit 1, nothing of it written."""
    broken = tmp_path / "broken"
    broken.mkdir()
    with open(os.path.join(folders["paddleseg", "legacy"], "model.pdmodel"), "rb") as f:
        (broken / "model.pdmodel").write_bytes(f.read()[:-40])  # truncated
    (broken / "deploy.yaml").write_text(KINDS["paddleseg"].configs["deploy.yaml"])
    out = tmp_path / "out"
    for jobs in ("1", "2"):
        proc = run_cli("convert", folders["paddlex", "pir"], str(broken), folders["paddledet", "legacy"],
                       "-o", f"{out}{jobs}/", "-j", jobs)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[-1] == "2 of 3 models converted, 1 failed"
        assert [line.split()[0] for line in lines[:-1] if "broken" in line] == ["FAILED"]
        assert "broken/model.pdmodel" in proc.stderr and "Traceback" not in proc.stderr
        assert sorted(os.listdir(f"{out}{jobs}")) == ["paddledet-legacy", "paddlex-pir"]  # no partial, no staging


def test_recursive_keeps_the_tree(folders, tmp_path):
    """A model cache: models at different depths, folders without models, notes; the tree is kept."""
    import shutil

    root = tmp_path / "cache"
    shutil.copytree(folders["paddlex", "pir"], root / "official_models" / "PP-LCNet")
    shutil.copytree(folders["paddledet", "legacy"], root / "official_models" / "det" / "ppyoloe")
    shutil.copytree(folders["paddle1x", "legacy"], root / "old" / "lac")
    (root / "docs").mkdir()
    (root / "docs" / "config.json").write_text("{}")
    out = tmp_path / "onnx"
    proc = run_cli("convert", str(root), "-o", f"{out}/", "--recursive")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "3 of 3 models converted"
    found = sorted(os.path.relpath(os.path.join(d, f), out) for d, _, files in os.walk(out) for f in files)
    assert found == ["official_models/PP-LCNet/inference.onnx", "official_models/PP-LCNet/inference.yml",
                     "official_models/det/ppyoloe/infer_cfg.yml", "official_models/det/ppyoloe/model.onnx",
                     "old/lac/model.onnx"]
    assert_equals_paddle(str(out / "official_models/det/ppyoloe/model.onnx"), "paddledet", "legacy")
    assert_equals_paddle(str(out / "old/lac/model.onnx"), "paddle1x", "legacy")


def test_many_models_usage_errors(folders, tmp_path):
    a, b = folders["paddlex", "pir"], folders["paddlex", "legacy"]
    proc = run_cli("convert", a, b)
    assert proc.returncode == 1 and "need -o OUTROOT/" in proc.stderr
    (tmp_path / "file").write_text("")
    proc = run_cli("convert", a, b, "-o", str(tmp_path / "file"))
    assert proc.returncode == 1 and "into a folder, not a file" in proc.stderr
    proc = run_cli("convert", a, os.path.join(a, "inference.json"), "-o", f"{tmp_path}/x/")
    assert proc.returncode == 1 and "would be written to the same folder" in proc.stderr
    proc = run_cli("convert", str(tmp_path), "-o", f"{tmp_path}/y/", "--recursive")
    assert proc.returncode == 1 and "no model folder under" in proc.stderr
    assert not os.path.exists(tmp_path / "x") and not os.path.exists(tmp_path / "y")


# ---------------------------------------------------------------- progress display
def test_progress_display_follows_a_clock_it_is_given(monkeypatch):
    """The display, driven by a clock the test sets and no timer: nothing before the delay,
    each change of stage or title drawn at once after it, byte counts at most once a tick,
    messages printed clear of the line, the line erased at the end."""
    import io

    from pd2onnx import progress

    monkeypatch.setattr(progress, "DELAY", 1.5)
    now = [100.0]
    out = io.StringIO()
    with progress.display("converting m", stream=out, clock=lambda: now[0], tick=None):
        progress.stage("reading the model")
        assert out.getvalue() == ""  # quick work prints nothing
        now[0] += 2.0
        progress.stage("optimizing")
        assert out.getvalue() == "\r\x1b[2Kconverting m: optimizing [2 s]"
        progress.retitle("[2/3] m")
        assert out.getvalue().endswith("\r\x1b[2K[2/3] m: optimizing [2 s]")
        progress.stage("writing m.onnx")
        progress.advance(20_000_000, 100_000_000)
        before = out.getvalue()
        progress.advance(30_000_000, 100_000_000)  # within the same tick: not redrawn
        assert out.getvalue() == before
        now[0] += progress._TICK
        progress.advance(40_000_000, 100_000_000)
        assert out.getvalue().endswith("[2/3] m: writing m.onnx 40 MB/100 MB (40%) [2 s]")
        progress.echo("ok m", stream=out)
        assert out.getvalue().endswith("\r\x1b[2Kok m\n")
    assert out.getvalue().endswith("ok m\n")  # erased before the message, not drawn since


def test_progress_shown_on_a_terminal_only(folders, tmp_path):
    """On a terminal the status line appears (here at once: PD2ONNX_PROGRESS_DELAY=0; each
    new title is drawn when it is set, so the test does not race a timer) and is erased;
    piped, nothing but the result (the tests above check stderr is empty)."""
    import pty
    import threading

    env = {**os.environ, "PD2ONNX_PROGRESS_DELAY": "0"}
    primary, secondary = pty.openpty()
    chunks: list[bytes] = []

    def read() -> None:  # drain the terminal while the command runs (its buffer is small)
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the last writer closed it
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    proc = subprocess.Popen([sys.executable, "-m", "pd2onnx", "convert", folders["paddlex", "pir"],
                             folders["paddledet", "legacy"], "-o", f"{tmp_path}/out/"],
                            stdout=subprocess.PIPE, stderr=secondary, env=env)
    os.close(secondary)
    stdout, _ = proc.communicate(timeout=300)
    reader.join(timeout=30)
    os.close(primary)
    seen = b"".join(chunks)
    assert proc.returncode == 0, seen
    assert b"[1/2] paddlex-pir" in seen and b"\r\x1b[2K" in seen, seen
    assert seen.endswith(b"\r\x1b[2K"), seen  # erased at the end
    assert stdout.decode().splitlines()[-1] == "2 of 2 models converted"
    assert np.all([line.startswith("ok ") for line in stdout.decode().splitlines()[:-1]])


def test_dead_worker_reported_and_its_staging_removed(tmp_path):
    """A worker killed mid-write (here: by the kernel's OOM killer, signal 9): its model is
    reported failed with the signal, and the staging folder it left is removed."""
    import time

    from pd2onnx.batch import Job, _died, _Running
    from pd2onnx.deploy import staging_prefix

    class Killed:
        pid, exitcode = 4242, -9

    staging = tmp_path / f"{staging_prefix(4242)}0123abcd"
    staging.mkdir()
    (staging / "model.onnx").write_bytes(b"partial")
    other = tmp_path / f"{staging_prefix(42420)}0123abcd"  # another process's: kept
    other.mkdir()
    job = Job("models/m", str(tmp_path / "out" / "m"), "m")
    outcome = _died(_Running(0, job, Killed(), None, 0, time.monotonic()))
    assert not outcome.ok and "killed by signal 9, perhaps out of memory" in outcome.detail
    assert not staging.exists() and other.exists()
