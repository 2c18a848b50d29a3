"""Control flow and tensor arrays: dy2static ``if``/``while`` (PIR ``if``/``while``; legacy
``conditional_block``/``select_input``/``while``), tensor arrays, and the static
``cond``/``case``/``switch_case``/``while_loop`` helpers (custom-saved static programs).

Every branchy case feeds inputs that take both branches in the same run (the function is
applied to two inputs, one for each branch), so a converter that always takes one branch
fails.
"""

import numpy as np

from harness.cases import case


def _static(paddle, layer):
    """dy2static by AST (Python if/while on tensors become control-flow ops)."""
    return paddle.jit.to_static(layer, full_graph=True)


# ------------------------------------------------------------------------------ if
@case("if", "conditional_block", "select_input", name="cf_if_both_branches")
def if_both_branches(paddle, rng):
    class Net(paddle.nn.Layer):
        def branchy(self, x):
            if paddle.mean(x) > 0:
                y = x * 2.0 + 1.0
            else:
                y = paddle.exp(x) - 3.0
            return y

        def forward(self, a, b):
            return self.branchy(a), self.branchy(b)

    a = (rng.random((2, 3)) + 0.5).astype("float32")
    b = -(rng.random((2, 3)) + 0.5).astype("float32")
    return _static(paddle, Net()), [a, b], [(None, 3), (None, 3)]


@case("if", "conditional_block", "select_input", name="cf_if_tuple_shapes")
def if_tuple_shapes(paddle, rng):
    """A branch returning two values whose shapes differ between the branches."""

    class Net(paddle.nn.Layer):
        def branchy(self, x):
            if paddle.sum(x) > 0:
                y = x[:, :2] * 3.0
                z = paddle.sum(x, axis=1)
            else:
                y = paddle.concat([x, x], axis=1)
                z = paddle.max(x, axis=1) - 1.0
            return y, z

        def forward(self, a, b):
            y1, z1 = self.branchy(a)
            y2, z2 = self.branchy(b)
            return y1, z1, y2, z2

    a = (rng.random((2, 3)) + 0.1).astype("float32")
    b = -(rng.random((2, 3)) + 0.1).astype("float32")
    return _static(paddle, Net()), [a, b], [(None, 3), (None, 3)]


@case("if", "conditional_block", "select_input", name="cf_if_in_if")
def if_in_if(paddle, rng):
    class Net(paddle.nn.Layer):
        def branchy(self, x):
            if paddle.mean(x) > 0:
                if paddle.max(x) > 2.0:
                    y = x - 2.0
                else:
                    y = x * 10.0
            else:
                y = x + 100.0
            return y

        def forward(self, a, b, c):
            return self.branchy(a), self.branchy(b), self.branchy(c)

    a = (rng.random((2, 3)) + 2.5).astype("float32")
    b = (rng.random((2, 3)) * 0.5 + 0.1).astype("float32")
    c = -(rng.random((2, 3)) + 0.5).astype("float32")
    return _static(paddle, Net()), [a, b, c], [(None, 3)] * 3


@case("if", "conditional_block", "select_input", name="cf_if_on_shape")
def if_on_shape(paddle, rng):
    """A branch on the batch size: a run-time If, constant once the batch is fixed (the
    optimizer then keeps only the taken branch; tests/ops/test_control_flow.py)."""

    class Net(paddle.nn.Layer):
        def forward(self, x):
            if paddle.shape(x)[0] > 1:
                y = x * 2.0 + 1.0
            else:
                y = x - 5.0
            return y

    x = rng.standard_normal((3, 4)).astype("float32")
    return _static(paddle, Net()), [x], [(None, 4)]


# ------------------------------------------------------------------------------ while
@case("while", name="cf_while_runtime_trip")
def while_runtime_trip(paddle, rng):
    """The trip count is an input: 3 iterations here, any number at run time."""

    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            i = paddle.zeros([1], "int64")
            s = x
            while i < n:
                s = s * 0.5 + paddle.cast(i, "float32")
                i = i + 1
            return s, i

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x, paddle_int(3)], [(None, 3), (1,)]


@case("while", "unique", name="cf_while_carries_corrected_type")
def while_carries_corrected_type(paddle, rng):
    """A value first assigned in the loop body by an op whose declared dtype Paddle gets wrong
    (3.3 declares unique's result with an axis float32 for int64 x) is carried out of the loop:
    the Loop must carry the corrected type (Faster R-CNN's rois_num from generate_proposals)."""

    class Net(paddle.nn.Layer):
        def forward(self, x):
            i = paddle.zeros([1], "int64")
            while i < 2:
                y = paddle.unique(x, axis=0)
                i = i + 1
            return y

    x = np.array([[1, 2, 3], [1, 2, 3], [0, 1, 2], [5, 5, 5]], dtype="int64")
    return _static(paddle, Net()), [x], [(4, 3)]


