"""Canonical Paddle dtype names -> ONNX element types."""

from __future__ import annotations

import onnx_ir as ir

from pd2onnx.errors import ConversionError

_ONNX_DTYPES = {
    "bool": ir.DataType.BOOL,
    "int8": ir.DataType.INT8,
    "uint8": ir.DataType.UINT8,
    "int16": ir.DataType.INT16,
    "uint16": ir.DataType.UINT16,
    "int32": ir.DataType.INT32,
    "uint32": ir.DataType.UINT32,
    "int64": ir.DataType.INT64,
    "uint64": ir.DataType.UINT64,
    "float16": ir.DataType.FLOAT16,
    "bfloat16": ir.DataType.BFLOAT16,
    "float32": ir.DataType.FLOAT,
    "float64": ir.DataType.DOUBLE,
    "complex64": ir.DataType.COMPLEX64,
    "complex128": ir.DataType.COMPLEX128,
    "float8_e4m3fn": ir.DataType.FLOAT8E4M3FN,
    "float8_e5m2": ir.DataType.FLOAT8E5M2,
}


def onnx_dtype(name: str) -> ir.DataType:
    """ONNX element type for a canonical dtype name."""
    try:
        return _ONNX_DTYPES[name]
    except KeyError:
        raise ConversionError(f"dtype {name!r} has no ONNX equivalent") from None


def paddle_dtype(dtype: ir.DataType) -> str:
    """The canonical dtype name of an ONNX element type ("float32" for FLOAT); ONNX's own
    name for types Paddle has no name for."""
    for name, onnx_type in _ONNX_DTYPES.items():
        if onnx_type == dtype:
            return name
    return dtype.name.lower()
