"""Test harness: build tiny Paddle programs in both formats, convert, run, compare.

Case modules (``tests/ops/cases_*.py``) import only ``harness.cases`` (no pytest, no paddle
at import time): they are imported both by pytest and by the Paddle worker processes.
"""