def paddle_int(v):
    import numpy as np

    return np.array([v], dtype="int64")


@case("while", name="cf_while_break")
def while_break(paddle, rng):
    """``break`` when the running sum passes a threshold: the condition is carried out."""

    class Net(paddle.nn.Layer):
        def forward(self, x):
            i = paddle.zeros([1], "int64")
            s = paddle.zeros_like(x)
            while i < 100:
                s = s + x
                if paddle.sum(s) > 20.0:
                    break
                i = i + 1
            return s, i

    x = (rng.random((2, 3)) + 0.2).astype("float32")
    return _static(paddle, Net()), [x], [(None, 3)]


@case("while", "create_array", "array_write", "array_to_tensor", name="cf_while_array_stack")
def while_array_stack(paddle, rng):
    """A loop appending to a tensor array that is stacked afterwards: a Loop scan output
    (opset 11, no sequence crosses the loop)."""

    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            arr = paddle.tensor.create_array("float32")
            i = paddle.zeros([1], "int64")
            s = x
            while i < n:
                s = paddle.tanh(s + 0.5)
                paddle.tensor.array_write(s, i, arr)
                i = i + 1
            stacked = paddle.tensor.manipulation.tensor_array_to_tensor(arr, axis=0, use_stack=True)[0]
            return stacked, paddle.tensor.array_length(arr)

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x, paddle_int(4)], [(None, 3), (1,)]


@case("while", "array_write", "array_read", "array_to_tensor", name="cf_while_array_concat")
def while_array_concat(paddle, rng):
    """Elements concatenated and read back after the loop: the array is a sequence carried
    through the Loop (opset 13)."""

    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            arr = paddle.tensor.create_array("float32")
            i = paddle.zeros([1], "int64")
            s = x
            while i < n:
                s = s * 0.5 + 1.0
                paddle.tensor.array_write(s, i, arr)
                i = i + 1
            concat = paddle.tensor.manipulation.tensor_array_to_tensor(arr, axis=1, use_stack=False)
            second = paddle.tensor.array_read(arr, paddle.ones([1], "int64"))
            return concat[0], second

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x, paddle_int(3)], [(None, 3), (1,)]


@case("while", "array_length", "array_write", "array_to_tensor", name="cf_list_append_stack")
def list_append_stack(paddle, rng):
    """A Python list appended in a loop (``arr[len(arr)] = x``) and stacked: a scan output."""

    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            outs = []
            i = paddle.zeros([1], "int64")
            s = x
            while i < n:
                s = s * 0.5 + 1.0
                outs.append(s)
                i = i + 1
            return paddle.stack(outs)

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x, paddle_int(5)], [(None, 3), (1,)]


@case("array_pop", "array_to_tensor", name="cf_array_pop")
def array_pop(paddle, rng):
    """list.pop() after a loop (PIR array_pop; Paddle 2.6 reads the last element and slices
    the array with a legacy slice)."""

    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            outs = []
            i = paddle.zeros([1], "int64")
            s = x
            while i < n:
                s = s * 0.5 + 1.0
                outs.append(s)
                i = i + 1
            last = outs.pop()
            return paddle.stack(outs), last

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x, paddle_int(4)], [(None, 3), (1,)]


@case("slice_array", "array_to_tensor", name="cf_slice_array")
def slice_array(paddle, rng):
    """List slicing (PIR slice_array; a legacy slice on the tensor array from Paddle 2.6)."""

    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            outs = []
            i = paddle.zeros([1], "int64")
            s = x
            while i < n:
                s = s * 0.5 + 1.0
                outs.append(s)
                i = i + 1
            return paddle.stack(outs[1:3]), paddle.stack(outs[-2:])

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x, paddle_int(5)], [(None, 3), (1,)]


def _appended(paddle, x, n):
    """A Python list appended to in a loop (a tensor array): x*0.5+1, applied n times."""
    outs = []
    i = paddle.zeros([1], "int64")
    s = x
    while i < n:
        s = s * 0.5 + 1.0
        outs.append(s)
        i = i + 1
    return outs


