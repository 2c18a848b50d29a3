"""``pd2onnx info``: what a model file holds, without converting it."""

from __future__ import annotations

from typing import Any

from pd2onnx.paddle.program import Op, Program, Value


def _io(value: Value) -> dict[str, Any]:
    return {"name": value.name, "dtype": value.dtype, "shape": None if value.shape is None else list(value.shape)}


def block_owners(program: Program) -> dict[int, Op]:
    """Sub-block index -> the control-flow op that owns it (if / while / conditional_block)."""
    owners: dict[int, Op] = {}
    for op in program.walk_ops():
        for sub in op.blocks:
            owners.setdefault(sub.idx, op)
    return owners


def block_paths(program: Program) -> dict[int, str]:
    """Sub-block index -> readable chain of owning ops, outermost first
    (``while (block 0, op #13) > if (block 3, op #8)``); the main block has none."""
    owners = block_owners(program)
    paths: dict[int, str] = {}

    def path(idx: int, seen: frozenset = frozenset()) -> str:
        op = owners.get(idx)
        if op is None or idx in seen:
            return ""
        here = f"{op.legacy_type or op.type} (block {op.block_idx}, op #{op.index})"
        outer = path(op.block_idx, seen | {idx})
        return f"{outer} > {here}" if outer else here

    for block in program.blocks:
        if block.idx in owners:
            paths[block.idx] = path(block.idx)
    return paths


def _block_tree(program: Program) -> list[dict[str, Any]]:
    """One entry per block: its parent, the op owning it and the sub-blocks its ops own."""
    owners = block_owners(program)
    tree = []
    for block in program.blocks:
        owner = owners.get(block.idx)
        tree.append({
            "block": block.idx,
            "parent": block.parent_idx,
            "owner": None if owner is None else {
                "op": owner.legacy_type or owner.type, "block": owner.block_idx, "index": owner.index},
            "args": list(block.args),
            "ops": len(block.ops),
        })
    return tree


def describe(program: Program) -> dict[str, Any]:
    return {
        "model_file": program.model_file,
        "ignored_files": [{"file": name, "why": why} for name, why in program.ignored_files],
        "params_file": program.params_file,
        "params_layout": program.params_layout,
        "format": program.format,
        "format_version": program.version,
        "written_by": program.writer,
        "inputs": [_io(v) for v in program.inputs],
        "outputs": [_io(v) for v in program.outputs],
        "blocks": len(program.blocks),
        "block_tree": _block_tree(program),
        "ops": {str(idx): hist for idx, hist in program.op_histogram().items()},
        "op_count": sum(sum(h.values()) for h in program.op_histogram().values()),
        "parameters": len(program.params),
        "parameter_bytes": program.param_bytes,
        "quantization": quantization(program),
        "warnings": list(program.warnings),
    }


_LAYOUTS = {
    "combined": " (one combined file)",
    "separate": " (one file per parameter, Paddle 1.x/2.x layout)",
    "none": " (the program has no parameters)",
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
    lines = [f"model:      {desc['model_file']}"]
    for entry in desc.get("ignored_files") or []:
        lines.append(f"  ignored:  {entry['file']} ({entry['why']})")
    lines += [
        f"params:     {desc['params_file'] or '(none)'}{_LAYOUTS.get(desc['params_layout'], '')}",
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
    tree = desc.get("block_tree") or []
    if len(tree) > 1:
        lines.append("blocks:")
        children: dict[int, list[dict[str, Any]]] = {}
        for entry in tree:
            children.setdefault(entry["parent"], []).append(entry)

        def show(entry: dict[str, Any], depth: int) -> None:
            owner = entry["owner"]
            what = "main" if owner is None else f"{owner['op']} (block {owner['block']}, op #{owner['index']})"
            lines.append(f"  {'  ' * depth}block {entry['block']}: {entry['ops']} op(s), owned by {what}")
            for child in children.get(entry["block"], []):
                show(child, depth + 1)

        for entry in children.get(-1, []):
            show(entry, 0)
    lines.extend(format_quantization(desc.get("quantization")))
    for w in desc["warnings"]:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- quantization
_QUANT_ONNX = ("quantize_linear", "dequantize_linear")
_QUANT_DEQUANT = ("fake_dequantize_max_abs", "fake_channel_wise_dequantize_max_abs")
_QUANT_WITH_WEIGHT = ("conv2d", "depthwise_conv2d", "matmul", "conv2d_transpose")


def quantization(program: Program) -> dict[str, Any] | None:
    """Quantization ops (QUANT.md section 1): families, per-tensor / per-channel scales and the
    weights the converter writes as int8; None for a float model."""
    ops = [op for op in program.walk_ops()
           if op.type in _QUANT_ONNX or op.type.startswith("fake_") or op.type == "moving_average_abs_max_scale"]
    if not ops:
        return None
    families = set()
    per_tensor = per_channel = observers = 0
    weights: dict[str, int] = {}
    for op in ops:
        if op.type in _QUANT_ONNX:
            families.add("quantize_linear/dequantize_linear (ONNX format)")
        elif "quantize_dequantize" in op.type:
            families.add("fake quantize-dequantize (fused)")
        else:
            families.add("fake quantize + dequantize (frozen/unfrozen)")
        if op.attrs.get("only_observer") or op.type == "moving_average_abs_max_scale":
            observers += 1
            continue
        scale_names = (op.inputs.get("scale") or op.inputs.get("in_scale") or op.inputs.get("scales") or [])[:1]
        scale = program.params.get(scale_names[0]) if scale_names else None
        channel_wise = op.type.startswith("fake_channel_wise") and len(op.inputs.get("scales") or [None]) == 1
        if channel_wise or (scale is not None and scale.size > 1):
            per_channel += 1
        else:
            per_tensor += 1
        x = op.input("x")
        bits = int(op.attrs.get("bit_length", 8) or 8)
        if x in program.params and op.type != "quantize_linear":  # a weight the converter writes as int8
            weights[x] = program.params[x].size * (1 if bits <= 8 else 2)
        if op.type in _QUANT_DEQUANT and x is not None:  # frozen: the weight of the conv/matmul before
            for producer in program.blocks[op.block_idx].ops:
                if x in (producer.outputs.get("out") or []) and producer.type in _QUANT_WITH_WEIGHT:
                    w = producer.input("filter") or producer.input("y")
                    if w in program.params:
                        weights[w] = program.params[w].size
    counts: dict[str, int] = {}
    for op in ops:
        counts[op.type] = counts.get(op.type, 0) + 1
    return {
        "families": sorted(families),
        "ops": dict(sorted(counts.items())),
        "per_tensor": per_tensor,
        "per_channel": per_channel,
        "observers": observers,
        "int8_weights": len(weights),
        "int8_weight_bytes": sum(weights.values()),
        "stored_int8_records": sum(1 for a in program.params.values() if str(a.dtype) == "int8"),
    }


def format_quantization(q: dict[str, Any] | None) -> list[str]:
    if not q:
        return []
    lines = ["quantization: " + "; ".join(q["families"])]
    lines.append("  ops: " + ", ".join(f"{n} {name}" for name, n in q["ops"].items()))
    lines.append(f"  scales: {q['per_tensor']} ops per-tensor, {q['per_channel']} per-channel"
                 + (f"; {q['observers']} observer-only (identity)" if q["observers"] else ""))
    lines.append(f"  int8 weights: {q['int8_weights']} ({_size(q['int8_weight_bytes'])} in the ONNX file)"
                 + (f"; {q['stored_int8_records']} stored as int8 in the params file" if q["stored_int8_records"] else ""))
    return lines
