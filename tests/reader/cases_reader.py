"""Whole models for the reader tests: vision models, a transformer, control flow, a dtype zoo.

Built in both formats like the op cases; the reader tests compare every tensor pd2onnx
loads with the one Paddle loads, and inputs/outputs/op counts with Paddle's own view.
"""

from harness.cases import case


@case("reader", name="reader_resnet18")
def resnet18(paddle, rng):
    model = paddle.vision.models.resnet18(num_classes=10)
    return model, [rng.standard_normal((1, 3, 32, 32)).astype("float32")], [(None, 3, 32, 32)]


@case("reader", name="reader_mobilenet_v2")
def mobilenet_v2(paddle, rng):
    model = paddle.vision.models.mobilenet_v2(scale=0.25, num_classes=10)
    return model, [rng.standard_normal((1, 3, 32, 32)).astype("float32")], [(None, 3, 32, 32)]


@case("reader", name="reader_transformer")
def transformer(paddle, rng):
    layer = paddle.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0)
    model = paddle.nn.TransformerEncoder(layer, num_layers=2)
    return model, [rng.standard_normal((2, 5, 16)).astype("float32")], [(None, None, 16)]


class _ControlFlow:
    """Built lazily inside the worker (paddle is imported there)."""

    @staticmethod
    def make(paddle):
        class Net(paddle.nn.Layer):
            def __init__(self):
                super().__init__()
                self.fc = paddle.nn.Linear(4, 4)

            def forward(self, x):
                y = self.fc(x)
                if paddle.mean(y) > 0:
                    y = y * 2.0
                else:
                    y = y - 1.0
                i = paddle.zeros([1], "int64")
                while i < 3:
                    y = y + 1.0
                    i = i + 1
                return y

        return Net()


@case("reader", name="reader_control_flow")
def control_flow(paddle, rng):
    net = paddle.jit.to_static(_ControlFlow.make(paddle), full_graph=True) if hasattr(paddle.jit, "to_static") else None
    return net, [rng.standard_normal((2, 4)).astype("float32")], [(None, 4)]


@case("reader", name="reader_dtype_zoo", predict=False)
def dtype_zoo(paddle, rng):
    class Zoo(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w32 = self.create_parameter([3, 4], dtype="float32")
            self.w64 = self.create_parameter([2], dtype="float64")
            buffers = {
                "b_bf16": paddle.to_tensor(rng.standard_normal(6).astype("float32")).astype("bfloat16"),
                "b_i8": paddle.to_tensor(rng.integers(-100, 100, 7).astype("int8")),
                "b_u8": paddle.to_tensor(rng.integers(0, 255, 3).astype("uint8")),
                "b_i16": paddle.to_tensor(rng.integers(-999, 999, 3).astype("int16")),
                "b_i32": paddle.to_tensor(rng.integers(-999, 999, (2, 2)).astype("int32")),
                "b_i64": paddle.to_tensor(rng.integers(-999, 999, 4).astype("int64")),
                "b_bool": paddle.to_tensor(rng.random(5) < 0.5),
                "b_c64": paddle.to_tensor((rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype("complex64")),
                "b_scalar": paddle.to_tensor(rng.standard_normal(()).astype("float32")),
                "b_empty": paddle.to_tensor(rng.standard_normal((0, 3)).astype("float32")),
                "Zeta_upper": paddle.to_tensor(rng.standard_normal(2).astype("float32")),
                "_under": paddle.to_tensor(rng.standard_normal(2).astype("float32")),
            }
            for name, value in buffers.items():
                self.register_buffer(name, value, persistable=True)

        def forward(self, x):
            y = paddle.matmul(x, self.w32) + self.b_scalar
            y = y + paddle.sum(self.w64.astype("float32"))
            y = y + paddle.sum(self.b_bf16.astype("float32")) + paddle.sum(self.b_i8.astype("float32"))
            y = y + paddle.sum(self.b_u8.astype("float32")) + paddle.sum(self.b_i16.astype("float32"))
            y = y + paddle.sum(self.b_i32.astype("float32")) + paddle.sum(self.b_i64.astype("float32"))
            y = y + paddle.sum(self.b_bool.astype("float32")) + paddle.sum(paddle.real(self.b_c64))
            y = y + paddle.sum(paddle.concat([self.b_empty.reshape([-1]), paddle.zeros([1], "float32")])) + paddle.sum(self.Zeta_upper) + paddle.sum(self._under)
            return y

    return Zoo(), [rng.standard_normal((2, 3)).astype("float32")]


@case("reader", name="reader_dtype_zoo_fp16")
def dtype_zoo_fp16(paddle, rng):
    """float16 apart: Paddle's predictor refuses a model holding both bf16 and fp16 weights."""

    class Zoo(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.w16 = self.create_parameter([5], dtype="float16")
            self.register_buffer("b_c128", paddle.to_tensor(
                (rng.standard_normal(2) + 1j * rng.standard_normal(2)).astype("complex128")), persistable=True)

        def forward(self, x):
            return x + paddle.sum(self.w16.astype("float32")) + paddle.sum(paddle.real(self.b_c128)).astype("float32")

    return Zoo(), [rng.standard_normal((2, 3)).astype("float32")]