@case("slice_array_dense", "slice_array", "slice", name="cf_array_index")
def array_index(paddle, rng):
    """List indexing and slicing after the loop (PIR slice_array_dense / slice_array; legacy
    slice on the tensor array, with decrease_axis for an index): constant, negative and
    run-time indices and bounds."""

    class Net(paddle.nn.Layer):
        def forward(self, x, n, k, j):
            outs = _appended(paddle, x, n)
            return (outs[1], outs[-1], outs[k], outs[j], paddle.stack(outs[k:]), paddle.stack(outs[-3:-1]),
                    paddle.stack(outs[:k]), paddle.stack(outs[1:j]), paddle.stack(outs[j:-1]))

    x = rng.standard_normal((2, 3)).astype("float32")
    return Net(), [x, paddle_int(5), np_arr(-2, "int64"), np_arr(3, "int64")], [(None, 3), (1,), (), ()]


@case("slice_array_dense", "slice_array", "create_array", name="cf_array_index_known")
def array_index_known(paddle, rng):
    """Indexing an array of known length (written at constant indices): ``[-1]``, a run-time
    index below minus the length (Paddle clamps it to 0) and Paddle's ``[-1:0]`` (the last
    element)."""

    class Net(paddle.nn.Layer):
        def forward(self, x, k):
            arr = paddle.tensor.create_array("float32")
            paddle.tensor.array_write(x, paddle.zeros([1], "int64"), arr)
            paddle.tensor.array_write(x * 2.0, paddle.ones([1], "int64"), arr)
            paddle.tensor.array_write(x + 3.0, paddle.full([1], 2, "int64"), arr)
            return arr[-1], arr[0], arr[k], paddle.stack(arr[1:]), paddle.stack(arr[-1:0])

    x = rng.standard_normal((2, 3)).astype("float32")
    return Net(), [x, np_arr(-7, "int64")], [(None, 3), ()]


@case("slice_array_dense", "slice_array", "if", "conditional_block", name="cf_array_index_in_if")
def array_index_in_if(paddle, rng):
    """An array filled by a loop, indexed and sliced inside both branches of an if."""

    class Net(paddle.nn.Layer):
        def branchy(self, x, n, k):
            outs = _appended(paddle, x, n)
            if paddle.sum(x) > 0:
                y = outs[k] * 2.0
                z = paddle.stack(outs[1:])
            else:
                y = outs[-2] - 1.0
                z = paddle.stack(outs[:k])
            return y, z

        def forward(self, a, b, n, k):
            return self.branchy(a, n, k) + self.branchy(b, n, k)

    a = (rng.random((2, 3)) + 0.5).astype("float32")
    b = -(rng.random((2, 3)) + 0.5).astype("float32")
    return Net(), [a, b, paddle_int(5), np_arr(-2, "int64")], [(None, 3), (None, 3), (1,), ()]


@case("slice_array_dense", "slice", "array_write", "while", name="cf_array_read_back_in_while")
def array_read_back_in_while(paddle, rng):
    """A loop that reads earlier elements of the arrays it appends to (a decoder feeding back
    its previous step): one array starts with an element, the other empty (its first append
    in the loop gives it the element's dims); then both stacked."""

    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            # Paddle 2.6 dy2static refuses a write into an array it has sliced ("a viewed
            # Tensor"); here the slice is only read, so the check is off while building
            nocheck = getattr(paddle.base.framework, "_stride_in_no_check_dy2st_diff", None)
            with nocheck():
                outs = [x * 1.0]
                seen = []
                i = paddle.ones([], "int64")
                while i < n:
                    outs.append(outs[i - 1] * 0.5 + outs[0])
                    seen.append(paddle.tanh(outs[-1]))
                    outs[0] = seen[-1] + 1.0
                    i = i + 1
            return paddle.stack(outs), outs[-1], paddle.stack(seen)

    x = rng.standard_normal((2, 3)).astype("float32")
    return Net(), [x, np_arr(5, "int64")], [(None, 3), ()]


@case("slice_array_dense", "slice", "array_to_tensor", "if", "conditional_block", name="cf_array_concat_or_first")
def array_concat_or_first(paddle, rng):
    """Cascade R-CNN's ``_get_pred_bbox``: a list filled per image, then concatenated when it
    has more than one element, else its first element (an array indexed inside an if);
    a batch of two and a batch of one take both branches."""

    class Net(paddle.nn.Layer):
        def pred(self, boxes, scale):
            rois = []
            for i in range(boxes.shape[0]):
                rois.append(paddle.clip(boxes[i] * scale[i], 0.0, 4.0))
            if len(rois) > 1:
                pred = paddle.concat(rois)
            else:
                pred = rois[0] + 0.0
            return pred

        def forward(self, b2, s2, b1, s1):
            return self.pred(b2, s2), self.pred(b1, s1)

    b2 = (rng.random((2, 4, 4)) * 5).astype("float32")
    s2 = (rng.random((2,)) + 0.5).astype("float32")
    b1 = (rng.random((1, 4, 4)) * 5).astype("float32")
    s1 = (rng.random((1,)) + 0.5).astype("float32")
    return Net(), [b2, s2, b1, s1], [(None, 4, 4), (None,), (None, 4, 4), (None,)]


