import sys

from pd2onnx.cli import main

if __name__ == "__main__":
    sys.exit(main())
