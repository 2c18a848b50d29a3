"""Checks that an op's parameter operands fit together, where the mappers read them.

A program whose operands disagree (a norm's statistics of another length than the channels,
a convolution filter for other input channels, a bias of the wrong length) is malformed: an
edited or damaged file, never one Paddle would run. Converted as it is, it would give ONNX that
no runtime runs, or crash later in the optimizer's fusions (a Conv+BatchNormalization fusion
broadcasting 240 variances against 576). These helpers raise a ModelFormatError naming the op,
its block and position, the operand and the expected and found shapes instead.

Shapes come from the operand's value when it is a constant (a parameter: the array the params
file holds), else from the program's declaration; unknown dims (-1) are not judged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pd2onnx.convert.context import OpContext
from pd2onnx.errors import ModelFormatError


def operand_shape(ctx: OpContext, slot: str, i: int = 0) -> tuple[int, ...] | None:
    """The shape of operand ``slot`` (element ``i``): its constant's when known, else the
    declared one; None when neither is known."""
    names = ctx.pd.inputs.get(slot) or []
    if i >= len(names):
        return None
    value = ctx.input(slot, i)
    if value is not None and value.const_value is not None:
        return tuple(int(d) for d in value.const_value.shape)
    info = ctx.info(names[i])
    return None if info is None or info.shape is None else tuple(info.shape)


def malformed(ctx: OpContext, message: str) -> ModelFormatError:
    """A ModelFormatError naming this op: ``raise malformed(ctx, ...)``."""
    return ctx.malformed(message, hint="the program's operands do not fit together (an edited or damaged file); "
                                       "export the model again")


def _operand(ctx: OpContext, slot: str, i: int = 0) -> str:
    names = ctx.pd.inputs.get(slot) or []
    return f"operand {slot} ({names[i]})" if i < len(names) else f"operand {slot}"


def _show(shape: Sequence[int]) -> str:
    return "[" + ", ".join("?" if d < 0 else str(d) for d in shape) + "]"


def expect_vector(ctx: OpContext, slots: Sequence[str], length: int, what: str) -> None:
    """Each present operand of ``slots`` holds ``length`` values (one per channel, ...):
    a vector ``[length]`` or any shape of that many elements (Paddle flattens them)."""
    if length < 0:
        return
    for slot in slots:
        shape = operand_shape(ctx, slot)
        if shape is None or any(d < 0 for d in shape):
            continue
        if math.prod(shape) != length:
            raise malformed(ctx, f"{_operand(ctx, slot)} has shape {_show(shape)}, expected [{length}] ({what})")


def check_norm(ctx: OpContext, slots: Sequence[str], channels: int, groups: int | None = None) -> None:
    """Per-channel operands of a batch/instance/group norm; ``groups`` must divide the
    channels (group_norm)."""
    if groups is not None:
        if groups < 1:
            raise malformed(ctx, f"groups={groups}, expected a positive number")
        if channels >= 0 and channels % groups:
            raise malformed(ctx, f"groups={groups} does not divide the {channels} channels of x")
    expect_vector(ctx, slots, channels, f"one value per channel of x, {channels} channels")


def check_conv(ctx: OpContext, x_shape: Sequence[int], channels: int, transposed: bool) -> None:
    """A convolution filter ``[Cout, Cin/groups, k...]`` (transposed: ``[Cin, Cout/groups,
    k...]``) for an input of ``channels`` channels and rank ``len(x_shape)``, and a legacy
    fused ``Bias`` of one value per output channel."""
    groups = int(ctx.attr("groups", 1))
    if groups < 1:
        raise malformed(ctx, f"groups={groups}, expected a positive number")
    w = operand_shape(ctx, "filter")
    if w is None:
        return
    if len(w) != len(x_shape):
        raise malformed(ctx, f"{_operand(ctx, 'filter')} has shape {_show(w)}, expected rank {len(x_shape)} "
                             f"(the rank of the input, {_show(x_shape)})")
    if transposed:
        if channels >= 0 and w[0] >= 0 and w[0] != channels:
            raise malformed(ctx, f"{_operand(ctx, 'filter')} has shape {_show(w)}, expected [{channels}, ...] "
                                 f"(the {channels} input channels first)")
        out_channels = w[1] * groups if w[1] >= 0 else -1
    else:
        if channels >= 0 and channels % groups:
            raise malformed(ctx, f"groups={groups} does not divide the {channels} channels of the input")
        if channels >= 0 and w[1] >= 0 and w[1] * groups != channels:
            raise malformed(ctx, f"{_operand(ctx, 'filter')} has shape {_show(w)}, expected [?, {channels // groups}, "
                                 f"...] ({channels} input channels in {groups} group(s))")
        if w[0] >= 0 and w[0] % groups:
            raise malformed(ctx, f"{_operand(ctx, 'filter')} has shape {_show(w)}: {w[0]} output channels do not "
                                 f"split into {groups} groups")
        out_channels = w[0]
    if ctx.has_input("Bias"):
        expect_vector(ctx, ["Bias"], out_channels, f"one value per output channel, {out_channels}")
