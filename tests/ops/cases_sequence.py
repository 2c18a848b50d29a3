"""Legacy LoD sequence ops on a one-sequence batch, built with Paddle 2.6 static APIs.

Each case saves a static program with a LoD input (``lod_level=1``) and records Paddle's
outputs by running the saved files (``load_inference_model``) with the input fed as a
LoDTensor holding one sequence; pd2onnx's ONNX model gets the same data as a plain tensor.
Legacy only: these ops exist only in legacy programs.
"""

import os

import numpy as np

from harness.cases import case
from ops._nn_layers import legacy_op

WHY = "LoD sequence ops exist only in legacy (ProgramDesc) programs"
LEGACY = {"formats": ("legacy",), "why": WHY, "custom": True}


def _param(paddle, value):
    init = paddle.nn.initializer.Assign(np.asarray(value, "float32"))
    return paddle.static.create_parameter(list(np.shape(value)), "float32", default_initializer=init)


def _save_and_run(paddle, out_dir, feeds, fetches, arrays, lod_feeds):
    """Save the program, then run the saved files with ``lod_feeds`` (names) as one-sequence
    LoDTensors; returns the custom-case dict."""
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(paddle.static.default_startup_program())
    prefix = os.path.join(out_dir, "model")
    paddle.static.save_inference_model(prefix, feeds, fetches, exe)
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        prog, names, targets = paddle.static.load_inference_model(prefix, exe)
        _restore_pruned_outputs(prog)
        feed = {}
        for name, arr in zip(names, arrays):
            if name in lod_feeds:
                t = paddle.base.core.LoDTensor()
                t.set(arr, paddle.CPUPlace())
                t.set_recursive_sequence_lengths([[arr.shape[0]]])
                feed[name] = t
            else:
                feed[name] = arr
        outs = exe.run(prog, feed=feed, fetch_list=targets, return_numpy=False)
    return {"model": "model.pdmodel", "inputs": arrays, "outputs": [np.array(o) for o in outs],
            "load": ("model", {})}


def _restore_pruned_outputs(prog):
    """Paddle 2.6's save_inference_model drops the unused batch outputs of gru/lstm, which
    the ops' own shape inference requires, so Paddle cannot run the file it wrote; give them
    scratch variables again (the computed outputs do not depend on them)."""
    slots = {"gru": ("BatchGate", "BatchResetHiddenPrev", "BatchHidden"),
             "lstm": ("Cell", "BatchGate", "BatchCellPreAct")}
    block = prog.global_block()
    for op in block.ops:
        for slot in slots.get(op.type, ()):
            if slot not in op.output_names or not op.output(slot):
                var = block.create_var(name=f"{op.type}_{slot}_scratch", dtype="float32")
                op.desc.set_output(slot, [var.name])


def _static(paddle):
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    return paddle.static.program_guard(main, startup)


def _tagger(paddle, rng, out_dir, origin_mode, peepholes, reverse, steps, with_label=False):
    """embedding (lookup_table v1, padding_idx) -> fc -> dynamic gru -> fc -> dynamic lstm ->
    fc -> crf_decoding (and, with_label, crf_decoding against a gold label sequence)."""
    vocab, emb, h1, h2, tags = 20, 8, 6, 5, 4
    try:
        with _static(paddle):
            words = paddle.static.data("words", [None, 1], "int64", lod_level=1)
            table = _param(paddle, rng.standard_normal((vocab, emb)))
            x = legacy_op(paddle, "lookup_table", {"W": [table], "Ids": [words]},
                          {"padding_idx": 0, "is_sparse": False})
            proj = paddle.static.nn.fc(x, 3 * h1)
            gru_w = _param(paddle, 0.5 * rng.standard_normal((h1, 3 * h1)))
            gru_b = _param(paddle, 0.1 * rng.standard_normal((1, 3 * h1)))
            gru_out = legacy_op(
                paddle, "gru", {"Input": [proj], "Weight": [gru_w], "Bias": [gru_b]},
                {"activation": "tanh", "gate_activation": "sigmoid", "is_reverse": reverse,
                 "origin_mode": origin_mode},
                outputs=("BatchGate", "BatchResetHiddenPrev", "BatchHidden", "Hidden"),
            )[3]
            proj2 = paddle.static.nn.fc(gru_out, 4 * h2)
            lstm_w = _param(paddle, 0.5 * rng.standard_normal((h2, 4 * h2)))
            lstm_b = _param(paddle, 0.1 * rng.standard_normal((1, (7 if peepholes else 4) * h2)))
            lstm_out = legacy_op(
                paddle, "lstm", {"Input": [proj2], "Weight": [lstm_w], "Bias": [lstm_b]},
                {"use_peepholes": peepholes, "is_reverse": not reverse, "is_test": True,
                 "gate_activation": "sigmoid", "cell_activation": "tanh", "candidate_activation": "tanh"},
                outputs=("Hidden", "Cell", "BatchGate", "BatchCellPreAct"),
            )[0]
            emission = paddle.static.nn.fc(lstm_out, tags)
            transition = _param(paddle, rng.standard_normal((tags + 2, tags)))
            path = legacy_op(paddle, "crf_decoding", {"Emission": [emission], "Transition": [transition]},
                             {}, outputs=("ViterbiPath",), dtype="int64")
            ids = rng.integers(0, vocab, (steps, 1)).astype("int64")
            ids[1 % steps, 0] = 0  # a padding id
            fetches = [path, gru_out, lstm_out, emission]
            if not with_label:
                return _save_and_run(paddle, out_dir, [words], fetches, [ids], {"words"})
            gold = paddle.static.data("gold", [None, 1], "int64", lod_level=1)
            fetches.append(legacy_op(paddle, "crf_decoding",
                                     {"Emission": [emission], "Transition": [transition], "Label": [gold]},
                                     {}, outputs=("ViterbiPath",), dtype="int64"))
            labels = rng.integers(0, tags, (steps, 1)).astype("int64")
            return _save_and_run(paddle, out_dir, [words, gold], fetches, [ids, labels], {"words", "gold"})
    finally:
        paddle.disable_static()


