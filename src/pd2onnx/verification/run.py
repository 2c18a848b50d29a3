"""The run behind ``pd2onnx verify`` (the package's face, ``pd2onnx.verification``): load,
convert, run both sides, compare the outputs, locate, replay and (for a replay out of
tolerance) ask the float64 referee (``referee``)."""

from __future__ import annotations

import time

import numpy as np

from pd2onnx.paddle.program import Op, Program
from pd2onnx.verification import compare as cmp
from pd2onnx.verification import onnx_side, paddle_exact, paddle_run, referee
from pd2onnx.verification import plan as planning
from pd2onnx.verification import replay as rp
from pd2onnx.verification.inputs import check_inputs, load_npz, random_inputs, sequence_lods
from pd2onnx.verification.report import OpReport, VerifyReport


def verify(
    model: str,
    onnx_file: str | None = None,
    params_file: str | None = None,
    inputs_file: str | None = None,
    opset: int | None = None,
    seed: int = 0,
    batch: int = 1,
    *,
    inputs: dict[str, np.ndarray] | None = None,
    locate: bool = False,
    replay: bool = False,
    rtol: float = 1e-4,
    atol: float = 1e-4,
    optimize: bool = True,
    paddle_python: str | None = None,
    runtime: str = "onnxruntime",
) -> VerifyReport:
    """Compare the ONNX model (``onnx_file``, or ``model`` converted now with ``opset`` and the
    optimizer unless ``optimize`` is False) with the Paddle ``model`` on the same inputs
    (``inputs_file`` .npz or ``inputs`` by input name; else random, dynamic dims = ``batch``).
    ``locate`` and ``replay`` as in the module doc; ``paddle_python`` is the interpreter that
    runs Paddle for them (default: this one); ``runtime`` computes the ONNX side
    (``onnxruntime``, or ``openvino``: its CPU plugin in float32; the referee's exact values
    always come from ONNX Runtime's double kernels or the evaluator). Returns the report; ``report.verdict`` and
    ``report.exit_code`` say what the CLI says."""
    from pd2onnx.paddle import load

    timings: dict[str, float] = {}
    start = time.perf_counter()
    program = load(model, params_file)
    arrays = inputs if inputs is not None else load_npz(inputs_file) if inputs_file else None
    if arrays is not None:
        feeds = check_inputs(arrays, program, None if inputs is not None else inputs_file)
    else:
        feeds = random_inputs(program, seed, batch)
    lods = sequence_lods(program, feeds, arrays, None if inputs is not None else inputs_file)
    if not (locate or replay):
        paddle_run.require_paddle()
    converted = None
    if onnx_file is None:
        import onnx_ir as ir

        from pd2onnx.api import convert

        converted = ir.serde.serialize_model(convert(model, params_file, opset=opset, optimize=optimize))
        timings["convert"] = time.perf_counter() - start
    if runtime not in onnx_side.RUNTIMES:
        from pd2onnx.errors import UsageError

        raise UsageError(f"unknown runtime {runtime!r}", hint=f"use one of {', '.join(onnx_side.RUNTIMES)}")
    side = onnx_side.load(onnx_file, converted)
    side.runtime = runtime
    report = VerifyReport(side.source, rtol=rtol, atol=atol, located=locate, replayed=replay, runtime=runtime)
    plan = planning.make_plan(program)
    if not (locate or replay):
        t = time.perf_counter()
        gots = onnx_side.run_model(side.proto, feeds, side.source, runtime)
        timings["onnx"] = time.perf_counter() - t
        t = time.perf_counter()
        wants = paddle_run.predict(program, feeds, lods)
        timings["paddle"] = time.perf_counter() - t
        _compare_outputs(report, plan, program, gots, wants, feeds)
        report.seconds = timings
        return report
    _deep(report, plan, program, side, feeds, locate, replay, paddle_python, timings,
          random_feeds=inputs is None and not inputs_file, lods=lods)
    report.seconds = timings
    return report


