"""rnn cases: paddle.nn.LSTM / GRU / SimpleRNN (tanh, relu) saved as the fused ``rnn`` op.

The matrix (mode x 1/2 layers x forward/bidirectional) runs twice: batch-major with
``sequence_length`` (a padded batch of different lengths) and no initial states, and
time-major with initial states and no lengths; one more case per mode has all three, and
one a sequence of length 0 (Paddle returns its initial state as the final state).
Every case has a dynamic batch and a dynamic length.
"""

import numpy as np

from harness.cases import case

T, B, I, H = 6, 3, 5, 4
LENGTHS = [6, 2, 4]  # one full sequence, two padded ones
LENGTHS_WITH_EMPTY = [6, 0, 3]  # Paddle keeps the initial state of an empty sequence
_CLASSES = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "SimpleRNN", "RNN_RELU": "SimpleRNN"}


def _module(paddle, rnn, states, lengths):
    """A Layer calling ``rnn`` with initial states and/or lengths taken from its inputs."""

    class Module(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.rnn = rnn

        def forward(self, x0, x1=None, x2=None, x3=None):
            args = [a for a in (x1, x2, x3) if a is not None]
            init = None
            if self._states == 2:
                init = (args[0], args[1])
            elif self._states == 1:
                init = args[0]
            length = args[-1] if self._lengths else None
            out, final = self.rnn(x0, init, length)
            if self._states == 2 or isinstance(final, (tuple, list)):
                return out, final[0], final[1]
            return out, final

    layer = Module()
    layer._states, layer._lengths = states, lengths
    return layer


def _rnn_case(mode, layers, bidirect, time_major, with_init, with_len, len_dtype="int64", lengths=LENGTHS):
    def build(paddle, rng):
        direction = "bidirect" if bidirect else "forward"
        kwargs = {"num_layers": layers, "direction": direction, "time_major": time_major}
        if mode.startswith("RNN_"):
            kwargs["activation"] = mode[4:].lower()
        rnn = getattr(paddle.nn, _CLASSES[mode])(I, H, **kwargs)
        x = rng.standard_normal((T, B, I) if time_major else (B, T, I)).astype("float32")
        inputs = [x]
        shapes = [(None, None, I)]
        n_states = 0
        if with_init:
            n_states = 2 if mode == "LSTM" else 1
            d = 2 if bidirect else 1
            for _ in range(n_states):
                inputs.append((0.5 * rng.standard_normal((layers * d, B, H))).astype("float32"))
                shapes.append((layers * d, None, H))
        if with_len:
            inputs.append(np.asarray(lengths, dtype=len_dtype))
            shapes.append((None,))
        return _module(paddle, rnn, n_states, with_len), inputs, shapes

    return build


def _register(name, *args, **kwargs):
    case("rnn", name=name)(_rnn_case(*args, **kwargs))


for _mode in ("LSTM", "GRU", "RNN_TANH", "RNN_RELU"):
    for _layers in (1, 2):
        for _bidirect in (False, True):
            _tag = f"{_mode.lower()}_l{_layers}_{'bidir' if _bidirect else 'fwd'}"
            _register(f"rnn_{_tag}_batch_major_seqlen", _mode, _layers, _bidirect, False, False, True)
            _register(f"rnn_{_tag}_time_major_init", _mode, _layers, _bidirect, True, True, False)
    _register(f"rnn_{_mode.lower()}_l2_bidir_all", _mode, 2, True, True, True, True, len_dtype="int32")
    _register(f"rnn_{_mode.lower()}_l2_bidir_empty_seq", _mode, 2, True, False, True, True,
              lengths=LENGTHS_WITH_EMPTY)


def _cell_loop(paddle, cell, lstm):
    """A cell stepped by a Python loop over a dynamic length (dy2static makes it a while op)."""

    class CellLoop(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.cell = cell

        def forward(self, x0):
            h = paddle.zeros([paddle.shape(x0)[0], H], "float32")
            c = paddle.zeros([paddle.shape(x0)[0], H], "float32")
            for t in range(paddle.shape(x0)[1]):
                if self._lstm:
                    _, (h, c) = self.cell(x0[:, t], (h, c))
                else:
                    h, _ = self.cell(x0[:, t], h)
            return h, c

    layer = CellLoop()
    layer._lstm = lstm
    return layer


@case("while", "matmul", name="rnn_lstm_cell_loop")
def rnn_lstm_cell_loop(paddle, rng):
    """LSTMCell unrolled by dy2static: the ordinary op mappers inside a Loop, no rnn op."""
    x = rng.standard_normal((B, T, I)).astype("float32")
    return _cell_loop(paddle, paddle.nn.LSTMCell(I, H), True), [x], [(None, None, I)]


@case("while", "matmul", name="rnn_gru_cell_loop")
def rnn_gru_cell_loop(paddle, rng):
    x = rng.standard_normal((B, T, I)).astype("float32")
    return _cell_loop(paddle, paddle.nn.GRUCell(I, H), False), [x], [(None, None, I)]


@case("while", "increment", "assign_out", name="rnn_lstm_proj_loop", custom=True, formats=("pir",),
      why="Paddle 2.6's nn.LSTM has no proj_size")
def rnn_lstm_proj_loop(paddle, rng, out_dir):
    """nn.LSTM with ``proj_size``: Paddle has no fused op for it, so dy2static writes a while
    loop whose counter and condition are stored in place (PIR ``increment_`` of the counter,
    ``assign_out_`` of the new condition into the loop's condition value). Read as new values,
    they left the ONNX Loop's condition constant: the model never finished.

    The reference is the layer run eagerly: Paddle 3.3's own predictor does not finish on the
    PIR file it saves for this layer (it hangs, measured), so it cannot be the reference."""
    import os

    x = rng.standard_normal((B, T, I)).astype("float32")
    layer = paddle.nn.LSTM(I, H, proj_size=3)
    layer.eval()
    spec = [paddle.static.InputSpec([None, T, I], "float32", "x0")]
    paddle.jit.save(paddle.jit.to_static(layer, input_spec=spec), os.path.join(out_dir, "model"))
    out, (h, c) = layer(paddle.to_tensor(x))
    model = "model.json" if os.path.exists(os.path.join(out_dir, "model.json")) else "model.pdmodel"
    return {"model": model, "params": "model.pdiparams", "inputs": [x],
            "outputs": [out.numpy(), h.numpy(), c.numpy()]}
