"""Program plumbing: inputs, outputs, control-flow terminators."""

from pd2onnx.paddle.opdefs import define

define("data", " -> out", attrs={"name": "", "shape": [], "dtype": "float32"}, legacy=())
define("feed", " -> out", attrs={"name": "", "col": 0}, legacy=())
define("fetch", "x -> out", attrs={"name": "", "col": 0}, legacy=())
