"""``pd2onnx verify`` against Paddle, in both formats: a correct conversion that a full-model
comparison rejects gets ``amplified`` with every op replayed; a conversion broken on purpose
(a mapper that perturbs one op, an ONNX file edited after conversion) gets ``mismatch``
naming exactly that op in --locate and --replay; control flow, float64 (legalized) and
multi-input models; bad input; provenance kept by the optimizer and dropped by
--strip-provenance. The PaddleDetection models are in test_verify_detection.py."""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import onnx_ir as ir
import pytest

import pd2onnx
from pd2onnx import provenance
from pd2onnx.api import convert
from pd2onnx.cli import main
from pd2onnx.convert.registry import get_mapper, overriding
from pd2onnx.errors import UsageError
from pd2onnx.onnx_io import save_model
from pd2onnx.paddle import load
from verify_cases import FORMATS, perturbed
from verify_cases import built as _built
from verify_cases import feeds as _feeds







def _site(program, op_type: str):
    return next((op.block_idx, op.index) for op in program.main.ops if op.type == op_type)


# ------------------------------------------------------------------------------ (a) amplified


@pytest.mark.parametrize("fmt", FORMATS)
def test_noise_amplifying_model_is_amplified_with_every_op_replayed(fmt):
    built = _built("verify_amplifier", fmt)
    report = pd2onnx.verify(built.model_file, inputs=_feeds(built), locate=True, replay=True)
    assert not report.ok(), "the full-model comparison should fail for this model"
    assert report.verdict == "amplified", pd2onnx.verification.format_report(report)
    assert report.exit_code == 0
    # the top-k indices differ in the full run: near-ties flipped by amplified noise
    assert any(o.max_abs > 0 and o.exact for o in report.outputs)
    not_replayed = [op.label for op in report.ops if not op.replayed]
    assert not not_replayed, not_replayed
    assert all(op.replay_ok for op in report.ops if op.replay_ok is not None)
    grid_sample = next(op for op in report.ops if op.op_type in ("grid_sample", "grid_sampler"))
    # fed Paddle's exact inputs, grid sampling of sharp features matches to a few ulps
    assert grid_sample.replay_ok and max(d.max_rel for d in grid_sample.replay) < 1e-6
    assert report.first_divergence is not None


def test_amplified_through_the_cli_with_json(tmp_path):
    built = _built("verify_amplifier", "pir")
    npz = tmp_path / "in.npz"
    np.savez(npz, **_feeds(built))
    out = tmp_path / "report.json"
    code = main(["verify", built.model_file, "--inputs", str(npz), "--replay", "--json", str(out)])
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "amplified" and doc["first_divergence"] is None
    assert doc["ops"] and all({"op_type", "block", "index", "max_abs", "max_rel", "replayed"} <= set(o)
                              for o in doc["ops"])
    assert all(o["replayed"] for o in doc["ops"])


# ------------------------------------------------------------------------------ (b) mismatch




@pytest.mark.parametrize("fmt", FORMATS)
def test_broken_mapper_is_named_by_locate_and_replay(fmt):
    built = _built("verify_small", fmt)
    program = load(built.model_file)
    tanh = _site(program, "tanh")
    original = get_mapper("tanh")
    with overriding("tanh", perturbed(original)):
        report = pd2onnx.verify(built.model_file, inputs=_feeds(built), locate=True, replay=True)
    assert report.verdict == "mismatch" and report.exit_code == 3
    assert [(op.block, op.index) for op in report.failed_replays] == [tanh]
    first = report.first_divergence
    assert first is not None and (first.block, first.index) == tanh
    assert "this op" in pd2onnx.verification.format_report(report)
    assert get_mapper("tanh") is original  # the override is gone


