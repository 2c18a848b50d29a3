"""Run a Paddle inference program once and save the values ``pd2onnx verify`` asks for.

Run in a fresh interpreter, ``python paddle_worker.py REQUEST.json``, because the IR mode
(``FLAGS_enable_pir_api``) must be set before paddle is imported: legacy programs run on
Paddle's static Executor with the old IR, PIR programs with PIR. It imports nothing from
pd2onnx, so that any interpreter with paddle can run it (``--paddle-python``).

The request (JSON) names the format, the model and params files, an ``.npz`` of feeds and the
values to fetch: ``{"key": k, "name": var}`` for legacy programs, ``{"key": k, "op": i,
"result": r, "element": e or null}`` for PIR (op ``i`` of the main block counted without
parameters and builtin combine/split/slice, as pd2onnx's reader counts); ``lods`` maps a
legacy input's name to its sequence lengths, fed to Paddle as a one-level LoD. Each fetched value
is saved as ``OUT/<key>.npy``; ``OUT/result.json`` lists what was saved, why the others were
not, and (PIR) the main block's op names, so the caller can check both sides count alike.

``run_program`` is the runner itself, for callers that have imported paddle already: the
benchmark's ``ref`` command (bench/benchlib/paddle_worker.py) loads this file by path and
calls it for Paddle's outputs, so the bench's references and verify's come from one runner.
"""

from __future__ import annotations

import json
import os
import sys

_BUILTIN_SKIPPED = ("builtin.parameter", "builtin.combine", "builtin.split", "builtin.slice")


def _load(req, exe, paddle):
    model_dir = os.path.dirname(os.path.abspath(req["model"]))
    kwargs = {"model_filename": os.path.basename(req["model"])}
    params = req.get("params")
    if params and os.path.isfile(params):
        kwargs["params_filename"] = os.path.relpath(os.path.abspath(params), model_dir)
    else:
        kwargs["params_filename"] = None  # one file per parameter, beside the program
    return paddle.static.load_inference_model(model_dir, exe, **kwargs)


# Outputs of legacy ops that their kernels write whatever is fetched, and that Paddle 2.6's
# save_inference_model prunes when unused: Paddle then crashes (SIGSEGV) on the file it wrote.
_SCRATCH_OUTPUTS = {"gru": ("BatchGate", "BatchResetHiddenPrev", "BatchHidden"),
                    "lstm": ("Cell", "BatchGate", "BatchCellPreAct")}


def _restore_scratch_outputs(program):
    """Give the pruned outputs of ``_SCRATCH_OUTPUTS`` scratch variables again (the values
    pd2onnx compares do not depend on them)."""
    block = program.global_block()
    for op in block.ops:
        for slot in _SCRATCH_OUTPUTS.get(op.type, ()):
            if slot not in op.output_names or not op.output(slot):
                var = block.create_var(name=f"verify_scratch_{op.type}_{slot}_{id(op)}", dtype="float32")
                op.desc.set_output(slot, [var.name])


def _pir_targets(program, wanted):
    """(key, pir.Value) for each wanted value, the main block's op names (pd2onnx's count),
    and why the others cannot be fetched."""
    ops = []
    for op in program.global_block().ops:
        if op.name() in _BUILTIN_SKIPPED:
            continue
        ops.append(op)
    names = [op.name() for op in ops]
    targets, missing = [], {}
    for w in wanted:
        key, i, r, e = w["key"], w["op"], w["result"], w.get("element")
        if not 0 <= i < len(ops) or r >= ops[i].num_results():
            missing[key] = "no such op result in the program Paddle loaded"
            continue
        value = ops[i].result(r)
        if e is not None:
            value = _element(value, e)
            if value is None:
                missing[key] = "the program never unpacks this element of a vector result"
                continue
        if not value.is_dense_tensor_type():
            missing[key] = "not a dense tensor"
            continue
        targets.append((key, value))
    return targets, names, missing


def _element(vector, e):
    for user in vector.all_used_ops():
        if user.name() == "builtin.split" and e < user.num_results():
            return user.result(e)
        if user.name() == "builtin.slice" and user.attrs().get("index") == e:
            return user.result(0)
    return None


def _as_array(np, value):
    return np.array(value)


def run_program(paddle, fmt, model, params, feeds, fetch=None, lods=None):
    """Run the saved program (``fmt`` "pir" or "legacy", its ``model`` and ``params`` files)
    once on ``feeds`` (name -> array) with Paddle's static Executor, ``paddle`` imported in
    the matching IR mode. ``fetch``: the requests of the module doc, or None for the
    program's own outputs (keys ``out0``, ``out1`` ...). Returns ``{"values": {key: array},
    "missing": {key: why}, "ops": PIR op names or None, "seconds": of the run itself,
    "feed_names": the program's inputs}``.
    (The bench's ``ref`` command calls this too: one runner for both.)"""
    import time

    import numpy as np

    paddle.enable_static()
    exe = paddle.static.Executor(paddle.CPUPlace())
    program, feed_names, fetch_targets = _load({"model": model, "params": params}, exe, paddle)
    feeds = dict(feeds)
    for name, lengths in (lods or {}).items():
        tensor = paddle.base.core.DenseTensor()
        tensor.set(feeds[name], paddle.CPUPlace())
        tensor.set_recursive_sequence_lengths([lengths])
        feeds[name] = tensor
    result = {"values": {}, "missing": {}, "ops": None, "seconds": 0.0, "feed_names": list(feed_names)}
    if fetch is None:
        if fmt != "pir":
            _restore_scratch_outputs(program)
        keys = [f"out{i}" for i in range(len(fetch_targets))]
        fetch_list = list(fetch_targets)
    elif fmt == "pir":
        targets, result["ops"], result["missing"] = _pir_targets(program, fetch)
        for op in list(program.global_block().ops):
            if op.name() == "pd_op.fetch":  # the fetch ops added for ours would collide with these
                op.erase()
        fetch_list = [v for _, v in targets]
        keys = [k for k, _ in targets]
    else:
        _restore_scratch_outputs(program)
        block = program.global_block()
        keys, fetch_list = [], []
        for w in fetch:
            if not block.has_var(w["name"]):
                result["missing"][w["key"]] = "not a variable of the main block"
                continue
            keys.append(w["key"])
            fetch_list.append(w["name"])
    start = time.perf_counter()
    values = exe.run(program, feed=feeds, fetch_list=fetch_list, return_numpy=False) if fetch_list else []
    result["seconds"] = time.perf_counter() - start
    result["values"] = {key: _as_array(np, value) for key, value in zip(keys, values)}
    return result


def main(path):
    with open(path) as f:
        req = json.load(f)
    os.environ["FLAGS_enable_pir_api"] = "1" if req["format"] == "pir" else "0"
    os.environ.setdefault("GLOG_minloglevel", "2")
    import numpy as np
    import paddle

    with np.load(req["feeds"]) as data:
        feeds = {name: data[name] for name in data.files}
    ran = run_program(paddle, req["format"], req["model"], req.get("params"), feeds, req["fetch"],
                      req.get("lods"))
    out = req["out"]
    result = {"saved": [], "missing": ran["missing"], "ops": ran["ops"]}
    for key, value in ran["values"].items():
        np.save(os.path.join(out, f"{key}.npy"), value)
        result["saved"].append(key)
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # Paddle can crash in its destructors at exit; every result is on disk
