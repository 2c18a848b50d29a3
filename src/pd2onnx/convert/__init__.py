"""Stage 2: Program -> ONNX through the mapper registry."""

from pd2onnx.convert.exporter import DEFAULT_OPSET, MIN_OPSET, export_program, newest_opset, prescan

__all__ = ["DEFAULT_OPSET", "MIN_OPSET", "export_program", "newest_opset", "prescan"]