def _deep(report: VerifyReport, plan: planning.Plan, program: Program, side: onnx_side.OnnxSide,
          feeds: dict[str, np.ndarray], locate: bool, replay: bool, paddle_python: str | None,
          timings: dict[str, float], random_feeds: bool, lods: dict[str, list[int]] | None = None) -> None:
    onnx_side.match(side, plan)
    report.notes += side.notes
    wanted = [ref for ref, v in plan.values.items() if v.fetchable and (v.used or ref in plan.outputs)
              and (ref in side.carriers or ref in plan.outputs)]
    wanted = list(dict.fromkeys(wanted + [r for r in plan.outputs if not isinstance(r, str)
                                          and plan.values[r].fetchable]))
    t = time.perf_counter()
    fetched = paddle_run.fetch(program, feeds, plan.fetch_requests(wanted), python=paddle_python,
                               hint=_random_hint(program, random_feeds), lods=lods)
    timings["paddle"] = time.perf_counter() - t
    if program.format == "pir" and fetched.ops is not None:
        _check_alignment(plan, fetched.ops)
    paddle_vals = {ref: fetched.values[plan.values[ref].key] for ref in wanted if plan.values[ref].key in fetched.values}
    missing = {ref: fetched.missing.get(plan.values[ref].key, "Paddle did not return it") for ref in wanted
               if ref not in paddle_vals}
    t = time.perf_counter()
    extras = [side.carriers[r] for r in paddle_vals if r in side.carriers]
    gots, onnx_vals = onnx_side.run(side, feeds, extras)
    timings["onnx"] = time.perf_counter() - t
    wants = []
    for ref in plan.outputs:
        if isinstance(ref, str):
            wants.append(feeds[ref])
        elif ref in paddle_vals:
            wants.append(np.asarray(paddle_vals[ref]))
        else:
            wants.append(None)
    if any(w is None for w in wants):
        report.notes.append("Paddle's executor did not return every model output; they come from its predictor")
        wants = paddle_run.predict(program, feeds, lods)
    _compare_outputs(report, plan, program, gots, wants, feeds)

    def onnx_value(name: str) -> np.ndarray | None:
        if name in onnx_vals:
            return onnx_vals[name]
        if name in side.initializers:
            return side.constant(name)
        if name in side.inputs:
            return feeds.get(name)
        return None

    ops = {(op.block_idx, op.index): OpReport(op.legacy_type or op.type, op.block_idx, op.index, op.struct_name)
           for op in plan.ops}
    report.ops = list(ops.values())
    if side.record is not None:
        for key, rec in side.record.ops.items():
            if key in ops:
                ops[key].nodes = list(rec.nodes)
    located: dict[planning.Ref, cmp.ValueDiff] = {}
    for op in plan.ops:
        if op.block_idx != 0:
            continue
        gots_op = {}
        for v in plan.outputs_of(op):
            if v.used and v.ref in paddle_vals and v.ref in side.carriers:
                got = onnx_value(side.carriers[v.ref])
                if got is not None:
                    gots_op[v.ref] = got
        diffs = _compare_op(plan, op, gots_op, paddle_vals, feeds, rtol=report.rtol,
                            ours=lambda r: onnx_value(side.carriers[r]) if r in side.carriers else None)
        ops[(op.block_idx, op.index)].located = list(diffs.values())
        located.update(diffs)
    if locate:
        for op in plan.ops:
            entry = ops[(op.block_idx, op.index)]
            if entry.located and not all(d.within(report.rtol, report.atol) for d in entry.located):
                entry.inputs = [located[r] for r in _computed_from(plan, op, side, located) if r in located]
                report.first_divergence = entry
                break
    if replay:
        t = time.perf_counter()
        _replay(report, plan, side, ops, paddle_vals, missing, onnx_vals, feeds)
        timings["replay"] = time.perf_counter() - t
        if locate and not report.ok():
            report.unexplained = _unexplained(report, plan, side, ops, located)
    else:
        for entry in report.ops:
            entry.why = "replay not asked for (--replay)"


