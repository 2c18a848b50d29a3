"""Activation functions."""

from pd2onnx.paddle.opdefs import define

define("relu", "x -> out")
define("sigmoid", "x -> out")
define("tanh", "x -> out")