@pytest.mark.parametrize("fmt", FORMATS)
def test_onnx_file_edited_after_conversion_is_named(fmt, tmp_path):
    built = _built("verify_small", fmt)
    program = load(built.model_file)
    softmax = _site(program, "softmax")
    path = str(tmp_path / "model.onnx")
    save_model(convert(built.model_file), path)
    proto = onnx.load(path)
    prov = provenance.read({p.key: p.value for p in proto.metadata_props})
    (node_name,) = prov.ops[softmax].nodes
    node = next(n for n in proto.graph.node if n.name == node_name)
    node.attribute[0].i = 0  # softmax over the batch instead of the classes
    onnx.save(proto, path)
    feeds = _feeds(built)
    report = pd2onnx.verify(built.model_file, path, inputs=feeds, locate=True, replay=True)
    assert report.verdict == "mismatch"
    assert (report.first_divergence.block, report.first_divergence.index) == softmax
    assert [(op.block, op.index) for op in report.failed_replays] == [softmax]
    if fmt == "pir":  # the command line says so too, with exit code 3
        npz = tmp_path / "in.npz"
        np.savez(npz, **feeds)
        assert main(["verify", built.model_file, "--onnx", path, "--inputs", str(npz), "--locate", "--replay"]) == 3


# ------------------------------------------------------------------------------ other models


@pytest.mark.parametrize("fmt", FORMATS)
def test_control_flow_ops_replay_as_a_whole(fmt):
    built = _built("verify_while", fmt)
    report = pd2onnx.verify(built.model_file, inputs=_feeds(built), locate=True, replay=True)
    assert report.verdict == "match", pd2onnx.verification.format_report(report)
    loop = next(op for op in report.ops if op.op_type == "while")
    assert loop.replay_ok, pd2onnx.verification.format_report(report)
    inner = [op for op in report.ops if op.block != 0]
    assert inner and all(not op.replayed and "control-flow block" in op.why for op in inner)


@pytest.mark.parametrize("fmt", FORMATS)
def test_branches_and_two_inputs(fmt):
    built = _built("verify_if", fmt)
    report = pd2onnx.verify(built.model_file, inputs=_feeds(built), locate=True, replay=True)
    assert report.verdict == "match", pd2onnx.verification.format_report(report)
    assert not report.failed_replays


@pytest.mark.parametrize("fmt", FORMATS)
def test_float64_computed_in_float32_keeps_its_provenance(fmt):
    built = _built("verify_float64", fmt)
    model = convert(built.model_file, optimize=False)
    assert any(n.op_type == "Cast" for n in model.graph), "legalization should compute the conv in float32"
    report = pd2onnx.verify(built.model_file, inputs=_feeds(built), replay=True, optimize=False)
    assert report.verdict == "match", pd2onnx.verification.format_report(report)
    conv = next(op for op in report.ops if op.op_type == "conv2d")
    assert conv.replay_ok and conv.replay_rtol >= 1e-5  # judged at float32 precision
    assert any("legalize" in n for n in conv.nodes)  # the casts around it are the conv's too


# ------------------------------------------------------------------------------ provenance


@pytest.mark.parametrize("fmt", FORMATS)
def test_strip_provenance_changes_nothing_else(fmt, tmp_path):
    built = _built("verify_small", fmt)
    kept = ir.serde.serialize_model(convert(built.model_file))
    stripped = ir.serde.serialize_model(convert(built.model_file, strip_provenance=True))
    assert provenance.KEY in {p.key for p in kept.metadata_props}
    assert not stripped.metadata_props
    entry = next(p for p in kept.metadata_props if p.key == provenance.KEY)
    kept.metadata_props.remove(entry)
    assert kept.SerializeToString(deterministic=True) == stripped.SerializeToString(deterministic=True)
    out = tmp_path / "m.onnx"
    assert main(["convert", built.model_file, "-o", str(out), "--strip-provenance"]) == 0
    assert not onnx.load(str(out)).metadata_props


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_optimizer_keeps_provenance_honest(fmt, tmp_path):
    """Conv + BatchNorm fused: the conv's value now computes the BN's output, so it carries
    the BN's Paddle value and no longer the conv's (marked, with why); optimizing a saved
    unoptimized file does the same."""
    built = _built("verify_small", fmt)
    program = load(built.model_file)
    conv, bn = _site(program, "conv2d"), _site(program, "batch_norm")
    bn_out = program.main.ops[bn[1]].output("out")
    conv_out = program.main.ops[conv[1]].output("out")

    def check(model):
        prov = provenance.read(model.metadata_props)
        assert prov.ops[bn].outputs[bn_out] is not None
        assert prov.ops[conv].outputs[conv_out] is None and "fuse-bn" in prov.ops[conv].why[conv_out]

    check(convert(built.model_file))
    plain = convert(built.model_file, optimize=False)
    prov = provenance.read(plain.metadata_props)
    assert prov.ops[conv].outputs[conv_out] is not None and prov.ops[conv].nodes
    path = str(tmp_path / "plain.onnx")
    save_model(plain, path)
    from pd2onnx.optimize import optimize

    loaded = ir.load(path)
    optimize(loaded)
    check(loaded)


