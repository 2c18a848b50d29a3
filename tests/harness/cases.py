"""Declaring test cases: a function that builds a Paddle callable and its inputs.

    @case("relu")
    def relu(paddle, rng):
        x = rng.standard_normal((2, 3)).astype("float32")
        return paddle.nn.functional.relu, [x]

The function runs inside a Paddle worker (Paddle 3.3 for PIR files, Paddle 2.6 for
legacy files), with ``paddle`` imported and ``rng`` a seeded numpy Generator. It returns
``(fn, inputs)`` or ``(fn, inputs, shapes)``: ``fn`` is a ``paddle.nn.Layer`` or a
function of the inputs, ``shapes`` the InputSpec shapes (None per dim = dynamic; default:
the inputs' own shapes). Outputs are whatever ``fn`` returns (a tensor or a tuple/list).

Options: ``ops`` (canonical op names the case exercises; default: the case's first name
argument), ``formats`` (default both; leaving one out needs ``why``), ``rtol``/``atol``
(default 1e-5; say why when looser), ``opsets`` (explicit list, default: lowest that
converts, 17 and the highest ONNX Runtime runs), ``predict`` (False: record no Paddle
outputs; for reader-only models Paddle's predictor cannot run), ``scaled_atol`` (atol is
multiplied by max(1, max|Paddle output|): for deep networks whose outputs reach the
hundreds, where fp32 summation order alone moves the last digits), ``reference`` (a numpy
rendering of Paddle's kernel, ``fn(inputs) -> outputs``: the reference on CPUs where Paddle's
kernel of the case's ops cannot run (``harness.cpu``), else checked against Paddle's outputs).

Custom saving (``custom=True``): for models that ``paddle.jit.save`` cannot write (static
programs, older layouts, models written by Paddle's own tools), the function is called as
``fn(paddle, rng, out_dir)``, saves the model itself under ``out_dir`` and returns a dict:

- ``model``: what a user passes to pd2onnx, relative to ``out_dir`` (file, directory or prefix);
- ``params``: optional params file relative to ``out_dir`` (when it is not found by default);
- ``inputs``: the input arrays, in feed order;
- ``outputs``: optional reference outputs computed by the case (default: Paddle's inference
  predictor on the saved files, configured by ``predict``);
- ``predict``: the ``paddle.inference.Config`` arguments relative to ``out_dir`` (a model
  directory, or program file and params file);
- ``load``: ``(path, kwargs)`` for ``paddle.static.load_inference_model`` (the reader view;
  path relative to ``out_dir``); omit it to record no view.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("pir", "legacy")


@dataclass
class Case:
    name: str
    fn: Callable[..., Any]
    ops: tuple[str, ...]
    module: str  # file path of the module defining it
    formats: tuple[str, ...] = FORMATS
    why: str = ""
    rtol: float = 1e-5
    atol: float = 1e-5
    opsets: tuple[int, ...] | None = None
    seed: int = 0
    predict: bool = True  # False: no Paddle outputs recorded (reader-only cases)
    scaled_atol: bool = False  # atol relative to the output's scale: max(1, max|paddle|)
    custom: bool = False  # fn(paddle, rng, out_dir) saves the model itself (see the module doc)
    # numpy rendering of Paddle's kernel: fn(inputs) -> outputs; the reference where Paddle's
    # CPU kernel cannot run on this CPU (harness.cpu), else checked against Paddle's outputs
    reference: Callable[..., Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.name


REGISTRY: dict[str, Case] = {}
_LOADED: set[str] = set()


def case(
    *ops: str,
    name: str | None = None,
    formats: tuple[str, ...] = FORMATS,
    why: str = "",
    rtol: float = 1e-5,
    atol: float = 1e-5,
    opsets: tuple[int, ...] | None = None,
    seed: int = 0,
    predict: bool = True,
    scaled_atol: bool = False,
    custom: bool = False,
    reference: Callable[..., Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    if set(formats) != set(FORMATS) and not why:
        raise ValueError("a case that leaves out a format must say why")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        cname = name or fn.__name__
        if cname in REGISTRY:
            raise ValueError(f"duplicate test case name {cname!r}")
        REGISTRY[cname] = Case(
            cname, fn, tuple(ops) or (cname,), inspect.getsourcefile(fn) or "", tuple(formats), why,
            rtol, atol, tuple(opsets) if opsets else None, seed, predict,
            scaled_atol, custom, reference,
        )
        return fn

    return register


def load_case_files(directory: str, prefix: str) -> None:
    """Import every ``cases_*.py`` in ``directory`` (registering its cases).

    ``PD2ONNX_CASE_FILES=cases_nn,cases_tensor`` restricts it (and so the Paddle builds).
    """
    import glob
    import importlib.util
    import os

    only = set(os.environ.get("PD2ONNX_CASE_FILES", "").replace(".py", "").split(",")) - {""}
    for path in sorted(glob.glob(os.path.join(directory, "cases_*.py"))):
        path = os.path.realpath(path)
        stem = os.path.basename(path)[:-3]
        if (only and stem not in only) or path in _LOADED:
            continue
        _LOADED.add(path)
        spec = importlib.util.spec_from_file_location(f"{prefix}_{stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


def params(formats: tuple[str, ...] = FORMATS, names: list[str] | None = None) -> list:
    """pytest params (case, fmt) for the registered cases."""
    import pytest

    return [
        pytest.param(c, f, id=f"{n}-{f}")
        for n, c in sorted(REGISTRY.items())
        if names is None or n in names
        for f in formats
    ]
