"""Constant values converted to another dtype at conversion time, as the kernels convert them.

Paddle's kernels (``cast``, ``full``, ``assign_value``, Scalar attributes) and ONNX Runtime's
``Cast`` convert with C's ``static_cast``. For a NaN, an infinity or a float out of the
integer type's range C leaves the result to the machine (x86 gives the most negative integer
of 32/64-bit types; narrower types take the low bits of the 32-bit result); numpy's ``astype``
is that same C conversion, so its result is what the model computes at run time on the same
machine - but numpy warns about it. ``c_cast`` gives numpy's (the kernels') result without
the warning: such values are the model's own (e.g. a placeholder that dy2static fills with
whatever a float buffer held), not the user's mistake.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def c_cast(values: Any, dtype: Any) -> np.ndarray:
    """``values`` as an array of numpy ``dtype``, converted as C's ``static_cast`` does
    (bool: ``!= 0``, NaN included)."""
    array = np.asarray(values)
    with np.errstate(invalid="ignore", over="ignore"):
        return array.astype(dtype)
