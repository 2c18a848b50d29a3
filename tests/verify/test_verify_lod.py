"""Legacy LoD sequence models (tests/ops/cases_sequence.py: embedding -> GRU -> LSTM ->
crf_decoding, and the sequence ops): verify feeds Paddle a one-level LoD (by default one
sequence covering the input; or the lengths given as ``<input>.lod``), and the ONNX side the
plain tensor, as the converter expects (docs/sequence_models.md)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import pd2onnx
from harness import builder
from harness.cases import REGISTRY, load_case_files
from pd2onnx.errors import UsageError

load_case_files(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ops"), "opcases")


def _built(name):
    if name not in REGISTRY:
        pytest.skip(f"{name} is not loaded (PD2ONNX_CASE_FILES leaves tests/ops/cases_sequence out)")
    built = builder.get(REGISTRY[name], "legacy")
    assert built.error is None, built.error
    return built


def _check(report):
    text = pd2onnx.verification.format_report(report)
    assert report.verdict in ("match", "amplified"), text
    for op in report.ops:
        if op.block == 0:
            assert op.replayed or op.why, text  # every op replayed or listed with why
    assert any(op.replayed and op.op_type == "crf_decoding" for op in report.ops), text
    assert any(op.replayed and op.op_type in ("gru", "lstm") for op in report.ops), text
    return text


def test_random_inputs_are_one_sequence():
    """No --inputs: the words (lod_level 1) are one random sequence of --batch words."""
    built = _built("seq_tagger_origin_mode")
    report = pd2onnx.verify(built.model_file, params_file=built.params_file, batch=7, locate=True, replay=True)
    _check(report)


def test_inputs_give_the_lengths(tmp_path):
    """--inputs with '<input>.lod' arrays: the case's own words and gold labels, one sequence each."""
    built = _built("seq_tagger")
    io = np.load(os.path.join(built.dir, "io.npz"))
    words, gold = io["in0"], io["in1"]
    path = tmp_path / "in.npz"
    np.savez(path, **{"words": words, "words.lod": np.array([len(words)]), "gold": gold,
                      "gold.lod": np.array([len(gold)], np.int32)})
    report = pd2onnx.verify(built.model_file, params_file=built.params_file, inputs_file=str(path),
                            locate=True, replay=True)
    _check(report)
    plain = pd2onnx.verify(built.model_file, params_file=built.params_file, inputs={"words": words, "gold": gold})
    assert plain.verdict == "match", pd2onnx.verification.format_report(plain)


def test_lengths_that_do_not_fit_are_refused():
    built = _built("seq_tagger_origin_mode")
    words = np.arange(1, 7, dtype=np.int64).reshape(6, 1)
    with pytest.raises(UsageError, match="sum to 5"):
        pd2onnx.verify(built.model_file, params_file=built.params_file,
                       inputs={"words": words, "words.lod": np.array([2, 3])})
    with pytest.raises(UsageError, match="one\\s+sequence per LoD input"):
        pd2onnx.verify(built.model_file, params_file=built.params_file,
                       inputs={"words": words, "words.lod": np.array([2, 4])})