def _unexplained(report: VerifyReport, plan: planning.Plan, side: onnx_side.OnnxSide, ops: dict,
                 located: dict) -> list[OpReport]:
    """Ops not replayed (nor fused into one that was) whose outputs leave the tolerance in the
    full run while the values their ONNX nodes start from are within it: nothing checked them,
    and they may explain why the outputs differ."""
    found = []
    for op in plan.ops:
        entry = ops[(op.block_idx, op.index)]
        if op.block_idx != 0 or entry.replayed or not entry.located:
            continue
        if all(d.within(report.rtol, report.atol) for d in entry.located):
            continue
        sources = _computed_from(plan, op, side, located)
        if all(located[r].within(report.rtol, report.atol) for r in sources if r in located):
            found.append(entry)
    return found


def _random_hint(program: Program, random_feeds: bool) -> str | None:
    dynamic = [v.name for v in program.inputs if v.shape and any(d < 0 for d in v.shape)]
    if random_feeds and dynamic:
        return (f"the random inputs give every dynamic dim of {dynamic} the --batch size; pass --inputs with "
                "arrays of the shapes the model takes")
    return None


def _check_alignment(plan: planning.Plan, names: list[str]) -> None:
    ours = list(plan.program.main.ops)
    bad = None
    if len(names) != len(ours):
        bad = f"Paddle counts {len(names)} ops in the main block, pd2onnx's reader {len(ours)}"
    else:
        for op, name in zip(ours, names):
            base = name.split(".", 1)[-1]
            base = base[:-1] if base.endswith("_") and not base.endswith("__") else base
            if base != op.type and not name.endswith(op.type):
                bad = f"op #{op.index} is {name} for Paddle but {op.type} for pd2onnx's reader"
                break
    if bad:
        from pd2onnx.errors import VerifyError

        raise VerifyError(f"cannot match Paddle's ops with pd2onnx's: {bad}", file=plan.program.model_file,
                          hint="please report this with the model")


def _computed_from(plan: planning.Plan, op: Op, side: onnx_side.OnnxSide, located: dict) -> list[planning.Ref]:
    """The compared values the ONNX model computes ``op``'s outputs from: its inputs, or
    (where the optimizer fused it with the ops before) theirs."""
    targets = {ref: side.carriers[ref] for ref in located if ref[:2] == (op.block_idx, op.index)}
    unit = rp.build_unit(op, targets, side, set(located))
    if unit.why:
        return _input_refs(plan, op)
    return [src for src in unit.feeds.values() if not isinstance(src, str)]


def _input_refs(plan: planning.Plan, op: Op) -> list[planning.Ref]:
    refs = []
    for names in op.inputs.values():
        for n in names:
            ref = plan.producer_ref(op, n)
            if ref is not None and ref not in refs:
                refs.append(ref)
    return refs


def _compare_op(plan: planning.Plan, op: Op, gots: dict, wants: dict, feeds: dict,
                rtol: float, ours=None) -> dict[planning.Ref, cmp.ValueDiff]:
    """``op``'s outputs in ``gots`` against ``wants`` (by value ref), op-aware: ties of index
    outputs, NMS rows as sets, NMS candidates in another order among equal scores
    (``ours(ref)``: our value of another op's output, for the scores of boxes)."""
    diffs: dict[planning.Ref, cmp.ValueDiff] = {}
    rows = cmp.ROW_SETS.get(op.type)
    done: set = set()
    if rows is not None:
        slot_refs = {s: (op.block_idx, op.index, op.output(s)) if op.output(s) else None for s in rows if s}
        r_rows = slot_refs.get(rows[0])
        if r_rows in gots and r_rows in wants:
            r_idx, r_cnt = slot_refs.get(rows[1]) if rows[1] else None, slot_refs.get(rows[2]) if rows[2] else None
            both = lambda r: r is not None and r in gots and r in wants  # noqa: E731
            d = cmp.compare_rows(r_rows[2], gots[r_rows], np.asarray(wants[r_rows]), rtol,
                                 gots[r_idx] if both(r_idx) else None, wants[r_idx] if both(r_idx) else None,
                                 gots[r_cnt] if both(r_cnt) else None, wants[r_cnt] if both(r_cnt) else None)
            diffs[r_rows] = d
            done.add(r_rows)
            if both(r_idx):
                done.add(r_idx)
                diffs[r_idx] = cmp.ValueDiff(r_idx[2], tuple(np.shape(wants[r_idx])), str(np.asarray(wants[r_idx]).dtype),
                                             problem=d.problem and f"see {r_rows[2]}", note=f"matched with {r_rows[2]}")
    tie = cmp.TIE_INDICES.get(op.type)
    for ref, got in gots.items():
        if ref in done or ref not in wants:
            continue
        want = np.asarray(wants[ref])
        if tie is not None and op.output(tie[0]) == ref[2]:
            x = _paddle_input(plan, op, tie[1], wants, feeds)
            axis = op.attrs.get("axis", -1)
            axis = axis if isinstance(axis, int) else -1
            keep = bool(op.attrs.get("keepdims", op.attrs.get("keepdim", True)) or op.type in ("topk", "argsort"))
            diffs[ref] = cmp.compare_ties(ref[2], got, want, x, axis, keep, bool(op.attrs.get("flatten", False)))
        else:
            diffs[ref] = cmp.compare(ref[2], got, want)
            # the same candidates or detection rows in another order: taken only when they pass,
            # else the plain difference stays (and goes to the referee)
            if not diffs[ref].within(rtol):
                as_set = _compare_candidates(plan, ref, got, want, wants, ours, rtol)
                if as_set is None and cmp.looks_like_detections(got, want):
                    as_set = cmp.compare_rows(ref[2], got, want, rtol)  # detection rows after the NMS
                if as_set is not None and as_set.within(rtol):
                    diffs[ref] = as_set
    return diffs


