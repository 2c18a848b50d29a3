"""Hand-written notes beside the generated dtype declaration (``dtype_matrix.py``).

``OUTSIDE_MATRIX``: mappers that the dtype matrix (``tests/dtypes``) cannot run, each with
why and where its own tests are. ``GAP_REASONS``: why each remaining gap of the matrix
(``dtype_matrix.GAPS``) stays, keyed ``(op, dtype)`` (dtype ``"0-D"`` for 0-D). The dtype
tests fail when a mapper is in neither the matrix nor ``OUTSIDE_MATRIX``, or when a gap has
no reason here: no gap is unexplained.
"""

OUTSIDE_MATRIX: dict[str, str] = {}

GAP_REASONS: dict[tuple[str, str], str] = {}
