"""Paddle worker: builds cases, saves them as inference models and records Paddle's outputs.

Run as ``python worker.py FORMAT OUT_DIR CASE_FILE...`` with the Paddle that writes the
format (3.3 with PIR for ``pir``; 2.6 for ``legacy``). For each case it writes
``OUT_DIR/<case>/model.{json|pdmodel}`` + ``model.pdiparams`` and ``io.npz`` (inputs
``in<i>``, Paddle's outputs ``out<i>`` from the inference predictor on the saved files),
or ``error.txt`` when the case cannot be built.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import paddle  # noqa: E402

from harness.cases import REGISTRY  # noqa: E402
from harness.cpu import missing_for  # noqa: E402

# Written in a module's directory while a case builds: if Paddle kills the process (SIGSEGV,
# SIGILL), the next attempt finds it, records that case as crashed and builds the others.
BUILDING = "building.txt"
CRASHES = "crashes.json"  # case -> how many times it killed the worker
CRASHES_TO_GIVE_UP = 2


class _Wrap1(paddle.nn.Layer):
    def forward(self, x0):
        return self._fn(x0)


class _Wrap2(paddle.nn.Layer):
    def forward(self, x0, x1):
        return self._fn(x0, x1)


class _Wrap3(paddle.nn.Layer):
    def forward(self, x0, x1, x2):
        return self._fn(x0, x1, x2)


class _Wrap4(paddle.nn.Layer):
    def forward(self, x0, x1, x2, x3):
        return self._fn(x0, x1, x2, x3)


def _wrap(fn, n_inputs):
    """A Layer whose forward calls ``fn`` (dy2static needs forward's source in a file)."""
    if isinstance(fn, paddle.nn.Layer):
        return fn
    layer = [_Wrap1, _Wrap2, _Wrap3, _Wrap4][n_inputs - 1]()
    layer._fn = fn
    return layer


def _predict(config_args, inputs):
    """Paddle's inference predictor; ``config_args`` as for ``paddle.inference.Config``."""
    import paddle.inference as pi

    cfg = pi.Config(*config_args)
    cfg.disable_gpu()
    if hasattr(cfg, "disable_mkldnn"):
        cfg.disable_mkldnn()  # oneDNN kernels reject some valid programs (e.g. interp scales)
    cfg.switch_ir_optim(False)
    cfg.disable_glog_info()
    pred = pi.create_predictor(cfg)
    for name, arr in zip(pred.get_input_names(), inputs):
        h = pred.get_input_handle(name)
        h.reshape(arr.shape)
        h.copy_from_cpu(arr)
    pred.run()
    return [pred.get_output_handle(n).copy_to_cpu() for n in pred.get_output_names()]


def _param_names_legacy(prog):
    skip = {"FEED_MINIBATCH", "FETCH_LIST", "RAW", "READER"}
    names = []
    for var in prog.global_block().vars.values():
        if var.persistable and str(var.type).rsplit(".", 1)[-1] not in skip:
            names.append(var.name)
    return names


def _walk_pir(block, hists):
    hist = {}
    hists.append(hist)
    names = []
    for op in block.ops:
        name = op.name()
        if name == "builtin.parameter":
            names.append(op.attrs()["parameter_name"])
        if not name.startswith("builtin."):
            short = name.split(".", 1)[1] if name.startswith("pd_op.") else ("yield" if name == "cf.yield" else name)
            short = short[:-1] if short.endswith("_") else short
            hist[short] = hist.get(short, 0) + 1
        for sub in op.blocks():
            names += _walk_pir(sub, hists)
    return names


def dump_view(prefix, fmt, out_dir, load_kwargs=None):
    """Paddle's own view of the saved model: params (sha256 of bytes), inputs, outputs, op counts."""
    import hashlib

    paddle.enable_static()
    try:
        exe = paddle.static.Executor(paddle.CPUPlace())
        scope = paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            prog, feeds, fetches = paddle.static.load_inference_model(prefix, exe, **(load_kwargs or {}))
            if fmt == "pir":
                hists = []
                names = _walk_pir(prog.global_block(), hists)
                outputs = [None for _ in fetches]
            else:
                hists = []
                for block in prog.blocks:
                    hist = {}
                    for op in block.ops:
                        hist[op.type] = hist.get(op.type, 0) + 1
                    hists.append(hist)
                names = _param_names_legacy(prog)
                outputs = [v.name for v in fetches]
            params = {}
            for name in names:
                var = scope.find_var(name)
                if var is None:
                    continue
                arr = np.array(var.get_tensor())
                params[name] = {"shape": list(arr.shape), "sha256": hashlib.sha256(arr.tobytes()).hexdigest()}
    finally:
        paddle.disable_static()
    view = {"inputs": list(feeds), "outputs": outputs, "ops": hists, "params": params}
    with open(os.path.join(out_dir, "view.json"), "w") as f:
        json.dump(view, f)


def _save_io(out_dir, inputs, outs):
    arrays = {f"in{i}": a for i, a in enumerate(inputs)}
    arrays.update({f"out{i}": np.asarray(o) for i, o in enumerate(outs)})
    np.savez(os.path.join(out_dir, "io.npz"), **arrays)


def build_custom(case, fmt, out_dir, rng):
    """A case that saves its model itself (cases.py: custom saving)."""
    spec = case.fn(paddle, rng, out_dir)
    inputs = list(spec["inputs"])
    files = {"model": spec["model"], "params": spec.get("params")}
    with open(os.path.join(out_dir, "files.json"), "w") as f:
        json.dump(files, f)
    if "outputs" in spec:
        outs = list(spec["outputs"])
    elif case.predict:
        outs = _predict([os.path.join(out_dir, a) for a in spec["predict"]], inputs)
    else:
        outs = []
    if spec.get("load") is not None:
        path, kwargs = spec["load"]
        dump_view(os.path.join(out_dir, path), fmt, out_dir, kwargs)
    _save_io(out_dir, inputs, outs)


def build(case, fmt, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(case.seed)
    paddle.seed(case.seed)
    np.random.seed(case.seed)
    if case.custom:
        return build_custom(case, fmt, out_dir, rng)
    result = case.fn(paddle, rng)
    fn, inputs = result[0], list(result[1])
    shapes = list(result[2]) if len(result) > 2 and result[2] is not None else [a.shape for a in inputs]
    layer = _wrap(fn, len(inputs))
    layer.eval()
    specs = [
        paddle.static.InputSpec(list(s), str(a.dtype), f"x{i}") for i, (s, a) in enumerate(zip(shapes, inputs))
    ]
    prefix = os.path.join(out_dir, "model")
    paddle.jit.save(layer, prefix, input_spec=specs)
    model_file = prefix + (".json" if fmt == "pir" else ".pdmodel")
    if not os.path.exists(model_file):
        raise RuntimeError(f"paddle wrote no {model_file}: {os.listdir(out_dir)}")
    params_file = prefix + ".pdiparams"
    config = [model_file, params_file if os.path.exists(params_file) else ""]
    outs = _reference_outputs(case, config, inputs, out_dir) if case.predict else []
    dump_view(prefix, fmt, out_dir)
    _save_io(out_dir, inputs, outs)


def _reference_outputs(case, config, inputs, out_dir):
    """Paddle's predictor; or, where Paddle's kernel of the case's ops cannot run on this CPU
    (harness.cpu), the case's numpy rendering of that kernel (named in ``reference.txt``).
    Where both run, the rendering must agree with Paddle."""
    missing = missing_for(case.ops)
    if missing:
        if case.reference is None:
            raise RuntimeError(f"Paddle's CPU kernel cannot run on this CPU: {', '.join(missing)}; "
                               "the case has no numpy reference")
        with open(os.path.join(out_dir, "reference.txt"), "w") as f:
            f.write(f"numpy rendering of Paddle's kernel; this CPU cannot run it: {', '.join(missing)}\n")
        return [np.asarray(o) for o in case.reference(*inputs)]
    outs = _predict(config, inputs)
    if case.reference is not None:
        for k, (got, want) in enumerate(zip(case.reference(*inputs), outs)):
            want = np.asarray(want, np.float64)
            atol = case.atol * (max(1.0, float(np.abs(want).max())) if case.scaled_atol and want.size else 1.0)
            if not np.allclose(np.asarray(got, np.float64), want, rtol=case.rtol, atol=atol):
                raise RuntimeError(f"the case's reference disagrees with Paddle on output {k}")
    return outs


def main():
    fmt, *pairs = sys.argv[1:]
    roots = {}
    for pair in pairs:
        path, out_root = pair.split("::")
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        roots[os.path.abspath(path)] = out_root
    # One module at a time, its status.json written as soon as it is done: if Paddle crashes
    # the process (Paddle 2.6 can segfault), the builder retries only what is left.
    for module_path, root in roots.items():
        status = {}
        crashed = _crashed(root)
        for name, case in sorted(REGISTRY.items()):
            if os.path.abspath(case.module) != module_path or fmt not in case.formats:
                continue
            out_dir = os.path.join(root, name)
            if name in crashed:
                status[name] = "error"
                print(f"{fmt} {name}: crashed earlier", flush=True)
                continue
            shutil.rmtree(out_dir, ignore_errors=True)  # a retry starts from nothing
            with open(os.path.join(root, BUILDING), "w") as f:
                f.write(name)
            try:
                build(case, fmt, out_dir)
                status[name] = "ok"
            except Exception:
                os.makedirs(out_dir, exist_ok=True)
                with open(os.path.join(out_dir, "error.txt"), "w") as f:
                    f.write(traceback.format_exc())
                status[name] = "error"
            print(f"{fmt} {name}: {status[name]}", flush=True)
        with open(os.path.join(root, "status.json"), "w") as f:
            json.dump(status, f)
        if os.path.exists(os.path.join(root, BUILDING)):
            os.remove(os.path.join(root, BUILDING))


def _crashed(root):
    """Cases that killed the worker twice (Paddle 2.6 also segfaults at random, so one crash
    is retried): recorded in ``crashes.json``, each with an error.txt that says so."""
    counts_file = os.path.join(root, CRASHES)
    counts = {}
    if os.path.exists(counts_file):
        with open(counts_file) as f:
            counts = json.load(f)
    path = os.path.join(root, BUILDING)
    if os.path.exists(path):
        with open(path) as f:
            name = f.read().strip()
        os.remove(path)
        counts[name] = counts.get(name, 0) + 1
        with open(counts_file, "w") as f:
            json.dump(counts, f)
    crashed = {name for name, n in counts.items() if n >= CRASHES_TO_GIVE_UP}
    for name in crashed:
        out_dir = os.path.join(root, name)
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)
        with open(os.path.join(out_dir, "error.txt"), "w") as f:
            f.write(f"the Paddle worker process died {counts[name]} times while building this case "
                    "(a crash in Paddle's C++ core: see worker-<format>.log in the test cache)\n")
    return crashed


if __name__ == "__main__":
    main()
    # Every result is on disk. Leave without the interpreter's teardown: Paddle 2.6 can crash
    # in its scope destructors at exit (SIGSEGV in ScopePool::Clear, seen in CI), which would
    # fail a build whose every case is done.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