def _compare_candidates(plan: planning.Plan, ref: planning.Ref, got, want, wants: dict, ours,
                        rtol: float) -> cmp.ValueDiff | None:
    """The value ``ref`` compared as NMS candidates (``cmp.compare_candidates``) when every op
    that reads it is an NMS-style op reading it as its boxes or scores (batched), else None."""
    readers = [r for r in plan.readers.get(ref[2], ()) if plan.producer_ref(r, ref[2]) == ref]
    if not readers or ref in plan.outputs or np.ndim(want) != 3:
        return None
    roles = []
    for r in readers:
        slots = cmp.NMS_CANDIDATES.get(r.type)
        if slots is None:
            return None
        role = [k for k, slot in enumerate(slots) if r.input(slot) == ref[2]]
        if len(role) != 1:
            return None
        roles.append((role[0], r))
    if len({role for role, _ in roles}) != 1:
        return None
    role, nms = roles[0]
    if role == 1:  # scores [batch, classes, M]: a candidate's score is its best class's
        return cmp.compare_candidates(ref[2], got, want, 2, np.asarray(want).max(axis=1),
                                      np.asarray(got).max(axis=1), rtol)
    s_ref = plan.producer_ref(nms, nms.input(cmp.NMS_CANDIDATES[nms.type][1]))
    if s_ref is None or s_ref not in wants or np.ndim(wants[s_ref]) != 3:
        return None
    got_scores = ours(s_ref) if ours is not None else None
    return cmp.compare_candidates(ref[2], got, want, 1, np.asarray(wants[s_ref]).max(axis=1),
                                  None if got_scores is None else np.asarray(got_scores).max(axis=1), rtol)


def _paddle_input(plan: planning.Plan, op: Op, slot: str, wants: dict, feeds: dict) -> np.ndarray | None:
    name = op.input(slot)
    if name is None:
        return None
    if name in feeds:
        return feeds[name]
    ref = plan.producer_ref(op, name)
    return None if ref is None or ref not in wants else np.asarray(wants[ref])


