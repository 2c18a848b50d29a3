"""Paddle's side of ``verify``: its inference outputs (``predict``, in this process) and the
value of every intermediate Paddle exposes (``fetch``, in a Paddle worker process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np

from pd2onnx.errors import UsageError, VerifyError
from pd2onnx.paddle.program import Program

NO_PADDLE = "pip install paddlepaddle (verification only; conversion never needs it)"


def require_paddle(python: str | None = None) -> None:
    """Fail with what to install when the interpreter that would run Paddle has no paddle."""
    if python is None:
        import importlib.util

        if importlib.util.find_spec("paddle") is None:
            raise UsageError("paddle is not installed, so there is no reference to compare with", hint=NO_PADDLE)
    elif not os.path.isfile(python):
        raise UsageError("the interpreter given to run Paddle does not exist", file=python)


def _predictor_files(program: Program) -> list[str]:
    """paddle.inference.Config arguments: program + combined file, or the model directory
    for the one-file-per-parameter layout (which Paddle reads only as DIR/__model__[.json])."""

    if program.params_layout != "separate":
        return [program.model_file, program.params_file or ""]
    model_dir = os.path.dirname(os.path.abspath(program.model_file))
    if os.path.basename(program.model_file) in ("__model__", "__model__.json") and \
            os.path.abspath(program.params_file or "") == model_dir:
        return [model_dir]
    raise UsageError(
        "Paddle's predictor reads one-file-per-parameter models only as DIR/__model__ with the "
        "parameter files beside it",
        file=program.model_file,
        hint="rename the program file to __model__ in the parameters' directory, or pass --onnx and --inputs",
    )


def predict(program: Program, feeds: dict[str, np.ndarray],
            lods: dict[str, list[int]] | None = None) -> list[np.ndarray]:
    """Paddle's predictor's outputs on ``feeds``; with ``lods`` (sequence lengths of LoD
    inputs) the worker's executor computes them instead: the predictor crashes on the legacy
    sequence programs Paddle 2.6 saves (see ``paddle_worker._restore_scratch_outputs``)."""
    if lods:
        wanted = [{"key": f"out{i}", "name": v.name} for i, v in enumerate(program.outputs)]
        fetched = fetch(program, feeds, wanted, lods=lods)
        if fetched.missing:
            raise VerifyError(f"Paddle did not return the outputs {sorted(fetched.missing)}", file=program.model_file)
        return [np.array(fetched.values[f"out{i}"]) for i in range(len(program.outputs))]
    require_paddle()
    import paddle.inference as pi

    cfg = pi.Config(*_predictor_files(program))
    cfg.disable_gpu()
    if hasattr(cfg, "disable_mkldnn"):
        cfg.disable_mkldnn()  # oneDNN kernels reject some valid programs (e.g. interp scales)
    cfg.switch_ir_optim(False)
    cfg.disable_glog_info()
    pred = pi.create_predictor(cfg)
    for name in pred.get_input_names():
        handle = pred.get_input_handle(name)
        handle.reshape(feeds[name].shape)
        handle.copy_from_cpu(feeds[name])
        if lods and name in lods:
            handle.set_lod([list(np.cumsum([0, *lods[name]]).tolist())])
    pred.run()
    return [pred.get_output_handle(n).copy_to_cpu() for n in pred.get_output_names()]


WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paddle_worker.py")


@dataclass
class Fetched:
    """Values Paddle computed, by request key (memory-mapped ``.npy`` files in ``workdir``)."""

    values: dict[str, np.ndarray] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)  # key -> why Paddle could not give it
    ops: list[str] | None = None  # PIR: the main block's op names in pd2onnx's count
    workdir: tempfile.TemporaryDirectory | None = None


def fetch(program: Program, feeds: dict[str, np.ndarray], wanted: list[dict],
          python: str | None = None, timeout: float = 3600, hint: str | None = None,
          lods: dict[str, list[int]] | None = None) -> Fetched:
    """Run the program once in a Paddle worker process and return the values ``wanted``
    (see ``paddle_worker``). ``python``: the interpreter to run Paddle with (default: this one);
    ``hint``: what to tell the user if Paddle fails; ``lods``: sequence lengths of LoD inputs."""
    require_paddle(python)
    workdir = tempfile.TemporaryDirectory(prefix="pd2onnx-verify-")
    out = workdir.name
    feeds_file = os.path.join(out, "feeds.npz")
    np.savez(feeds_file, **feeds)
    request = {"format": program.format, "model": os.path.abspath(program.model_file),
               "params": os.path.abspath(program.params_file) if program.params_file else None,
               "feeds": feeds_file, "fetch": wanted, "out": out, "lods": lods or {}}
    req_file = os.path.join(out, "request.json")
    with open(req_file, "w") as f:
        json.dump(request, f)
    env = dict(os.environ)
    if python is not None:
        env.pop("PYTHONPATH", None)  # another interpreter: its own packages only
    try:
        proc = subprocess.run([python or sys.executable, WORKER, req_file], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise VerifyError(f"Paddle did not finish running the program within {timeout:.0f} s",
                          file=program.model_file) from None
    result_file = os.path.join(out, "result.json")
    if proc.returncode != 0 or not os.path.exists(result_file):
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        if "No module named 'paddle'" in tail:
            raise UsageError("paddle is not installed in the interpreter that runs it", hint=NO_PADDLE)
        raise VerifyError(
            f"Paddle failed to run the program (exit {proc.returncode}):\n{tail}",
            file=program.model_file,
            hint=hint or "check that Paddle's own predictor runs the model on these inputs",
        )
    with open(result_file) as f:
        result = json.load(f)
    fetched = Fetched(missing=dict(result["missing"]), ops=result.get("ops"), workdir=workdir)
    for key in result["saved"]:
        path = os.path.join(out, f"{key}.npy")
        try:
            fetched.values[key] = np.load(path, mmap_mode="r", allow_pickle=False)
        except ValueError:  # an empty array cannot be memory-mapped
            fetched.values[key] = np.load(path, allow_pickle=False)
    return fetched