@case("while", "select_input", "conditional_block", name="cf_while_branch_types")
def while_branch_types(paddle, rng):
    """RetinaNet's post-processing: a loop over the images and, per level, an if that keeps
    the top-k rows. The topk indices (int64) exist in one branch only: Paddle 2.6 selects
    them against dy2static's float32 "no value" marker, inside the loop."""

    class Net(paddle.nn.Layer):
        def forward(self, a, b):
            res = []
            for img_id in range(a.shape[0]):
                outs = []
                for x in (a, b):
                    s = x[img_id]
                    if s.shape[0] > 4:
                        m = s.max(axis=1)
                        _, inds = m.topk(4)
                        s = s.gather(inds)
                    outs.append(s.sum(axis=0))
                res.append(paddle.concat(outs))
            return paddle.stack(res)

    a = rng.standard_normal((2, 6, 3)).astype("float32")
    b = rng.standard_normal((2, 3, 3)).astype("float32")
    return Net(), [a, b], [(None, None, 3), (None, None, 3)]


@case("while", "select_input", "conditional_block", name="cf_while_one_branch_values", formats=("legacy",),
      why="Paddle 3.3's dy2static cannot build a variable assigned in one branch and read after the if "
      "('must be Value, but got UndefinedVar')")
def while_one_branch_values(paddle, rng):
    """Values assigned in one branch only, inside a loop, and read later on the paths that
    assigned them: int64 indices and a rank-2 tensor that only the false branch assigns
    (Paddle 2.6 declares each selected result with the true branch's "no value" marker
    type, float32 [1]); they are the loop's results too."""

    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            i = paddle.zeros([1], "int64")
            acc = paddle.zeros([1], "float32")
            while i < n:
                if i < 2:
                    m = paddle.max(x, axis=1)
                    _, inds = m.topk(2)
                    t = paddle.gather(x, inds)
                else:
                    k = paddle.argmax(x, axis=1)
                    u = x * 2.0 + paddle.cast(i, "float32")
                if i < 2:
                    acc = acc + paddle.sum(t) + paddle.cast(paddle.sum(inds), "float32")
                else:
                    acc = acc + paddle.sum(u) + paddle.cast(paddle.sum(k), "float32")
                i = i + 1
            return acc, k, u

    x = rng.standard_normal((4, 3)).astype("float32")
    return Net(), [x, paddle_int(4)], [(None, 3), (1,)]


# ------------------------------------------------------------------------------ opsets in blocks
def _int64_pair(rng):
    x = rng.integers(-2**40, 2**40, (2, 3)).astype("int64")
    y = rng.integers(-2**40, 2**40, (2, 3)).astype("int64")
    return x, y


@case("if", "conditional_block", "bitwise_and", name="cf_opset_in_if")
def opset_in_if(paddle, rng):
    """int64 bitwise_and (opset 18, found while converting) inside an if: the opset is raised."""

    class Net(paddle.nn.Layer):
        def branchy(self, x, y):
            if paddle.sum(x) > paddle.sum(y):
                z = paddle.bitwise_and(x, y)
            else:
                z = x - y
            return z

        def forward(self, x, y):
            return self.branchy(x, y), self.branchy(y, x)

    x, y = _int64_pair(rng)
    return Net(), [x, y], [(None, 3), (None, 3)]


def _and_loop(paddle, z, y, n):
    """n times z = (z & y) + i: int64 bitwise_and in a while body."""
    i = paddle.zeros([1], "int64")
    while i < n:
        z = paddle.bitwise_and(z, y) + i
        i = i + 1
    return z


@case("while", "bitwise_and", name="cf_opset_in_while")
def opset_in_while(paddle, rng):
    """int64 bitwise_and inside a while body."""

    class Net(paddle.nn.Layer):
        def forward(self, x, y, n):
            return _and_loop(paddle, x, y, n)

    x, y = _int64_pair(rng)
    return Net(), [x, y, paddle_int(3)], [(None, 3), (None, 3), (1,)]