@pytest.mark.parametrize("fmt", FORMATS)
def test_without_provenance_values_are_matched_by_name(fmt, tmp_path):
    built = _built("verify_small", fmt)
    path = str(tmp_path / "m.onnx")
    save_model(convert(built.model_file, optimize=False, strip_provenance=True), path)
    report = pd2onnx.verify(built.model_file, path, inputs=_feeds(built), locate=True, replay=True)
    note = next(n for n in report.notes if "no pd2onnx provenance" in n)
    assert "op(s) with used outputs matched none" in note
    assert report.verdict == "match", pd2onnx.verification.format_report(report)


@pytest.mark.parametrize("fmt", FORMATS)
def test_provenance_is_compact(fmt):
    """A few dozen bytes per Paddle op: nothing next to real weights (docs/verify.md has
    measurements on real models)."""
    built = _built("verify_amplifier", fmt)
    model = convert(built.model_file)
    ops = sum(1 for _ in load(built.model_file).walk_ops())
    assert len(model.metadata_props[provenance.KEY]) < 80 * ops


# ------------------------------------------------------------------------------ bad input


def test_inputs_that_do_not_fit_name_the_input_and_both_shapes(tmp_path):
    built = _built("verify_small", "pir")
    feeds = _feeds(built)
    name = next(iter(feeds))
    bad = {name: np.zeros((2, 3, 9, 9), np.float32)}
    with pytest.raises(UsageError) as err:
        pd2onnx.verify(built.model_file, inputs=bad, replay=True)
    assert name in str(err.value) and "[2, 3, 9, 9]" in str(err.value) and "[2, 3, 8, 8]" in str(err.value)
    npz = tmp_path / "in.npz"
    np.savez(npz, **{name: feeds[name].astype(np.float64)})
    with pytest.raises(UsageError) as err:
        pd2onnx.verify(built.model_file, inputs_file=str(npz), locate=True)
    assert name in str(err.value) and "float64" in str(err.value) and "float32" in str(err.value)
    np.savez(npz, other=feeds[name])
    assert main(["verify", built.model_file, "--inputs", str(npz), "--locate"]) == 1


def test_without_paddle_the_message_says_what_to_install(monkeypatch, capsys):
    import importlib.util

    built = _built("verify_small", "pir")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "paddle" else real(name, *a))
    for flags in ([], ["--replay"]):
        assert main(["verify", built.model_file, *flags]) == 1
        assert "pip install paddlepaddle" in capsys.readouterr().err
    assert main(["verify", built.model_file, "--replay", "--paddle-python", "/nonexistent/python"]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_paddle_from_another_interpreter():
    """--paddle-python: Paddle 2.6 (the legacy file's own writer) runs Paddle's side."""
    from harness.builder import PADDLE26

    if not os.path.exists(PADDLE26):
        pytest.skip(f"no Paddle 2.6 interpreter at {PADDLE26}")
    built = _built("verify_small", "legacy")
    report = pd2onnx.verify(built.model_file, inputs=_feeds(built), replay=True, paddle_python=PADDLE26)
    assert report.verdict == "match", pd2onnx.verification.format_report(report)
    assert all(op.replayed for op in report.ops)