@case("embedding", "gru", "lstm", "crf_decoding", name="seq_tagger", **LEGACY)
def seq_tagger(paddle, rng, out_dir):
    return _tagger(paddle, rng, out_dir, origin_mode=False, peepholes=True, reverse=False, steps=9,
                   with_label=True)


@case("embedding", "gru", "lstm", "crf_decoding", name="seq_tagger_origin_mode", **LEGACY)
def seq_tagger_origin_mode(paddle, rng, out_dir):
    return _tagger(paddle, rng, out_dir, origin_mode=True, peepholes=False, reverse=True, steps=6)


@case("embedding", "gru", "lstm", "crf_decoding", name="seq_tagger_one_step", **LEGACY)
def seq_tagger_one_step(paddle, rng, out_dir):
    """A one-word query: the Viterbi loops run zero times."""
    return _tagger(paddle, rng, out_dir, origin_mode=False, peepholes=True, reverse=False, steps=1)


@case("sequence_pool", "sequence_softmax", "sequence_expand_as", "lod_reset", "sequence_mask",
      name="seq_ops", **LEGACY)
def seq_ops(paddle, rng, out_dir):
    steps, width = 7, 3
    try:
        with _static(paddle):
            x = paddle.static.data("x", [None, width], "float32", lod_level=1)
            lengths = paddle.static.data("lengths", [None], "int64")
            outs = []
            for kind in ("AVERAGE", "SUM", "SQRT", "MAX", "FIRST", "LAST"):
                pooled = legacy_op(paddle, "sequence_pool", {"X": [x]},
                                   {"pooltype": kind, "is_test": True, "pad_value": 0.0},
                                   outputs=("Out", "MaxIndex"))[0]
                outs.append(pooled)
            score = paddle.static.nn.fc(x, 1)
            outs.append(legacy_op(paddle, "sequence_softmax", {"X": [score]}, {}))
            outs.append(legacy_op(paddle, "sequence_expand_as", {"X": [outs[0]], "Y": [x]}, {}))
            reset = {"target_lod": [0, steps], "append": False}
            outs.append(legacy_op(paddle, "lod_reset", {"X": [x]}, reset))
            outs.append(legacy_op(paddle, "sequence_mask", {"X": [lengths]}, {"maxlen": -1, "out_dtype": 3},
                                  outputs=("Y",), dtype="int64"))
            outs.append(legacy_op(paddle, "sequence_mask", {"X": [lengths]}, {"maxlen": 6, "out_dtype": 5},
                                  outputs=("Y",), dtype="float32"))
            arrays = [rng.standard_normal((steps, width)).astype("float32"), np.array([3, 0, 5], "int64")]
            return _save_and_run(paddle, out_dir, [x, lengths], outs, arrays, {"x"})
    finally:
        paddle.disable_static()


@case("sequence_mask", name="seq_mask_functional")
def seq_mask_functional(paddle, rng):
    """``paddle.nn.functional.sequence_mask`` (no LoD; both formats): a fixed maxlen with a
    float32 mask, and the run-time maxlen (the longest length) with the default int64 mask."""
    F = paddle.nn.functional

    def fn(lengths):
        return F.sequence_mask(lengths, maxlen=6, dtype="float32"), F.sequence_mask(lengths)

    return fn, [np.array([[3, 0], [5, 2]], "int64")]