def _compare_outputs(report: VerifyReport, plan: planning.Plan, program: Program, gots: list, wants: list,
                     feeds: dict) -> None:
    names = [v.name for v in program.outputs]
    if len(gots) != len(wants):
        report.outputs.append(cmp.ValueDiff("(outputs)", (), "", problem=f"ONNX has {len(gots)} outputs, "
                                            f"Paddle {len(wants)}"))
        return
    # outputs of NMS-style ops are compared together, rows as sets
    by_producer: dict[tuple[int, int], dict[planning.Ref, int]] = {}
    for k, ref in enumerate(plan.outputs):
        if not isinstance(ref, str):
            src = planning.pass_through_source(plan, ref)
            by_producer.setdefault(src[:2], {})[src] = k
    diffs: list[cmp.ValueDiff | None] = [None] * len(gots)
    for srcs in by_producer.values():
        op = plan.values[next(iter(srcs))].op
        if op.type not in cmp.ROW_SETS:
            continue
        g = {ref: gots[k] for ref, k in srcs.items()}
        w = {ref: wants[k] for ref, k in srcs.items()}
        for ref, d in _compare_op(plan, op, g, w, feeds, report.rtol).items():
            d.name = names[srcs[ref]]
            diffs[srcs[ref]] = d
    for k, (name, got, want) in enumerate(zip(names, gots, wants)):
        if diffs[k] is not None:
            continue
        diffs[k] = cmp.compare(name, got, np.asarray(want))
        if not diffs[k].within(report.rtol, report.atol) and cmp.looks_like_detections(got, want):
            # rows of detections after the NMS (rescaled, say) or top-k queries with no NMS:
            # near-tied scores swap rows; per image where an output counts each image's rows
            others = [(names[j], gots[j], wants[j]) for j in range(len(gots)) if j != k]
            counts = cmp.row_counts(got, want, others)
            diffs[k] = cmp.compare_rows(name, got, want, report.rtol, atol=report.atol,
                                        got_counts=counts[1] if counts else None,
                                        want_counts=counts[2] if counts else None)
            if counts and not diffs[k].problem:
                per_image = f"per image, by the row counts of {counts[0]}"
                diffs[k].note = "; ".join(filter(None, [diffs[k].note, per_image]))
    report.outputs = diffs


def _replay(report: VerifyReport, plan: planning.Plan, side: onnx_side.OnnxSide, ops: dict, paddle_vals: dict,
            missing: dict, onnx_vals: dict, feeds: dict) -> None:
    available = set(paddle_vals)
    units: list[tuple[int, rp.Unit]] = []
    for op in plan.ops:
        entry = ops[(op.block_idx, op.index)]
        why = _not_replayable(plan, op, side, paddle_vals, missing)
        if why:
            entry.why = why
            continue
        outs = [v for v in plan.outputs_of(op) if v.used]
        targets = {v.ref: side.carriers[v.ref] for v in outs if v.ref in paddle_vals and v.ref in side.carriers}
        unit = rp.build_unit(op, targets, side, available)
        if unit.why:
            entry.why = unit.why
            continue
        unit.covers = rp.covered_ops(plan, op, available)
        skipped = [v for v in outs if v.ref not in targets]
        if skipped:
            entry.why = "; ".join(f"output {v.ref[2]} not compared: {_why_value(v, side, missing)}" for v in skipped)
        units.append((len(units), unit))
    input_types = _input_types(side, onnx_vals)
    batch_feeds, notes = _batch_feeds(units, paddle_vals, feeds, onnx_vals, plan, side)
    report.notes += notes
    values, errors = rp.run_units(side, [(u, unit) for u, unit in units if unit.nodes], batch_feeds, input_types)
    replayed = {ref: values[(uid, vname)] for uid, unit in units for ref, vname in unit.targets.items()
                if (uid, vname) in values}
    for uid, unit in units:
        op = unit.op
        entry = ops[(op.block_idx, op.index)]
        if uid in errors:  # not a failure of the op: the replay did not run
            entry.why = f"{onnx_side.RUNTIME_NAMES[side.runtime]} could not run its nodes on Paddle's values: " \
                        f"{errors[uid]}"
            continue
        entry.replayed = True
        entry.covers = [(c.block_idx, c.index) for c in unit.covers]
        precision, summing = _unit_precision(unit, onnx_vals)
        entry.replay_rtol = cmp.replay_rtol(precision, summing, max(1, len(unit.nodes)))
        gots = {}
        for ref, vname in unit.targets.items():
            if (uid, vname) in values:
                gots[ref] = values[(uid, vname)]
            elif vname in unit.feeds:
                fed = unit.feeds[vname]
                gots[ref] = feeds[fed] if isinstance(fed, str) else paddle_vals[fed]
            elif vname in side.initializers:
                gots[ref] = side.constant(vname)
        diffs = _compare_op(plan, op, gots, paddle_vals, feeds, rtol=entry.replay_rtol, ours=replayed.get)
        entry.replay = list(diffs.values())
        entry.replay_ok = all(d.within(entry.replay_rtol) for d in entry.replay)
        if not entry.replay_ok:
            out = {ref: d for ref, d in diffs.items() if not d.within(entry.replay_rtol)}
            if any(d.problem for d in out.values()):
                why = "; ".join(f"{d.name}: {d.problem}" for d in out.values() if d.problem)
                entry.referee = referee.Judgement(None, why=f"not a rounding question ({why})")
            else:
                entry.referee = referee.judge(side, unit, batch_feeds, input_types, {r: gots[r] for r in out},
                                              {r: paddle_vals[r] for r in out}, precision)
                entry.replay_ok = bool(entry.referee.right)
            if not entry.replay_ok and paddle_exact.computes(op):
                entry.paddle_wrong = _paddle_wrong(plan, op, out, gots, paddle_vals, feeds, entry.replay_rtol)
        for c in unit.covers:
            covered = ops[(c.block_idx, c.index)]
            if not covered.replayed:
                covered.replayed = True
                covered.replayed_with = (op.block_idx, op.index)
                reasons = "; ".join(dict.fromkeys(_why_value(v, side, missing) for v in plan.outputs_of(c) if v.used))
                covered.why = f"replayed together with {entry.label}, which reads its value" + \
                              (f"; {reasons}" if reasons else "")
    owners = _owners(plan)
    for op in plan.ops:
        if op.block_idx != 0:
            owner = owners.get(op.block_idx)
            ops[(op.block_idx, op.index)].why = _inside_why(owner, ops.get((0, owner.index)) if owner else None)