@case("if", "conditional_block", "while", "bitwise_and", name="cf_opset_in_while_in_if")
def opset_in_while_in_if(paddle, rng):
    """int64 bitwise_and in a while inside an if."""

    class Net(paddle.nn.Layer):
        def branchy(self, x, y, n):
            if paddle.sum(x) > paddle.sum(y):
                z = _and_loop(paddle, x, y, n)
            else:
                z = x - y
            return z

        def forward(self, x, y, n):
            return self.branchy(x, y, n), self.branchy(y, x, n)

    x, y = _int64_pair(rng)
    return Net(), [x, y, paddle_int(3)], [(None, 3), (None, 3), (1,)]


@case("if", "conditional_block", "while", "fold", name="cf_opset_rule_in_while_in_if")
def opset_rule_in_while_in_if(paddle, rng):
    """fold (opset 18 by its static rule, found by the pre-scan) in a while inside an if."""

    class Net(paddle.nn.Layer):
        def branchy(self, x, n, cols):
            if paddle.sum(x) > 0:
                i = paddle.zeros([1], "int64")
                img = paddle.zeros([1, 1, 4, 4], "float32")
                while i < n:
                    img = img + paddle.nn.functional.fold(cols * paddle.cast(i + 1, "float32"), output_sizes=[4, 4],
                                                          kernel_sizes=2, strides=2)
                    i = i + 1
            else:
                img = paddle.reshape(cols, [1, 1, 4, 4]) - 1.0
            return img

        def forward(self, a, b, n, cols):
            return self.branchy(a, n, cols), self.branchy(b, n, cols)

    a = (rng.random((2, 3)) + 0.5).astype("float32")
    b = -(rng.random((2, 3)) + 0.5).astype("float32")
    cols = rng.standard_normal((1, 4, 4)).astype("float32")
    return Net(), [a, b, paddle_int(3), cols], [(None, 3), (None, 3), (1,), (1, 4, 4)]


def table_decoder(paddle, feat=16, hidden=16, vocab=10, loc=4):
    """A table-recognizer-style decoder (PaddleOCR's SLANet heads): attention over a feature
    sequence and a GRU cell; each step appends its structure probabilities and box to two
    lists and reads the previous step's structure back (the next input token). Inputs: the
    features ``[batch, length, feat]`` and the number of steps (0-D int64). Also the model of
    ``bench/array_loop.py``."""
    nn = paddle.nn

    class TableDecoder(nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, hidden)
            self.att_h = nn.Linear(hidden, hidden)
            self.att_f = nn.Linear(feat, hidden)
            self.att_v = nn.Linear(hidden, 1)
            self.cell = nn.GRUCell(feat + hidden, hidden)
            self.structure = nn.Linear(hidden, vocab)
            self.loc = nn.Linear(hidden, loc)

        def forward(self, fea, steps):
            # Paddle 2.6 dy2static refuses a write into an array it has sliced ("a viewed
            # Tensor"); the slice is only read here
            nocheck = getattr(paddle.base.framework, "_stride_in_no_check_dy2st_diff", None)
            with nocheck():
                proj = self.att_f(fea)
                h = paddle.zeros_like(paddle.sum(proj, axis=1))
                structure = [paddle.nn.functional.softmax(paddle.zeros_like(self.structure(h)), axis=1)]
                locs = []
                i = paddle.ones([], "int64")
                while i <= steps:
                    pre = paddle.argmax(structure[i - 1], axis=1)
                    att = paddle.nn.functional.softmax(
                        self.att_v(paddle.tanh(proj + self.att_h(h).unsqueeze(1))), axis=1)
                    context = paddle.sum(att * fea, axis=1)
                    h, _ = self.cell(paddle.concat([context, self.emb(pre)], axis=1), h)
                    structure.append(paddle.nn.functional.softmax(self.structure(h), axis=1))
                    locs.append(paddle.nn.functional.sigmoid(self.loc(h)))
                    i = i + 1
            return paddle.stack(structure[1:], axis=1), paddle.stack(locs, axis=1)

    return TableDecoder()


@case("while", "slice_array_dense", "slice", "array_write", "array_to_tensor", name="cf_table_decoder")
def table_decoder_case(paddle, rng):
    """A decoding loop writing per-step outputs into arrays and reading earlier ones back:
    the arrays are tensors (no ONNX sequence; runs in OpenVINO, test_control_flow.py)."""
    paddle.seed(3)
    fea = rng.standard_normal((2, 12, 16)).astype("float32")
    return table_decoder(paddle), [fea, np_arr(6, "int64")], [(None, None, 16), ()]


