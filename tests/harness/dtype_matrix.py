"""The dtype matrix's case generator (used by every ``tests/dtypes/cases_*.py``).

A group is a table of ``(entry, fn)`` over the same two inputs ``x`` (any sign; no zeros for
integers) and ``p`` (positive), for a list of dtypes. ``register(__file__, group, table,
shape, dtypes)`` declares one case per dtype. For a dtype, the case (run inside the Paddle
worker) first asks Paddle which entries it can run on inputs of that dtype, eagerly and in a
static program; the saved model holds exactly those, one output each, and ``kept.json``
beside it names them. bfloat16 has no numpy type: its cases take float32 inputs, cast them to
bfloat16 in the model and the results back to float32.

Entry names: ``op[+op2...][:variant]``. Every op named is claimed: the test records the
entry's result for each claimed op that the saved program holds in that format (a legacy
spelling and its PIR op, or a decomposition, can share one entry; see
``tests/dtypes/test_dtypes.py``). A variant starting with ``random`` compares dtype and
shape only (random ops: values cannot match Paddle's); a variant starting with ``static``
is probed in a static program only (ops appended by hand that eager mode cannot run).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from harness.cases import REGISTRY, case
from harness.cpu import paddle_runs

DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
FLOATS = ("float16", "bfloat16", "float32", "float64")
ZERO_D_DTYPES = ("float32", "float64", "int32", "int64", "bool")

Table = Callable[[Any], list[tuple[str, Callable[..., Any]]]]

# group -> (table, shape, dtypes), over every loaded cases file
GROUPS: dict[str, tuple[Table, tuple[int, ...], tuple[str, ...]]] = {}

# Entries Paddle accepts on 0-D inputs but answers wrongly: p_norm(axis=1) of a 0-D x gives
# values like 6.5e-29 for |x| = 0.25 (Paddle 3.3); pd2onnx gives |x|.
PADDLE_WRONG_ON_0D = frozenset({"p_norm"})


def entry_ops(entry: str) -> list[str]:
    """The ops an entry name claims (``a+b:variant`` -> ``[a, b]``)."""
    return entry.split(":", 1)[0].split("+")


def static_only(entry: str) -> bool:
    """Whether the entry only builds in a static program (ops appended by hand, e.g. with
    ``LayerHelper.append_op``, which eager mode cannot run): the eager probe is skipped."""
    return entry.partition(":")[2].startswith("static")


def shape_only(entry: str) -> bool:
    """Whether only dtype and shape are compared (random ops)."""
    return entry.partition(":")[2].startswith("random")


def inputs_for(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> list[np.ndarray]:
    """x (any sign; no zeros for ints), p (positive) in the case's numpy dtype."""
    return [np.asarray(a) for a in _raw_inputs(rng, shape, dtype)]


def _raw_inputs(rng, shape, dtype):
    np_dtype = "float32" if dtype == "bfloat16" else dtype
    if dtype == "bool":
        return [np.asarray(rng.random(shape) > 0.5), np.asarray(rng.random(shape) > 0.3)]
    if dtype == "uint8":
        return [np.asarray(rng.integers(1, 9, size=shape)).astype(np_dtype),
                np.asarray(rng.integers(1, 4, size=shape)).astype(np_dtype)]
    if dtype.startswith("int"):
        x = np.asarray(rng.integers(-6, 7, size=shape))
        x[x == 0] = 3
        return [x.astype(np_dtype), np.asarray(rng.integers(1, 4, size=shape)).astype(np_dtype)]
    x = np.asarray(rng.standard_normal(shape)) * 2
    p = np.asarray(rng.random(shape)) * 2 + 0.5
    if dtype in ("float16", "bfloat16"):  # values exactly representable: no rounding differences in inputs
        x, p = np.round(x * 8) / 8, np.round(p * 8) / 8
    return [x.astype(np_dtype), p.astype(np_dtype)]


def probe(paddle, entries, inputs, dtype):
    """The entries Paddle runs on these inputs, eagerly and in a static program (whose
    Python-side dtype checks are stricter than eager mode's)."""
    bf16 = dtype == "bfloat16"

    def run(fn, xs):
        if bf16:
            xs = [t.astype("bfloat16") for t in xs]
        out = fn(*xs)
        return out.astype("float32") if bf16 and out.dtype == paddle.bfloat16 else out

    kept = []
    for name, fn in entries:
        if not all(paddle_runs(op) for op in entry_ops(name)):
            continue  # Paddle's kernel dies on this CPU (harness.cpu; test_dtypes reports it as skipped)
        if static_only(name):
            kept.append((name, fn))
            continue
        try:
            np.asarray(run(fn, [paddle.to_tensor(a) for a in inputs]).numpy())
        except Exception:  # Paddle has no kernel for this dtype (or refuses the input)
            continue
        kept.append((name, fn))
    paddle.enable_static()
    try:
        exe = paddle.static.Executor(paddle.CPUPlace())
        static_kept = []
        for name, fn in kept:
            main, startup = paddle.static.Program(), paddle.static.Program()
            try:
                # a scope of its own: variables an entry leaves in the global scope (e.g. a
                # feed given a LoD by a sequence op) must not change the next entries
                with paddle.static.scope_guard(paddle.static.Scope()):
                    with paddle.static.program_guard(main, startup):
                        xs = [paddle.static.data(f"x{i}", list(a.shape), str(a.dtype)) for i, a in enumerate(inputs)]
                        for v in xs:
                            v.stop_gradient = False  # as paddle.jit.save's inputs
                        out = run(fn, xs)
                    exe.run(startup)
                    # return_numpy=False: outputs may carry a LoD (FPN ops), which numpy refuses
                    exe.run(main, feed={f"x{i}": a for i, a in enumerate(inputs)}, fetch_list=[out],
                            return_numpy=False)
            except Exception:
                continue
            static_kept.append((name, fn))
    finally:
        paddle.disable_static()
    return static_kept


