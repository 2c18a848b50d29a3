"""Activation functions.

Facts from Paddle 3.3 PIR programs (op names, attributes) and Paddle 2.6 legacy programs
(``jit.save`` output and op protos). Legacy-only attributes reach the mapper unchanged:
``relu6.threshold``, ``swish.beta``, ``hard_swish.threshold/scale/offset`` (Paddle 3.x
fixes them at 6, 1, and 6/6/3).
"""

from pd2onnx.paddle.opdefs import define

for _name in ("relu", "sigmoid", "tanh", "relu6", "silu", "swish", "tanh_shrink", "softsign", "logsigmoid"):
    define(_name, "x -> out")

define("leaky_relu", "x -> out", attrs={"negative_slope": 0.02}, rename={"negative_slope": "alpha"})
define("elu", "x -> out", attrs={"alpha": 1.0})
define("selu", "x -> out", attrs={"scale": 1.0507009873554805, "alpha": 1.6732632423543772})
define("celu", "x -> out", attrs={"alpha": 1.0})
define("gelu", "x -> out", attrs={"approximate": False})
define("mish", "x -> out", attrs={"lambda": 20.0}, rename={"lambda": "threshold"})
define("hardsigmoid", "x -> out", attrs={"slope": 0.2, "offset": 0.5}, legacy="hard_sigmoid")
define("hardswish", "x -> out", legacy="hard_swish")
define("hardtanh", "x -> out", attrs={"t_min": 0.0, "t_max": 24.0}, legacy="brelu")
define("hardshrink", "x -> out", attrs={"threshold": 0.5}, legacy="hard_shrink")
define("softshrink", "x -> out", attrs={"threshold": 0.5}, rename={"threshold": "lambda"})
define("softplus", "x -> out", attrs={"beta": 1.0, "threshold": 20.0})
# ``value`` (the result below the threshold) exists from Paddle 3.x on.
define("thresholded_relu", "x -> out", attrs={"threshold": 1.0, "value": 0.0})
define("stanh", "x -> out", attrs={"scale_a": 0.67, "scale_b": 1.7159})
define("prelu", "x alpha -> out", attrs={"data_format": "NCHW", "mode": "all"})
define("softmax", "x -> out", attrs={"axis": -1})
define("log_softmax", "x -> out", attrs={"axis": -1})
