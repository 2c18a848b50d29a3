"""Paddle dtype spellings (legacy codes, PIR type ids, attribute strings) to one name.

The canonical dtype name is numpy's / ml_dtypes' name: ``float32``, ``bfloat16``,
``float8_e4m3fn`` ... (FORMATS.md 1.3, 3.3, 3.4).
"""

from __future__ import annotations

import numpy as np

# VarType.Type code -> (canonical name, bytes per element) for tensor element types.
LEGACY_DTYPES: dict[int, tuple[str, int]] = {
    0: ("bool", 1),
    1: ("int16", 2),
    2: ("int32", 4),
    3: ("int64", 8),
    4: ("float16", 2),
    5: ("float32", 4),
    6: ("float64", 8),
    19: ("uint64", 8),  # SIZE_T
    20: ("uint8", 1),
    21: ("int8", 1),
    22: ("bfloat16", 2),
    23: ("complex64", 8),
    24: ("complex128", 16),
    32: ("float8_e4m3fn", 1),
    33: ("float8_e5m2", 1),
    36: ("uint16", 2),
    37: ("uint32", 4),
    38: ("uint64", 8),
}

# VarType.Type codes that are variable kinds, not element types.
LEGACY_KINDS: dict[int, str] = {
    7: "dense_tensor",
    8: "selected_rows",
    9: "feed_minibatch",
    10: "fetch_list",
    11: "step_scopes",
    12: "lod_rank_table",
    13: "tensor_array",
    14: "place_list",
    15: "reader",
    17: "raw",
    18: "tuple",
    25: "string",
    26: "strings",
    27: "vocab",
    28: "feed_list",
    29: "pstring",
    30: "sparse_coo",
    31: "sparse_csr",
}

# PIR element type ids (without dialect prefix) -> canonical name.
PIR_DTYPES: dict[str, str] = {
    "t_bool": "bool",
    "t_i8": "int8",
    "t_ui8": "uint8",
    "t_i16": "int16",
    "t_i32": "int32",
    "t_i64": "int64",
    "t_f16": "float16",
    "t_bf16": "bfloat16",
    "t_f32": "float32",
    "t_f64": "float64",
    "t_c64": "complex64",
    "t_c128": "complex128",
    "t_f8e4m3fn": "float8_e4m3fn",
    "t_f8e5m2": "float8_e5m2",
    "t_index": "int64",
}

# Names used in PIR ``1.a_dtype`` attributes that differ from ours.
_ATTR_ALIASES = {"float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2"}

_ALL_NAMES = {name for name, _ in LEGACY_DTYPES.values()}


def from_legacy_code(code: int) -> str | None:
    """Canonical name of a legacy element-type code; None if it is not an element type."""
    entry = LEGACY_DTYPES.get(code)
    return entry[0] if entry else None


def from_attr_string(text: str) -> str | None:
    """Canonical name of a PIR ``1.a_dtype`` string (``undefined`` -> None)."""
    text = _ATTR_ALIASES.get(text, text)
    return text if text in _ALL_NAMES else None


def to_numpy(name: str) -> np.dtype:
    """numpy dtype for a canonical name (bf16/fp8 through ml_dtypes)."""
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def itemsize(name: str) -> int:
    return to_numpy(name).itemsize


def canonical_name(dtype: np.dtype) -> str:
    """Canonical name of a numpy dtype (ml_dtypes types included)."""
    return np.dtype(dtype).name
