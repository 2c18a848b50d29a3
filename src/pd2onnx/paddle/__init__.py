"""Stage 1: read Paddle inference models (legacy ProgramDesc, PIR JSON, .pdiparams).

Nothing here imports paddle.
"""

from pd2onnx.paddle.loader import load
from pd2onnx.paddle.program import Block, Op, Program, Value

__all__ = ["Block", "Op", "Program", "Value", "load"]
