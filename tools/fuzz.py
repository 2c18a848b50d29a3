"""pd2onnx's own fuzzer: seeded mutations of small committed models, each run through the CLI.

    python tools/fuzz.py -n 500 [--seed 0] [--keep DIR] [--timeout 30] [-v]

Seeds are the committed fixtures (nothing is built by Paddle at fuzz time): the model folders
of tests/fixtures/smoke/ (PIR and legacy programs, Paddle 1.x one file per parameter, toolkit
folders with configs) and the programs of tests/fixtures/fuzz/ (control flow, detection,
quantized; ``tools/make_fuzz_fixtures.py``). Mutant ``i`` of seed ``S`` is fully determined by
``(S, i)``: its fixture, its mutation and the CLI options. Mutations act on bytes (bit flips,
truncations of the program or of a params file, a file of the folder removed), on the PIR JSON
(a value replaced, a list emptied, a key dropped, an operand rewired to another value) and on
the legacy protobuf (a field damaged or cleared, an operand renamed, a variable's dims
changed); ``verify`` mutants damage the ``--inputs`` npz or the ONNX file's pd2onnx
provenance record (edited, cut, dropped).

Each mutant runs in this process through ``pd2onnx.cli.main`` (``--debug``, so that an
exception comes out whole) and must end in one of two ways:
  - a clean error: a Pd2OnnxError other than InternalError (the CLI prints it, exit 1 or 2),
    and no output file nor temporary file left behind;
  - exit 0 and an output file that ``onnx.checker`` (full check) accepts.
Anything else (an internal error, another exception, a timeout, a file the checker rejects,
a partial output) is a finding, listed with seed, index, fixture and mutation. ``verify``
mutants read the damaged files the way verify does before it runs Paddle (the program, the
inputs, the ONNX file and its provenance matched with the program); when Paddle is installed
they also run ``pd2onnx verify`` itself. Exit status: 0 when every mutant ended clean, 1 else.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import io
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = (os.path.join(ROOT, "tests", "fixtures", "smoke"), os.path.join(ROOT, "tests", "fixtures", "fuzz"))
# smoke folders with Paddle's inputs and outputs (io.npz) that verify mutants start from
VERIFY_FIXTURES = ("paddlex", "paddledet")
PROGRAM_NAMES = ("__model__",)


class MutantTimeout(BaseException):
    """Raised by the alarm when a mutant runs too long (BaseException: no ``except Exception``
    inside pd2onnx swallows it)."""


@dataclasses.dataclass
class Outcome:
    seed: int
    index: int
    fixture: str
    mutation: str
    options: list[str]
    status: str  # "converted", "refused" (a clean error) or "finding"
    detail: str = ""
    seconds: float = 0.0

    @property
    def clean(self) -> bool:
        return self.status != "finding"

    def line(self) -> str:
        opts = " ".join(self.options)
        return (f"seed {self.seed} #{self.index} {self.fixture} [{self.mutation}]"
                + (f" {opts}" if opts else "") + f": {self.detail}")


# ---------------------------------------------------------------------------- fixtures


def fixtures() -> list[str]:
    """Every committed model folder, sorted (the order is part of a mutant's identity)."""
    found = []
    for root in FIXTURES:
        if os.path.isdir(root):
            found += [os.path.join(root, d) for d in sorted(os.listdir(root)) if os.path.isdir(os.path.join(root, d))]
    return found


def _label(folder: str) -> str:
    return os.path.relpath(folder, os.path.join(ROOT, "tests", "fixtures"))


def program_file(folder: str) -> str:
    """The program in a fixture folder (the one ``.json`` that is a PIR program, a
    ``.pdmodel`` or ``__model__``)."""
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith(".pdmodel") or name in PROGRAM_NAMES:
            return path
        if name.endswith(".json") and name not in ("files.json",):
            with open(path, "rb") as f:
                if b'"program"' in f.read(4096):
                    return path
    raise FileNotFoundError(f"no program in {folder}")


def _data_files(folder: str) -> list[str]:
    """Weights files: a combined ``.pdiparams`` or the one-file-per-parameter layout."""
    out = []
    for dirpath, _, files in os.walk(folder):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            if f.endswith(".pdiparams") or ("@" in f or f.startswith("head.")):
                out.append(path)
    return sorted(out)


# ---------------------------------------------------------------------------- byte mutations


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def bit_flips(rng: random.Random, path: str) -> str:
    data = bytearray(_read(path))
    if not data:
        return "bit flips in an empty file"
    k = rng.choice((1, 1, 2, 4, 8))
    spots = sorted(rng.randrange(len(data) * 8) for _ in range(k))
    for bit in spots:
        data[bit // 8] ^= 1 << (bit % 8)
    _write(path, bytes(data))
    return f"{k} bit flip(s) in {os.path.basename(path)} at byte(s) {','.join(str(b // 8) for b in spots)}"


def truncate(rng: random.Random, path: str) -> str:
    data = _read(path)
    cut = rng.randrange(len(data)) if data else 0
    _write(path, data[:cut])
    return f"{os.path.basename(path)} cut to {cut} of {len(data)} bytes"


# ---------------------------------------------------------------------------- JSON mutations


def _json_slots(node, path=()):
    """Every (container, key, path) under ``node``: the places a mutation can act on."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield node, k, path + (k,)
            yield from _json_slots(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield node, i, path + (i,)
            yield from _json_slots(v, path + (i,))


def _replacement(rng: random.Random, doc) -> object:
    options = [None, 0, -1, 1, 2**31, -(2**63), 1e300, float("nan"), "", "x", "0.t_f32", [], {}, [[]], True,
               [-1], [0], [2**40], {"%": 0}, {"#": "0.a_i32", "D": 0}]
    choice = rng.choice(options + ["<other>"])
    if choice == "<other>":  # a value taken from elsewhere in the document: type-plausible
        slots = list(_json_slots(doc))
        container, key, _ = rng.choice(slots)
        return copy.deepcopy(container[key])
    return copy.deepcopy(choice)


def _short(path) -> str:
    text = "/".join(str(p) for p in path)
    return text if len(text) <= 90 else "..." + text[-87:]


def json_mutation(rng: random.Random, path: str) -> str:
    with open(path) as f:
        doc = json.load(f)
    kind = rng.choice(("replace", "replace", "empty-list", "drop-key", "rewire", "dims"))
    slots = list(_json_slots(doc))
    if kind == "empty-list":
        lists = [(c, k, p) for c, k, p in slots if isinstance(c[k], list) and c[k]]
        container, key, where = rng.choice(lists)
        container[key] = []
        what = f"json list {_short(where)} emptied"
    elif kind == "drop-key":
        keyed = [(c, k, p) for c, k, p in slots if isinstance(c, dict)]
        container, key, where = rng.choice(keyed)
        del container[key]
        what = f"json key {_short(where)} dropped"
    elif kind == "rewire":
        operands = [(c, k, p) for c, k, p in slots if isinstance(c[k], dict) and set(c[k]) == {"%"}
                    and p[-2:-1] == ("I",)]  # an operand: {"%": id} in an op's "I" list
        ids = sorted({c[k] for c, k, p in slots if k == "%" and isinstance(c[k], int)})
        if not operands or not ids:
            return json_value(rng, doc, path, slots)
        container, key, where = rng.choice(operands)
        old = container[key]["%"]
        container[key] = {"%": rng.choice(ids)}
        what = f"json operand {_short(where)} rewired from %{old} to %{container[key]['%']}"
    elif kind == "dims":
        dims = [(c, k, p) for c, k, p in slots if k == "D" and isinstance(c[k], list) and len(c[k]) >= 2
                and isinstance(c[k][1], list)]
        if not dims:
            return json_value(rng, doc, path, slots)
        container, key, where = rng.choice(dims)
        shape = container[key][1]
        new = [rng.choice((-1, 0, 1, 3, 7, 2**31 - 1)) for _ in range(rng.choice((0, len(shape), len(shape) + 1)))]
        container[key][1] = new
        what = f"json dims {_short(where)} {shape} -> {new}"
    else:
        return json_value(rng, doc, path, slots)
    _write(path, json.dumps(doc).encode())
    return what


def json_value(rng: random.Random, doc, path: str, slots) -> str:
    container, key, where = rng.choice(slots)
    container[key] = _replacement(rng, doc)
    _write(path, json.dumps(doc).encode())
    return f"json value {_short(where)} = {json.dumps(container[key])[:60]}"


# ---------------------------------------------------------------------------- protobuf mutations


def _messages(msg, path=()):
    """Every (message, path) in a protobuf tree."""
    yield msg, path
    for field, value in msg.ListFields():
        if field.type != field.TYPE_MESSAGE:
            continue
        if _repeated(field):
            for i, sub in enumerate(value):
                yield from _messages(sub, path + (f"{field.name}[{i}]",))
        else:
            yield from _messages(value, path + (field.name,))


def _repeated(field) -> bool:
    is_repeated = getattr(field, "is_repeated", None)  # protobuf 5+ (upb) has no ``label``
    return bool(is_repeated) if is_repeated is not None else field.label == field.LABEL_REPEATED


def _damage_scalar(rng: random.Random, field, value):
    t = field.type
    if t == field.TYPE_STRING:
        return rng.choice(("", "x", value + "_", value[: len(value) // 2], "\u00e9" * 3))
    if t == field.TYPE_BYTES:
        return rng.choice((b"", b"\xff\xfe", value[: len(value) // 2]))
    if t == field.TYPE_BOOL:
        return not value
    if t in (field.TYPE_FLOAT, field.TYPE_DOUBLE):
        return rng.choice((0.0, -1.0, 1e30, float("nan"), float("inf")))
    unsigned = t in (field.TYPE_UINT32, field.TYPE_UINT64, field.TYPE_FIXED32, field.TYPE_FIXED64)
    bits = 32 if t in (field.TYPE_INT32, field.TYPE_SINT32, field.TYPE_SFIXED32, field.TYPE_UINT32,
                       field.TYPE_FIXED32, field.TYPE_ENUM) else 64
    choices = [0, 1, 2, 7, 25, 2 ** (bits - 1) - 1] + ([] if unsigned else [-1, -(2 ** (bits - 1))])
    return rng.choice(choices)


def pb_mutation(rng: random.Random, path: str) -> str:
    from pd2onnx.paddle.framework_pb2 import ProgramDesc

    desc = ProgramDesc()
    desc.ParseFromString(_read(path))
    kind = rng.choice(("field", "field", "clear", "rewire", "dims"))
    messages = list(_messages(desc))
    if kind == "rewire":
        ops = [(m, p) for m, p in messages if m.DESCRIPTOR.name == "Var" and m.arguments]
        if ops:
            var, where = rng.choice(ops)
            names = sorted({a for m, _ in messages if m.DESCRIPTOR.name == "Var" for a in m.arguments})
            i = rng.randrange(len(var.arguments))
            old, var.arguments[i] = var.arguments[i], rng.choice(names)
            _write(path, desc.SerializeToString())
            return f"pb operand {'/'.join(where)} {old} -> {var.arguments[i]}"
        kind = "field"
    if kind == "dims":
        tensors = [(m, p) for m, p in messages if m.DESCRIPTOR.name == "TensorDesc" and len(m.dims)]
        if tensors:
            t, where = rng.choice(tensors)
            old = list(t.dims)
            del t.dims[:]
            t.dims.extend(rng.choice((-1, 0, 1, 3, 7, 2**31 - 1)) for _ in range(rng.choice((0, len(old), len(old) + 1))))
            _write(path, desc.SerializeToString())
            return f"pb dims {'/'.join(where)} {old} -> {list(t.dims)}"
        kind = "field"
    candidates = [(m, p, f, v) for m, p in messages for f, v in m.ListFields()]
    msg, where, field, value = rng.choice(candidates)
    name = "/".join(where + (field.name,))
    if kind == "clear" or field.type == field.TYPE_MESSAGE:
        if _repeated(field) and len(value) > 1 and rng.random() < 0.5:
            del value[rng.randrange(len(value))]
            what = f"pb {name}: one element removed"
        else:
            msg.ClearField(field.name)
            what = f"pb {name} cleared"
    elif _repeated(field):
        i = rng.randrange(len(value))
        value[i] = _damage_scalar(rng, field, value[i])
        what = f"pb {name}[{i}] = {value[i]!r}"[:120]
    else:
        setattr(msg, field.name, _damage_scalar(rng, field, value))
        what = f"pb {name} = {getattr(msg, field.name)!r}"[:120]
    _write(path, desc.SerializeToString())
    return what


# ---------------------------------------------------------------------------- convert mutants


def mutate_folder(rng: random.Random, folder: str) -> str:
    """Damage one thing in the copied fixture ``folder``; returns what was done."""
    program = program_file(folder)
    data = _data_files(folder)
    structural = pb_mutation if not program.endswith(".json") else json_mutation
    kinds = [("structure", 6), ("program-bits", 2), ("program-cut", 1)]
    if data:
        kinds += [("params-bits", 1), ("params-cut", 1)]
    kinds += [("drop-file", 1)]
    kind = rng.choices([k for k, _ in kinds], weights=[w for _, w in kinds])[0]
    if kind == "structure":
        return structural(rng, program)
    if kind == "program-bits":
        return bit_flips(rng, program)
    if kind == "program-cut":
        return truncate(rng, program)
    if kind == "params-bits":
        return bit_flips(rng, rng.choice(data))
    if kind == "params-cut":
        return truncate(rng, rng.choice(data))
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs)
    victim = rng.choice(files)
    os.remove(victim)
    return f"{os.path.relpath(victim, folder)} removed"


CONVERT_OPTIONS = ([], [], [], ["--no-optimize"], ["--opset", "11"], ["--opset", "21"], ["--fp16"])


def _cli(argv: list[str]) -> tuple[int | None, BaseException | None, str]:
    """``pd2onnx.cli.main(argv)`` with its output captured: (exit code, exception, stderr)."""
    from pd2onnx import cli

    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = cli.main(argv)
        return code, None, err.getvalue()
    except MutantTimeout:
        raise
    except BaseException as exc:  # noqa: BLE001  (SystemExit from argparse included)
        return None, exc, err.getvalue()


def _describe(exc: BaseException) -> str:
    from pd2onnx.errors import InternalError

    frames = traceback.extract_tb((exc.__cause__ if isinstance(exc, InternalError) and exc.__cause__ else exc)
                                  .__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}{where}"


def judge(code: int | None, exc: BaseException | None, output: str) -> tuple[str, str]:
    """(status, detail) of one CLI run that should have written ``output``."""
    from pd2onnx.errors import InternalError, Pd2OnnxError

    leftovers = [f for f in os.listdir(os.path.dirname(output)) if f.startswith(".pd2onnx-")]
    if exc is not None:
        if isinstance(exc, Pd2OnnxError) and not isinstance(exc, InternalError):
            if os.path.exists(output) or leftovers:
                return "finding", f"clean error but output left behind: {' '.join(str(exc).split())[:200]}"
            if exc.exit_code not in (1, 2):
                return "finding", f"exit code {exc.exit_code} for an error: {str(exc).splitlines()[0][:200]}"
            return "refused", f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        return "finding", _describe(exc)
    if leftovers:
        return "finding", f"temporary files left behind: {leftovers}"
    if code != 0:
        return "finding", f"exit {code} without an error"
    if not os.path.exists(output):
        return "finding", "exit 0 but no output file"
    import onnx

    try:
        onnx.checker.check_model(output, full_check=True)
    except Exception as e:  # noqa: BLE001
        return "finding", f"exit 0 but onnx.checker rejects the file: {' '.join(str(e).split())[:300]}"
    return "converted", ""


def run_convert_mutant(rng: random.Random, fixture: str, work: str) -> tuple[str, list[str], str, str]:
    folder = os.path.join(work, "model")
    shutil.copytree(fixture, folder)
    mutation = mutate_folder(rng, folder)
    options = list(rng.choice(CONVERT_OPTIONS))
    out_dir = os.path.join(work, "out")
    os.makedirs(out_dir)
    output = os.path.join(out_dir, "model.onnx")
    code, exc, _ = _cli(["convert", folder, "-o", output, "-q", "--debug", *options])
    status, detail = judge(code, exc, output)
    return mutation, options, status, detail


# ---------------------------------------------------------------------------- verify mutants


_converted: dict[str, bytes] = {}


def _reference_onnx(fixture: str) -> bytes:
    """The fixture converted by pd2onnx (once per process), provenance included."""
    if fixture not in _converted:
        import onnx_ir as ir

        from pd2onnx.api import convert

        _converted[fixture] = ir.serde.serialize_model(convert(fixture)).SerializeToString()
    return _converted[fixture]


def _inputs_npz(fixture: str, path: str) -> None:
    """Paddle's recorded inputs (io.npz ``in0``...) under the model's input names."""
    import numpy as np

    from pd2onnx.paddle import load

    program = load(fixture)
    recorded = np.load(os.path.join(fixture, "io.npz"))
    np.savez(path, **{v.name: recorded[f"in{i}"] for i, v in enumerate(program.inputs)})


def npz_mutation(rng: random.Random, path: str) -> str:
    import numpy as np

    kind = rng.choice(("bits", "cut", "key", "dtype", "shape", "object", "extra", "scalar"))
    if kind == "bits":
        return bit_flips(rng, path)
    if kind == "cut":
        return truncate(rng, path)
    arrays = dict(np.load(path))
    name = sorted(arrays)[0]
    if kind == "key":
        arrays["renamed_" + name] = arrays.pop(name)
        what = f"inputs npz: {name} renamed"
    elif kind == "dtype":
        dt = rng.choice(("int64", "float16", "bool", "complex64", "U3"))
        arrays[name] = arrays[name].astype(dt)
        what = f"inputs npz: {name} as {dt}"
    elif kind == "shape":
        arrays[name] = arrays[name].reshape(-1)[: rng.choice((0, 1, 5))]
        what = f"inputs npz: {name} reshaped to {arrays[name].shape}"
    elif kind == "object":
        np.savez(path, **{name: np.array([object()], dtype=object)})
        return f"inputs npz: {name} an object array"
    elif kind == "extra":
        arrays["extra"] = np.zeros(3)
        what = "inputs npz: an extra array"
    else:
        arrays[name] = np.float32(1.0)
        what = f"inputs npz: {name} a scalar"
    np.savez(path, **arrays)
    return what


def provenance_mutation(rng: random.Random, path: str) -> str:
    import onnx

    from pd2onnx import provenance

    model = onnx.load(path)
    props = {p.key: p for p in model.metadata_props}
    prop = props.get(provenance.KEY)
    if prop is None:
        return "no provenance to damage"
    kind = rng.choice(("cut", "json", "json", "json", "drop", "bits"))
    if kind == "drop":
        model.metadata_props.remove(prop)
        what = "provenance record removed"
    elif kind == "cut":
        cut, total = rng.randrange(len(prop.value)), len(prop.value)
        prop.value = prop.value[:cut]
        what = f"provenance cut to {cut} of {total} characters"
    elif kind == "bits":
        raw = bytearray(prop.value.encode())
        i = rng.randrange(len(raw))
        raw[i] = rng.randrange(32, 127)
        prop.value = raw.decode("utf-8", "replace")
        what = f"provenance character {i} replaced"
    else:
        doc = json.loads(prop.value)
        slots = list(_json_slots(doc))
        container, key, where = rng.choice(slots)
        choice = rng.choice(("replace", "drop", "empty"))
        if choice == "drop" and isinstance(container, dict):
            del container[key]
            what = f"provenance key {_short(where)} dropped"
        elif choice == "empty" and isinstance(container[key], (list, dict)):
            container[key] = type(container[key])()
            what = f"provenance {_short(where)} emptied"
        else:
            container[key] = _replacement(rng, doc)
            what = f"provenance {_short(where)} = {json.dumps(container[key])[:60]}"
        prop.value = json.dumps(doc)
    onnx.save(model, path)
    return what


def paddle_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("paddle") is not None


def verify_front(model: str, onnx_file: str, inputs: str) -> None:
    """What ``pd2onnx verify`` reads before it runs Paddle: the program, the inputs, the ONNX
    file, and its provenance matched against the program (a record it cannot read becomes a
    note; anything else must be a Pd2OnnxError)."""
    from pd2onnx.paddle import load
    from pd2onnx.verification import onnx_side
    from pd2onnx.verification import plan as planning
    from pd2onnx.verification.inputs import read_inputs

    program = load(model)
    read_inputs(inputs, program)
    side = onnx_side.load(onnx_file, None)
    onnx_side.match(side, planning.make_plan(program))


def run_verify_mutant(rng: random.Random, fixture: str, work: str, with_paddle: bool) -> tuple[str, list[str], str, str]:
    from pd2onnx.errors import InternalError, Pd2OnnxError

    onnx_file = os.path.join(work, "model.onnx")
    _write(onnx_file, _reference_onnx(fixture))
    inputs = os.path.join(work, "inputs.npz")
    _inputs_npz(fixture, inputs)
    if rng.random() < 0.5:
        mutation = npz_mutation(rng, inputs)
    else:
        mutation = provenance_mutation(rng, onnx_file)
    report = os.path.join(work, "report.json")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            verify_front(fixture, onnx_file, inputs)
    except MutantTimeout:
        raise
    except Pd2OnnxError as exc:
        if isinstance(exc, InternalError):
            return mutation, ["(verify's reading)"], "finding", _describe(exc)
    except BaseException as exc:  # noqa: BLE001
        return mutation, ["(verify's reading)"], "finding", _describe(exc)
    if not with_paddle:
        return mutation, ["(verify's reading)"], "refused", "read without Paddle"
    argv = ["verify", fixture, "--onnx", onnx_file, "--inputs", inputs, "--json", report, "-q", "--debug"]
    code, exc, _ = _cli(argv)
    if exc is not None:
        if isinstance(exc, Pd2OnnxError) and not isinstance(exc, InternalError):
            if os.path.exists(report):
                return mutation, argv[4:], "finding", "clean error but the --json report was written"
            return mutation, ["verify"], "refused", str(exc).splitlines()[0][:200]
        return mutation, ["verify"], "finding", _describe(exc)
    if code not in (0, 3):
        return mutation, ["verify"], "finding", f"verify exit {code} without an error"
    return mutation, ["verify"], "converted", f"verify ran, exit {code}"


# ---------------------------------------------------------------------------- driver


def _alarm(signum, frame):  # noqa: ARG001
    raise MutantTimeout()


def run_mutant(seed: int, index: int, work_root: str, timeout: float = 30.0,
               with_paddle: bool | None = None) -> Outcome:
    """Mutant ``index`` of ``seed``: pick, damage, run, judge."""
    rng = random.Random(f"pd2onnx-fuzz:{seed}:{index}")
    all_fixtures = fixtures()
    verify = rng.random() < 0.08
    if verify:
        fixture = os.path.join(FIXTURES[0], rng.choice(VERIFY_FIXTURES))
    else:
        fixture = rng.choice(all_fixtures)
    work = tempfile.mkdtemp(prefix=f"m{index}-", dir=work_root)
    start = time.perf_counter()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    mutation, options = "(not made)", []
    try:
        if verify:
            mutation, options, status, detail = run_verify_mutant(
                rng, fixture, work, paddle_installed() if with_paddle is None else with_paddle)
        else:
            mutation, options, status, detail = run_convert_mutant(rng, fixture, work)
    except MutantTimeout:
        status, detail = "finding", f"still running after {timeout:g} s"
    except Exception as exc:  # noqa: BLE001  (a fault of the fuzzer itself is a finding too)
        status, detail = "finding", f"fuzzer failed: {_describe(exc)}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    outcome = Outcome(seed, index, ("verify:" if verify else "") + _label(fixture), mutation, options, status,
                      detail, time.perf_counter() - start)
    shutil.rmtree(work, ignore_errors=True)
    return outcome


def run(n: int, seed: int = 0, start: int = 0, timeout: float = 30.0, keep: str | None = None,
        with_paddle: bool | None = None, progress=None) -> list[Outcome]:
    """Mutants ``start .. start + n - 1`` of ``seed``."""
    work_root = tempfile.mkdtemp(prefix="pd2onnx-fuzz-")
    outcomes = []
    try:
        for i in range(start, start + n):
            outcome = run_mutant(seed, i, work_root, timeout, with_paddle)
            outcomes.append(outcome)
            if progress is not None:
                progress(outcome)
    finally:
        shutil.rmtree(work_root, ignore_errors=True)
    if keep:
        _keep_findings(outcomes, keep, with_paddle)
    return outcomes


def _keep_findings(outcomes: list[Outcome], keep: str, with_paddle: bool | None) -> None:
    """Write each finding's mutated folder again under ``keep`` (to debug it)."""
    os.makedirs(keep, exist_ok=True)
    for o in outcomes:
        if o.clean or o.fixture.startswith("verify:"):
            continue
        rng = random.Random(f"pd2onnx-fuzz:{o.seed}:{o.index}")
        rng.random()
        fixture = rng.choice(fixtures())
        target = os.path.join(keep, f"{o.seed}-{o.index}")
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(target)
        folder = os.path.join(target, "model")
        shutil.copytree(fixture, folder)
        mutate_folder(rng, folder)
        with open(os.path.join(target, "finding.txt"), "w") as f:
            f.write(o.line() + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/fuzz.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=200, help="number of mutants")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0, help="first mutant index (to re-run one: --start I -n 1)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per mutant")
    parser.add_argument("--keep", metavar="DIR", help="write each finding's mutated model folder there")
    parser.add_argument("--no-paddle", action="store_true", help="verify mutants: do not run Paddle even if installed")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every mutant")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.join(ROOT, "src"))
    import logging

    logging.disable(logging.CRITICAL)  # mutants warn a lot; the outcome is what counts

    def show(o: Outcome) -> None:
        if args.verbose or not o.clean:
            print(("FINDING " if not o.clean else f"{o.status:9} ") + o.line(), flush=True)

    start = time.perf_counter()
    outcomes = run(args.n, args.seed, args.start, args.timeout, args.keep,
                   with_paddle=False if args.no_paddle else None, progress=show)
    findings = [o for o in outcomes if not o.clean]
    counts = {s: sum(o.status == s for o in outcomes) for s in ("converted", "refused", "finding")}
    print(f"{len(outcomes)} mutants (seed {args.seed}) in {time.perf_counter() - start:.0f} s: "
          f"{len(outcomes) - len(findings)} clean ({counts['converted']} converted and checked, "
          f"{counts['refused']} clean errors), {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
