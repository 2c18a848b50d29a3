"""Programs for tests/types/test_types.py (each is also an ordinary case, checked in full there).

- Legacy programs whose fetched output is *declared* float32 while an int64 result flows
  into it, the way Paddle 1.x's ``save_inference_model`` declared the ``scale`` it appends
  (a real Paddle 1.6 lexical-analysis model: ``crf_decoding`` -> ``scale`` -> fetch). Paddle
  2.6 declares that ``scale`` int64; the declaration is edited to float32 in the saved
  ``.pdmodel``. Paddle's kernels ignore the declaration: its predictor returns int64.
- Control flow for the OpenVINO checks: an ``if`` (legacy: ``conditional_block`` +
  ``select_input``) and a ``while`` whose body has a MatMul.
"""

from __future__ import annotations

import os

import numpy as np

from harness.cases import case
from harness.static import static_program

LEGACY_ONLY = {
    "formats": ("legacy",),
    "why": "the edited declaration is a legacy ProgramDesc variable (PIR programs carry no declared "
    "variables to edit)",
    "custom": True,
}
FP32 = 5  # VarType.FP32 in framework.proto


def _declare(model_file: str, name: str, data_type: int, dims: list[int] | None = None) -> None:
    """Set the declared dtype (and dims) of variable ``name`` in a saved legacy program."""
    from paddle.base.proto import framework_pb2

    desc = framework_pb2.ProgramDesc()
    with open(model_file, "rb") as f:
        desc.ParseFromString(f.read())
    found = False
    for block in desc.blocks:
        for var in block.vars:
            if var.name == name:
                var.type.lod_tensor.tensor.data_type = data_type
                if dims is not None:
                    del var.type.lod_tensor.tensor.dims[:]
                    var.type.lod_tensor.tensor.dims.extend(dims)
                found = True
    if not found:
        raise RuntimeError(f"no variable {name!r} in {model_file}")
    with open(model_file, "wb") as f:
        f.write(desc.SerializeToString())


def _appended_scale(main) -> str:
    """The output of the ``scale`` that ``save_inference_model`` appends before the fetch."""
    names = [op.output("Out")[0] for op in main.global_block().ops if op.type == "scale"]
    if not names:
        raise RuntimeError("save_inference_model appended no scale op")
    return names[-1]


def _save_declared_f32(paddle, out_dir, feeds, fetches, exe, main, dims=None) -> None:
    prefix = os.path.join(out_dir, "model")
    paddle.static.save_inference_model(prefix, feeds, fetches, exe, program=main)
    saved, _, _ = paddle.static.load_inference_model(prefix, exe)
    _declare(prefix + ".pdmodel", _appended_scale(saved), FP32, dims)


@case("argmax", "scale", name="types_declared_argmax", **LEGACY_ONLY)
def declared_argmax(paddle, rng, out_dir):
    """fc -> argmax (int64) -> scale declared float32 -> fetch."""

    def build(paddle):
        x = paddle.static.data("x", [None, 5], "float32")
        return x, paddle.argmax(paddle.static.nn.fc(x, 4), axis=1)

    with static_program(paddle, build) as (main, exe, (x, idx)):
        _save_declared_f32(paddle, out_dir, [x], [idx], exe, main)
    return {"model": "model.pdmodel", "inputs": [rng.standard_normal((6, 5)).astype("float32")],
            "predict": ["model.pdmodel", "model.pdiparams"], "load": ("model", {})}


@case("argmax", "scale", name="types_declared_argmax_rank", **LEGACY_ONLY)
def declared_argmax_rank(paddle, rng, out_dir):
    """As types_declared_argmax, the output also declared of rank 2 ([-1, 1]; it has rank 1)."""

    def build(paddle):
        x = paddle.static.data("x", [None, 5], "float32")
        return x, paddle.argmax(paddle.static.nn.fc(x, 4), axis=1)

    with static_program(paddle, build) as (main, exe, (x, idx)):
        _save_declared_f32(paddle, out_dir, [x], [idx], exe, main, dims=[-1, 1])
    return {"model": "model.pdmodel", "inputs": [rng.standard_normal((6, 5)).astype("float32")],
            "predict": ["model.pdmodel", "model.pdiparams"], "load": ("model", {})}


@case("crf_decoding", "scale", name="types_declared_crf", **LEGACY_ONLY)
def declared_crf(paddle, rng, out_dir):
    """LoD emission -> fc -> crf_decoding (int64 path) -> scale declared float32 -> fetch, as
    the Paddle 1.6 lexical-analysis model ends. Paddle's outputs come from running the saved
    (edited) files with the input as a one-sequence LoDTensor."""
    tags = 4
    transition = rng.standard_normal((tags + 2, tags)).astype("float32")

    def build(paddle):
        x = paddle.static.data("x", [None, 3], "float32", lod_level=1)
        emission = paddle.static.nn.fc(x, tags)
        init = paddle.nn.initializer.Assign(transition)
        trans = paddle.static.create_parameter([tags + 2, tags], "float32", default_initializer=init)
        helper = paddle.base.layer_helper.LayerHelper("crf_decoding")
        path = helper.create_variable_for_type_inference("int64")
        helper.append_op(type="crf_decoding", inputs={"Emission": [emission], "Transition": [trans]},
                         outputs={"ViterbiPath": [path]}, attrs={})
        return x, path

    words = rng.standard_normal((7, 3)).astype("float32")
    with static_program(paddle, build) as (main, exe, (x, path)):
        _save_declared_f32(paddle, out_dir, [x], [path], exe, main)
        prefix = os.path.join(out_dir, "model")
        scope = paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            prog, feeds, targets = paddle.static.load_inference_model(prefix, exe)
            tensor = paddle.base.core.LoDTensor()
            tensor.set(words, paddle.CPUPlace())
            tensor.set_recursive_sequence_lengths([[words.shape[0]]])
            outs = exe.run(prog, feed={feeds[0]: tensor}, fetch_list=targets, return_numpy=False)
    return {"model": "model.pdmodel", "inputs": [words], "outputs": [np.array(o) for o in outs],
            "load": ("model", {})}


def _matrix(paddle, rng):
    value = (rng.standard_normal((4, 4)) * 0.5).astype("float32")
    return paddle.nn.initializer.Assign(value)


@case("if", "conditional_block", "select_input", "matmul", name="types_if_matmul")
def if_matmul(paddle, rng):
    """An if whose branches give the same rank (legacy: conditional_block + select_input)."""
    init = _matrix(paddle, rng)

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter([4, 4], default_initializer=init)

        def forward(self, x):
            if paddle.mean(x) > 0:
                y = paddle.matmul(x, self.w)
            else:
                y = x - 1.0
            return y

    x = np.abs(rng.standard_normal((3, 4))).astype("float32")
    return paddle.jit.to_static(Net(), full_graph=True), [x], [(None, 4)]


@case("while", "matmul", name="types_while_matmul")
def while_matmul(paddle, rng):
    """A recurrence h = tanh(h @ W + x), n times (a Loop body with a MatMul)."""
    init = _matrix(paddle, rng)

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter([4, 4], default_initializer=init)

        def forward(self, x, n):
            h = x
            i = paddle.zeros([1], "int64")
            while i < n:
                h = paddle.tanh(paddle.matmul(h, self.w) + x)
                i = i + 1
            return h

    x = rng.standard_normal((2, 4)).astype("float32")
    return paddle.jit.to_static(Net(), full_graph=True), [x, np.array([3], np.int64)], [(None, 4), (1,)]