@case("while", "array_write", "array_to_tensor", "array_pop", "conditional_block", "if", name="cf_array_tensor_ops")
def array_tensor_ops(paddle, rng):
    """An array of equal elements after its loop: stacked along axes 1 and 2, concatenated
    along axis 1, an element overwritten at a run-time index and at a constant one, one
    popped from the middle, one appended in an if, then stacked and measured."""

    class Net(paddle.nn.Layer):
        def forward(self, x, n, k):
            outs = _appended(paddle, x, n)
            stacked1 = paddle.stack(outs, axis=1)
            stacked2 = paddle.stack(outs, axis=2)
            cat = paddle.concat(outs, axis=1)
            paddle.tensor.array_write(x * 10.0, k, outs)
            paddle.tensor.array_write(x * 20.0, paddle.full([1], 1, "int64"), outs)
            second = outs.pop(1)
            if paddle.sum(x) > -100.0:
                outs.append(x * 3.0)
            return stacked1, stacked2, cat, second, paddle.stack(outs), paddle.tensor.array_length(outs)

    x = rng.standard_normal((2, 3)).astype("float32")
    return Net(), [x, paddle_int(4), paddle_int(2)], [(2, 3), (1,), (1,)]


@case("if", "conditional_block", "select_input", name="cf_if_early_return")
def if_early_return(paddle, rng):
    class Net(paddle.nn.Layer):
        def branchy(self, x):
            if paddle.mean(x) > 0:
                return x * 2.0
            return x - 1.0

        def forward(self, a, b):
            return self.branchy(a), self.branchy(b)

    a = (rng.random((2, 3)) + 0.5).astype("float32")
    b = -(rng.random((2, 3)) + 0.5).astype("float32")
    return _static(paddle, Net()), [a, b], [(None, 3), (None, 3)]


@case("array_to_tensor", name="cf_array_to_tensor_index", formats=("pir",),
      why="Paddle 2.6 cannot fetch tensor_array_to_tensor's OutIndex ('Tensor holds no memory')")
def array_to_tensor_index(paddle, rng):
    """out_index: each element's size along the axis (concatenation; Paddle wants equal shapes) or ones."""

    class Net(paddle.nn.Layer):
        def forward(self, x):
            arr = paddle.tensor.create_array("float32")
            paddle.tensor.array_write(x, paddle.zeros([1], "int64"), arr)
            paddle.tensor.array_write(x * 2.0, paddle.ones([1], "int64"), arr)
            cat, cat_index = paddle.tensor.manipulation.tensor_array_to_tensor(arr, axis=1, use_stack=False)
            arr2 = paddle.tensor.create_array("float32")
            paddle.tensor.array_write(x, paddle.zeros([1], "int64"), arr2)
            paddle.tensor.array_write(x * 3.0, paddle.ones([1], "int64"), arr2)
            stacked, stack_index = paddle.tensor.manipulation.tensor_array_to_tensor(arr2, axis=0, use_stack=True)
            return cat, cat_index, stacked, stack_index

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x], [(None, 3)]


@case("array_read", "array_length", "array_write", name="cf_array_read_length")
def array_read_length(paddle, rng):
    """Arrays outside loops: write, overwrite, read back, length."""

    class Net(paddle.nn.Layer):
        def forward(self, x):
            arr = paddle.tensor.create_array("float32")
            zero = paddle.zeros([1], "int64")
            one = paddle.ones([1], "int64")
            paddle.tensor.array_write(x, zero, arr)
            paddle.tensor.array_write(x * 2.0, one, arr)
            paddle.tensor.array_write(x + 5.0, zero, arr)  # overwrite
            n = paddle.tensor.array_length(arr)
            return paddle.tensor.array_read(arr, zero), paddle.tensor.array_read(arr, one), n

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x], [(None, 3)]


@case("while", "if", "conditional_block", name="cf_if_in_while")
def if_in_while(paddle, rng):
    class Net(paddle.nn.Layer):
        def forward(self, x):
            i = paddle.zeros([1], "int64")
            s = x
            while i < 6:
                if paddle.mean(s) > 1.0:
                    s = s - 0.75
                else:
                    s = s * 1.5 + 0.5
                i = i + 1
            return s

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x], [(None, 3)]


@case("while", name="cf_while_in_while")
def while_in_while(paddle, rng):
    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            i = paddle.zeros([1], "int64")
            s = x
            while i < n:
                j = paddle.zeros([1], "int64")
                while j < i + 1:
                    s = s + paddle.cast(j, "float32") * 0.1
                    j = j + 1
                s = s * 0.9
                i = i + 1
            return s

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x, paddle_int(4)], [(None, 3), (1,)]


