"""One exception hierarchy for everything a user can get wrong or pd2onnx cannot do.

Every message names the file (and the op, block and position where they apply) and says
what the user can do. The CLI prints these without a traceback and exits non-zero.
"""

from __future__ import annotations

from dataclasses import dataclass


class Pd2OnnxError(Exception):
    """Base class. ``exit_code`` is what the CLI returns for it."""

    exit_code = 1

    def __init__(self, message: str, *, file: str | None = None, hint: str | None = None):
        self.message = message
        self.file = file
        self.hint = hint
        super().__init__(self.__str__())

    def __str__(self) -> str:
        text = f"{self.file}: {self.message}" if self.file else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class ModelFormatError(Pd2OnnxError):
    """The model or params file is missing, of an unknown kind, truncated or corrupt."""


class UsageError(Pd2OnnxError):
    """A bad argument: opset out of range, unwritable output, wrong inputs file, ..."""


class VerifyError(Pd2OnnxError):
    """``verify`` could not get values to compare: Paddle or ONNX Runtime failed to run."""


class ConversionError(Pd2OnnxError):
    """An op could not be converted with the attributes or shapes it has."""


class OpRefused(ConversionError):
    """A mapper's refusal of one op (``ctx.fail``): the exporter goes on with the rest of the
    program and reports every refusal at once."""


class OpsRefused(ConversionError):
    """Several ops refused (each an ``OpRefused``), reported together."""

    def __init__(self, refusals: list[OpRefused], *, file: str | None = None):
        self.refusals = refusals
        lines = [f"{len(refusals)} ops cannot be converted:"]
        for r in refusals:
            lines.append(f"  - {r.message}" + (f" (hint: {r.hint})" if r.hint else ""))
        super().__init__("\n".join(lines), file=file)


@dataclass(frozen=True)
class OpSite:
    """Where an op sits: its type, block index, position in the block and layer path."""

    op_type: str
    block: int
    index: int
    struct_name: str | None = None

    def __str__(self) -> str:
        where = f"block {self.block}, op #{self.index}"
        if self.struct_name:
            where += f", layer {self.struct_name}"
        return where


class UnsupportedOpError(Pd2OnnxError):
    """One or more ops have no mapper (or none at the requested opset); all are listed."""

    exit_code = 2

    def __init__(self, sites: list[OpSite], *, file: str | None = None, reason: str = ""):
        self.sites = sites
        by_type: dict[str, list[OpSite]] = {}
        for site in sites:
            by_type.setdefault(site.op_type, []).append(site)
        lines = [f"{len(by_type)} unsupported operator type(s), {len(sites)} op(s){reason}:"]
        for op_type in sorted(by_type):
            where = by_type[op_type]
            shown = "; ".join(str(s) for s in where[:5])
            more = f"; ... {len(where) - 5} more" if len(where) > 5 else ""
            lines.append(f"  {op_type} x{len(where)}: {shown}{more}")
        super().__init__(
            "\n".join(lines),
            file=file,
            hint="run 'pd2onnx ops' for the supported list; please report missing ops",
        )


class DeclarationsCorrected(Exception):
    """Raised by ``ctx.correct_declared`` when a corrected type reaches a value that control
    flow carries (a PIR ``while``'s block argument or an ``if``/``while`` result, through
    ``yield``): subgraphs already built took the declared type, so the exporter converts again,
    with the corrected declarations from the start."""

    def __init__(self, site: OpSite, names: list[str]):
        self.site = site
        self.names = names
        super().__init__(f"{site.op_type} ({site}) corrected the declared type of {', '.join(names)}")


class OpsetTooLow(Exception):
    """Raised by a mapper (``ctx.require_opset``) that finds, while converting, that the
    op's actual arguments (runtime tensors, dynamic dims) need a newer opset than its
    static rule said. The exporter then converts again at that opset (or reports it)."""

    def __init__(self, opset: int, site: OpSite, why: str):
        self.opset = opset
        self.site = site
        self.why = why
        super().__init__(f"{site.op_type} ({site}) needs opset {opset}: {why}")


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class InternalError(Pd2OnnxError):
    """A pd2onnx bug: an exception nobody expected, in a mapper, an optimizer pass or another
    step. The message is one line naming where it happened (``in``: the mapper, the pass or the
    function) and on what (``on``: the op or node, or the model file); ``--debug`` shows the
    traceback (the original exception is the ``__cause__``)."""

    def __init__(self, where: str, on: str, cause: BaseException):
        self.where = where
        self.on = on
        self.cause = cause
        detail = _one_line(f"{type(cause).__name__}: {cause}")
        super().__init__(f"internal error in {where} on {on}: {detail}; please report, --debug shows the traceback")


def internal_error(exc: BaseException, on: str | None = None) -> InternalError:
    """An InternalError for an exception that escaped to the top (the CLI, a batch job): an
    InternalError raised with its context is kept; anything else is placed by the innermost
    pd2onnx function of its traceback."""
    if isinstance(exc, InternalError):
        return exc
    where = "pd2onnx"
    tb = exc.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if module.startswith("pd2onnx"):
            where = f"{module}.{tb.tb_frame.f_code.co_name}"
        tb = tb.tb_next
    return InternalError(where, on or "the model", exc)
