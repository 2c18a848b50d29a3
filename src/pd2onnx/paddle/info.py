"""``pd2onnx info``: what a model file holds, without converting it."""

from __future__ import annotations

from typing import Any

from pd2onnx.paddle.program import Program, Value


def _io(value: Value) -> dict[str, Any]:
    return {"name": value.name, "dtype": value.dtype, "shape": None if value.shape is None else list(value.shape)}


def describe(program: Program) -> dict[str, Any]:
    return {
        "model_file": program.model_file,
        "params_file": program.params_file,
        "format": program.format,
        "format_version": program.version,
        "written_by": program.writer,
        "inputs": [_io(v) for v in program.inputs],
        "outputs": [_io(v) for v in program.outputs],
        "blocks": len(program.blocks),
        "ops": {str(idx): hist for idx, hist in program.op_histogram().items()},
        "op_count": sum(sum(h.values()) for h in program.op_histogram().values()),
        "parameters": len(program.params),
        "parameter_bytes": program.param_bytes,
        "warnings": list(program.warnings),
    }


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def format_description(desc: dict[str, Any]) -> str:
    label = "legacy ProgramDesc" if desc["format"] == "legacy" else "PIR JSON"
    version = f"program version {desc['format_version']}" if desc["format"] == "legacy" else f"PIR version {desc['format_version']}"
    lines = [
        f"model:      {desc['model_file']}",
        f"params:     {desc['params_file'] or '(none)'}",
        f"format:     {label} ({version}), written by {desc['written_by']}",
        "inputs:",
    ]
    for io in desc["inputs"]:
        lines.append(f"  {io['name']}: {io['dtype']} {io['shape']}")
    lines.append("outputs:")
    for io in desc["outputs"]:
        lines.append(f"  {io['name']}: {io['dtype']} {io['shape']}")
    lines.append(f"parameters: {desc['parameters']} ({_size(desc['parameter_bytes'])})")
    lines.append(f"ops:        {desc['op_count']} in {desc['blocks']} block(s)")
    for idx, hist in desc["ops"].items():
        if not hist:
            continue
        lines.append(f"  block {idx}:")
        for name, count in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"    {count:6d}  {name}")
    for w in desc["warnings"]:
        lines.append(f"warning: {w}")
    return "\n".join(lines)
