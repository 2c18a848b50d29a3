"""ONNX's side of ``verify``: which ONNX value carries each Paddle value (the file's
provenance, or matching names when it has none), and one ONNX Runtime run that returns
every such value along with the model's outputs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import onnx

from pd2onnx import provenance
from pd2onnx.errors import UsageError, VerifyError
from pd2onnx.verification.plan import Plan, Ref


@dataclass
class OnnxSide:
    proto: onnx.ModelProto
    source: str  # where the model came from (a file, or "converted now")
    producers: dict[str, int] = field(default_factory=dict)  # main-graph value -> node position
    initializers: dict[str, onnx.TensorProto] = field(default_factory=dict)
    inputs: set[str] = field(default_factory=set)
    carriers: dict[Ref, str] = field(default_factory=dict)  # Paddle value -> main-graph ONNX value
    carried_by: dict[str, list[Ref]] = field(default_factory=dict)  # ONNX value -> Paddle values
    elsewhere: dict[Ref, str] = field(default_factory=dict)  # Paddle value -> why no main-graph value carries it
    record: provenance.Provenance | None = None
    node_ops: dict[str, tuple[int, int]] = field(default_factory=dict)  # node name -> Paddle op
    notes: list[str] = field(default_factory=list)
    runtime: str = "onnxruntime"  # what computes the ONNX side (RUNTIMES)

    def defined(self, name: str) -> bool:
        return name in self.producers or name in self.initializers or name in self.inputs

    def constant(self, name: str) -> np.ndarray:
        return onnx.numpy_helper.to_array(self.initializers[name])


def load(onnx_file: str | None, converted: onnx.ModelProto | None) -> OnnxSide:
    if converted is not None:
        proto, source = converted, "converted now"
    else:
        if not os.path.isfile(onnx_file):
            raise UsageError("ONNX file not found", file=onnx_file)
        try:
            proto = onnx.load(onnx_file)
        except Exception as exc:  # noqa: BLE001  (onnx raises DecodeError and others)
            raise UsageError(f"not a readable ONNX model ({type(exc).__name__}: {str(exc)[:200]})",
                             file=onnx_file, hint="the file is truncated or not an ONNX model") from None
        source = onnx_file
    side = OnnxSide(proto, source)
    graph = proto.graph
    for i, node in enumerate(graph.node):
        for o in node.output:
            if o:
                side.producers[o] = i
    side.initializers = {t.name: t for t in graph.initializer}
    side.inputs = {i.name for i in graph.input if i.name not in side.initializers}
    return side


def match(side: OnnxSide, plan: Plan) -> None:
    """Fill ``carriers``: from the file's provenance, else by name (counted in ``notes``)."""
    metadata = {p.key: p.value for p in side.proto.metadata_props}
    try:
        record = provenance.read(metadata)
    except provenance.ProvenanceError as exc:
        side.notes.append(f"the file's provenance cannot be read ({exc}); values matched by name instead")
        record = None
    side.record = record
    if record is not None:
        _check_program(side, plan, record)
        for r in record.ops.values():
            for name in r.nodes:
                side.node_ops[name] = (r.block, r.index)
            for pname, vname in r.outputs.items():
                ref = (r.block, r.index, pname)
                if ref not in plan.values:
                    continue
                if vname is None:
                    side.elsewhere[ref] = r.why.get(pname) or "no ONNX value carries it"
                elif side.defined(vname):
                    side.carriers[ref] = vname
                elif r.block == 0:
                    side.elsewhere[ref] = f"its ONNX value {vname!r} is not in the model's main graph"
                else:
                    side.elsewhere[ref] = "its ONNX value is inside a control-flow subgraph"
    else:
        unmatched = 0
        for op in plan.ops:
            if op.block_idx != 0:
                continue
            outs = [v for v in plan.outputs_of(op) if v.used]
            hits = [v for v in outs if side.defined(v.ref[2])]
            for v in hits:
                side.carriers[v.ref] = v.ref[2]
            if outs and not hits:
                unmatched += 1
        side.notes.append(
            f"the ONNX file has no pd2onnx provenance: values matched by name; {unmatched} op(s) with used "
            "outputs matched none (convert with pd2onnx, without --strip-provenance, to check every op)"
        )
    for ref, vname in side.carriers.items():
        side.carried_by.setdefault(vname, []).append(ref)


def _check_program(side: OnnxSide, plan: Plan, record: provenance.Provenance) -> None:
    digest = record.program.get("sha256")
    if digest and digest != provenance.file_digest(plan.program.model_file):
        side.notes.append(
            f"the ONNX file was converted from another program file ({record.program.get('file')}, "
            "different content); ops are matched by position and type"
        )
    mismatched = 0
    by_site = {(op.block_idx, op.index): op for op in plan.ops}
    for key, r in list(record.ops.items()):
        op = by_site.get(key)
        if op is None or op.type != r.op_type:
            mismatched += 1
            del record.ops[key]
    if mismatched:
        side.notes.append(f"{mismatched} op(s) of the file's provenance are not in this program (ignored)")


