"""What the verify tests share: the verify cases loaded once, a built case, its inputs by the
model's input names, and a mapper made wrong on purpose."""

from __future__ import annotations

import os

import numpy as np

from harness import builder
from harness.cases import REGISTRY, load_case_files
from harness.check import load_io
from pd2onnx.paddle import load

load_case_files(os.path.dirname(os.path.abspath(__file__)), "verifycases")
FORMATS = ["pir", "legacy"]


def built(name: str, fmt: str):
    """The case ``name`` built by Paddle in format ``fmt`` (failing the test if it was not)."""
    case = builder.get(REGISTRY[name], fmt)
    assert case.error is None, case.error
    return case


def feeds(case) -> dict[str, np.ndarray]:
    """The case's inputs, by the model's input names."""
    inputs, _ = load_io(os.path.join(case.dir, "io.npz"))
    program = load(case.model_file)
    return {v.name: a for v, a in zip(program.inputs, inputs)}


def save_feeds(case, path) -> str:
    """The case's inputs as an ``--inputs`` npz at ``path``."""
    np.savez(path, **feeds(case))
    return str(path)


def perturbed(original, slot: str = "out", factor: float = 1.001):
    """A mapper that does what ``original`` does, then multiplies its output ``slot`` by
    ``factor``: a conversion wrong on purpose, by a known relative amount."""
    def fn(ctx):
        original.fn(ctx)
        value = ctx.state.env[ctx.pd.output(slot)]
        ctx.set_output(slot, ctx.op.Mul(value, ctx.const(factor, "float32")))
    return fn
