import sys

from pd2onnx.cli import main

sys.exit(main())