@case("while", name="cf_while_captured")
def while_captured(paddle, rng):
    """The body reads a parameter and an outer input, and updates a captured tensor whose
    shape grows every iteration."""

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(3, 3)

        def forward(self, x, n):
            i = paddle.zeros([1], "int64")
            h = paddle.tanh(x)  # distinct variables: Paddle 2.6 dy2static merges two names bound to x
            grown = x * 1.0
            while i < n:
                h = paddle.tanh(self.fc(h) + x)
                grown = paddle.concat([grown, h], axis=0)
                i = i + 1
            return h, grown

    x = rng.standard_normal((2, 3)).astype("float32")
    return _static(paddle, Net()), [x, paddle_int(3)], [(None, 3), (1,)]


def _greedy_decoder(paddle, rng, start):
    """Greedy decoding: embedding -> a cell of matmuls -> argmax, until the end token (0) or
    a limit of 7 steps; the tokens are collected (a dynamic number of steps)."""
    import numpy as np

    vocab, hidden = 8, 6

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = paddle.nn.Embedding(vocab, hidden)
            self.w_h = paddle.nn.Linear(hidden, hidden)
            self.w_x = paddle.nn.Linear(hidden, hidden)
            self.out = paddle.nn.Linear(hidden, vocab)

        def forward(self, h0, start):
            h = h0
            tok = start
            tokens = paddle.zeros([0], "int64")
            step = paddle.zeros([1], "int64")
            done = paddle.zeros([1], "bool")
            while paddle.logical_not(done):
                x = self.emb(tok)
                h = paddle.tanh(self.w_h(h) + self.w_x(x))
                tok = paddle.argmax(self.out(h), axis=-1)
                tokens = paddle.concat([tokens, tok], axis=0)
                step = step + 1
                done = paddle.logical_or(tok == 0, step >= 7)
            return tokens, h, step

    paddle.seed(2)
    net = Net()
    h0 = rng.standard_normal((1, hidden)).astype("float32")
    return _static(paddle, net), [h0, np.array([start], dtype="int64")], [(1, hidden), (1,)]


@case("while", name="cf_greedy_decode")
def greedy_decode(paddle, rng):
    """Stops on the end token after 6 steps (Paddle's tokens: 1 4 3 7 7 0)."""
    return _greedy_decoder(paddle, rng, 2)


@case("while", name="cf_greedy_decode_limit")
def greedy_decode_limit(paddle, rng):
    """Never meets the end token: stops at the step limit."""
    return _greedy_decoder(paddle, rng, 6)


# ------------------------------------------------------------------------------ static helpers
def _save_static(paddle, out_dir, build, feeds):
    """Build a static program with ``build(paddle)`` -> (feed vars, fetch vars) and save it."""
    import os

    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            inputs, outputs = build(paddle)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        prefix = os.path.join(out_dir, "model")
        paddle.static.save_inference_model(prefix, inputs, outputs, exe, program=main)
        refs = exe.run(main, feed={v.name: a for v, a in zip(inputs, feeds)}, fetch_list=outputs)
    finally:
        paddle.disable_static()
    model = next(f for f in sorted(os.listdir(out_dir))
                 if f.endswith((".json", ".pdmodel")) and f not in ("files.json", "view.json"))
    params = "model.pdiparams" if os.path.exists(os.path.join(out_dir, "model.pdiparams")) else None
    spec = {"model": model, "inputs": feeds, "outputs": refs}
    if params:
        spec["params"] = params
    return spec


@case("if", "conditional_block", "select_input", name="cf_static_cond", custom=True)
def static_cond(paddle, rng, out_dir):
    import numpy as np

    def build(paddle):
        a = paddle.static.data("a", [2, 3], "float32")
        b = paddle.static.data("b", [2, 3], "float32")

        def pick(x):
            return paddle.static.nn.cond(
                paddle.mean(x) > 0,
                lambda: (x * 2.0, paddle.sum(x)),
                lambda: (x - 1.0, paddle.max(x)),
            )

        ya, sa = pick(a)
        yb, sb = pick(b)
        return [a, b], [ya, sa, yb, sb]

    a = (rng.random((2, 3)) + 0.5).astype(np.float32)
    b = -(rng.random((2, 3)) + 0.5).astype(np.float32)
    return _save_static(paddle, out_dir, build, [a, b])