def _paddle_wrong(plan: planning.Plan, op: Op, out: dict, gots: dict, paddle_vals: dict, feeds: dict,
                  rtol: float) -> str:
    """Why Paddle computes ``op`` wrongly, when its value of every differing output ``out`` is
    far from the exact one (``paddle_exact``, on Paddle's own operands) and ours is not; else ''."""

    def operand(name: str) -> np.ndarray | None:
        ref = plan.producer_ref(op, name)
        if ref is not None and ref in paddle_vals:
            return paddle_vals[ref]
        if name in plan.program.params:
            return plan.program.params[name]
        return feeds.get(name)

    y = next((names[0] for slot, names in op.outputs.items() if slot.lower() in ("y", "out") and names), None)
    if set(out) != {r for r in out if r[2] == y}:
        return ""  # another output differs: not what the exact value covers
    exact, why = paddle_exact.exact_output(op, operand)
    if exact is None:
        return ""
    texts = []
    for ref in out:
        if ref not in gots or np.size(gots[ref]) != np.size(exact) or np.size(paddle_vals[ref]) != np.size(exact):
            return ""
        wrong, text = paddle_exact.judge(op, exact, gots[ref], paddle_vals[ref], rtol)
        if not wrong:
            return ""
        texts.append(text)
    return "; ".join(texts)


def _owners(plan: planning.Plan) -> dict[int, Op]:
    """Block index -> the main-block (control-flow) op that holds it, at any depth."""
    owners: dict[int, Op] = {}
    for op in plan.program.main.ops:
        stack = list(op.blocks)
        while stack:
            block = stack.pop()
            owners[block.idx] = op
            for inner in block.ops:
                stack.extend(inner.blocks)
    return owners


def _inside_why(owner: Op | None, entry: OpReport | None) -> str:
    why = "it is inside a control-flow block, whose values Paddle's executor does not expose"
    if owner is None or entry is None:
        return why
    label = f"{owner.legacy_type or owner.type} (block 0, op #{owner.index})"
    if entry.replay_ok is not None:
        return f"{why}; {label}, which holds it, is replayed as a whole" + ("" if entry.replay_ok else " (and fails)")
    return f"{why}; {label}, which holds it, is not replayed either"


