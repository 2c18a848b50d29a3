"""``pd2onnx verify``: does the ONNX model compute what the Paddle model computes, and if not,
where and why (docs/verify.md).

- Without ``locate``/``replay``: Paddle's predictor and ONNX Runtime run the model on the same
  inputs; each output is compared.
- ``locate``: both run once more returning every intermediate value both sides have (Paddle in
  a worker process, ``paddle_worker``; ONNX values found through the provenance the converter
  stored in the file, ``pd2onnx.provenance``): each op's output error, and the first op out
  of tolerance with its inputs' errors.
- ``replay``: each op's ONNX nodes, fed Paddle's own values of its inputs, against Paddle's
  outputs (``replay``), judged by a tight dtype-aware tolerance (``compare``).

- the float64 referee (``referee``): an op whose replay is out of tolerance is computed
  exactly; it is right when ours is about as close to the exact value as Paddle's.

The verdict: ``match`` (outputs agree), ``amplified`` (outputs differ but every op replays
within tolerance: float noise the model amplifies), ``mismatch`` (an op that ran fails its
replay and the referee, or the outputs differ and no replay was asked for), ``unexplained``
(outputs differ, and an op that could not be replayed may explain it), ``paddle-wrong`` (the
outputs differ because Paddle computes an op wrongly: its value is far from the exact one on
its own operands, ours is not; ``paddle_exact``). The run is in ``run``.

Paddle is used only if installed (never a dependency); ONNX Runtime comes with the
``[verify]`` extra.
"""

from pd2onnx.verification.inputs import random_inputs, read_inputs
from pd2onnx.verification.report import (
    AMPLIFIED,
    MATCH,
    MISMATCH,
    PADDLE_WRONG,
    UNEXPLAINED,
    OpReport,
    VerifyReport,
    format_report,
)
from pd2onnx.verification.run import verify

__all__ = ["AMPLIFIED", "MATCH", "MISMATCH", "PADDLE_WRONG", "UNEXPLAINED", "OpReport", "VerifyReport", "format_report",
           "random_inputs", "read_inputs", "verify"]
