"""The mapper registry: one function per Paddle op (or op family), registered by name.

A mapper declares the lowest opset it can emit (an int, or a function of the op when the
attributes decide), and optionally the highest. The exporter's pre-scan uses this to list
every unsupported op at once and to raise the opset to what all ops need.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pd2onnx.convert.ops._index import MODULE_OF

if TYPE_CHECKING:
    from pd2onnx.convert.context import OpContext
    from pd2onnx.paddle.program import Op

MapperFn = Callable[["OpContext"], None]
OpsetRule = int | Callable[["Op"], int]


@dataclass(frozen=True)
class Mapper:
    name: str
    fn: MapperFn
    min_opset: OpsetRule
    family: str

    def required_opset(self, op: Op) -> int:
        """The lowest opset at which this mapper can convert ``op``."""
        rule = self.min_opset
        return rule(op) if callable(rule) else rule


_MAPPERS: dict[str, Mapper] = {}
_loaded = False


def mapper(*names: str, min_opset: OpsetRule = 7) -> Callable[[MapperFn], MapperFn]:
    """Register ``fn`` as the mapper for canonical op ``names``."""

    def register(fn: MapperFn) -> MapperFn:
        family = fn.__module__.rsplit(".", 1)[-1]
        for name in names:
            if name in _MAPPERS:
                raise ValueError(f"two mappers for op {name!r}: {_MAPPERS[name].fn.__module__} and {fn.__module__}")
            _MAPPERS[name] = Mapper(name, fn, min_opset, family)
        return fn

    return register


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    from pd2onnx.convert import ops

    for info in sorted(pkgutil.iter_modules(ops.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{ops.__name__}.{info.name}")


_CUSTOM: dict[str, Mapper] = {}  # ops the user asked to keep as custom-domain nodes

CUSTOM_DOMAIN = "Paddle"  # the domain paddle2onnx writes custom ops into (version 1)


_OVERRIDES: dict[str, Mapper] = {}  # tests: a mapper put in place of another (``overriding``)


def get_mapper(name: str) -> Mapper | None:
    found = _OVERRIDES.get(name) or _CUSTOM.get(name) or _MAPPERS.get(name)
    if found is not None:
        return found
    module = None if _loaded else MODULE_OF.get(name)
    if module is not None:
        # only the family module this op needs: importing all of them is ~10 ms per command
        importlib.import_module(f"pd2onnx.convert.ops.{module}")
        found = _MAPPERS.get(name)
        if found is not None:
            return found
    _load()  # an op the index does not list (or a stale index): look everywhere
    return _OVERRIDES.get(name) or _CUSTOM.get(name) or _MAPPERS.get(name)


def module_index() -> dict[str, str]:
    """Canonical op name -> the ``convert/ops`` module whose mapper converts it, from the
    registry itself (``tools/gen_mapper_index.py`` writes it to ``ops/_index.py``)."""
    return {name: m.fn.__module__.rsplit(".", 1)[-1] for name, m in all_mappers().items()}


@contextmanager
def overriding(name: str, fn: MapperFn) -> Iterator[Mapper]:
    """For tests: within the block, op ``name`` is converted by ``fn`` instead of its mapper
    (same opset rule and family); the registered mapper comes back afterwards, whatever
    happens. Yields the registered mapper, so ``fn`` can call it and alter its result."""
    _load()
    original = _MAPPERS.get(name)
    if original is None:
        raise KeyError(f"no mapper registered for op {name!r}")
    previous = _OVERRIDES.get(name)
    _OVERRIDES[name] = Mapper(name, fn, original.min_opset, original.family)
    try:
        yield original
    finally:
        if previous is None:
            _OVERRIDES.pop(name, None)
        else:
            _OVERRIDES[name] = previous


@contextmanager
def custom_ops(mapping: dict[str, str] | None) -> Iterator[None]:
    """Within the block, export each Paddle op named in ``mapping`` (canonical or legacy
    spelling) as one node ``mapping[op]`` of the custom domain ``Paddle``: inputs and outputs
    in slot order, attributes copied (paddle2onnx's ``custom_op_info``)."""
    from pd2onnx.convert.custom import custom_mapper
    from pd2onnx.paddle import opdefs

    if not mapping:
        yield
        return
    _load()
    added = {}
    for paddle_op, onnx_op in mapping.items():
        opdef = opdefs.get_legacy(paddle_op)
        canonical = opdef.name if opdef is not None else paddle_op
        added[canonical] = Mapper(canonical, custom_mapper(onnx_op), 7, "custom")
    previous = dict(_CUSTOM)
    _CUSTOM.update(added)
    try:
        yield
    finally:
        _CUSTOM.clear()
        _CUSTOM.update(previous)


def all_mappers() -> dict[str, Mapper]:
    _load()
    return dict(sorted(_MAPPERS.items()))


def format_module_index() -> str:
    """The text of ``convert/ops/_index.py`` for the registry as it is."""
    lines = [
        '"""Which ``convert/ops`` module converts each op, so that a conversion imports only the',
        "mapper modules its ops need. Generated by `python tools/gen_mapper_index.py`; do not edit",
        '(tests/test_cli.py fails when it is stale)."""',
        "",
        "MODULE_OF: dict[str, str] = {",
        *(f"    {name!r}: {module!r}," for name, module in sorted(module_index().items())),
        "}",
        "",
    ]
    return "\n".join(lines)