def run(side: OnnxSide, feeds: dict[str, np.ndarray], extra: list[str]) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """The model's outputs, and the values ``extra`` (main-graph node outputs), in one run."""
    graph = side.proto.graph
    outputs = [o.name for o in graph.output]
    added = [n for n in dict.fromkeys(extra) if n not in outputs and n in side.producers]
    for name in added:
        graph.output.append(onnx.ValueInfoProto(name=name))
    try:
        results = run_model(side.proto, feeds, side.source, side.runtime)
    finally:
        del graph.output[len(outputs):]
    values = dict(zip(outputs + added, results))
    return results[: len(outputs)], values


RUNTIMES = ("onnxruntime", "openvino")
RUNTIME_NAMES = {"onnxruntime": "ONNX Runtime", "openvino": "OpenVINO"}
OPENVINO_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}  # CPU, float32 arithmetic


def session(model: onnx.ModelProto | bytes | str, runtime: str = "onnxruntime"):
    """A session of ``runtime`` on ``model``: ``get_inputs()`` (objects with ``.name``) and
    ``run(names or None, feeds)``, as ONNX Runtime's."""
    if runtime == "openvino":
        return _OpenVINOSession(model)
    try:
        import onnxruntime as ort
    except ImportError:
        raise UsageError("onnxruntime is not installed", hint="pip install 'pd2onnx[verify]'") from None
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    # Basic rewrites only (constant folding, dead nodes): the extended ones change numerics
    # (QDQ into integer kernels that also quantize the bias, approximate GELU...), which is
    # the runtime's choice, not the conversion's.
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    return ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])


@dataclass
class _Input:
    name: str


class _OpenVINOSession:
    """OpenVINO's CPU plugin (float32 precision hint) behind ONNX Runtime's session calls. Its
    ONNX reader and CPU plugin take no input of unknown rank, so the model's inputs are given
    the shapes of each run's feeds before it is read and compiled."""

    def __init__(self, model: onnx.ModelProto | bytes | str) -> None:
        try:
            import openvino  # noqa: F401
        except ImportError:
            raise UsageError("openvino is not installed (verify --runtime openvino)",
                             hint="pip install 'pd2onnx[openvino]'") from None
        proto = model if isinstance(model, onnx.ModelProto) else onnx.load_from_string(model) \
            if isinstance(model, bytes) else onnx.load(model)
        self.proto = proto
        inits = {t.name for t in proto.graph.initializer}
        self.inputs = [i.name for i in proto.graph.input if i.name not in inits]
        self.outputs = [o.name for o in proto.graph.output]

    def get_inputs(self) -> list[_Input]:
        return [_Input(n) for n in self.inputs]

    def run(self, names: list[str] | None, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        import openvino as ov

        shaped = onnx.ModelProto()
        shaped.CopyFrom(self.proto)
        for vi in shaped.graph.input:
            if vi.name in feeds:
                shape = vi.type.tensor_type.shape
                del shape.dim[:]
                for d in np.shape(feeds[vi.name]):
                    shape.dim.add().dim_value = int(d)
        core = ov.Core()
        model = core.read_model(shaped.SerializeToString(), b"")
        compiled = core.compile_model(model, "CPU", OPENVINO_CONFIG)
        results = compiled.create_infer_request().infer({n: feeds[n] for n in self.inputs})
        by_name = {}
        for port, value in results.items():
            for n in port.get_names():
                by_name[n] = np.asarray(value)
        return [by_name[n] for n in (names or self.outputs)]


def run_model(model: onnx.ModelProto | bytes | str, feeds: dict[str, np.ndarray], source: str,
              runtime: str = "onnxruntime") -> list:
    if runtime == "onnxruntime":
        try:
            import onnxruntime as ort  # noqa: F401
        except ImportError:
            raise UsageError("onnxruntime is not installed", hint="pip install 'pd2onnx[verify]'") from None
    who = RUNTIME_NAMES[runtime]
    try:
        sess = session(model, runtime)
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001  (onnxruntime raises its own exception types)
        raise VerifyError(f"{who} cannot load the model: {str(exc)[:500]}", file=source) from None
    names = [i.name for i in sess.get_inputs()]
    missing = [n for n in names if n not in feeds]
    if missing:
        raise UsageError(f"the ONNX model has inputs {missing} that the Paddle model does not", file=source,
                         hint="pass the ONNX file converted from this Paddle model")
    try:
        return sess.run(None, {n: feeds[n] for n in names})
    except Exception as exc:  # noqa: BLE001
        hint = None
        if "bfloat16" in str(exc):
            hint = "ONNX Runtime's Python API exchanges no bfloat16 arrays: verify cannot check models with " \
                   "bfloat16 inputs or outputs yet"
        raise VerifyError(f"{who} failed to run the model: {str(exc)[:500]}", file=source, hint=hint) from None