@case("if", "conditional_block", "select_input", name="cf_static_case", custom=True)
def static_case(paddle, rng, out_dir):
    import numpy as np

    def build(paddle):
        x = paddle.static.data("x", [2, 3], "float32")
        vs = [paddle.static.data(f"v{k}", [1], "float32") for k in range(3)]
        outs = [
            paddle.static.nn.case(
                pred_fn_pairs=[(v < 0.0, lambda: x * 2.0), (v < 1.0, lambda: x + 10.0)],
                default=lambda: x - 100.0,
            )
            for v in vs
        ]
        return [x] + vs, outs

    x = rng.standard_normal((2, 3)).astype(np.float32)
    vs = [np.array([-1.0], np.float32), np.array([0.5], np.float32), np.array([5.0], np.float32)]
    return _save_static(paddle, out_dir, build, [x] + vs)


@case("if", "conditional_block", "select_input", name="cf_static_switch_case", custom=True)
def static_switch_case(paddle, rng, out_dir):
    import numpy as np

    def build(paddle):
        x = paddle.static.data("x", [2, 3], "float32")
        idx = [paddle.static.data(f"i{k}", [1], "int64") for k in range(3)]
        outs = [
            paddle.static.nn.switch_case(
                branch_index=i,
                branch_fns={1: lambda: x * 3.0, 2: lambda: x + 7.0},
                default=lambda: x - 1.0,
            )
            for i in idx
        ]
        return [x] + idx, outs

    x = rng.standard_normal((2, 3)).astype(np.float32)
    idx = [np.array([k], np.int64) for k in (1, 2, 5)]
    return _save_static(paddle, out_dir, build, [x] + idx)


@case("while", name="cf_static_while_loop", custom=True)
def static_while_loop(paddle, rng, out_dir):
    import numpy as np

    def build(paddle):
        x = paddle.static.data("x", [2, 3], "float32")
        n = paddle.static.data("n", [1], "int64")
        i = paddle.zeros([1], "int64")
        i, s = paddle.static.nn.while_loop(
            lambda i, s: i < n,
            lambda i, s: [i + 1, s * 0.5 + 1.0],
            [i, x],
        )
        return [x, n], [s, i]

    x = rng.standard_normal((2, 3)).astype(np.float32)
    return _save_static(paddle, out_dir, build, [x, np.array([5], np.int64)])


@case("select_output", "select_input", name="cf_select_output", custom=True, formats=("legacy",),
      why="select_output writes variables by name: a legacy-program construct (PIR programs have no named "
      "variables to write; their branches are if ops)")
def select_output_case(paddle, rng, out_dir):
    """``select_output`` writes X into Out[mask] only (the pair of ``select_input``)."""
    import numpy as np
    from paddle.static.nn.control_flow import select_input, select_output

    def build(paddle):
        x = paddle.static.data("x", [2, 3], "float32")
        masks = [paddle.static.data(f"m{k}", [1], "int32") for k in range(2)]
        block = paddle.static.default_main_program().current_block()
        results = []
        for k, m in enumerate(masks):
            outs = [block.create_var(name=f"o{k}_{j}", dtype="float32", shape=[2, 3]) for j in range(2)]
            select_output(x * 2.0, outs, m)
            results.append(select_input(outs, m) + 1.0)
        return [x] + masks, results

    x = rng.standard_normal((2, 3)).astype(np.float32)
    return _save_static(paddle, out_dir, build, [x, np.array([0], np.int32), np.array([1], np.int32)])


@case("while", "conditional_block", "select_input", name="cf_while_return", formats=("legacy",),
      why="Paddle 3.3's dy2static cannot build a return inside a while loop (None in the other branch)")
def while_return(paddle, rng):
    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            i = paddle.zeros([1], "int64")
            s = x
            while i < n:
                s = s * 2.0
                if paddle.sum(s) > 50.0:
                    return s - 1.0
                i = i + 1
            return s

    x = rng.random((2, 3)).astype("float32") + 1.0
    return _static(paddle, Net()), [x, paddle_int(6)], [(None, 3), (1,)]


@case("increment", name="cf_increment", formats=("legacy",),
      why="Paddle 3.3's jit.save drops the in-place increment_ (measured: the saved PIR program "
      "holds only data, assign and fetch, and Paddle's own predictor returns the input unchanged)")
def increment_case(paddle, rng):
    """``paddle.increment`` on a one-element tensor (legacy ``increment``), float32 and an
    int64 counter."""

    class Net(paddle.nn.Layer):
        def forward(self, x, n):
            return paddle.increment(paddle.assign(x), 2.5), paddle.increment(paddle.assign(n), 1.0)

    return _static(paddle, Net()), [np_arr(rng.standard_normal(1), "float32"), paddle_int(4)], [(1,), (1,)]


def np_arr(values, dtype):
    import numpy as np

    return np.asarray(values, dtype=dtype)