def _not_replayable(plan: planning.Plan, op: Op, side: onnx_side.OnnxSide, paddle_vals: dict, missing: dict) -> str:
    if op.block_idx != 0:
        return _inside_why(None, None)
    if op.type in planning.RANDOM_OPS:
        return "a random op: its values cannot be compared with Paddle's"
    outs = [v for v in plan.outputs_of(op) if v.used]
    if not outs:
        return "its outputs are not used by the model"
    if any(v.ref in paddle_vals and v.ref in side.carriers for v in outs):
        return ""
    return "; ".join(dict.fromkeys(_why_value(v, side, missing) for v in outs))


def _why_value(v: planning.ValueInfo, side: onnx_side.OnnxSide, missing: dict) -> str:
    if v.why_not:
        return v.why_not
    if v.ref in side.elsewhere:
        return side.elsewhere[v.ref]
    if v.ref in missing:
        return f"Paddle does not give its value ({missing[v.ref]})"
    if v.ref not in side.carriers:
        if side.record is None:
            return "no ONNX value has its name"
        return "no ONNX value carries it (the converter computed it into the nodes of the ops that read it)"
    return "not compared"


def _input_types(side: onnx_side.OnnxSide, onnx_vals: dict) -> dict[str, int]:
    import onnx

    types = {i.name: i.type.tensor_type.elem_type for i in side.proto.graph.input}
    for name, arr in onnx_vals.items():
        if isinstance(arr, np.ndarray):
            try:
                types[name] = onnx.helper.np_dtype_to_tensor_dtype(arr.dtype)
            except (KeyError, ValueError, TypeError):
                pass
    return types


def _declared(side: onnx_side.OnnxSide) -> dict[str, tuple[tuple | None, np.dtype | None]]:
    """ONNX value -> the shape (None for a dim not fixed) and dtype the model declares."""
    import onnx

    out = {}
    g = side.proto.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        t = vi.type.tensor_type
        try:
            dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)) if t.elem_type else None
        except (KeyError, TypeError, ValueError):
            dtype = None
        shape = tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim) \
            if t.HasField("shape") else None
        out[vi.name] = (shape, dtype)
    return out


def _batch_feeds(units, paddle_vals: dict, feeds: dict, onnx_vals: dict, plan, side) -> tuple[dict, list[str]]:
    """The values the replay feeds, in the layout the ONNX model holds them in: the full run's
    own value of the same ONNX name where it has one, else the model's declared type
    (``planning.adapt``)."""
    out: dict[str, np.ndarray] = {}
    changed: set[str] = set()
    declared = None
    for _, unit in units:
        for name, src in unit.feeds.items():
            if name in out:
                continue
            if isinstance(src, str):
                out[name] = feeds[src]
                continue
            like = onnx_vals.get(name)
            if isinstance(like, np.ndarray):
                shape, dtype = like.shape, like.dtype
            else:
                declared = _declared(side) if declared is None else declared
                shape, dtype = declared.get(name, (None, None))
            out[name], how = planning.adapt(paddle_vals[src], shape, dtype)
            if how:
                changed.add(f"{src[2]} ({how})")
    notes = []
    if changed:
        shown = ", ".join(sorted(changed)[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        notes.append(f"replay fed {len(changed)} Paddle value(s) in the layout the ONNX model holds them in: {shown}")
    return out, notes


def _unit_precision(unit: rp.Unit, onnx_vals: dict) -> tuple[str, bool]:
    """The coarsest float type ``unit`` computes in (its float outputs, the casts inside its
    nodes), and whether it sums many terms."""
    import onnx

    kinds = []
    for vname in unit.targets.values():
        arr = onnx_vals.get(vname)
        if isinstance(arr, np.ndarray) and arr.dtype.kind == "f":
            kinds.append(str(arr.dtype))
    for t in unit.cast_types:
        try:
            kinds.append(str(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t))))
        except (KeyError, TypeError, ValueError):
            continue
    if onnx.TensorProto.BFLOAT16 in unit.cast_types:
        kinds.append("bfloat16")
    precision = cmp.coarsest(*kinds) or "float32"
    summing = bool(unit.op_types & cmp.SUMMING) or any("::" in t for t in unit.op_types)
    return precision, summing
