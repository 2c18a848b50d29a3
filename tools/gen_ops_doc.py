"""Regenerate docs/ops.md from the mapper registry: python tools/gen_ops_doc.py"""

import os

from pd2onnx.convert.support import format_ops_markdown, supported_ops

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "ops.md")
with open(path, "w") as f:
    f.write(format_ops_markdown(supported_ops()))
print(f"wrote {os.path.normpath(path)}")