def _record(module_file: str, name: str, kept: list[str], why: str = "") -> None:
    """Write kept.json (and why.txt) into the case's build directory (the worker's
    ``file::out_root`` argument for the case's module)."""
    here = os.path.abspath(module_file)
    for arg in sys.argv[2:]:
        path, _, root = arg.partition("::")
        if os.path.abspath(path) == here:
            os.makedirs(os.path.join(root, name), exist_ok=True)
            with open(os.path.join(root, name, "kept.json"), "w") as f:
                json.dump(kept, f)
            if why:
                with open(os.path.join(root, name, "why.txt"), "w") as f:
                    f.write(why)


def _predictor_error(paddle, fn, inputs):
    """Why Paddle's own save + inference predictor cannot run ``fn`` ("" when it can): the
    worker's path, tried first so that the case always builds."""
    import tempfile

    from harness import worker

    try:
        layer = worker._wrap(fn, len(inputs))
        layer.eval()
        specs = [paddle.static.InputSpec(list(a.shape), str(a.dtype), f"x{i}") for i, a in enumerate(inputs)]
        with tempfile.TemporaryDirectory() as d:
            prefix = os.path.join(d, "model")
            paddle.jit.save(layer, prefix, input_spec=specs)
            model = prefix + (".json" if os.path.exists(prefix + ".json") else ".pdmodel")
            params = prefix + ".pdiparams"
            worker._predict([model, params if os.path.exists(params) else ""], inputs)
    except Exception as e:  # noqa: BLE001
        lines = [ln.strip() for ln in str(e).strip().splitlines() if "Error" in ln] or [type(e).__name__]
        return lines[-1][:300]
    return ""


def _make(module_file: str, group: str, dtype: str):
    table, shape, _ = GROUPS[group]

    def build(paddle, rng):
        inputs = inputs_for(rng, shape, dtype)
        # every input is used, whatever Paddle keeps
        entries = [(n, f) for n, f in table(paddle) if not (shape == () and entry_ops(n)[0] in PADDLE_WRONG_ON_0D)]
        entries = entries + [("assign", lambda x, p: paddle.assign(p)),
                             ("shape+shape64:x", lambda x, p: paddle.shape(x)),
                             ("shape+shape64:p", lambda x, p: paddle.shape(p))]
        kept = probe(paddle, entries, inputs, dtype)

        def fn(x, p):
            if dtype == "bfloat16":
                x, p = x.astype("bfloat16"), p.astype("bfloat16")
            outs = []
            for _, f in kept:
                out = f(x, p)
                if dtype == "bfloat16" and out.dtype == paddle.bfloat16:
                    out = out.astype("float32")
                outs.append(out)
            return tuple(outs)

        name = f"dt_{group}_{dtype}"
        why = "Paddle runs none of the group's ops in this dtype" if not kept else _predictor_error(paddle, fn, inputs)
        if why:  # a stand-in model (so that every case builds); the test skips it with the reason
            _record(module_file, name, [], why)
            return (lambda x, p: paddle.add(x, p)), [np.zeros((2,), "float32"), np.ones((2,), "float32")]
        _record(module_file, name, [n for n, _ in kept])
        return fn, inputs

    build.__name__ = f"dt_{group}_{dtype}"
    build.__doc__ = f"The {group} group in {dtype} (entries Paddle runs; outputs in table order)."
    return build


def register(module_file: str, group: str, table: Table, shape: Sequence[int], dtypes: Sequence[str]) -> None:
    """Declare the group's cases, one per dtype (``module_file``: the calling cases file's
    ``__file__``, which the worker imports to build them)."""
    if "_" in group:
        raise ValueError(f"dtype-matrix group names have no '_' (case names split on it): {group!r}")
    if group in GROUPS:
        raise ValueError(f"two dtype-matrix groups named {group!r}")
    GROUPS[group] = (table, tuple(shape), tuple(dtypes))
    low = ("float16", "bfloat16")
    for dtype in dtypes:
        name = f"dt_{group}_{dtype}"
        case(f"dtype-matrix:{group}", name=name,
             rtol=1e-2 if dtype in low else 1e-5, atol=1e-2 if dtype in low else 1e-5)(_make(module_file, group, dtype))
        REGISTRY[name].module = os.path.abspath(module_file)


def zero_d(group: str) -> bool:
    """Whether a group runs on 0-D inputs (its results are declared under ``"0-D"``)."""
    return group == "zerod" or group.endswith("0d")
