"""OpenVINO's CPU plugin on a chosen CPU class: one child process per class, kept for the test
session, that compiles and runs ONNX files.

OpenVINO (like ONNX Runtime) picks its kernels by the CPU's instruction set, and their NaN
handling and last bits differ between AVX2 and AVX-512 kernels. oneDNN, under OpenVINO's
CPU plugin, reads ``ONEDNN_MAX_CPU_ISA`` once, when it first looks at the CPU: a process
started with it set runs the kernels of that lower class (seen with OpenVINO 2026.4:
Greater with NaN computed as "not less-or-equal" on AVX-512 kernels, correctly on AVX2
ones). So each class gets its own process; the machine's own class runs with nothing set,
as users run it. A crash of the plugin ends only the child: it is reported as the outcome
and a new child serves the next model. ONNX Runtime's kernels (MLAS) have no such cap: they
are chosen from the CPU's flags alone (a build-time choice otherwise).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np

from harness.cpu import native_cpu_class

# OpenVINO's CPU plugin, as a user deploys it: f32 precision hint (else it may compute in bf16 or
# f16 where the CPU has them), one thread (the tests share the machine's cores)
OPENVINO_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}


class OpenVinoRefused(Exception):
    """OpenVINO could not read or compile the model (its message)."""


class OpenVinoFailed(Exception):
    """OpenVINO compiled the model but failed running it (its message)."""


class OpenVinoCrashed(Exception):
    """The child process died on the model (exit code and the end of its stderr)."""


def _send(stream: BinaryIO, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream: BinaryIO) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def message(e: BaseException) -> str:
    """OpenVINO's message without its source-location preamble lines."""
    lines = [ln for ln in str(e).splitlines() if ln.strip() and not ln.startswith("Exception from src/")]
    return " ".join(lines)[:1500] or type(e).__name__


class _Child:
    def __init__(self, cpu: str):
        from pd2onnx.convert.runtime_notes import CPU_CLASSES

        env = dict(os.environ)
        if cpu != native_cpu_class():
            env["ONEDNN_MAX_CPU_ISA"] = CPU_CLASSES[cpu]
        else:
            env.pop("ONEDNN_MAX_CPU_ISA", None)
        self.stderr = tempfile.TemporaryFile()
        tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {tests!r}); "
             "from harness.openvino_run import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env,
        )

    def request(self, req: tuple) -> Any:
        try:
            _send(self.proc.stdin, req)
            return _receive(self.proc.stdout)
        except (EOFError, BrokenPipeError, OSError):
            code = self.proc.wait()
            self.stderr.seek(0)
            tail = self.stderr.read().decode(errors="replace").strip()[-300:]
            raise OpenVinoCrashed(f"exit code {code}: {tail}") from None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


_children: dict[str, _Child] = {}
_default_cpu: list[str] = []  # set by ``on_cpu``


@contextlib.contextmanager
def on_cpu(cpu: str) -> Iterator[None]:
    """Run OpenVINO on the CPU class ``cpu`` where a caller names none (the probes of
    tests/test_openvino_limits.py)."""
    _default_cpu.append(cpu)
    try:
        yield
    finally:
        _default_cpu.pop()


@atexit.register
def _close_all() -> None:
    for child in _children.values():
        child.close()


def _child(cpu: str) -> _Child:
    child = _children.get(cpu)
    if child is None or child.proc.poll() is not None:
        child = _children[cpu] = _Child(cpu)
    return child


def run_file(path: str, feeds: list[dict[str, np.ndarray]], cpu: str | None = None) -> list[list[np.ndarray]]:
    """Compile the ONNX file ``path`` with OpenVINO's CPU plugin on the CPU class ``cpu`` (the
    machine's own by default) and run it on each set of ``feeds`` (by input name; inputs the
    compiled model dropped are not fed); the outputs of each run, in graph order. Raises
    ``OpenVinoRefused``, ``OpenVinoFailed`` or ``OpenVinoCrashed``."""
    cpu = cpu or (_default_cpu[-1] if _default_cpu else native_cpu_class())
    try:
        status, payload = _child(cpu).request(("run", path, feeds))
    except OpenVinoCrashed:
        _children.pop(cpu, None)
        raise
    if status == "refused":
        raise OpenVinoRefused(payload)
    if status == "failed":
        index, text = payload
        raise OpenVinoFailed(text if len(feeds) == 1 else f"input set {index}: {text}")
    return payload


def serve() -> None:
    """The child's loop: requests ``("run", path, feeds)`` on stdin, answers on stdout."""
    import openvino

    core = openvino.Core()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write into the answers
    while True:
        try:
            _, path, feed_sets = _receive(stdin)
        except EOFError:
            return
        try:
            compiled = core.compile_model(core.read_model(path), "CPU", OPENVINO_CONFIG)
        except Exception as e:  # noqa: BLE001 - OpenVINO reports refusals as RuntimeError and others
            _send(stdout, ("refused", message(e)))
            continue
        kept = {name for port in compiled.inputs for name in port.get_names()}
        request = compiled.create_infer_request()
        outputs = []
        for index, feeds in enumerate(feed_sets):
            try:
                results = request.infer({n: a for n, a in feeds.items() if n in kept})
            except Exception as e:  # noqa: BLE001
                _send(stdout, ("failed", (index, message(e))))
                break
            outputs.append([np.array(results[port]) for port in compiled.outputs])
        else:
            _send(stdout, ("ok", outputs))
