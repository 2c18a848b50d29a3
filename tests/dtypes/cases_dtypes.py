"""The dtype matrix's core tables: elementwise, reductions, shapes, math, nn, pooling and
0-D (the generator is ``harness.dtype_matrix``; other ``cases_*.py`` here add more groups)."""

from __future__ import annotations

from harness.dtype_matrix import DTYPES, ZERO_D_DTYPES, register


def _unary(P):
    F = P.nn.functional
    return [
        ("abs", lambda x, p: P.abs(x)),
        ("scale", lambda x, p: P.scale(x, 2.0, 1.0)),
        ("exp", lambda x, p: P.exp(x)),
        ("log", lambda x, p: P.log(p)),
        ("sqrt", lambda x, p: P.sqrt(p)),
        ("rsqrt", lambda x, p: P.rsqrt(p)),
        ("reciprocal", lambda x, p: P.reciprocal(p)),
        ("square", lambda x, p: P.square(x)),
        ("sin", lambda x, p: P.sin(x)),
        ("cos", lambda x, p: P.cos(x)),
        ("tanh", lambda x, p: P.tanh(x)),
        ("sigmoid", lambda x, p: F.sigmoid(x)),
        ("erf", lambda x, p: P.erf(x)),
        ("floor", lambda x, p: P.floor(x)),
        ("ceil", lambda x, p: P.ceil(x)),
        ("round", lambda x, p: P.round(x)),
        ("sign", lambda x, p: P.sign(x)),
        ("relu", lambda x, p: F.relu(x)),
        ("relu6", lambda x, p: F.relu6(x)),
        ("leaky_relu", lambda x, p: F.leaky_relu(x, 0.1)),
        ("elu", lambda x, p: F.elu(x)),
        ("gelu", lambda x, p: F.gelu(x)),
        ("silu", lambda x, p: F.silu(x)),
        ("hardswish", lambda x, p: F.hardswish(x)),
        ("hardsigmoid", lambda x, p: F.hardsigmoid(x)),
        ("softplus", lambda x, p: F.softplus(x)),
        ("clip", lambda x, p: P.clip(x, -1, 2)),
        ("softmax", lambda x, p: F.softmax(x, -1)),
        ("log_softmax", lambda x, p: F.log_softmax(x, -1)),
        ("pow", lambda x, p: P.pow(x, 2)),
        ("isnan", lambda x, p: P.isnan(x)),
        ("isinf", lambda x, p: P.isinf(x)),
        ("isfinite", lambda x, p: P.isfinite(x)),
        ("logical_not", lambda x, p: P.logical_not(x)),
        ("bitwise_not", lambda x, p: P.bitwise_not(x)),
        ("cast", lambda x, p: P.cast(x, "float32")),
    ]


def _binary(P):
    return [
        ("add", lambda x, p: P.add(x, p)),
        ("subtract", lambda x, p: P.subtract(x, p)),
        ("multiply", lambda x, p: P.multiply(x, p)),
        ("divide", lambda x, p: P.divide(x, p)),
        ("maximum", lambda x, p: P.maximum(x, p)),
        ("minimum", lambda x, p: P.minimum(x, p)),
        ("elementwise_pow", lambda x, p: P.pow(p, x)),
        ("floor_divide", lambda x, p: P.floor_divide(x, p)),
        ("remainder", lambda x, p: P.remainder(x, p)),
        ("equal", lambda x, p: P.equal(x, p)),
        ("not_equal", lambda x, p: P.not_equal(x, p)),
        ("less_than", lambda x, p: P.less_than(x, p)),
        ("less_equal", lambda x, p: P.less_equal(x, p)),
        ("greater_than", lambda x, p: P.greater_than(x, p)),
        ("greater_equal", lambda x, p: P.greater_equal(x, p)),
        ("logical_and", lambda x, p: P.logical_and(x, p)),
        ("logical_or", lambda x, p: P.logical_or(x, p)),
        ("logical_xor", lambda x, p: P.logical_xor(x, p)),
        ("bitwise_and", lambda x, p: P.bitwise_and(x, p)),
        ("bitwise_or", lambda x, p: P.bitwise_or(x, p)),
        ("bitwise_xor", lambda x, p: P.bitwise_xor(x, p)),
        ("where", lambda x, p: P.where(P.greater_than(x, p), x, p)),
    ]


def _reduce(P):
    return [
        ("sum", lambda x, p: P.sum(x, axis=-1)),
        ("mean", lambda x, p: P.mean(x, axis=-1)),
        ("max", lambda x, p: P.max(x, axis=-1)),
        ("min", lambda x, p: P.min(x, axis=-1)),
        ("prod", lambda x, p: P.prod(x, axis=-1)),
        ("all", lambda x, p: P.all(x, axis=-1)),
        ("any", lambda x, p: P.any(x, axis=-1)),
        ("argmax", lambda x, p: P.argmax(x, axis=-1)),
        ("argmin", lambda x, p: P.argmin(x, axis=-1)),
        ("cumsum", lambda x, p: P.cumsum(x, axis=-1)),
        ("logsumexp", lambda x, p: P.logsumexp(x, axis=-1)),
        ("topk", lambda x, p: P.topk(x, 2, axis=-1)[0]),
        ("argsort", lambda x, p: P.argsort(x, axis=-1, stable=True)),
    ]


def _shape(P):
    return [
        ("reshape", lambda x, p: P.reshape(x, [4, 3])),
        ("transpose", lambda x, p: P.transpose(x, [1, 0])),
        ("concat", lambda x, p: P.concat([x, p], axis=0)),
        ("stack", lambda x, p: P.stack([x, p], axis=1)),
        ("split+split_with_num", lambda x, p: P.split(x, 2, axis=1)[1]),
        ("slice", lambda x, p: x[:, 1:3]),
        ("gather", lambda x, p: P.gather(x, P.to_tensor([2, 0], dtype="int64"), axis=1)),
        ("index_select", lambda x, p: P.index_select(x, P.to_tensor([1, 1], dtype="int64"), axis=0)),
        ("unsqueeze", lambda x, p: P.unsqueeze(x, 0)),
        ("squeeze", lambda x, p: P.squeeze(P.unsqueeze(x, 0), 0)),
        ("expand", lambda x, p: P.expand(x, [2, 3, 4])),
        ("tile", lambda x, p: P.tile(x, [2, 1])),
        ("flip", lambda x, p: P.flip(x, [0])),
        ("roll", lambda x, p: P.roll(x, 1, 1)),
        ("flatten", lambda x, p: P.flatten(x)),
        ("tril", lambda x, p: P.tril(x)),
        ("triu+tril:triu", lambda x, p: P.triu(x)),
        ("pad", lambda x, p: P.nn.functional.pad(x, [1, 1], value=0.0, data_format="NCL")[0]),
        ("full_like", lambda x, p: P.full_like(x, 1)),
        ("full_like:zeros", lambda x, p: P.zeros_like(x)),
    ]


def _math(P):
    return [
        ("matmul", lambda x, p: P.matmul(x, p, transpose_y=True)),
        ("cumprod", lambda x, p: P.cumprod(x, dim=1)),
        ("logcumsumexp", lambda x, p: P.logcumsumexp(x, axis=1)),
        ("trace", lambda x, p: P.trace(x)),
        ("diagonal", lambda x, p: P.diagonal(x)),
        ("diag", lambda x, p: P.diag(x[0])),
        ("kron", lambda x, p: P.kron(x, p)),
        ("lerp", lambda x, p: P.lerp(x, p, 0.25)),
        ("dist", lambda x, p: P.dist(x, p, 2)),
        ("cross", lambda x, p: P.cross(x[:, :3], p[:, :3], axis=1)),
        ("gather_nd", lambda x, p: P.gather_nd(x, P.to_tensor([[0, 1], [2, 3]], dtype="int64"))),
        ("take_along_axis", lambda x, p: P.take_along_axis(x, P.to_tensor([[0], [3], [1]], dtype="int64"), 1)),
        ("put_along_axis", lambda x, p: P.put_along_axis(x, P.to_tensor([[0], [3], [1]], dtype="int64"), p[:, :1], 1)),
        ("scatter", lambda x, p: P.scatter(x, P.to_tensor([2, 0], dtype="int64"), p[:2])),
        ("scatter_nd_add", lambda x, p: P.scatter_nd_add(x, P.to_tensor([[1], [2]], dtype="int64"), p[:2])),
        ("masked_select", lambda x, p: P.masked_select(x, P.greater_than(p, P.ones_like(p)))),
        ("masked_fill", lambda x, p: P.masked_fill(x, P.greater_than(p, P.ones_like(p)), 0)),
        ("nonzero", lambda x, p: P.nonzero(x)),
        ("repeat_interleave", lambda x, p: P.repeat_interleave(x, 2, axis=0)),
        ("unique", lambda x, p: P.unique(x)),
        ("median", lambda x, p: P.median(x, axis=1)),
        ("mode", lambda x, p: P.mode(x, axis=1)[0]),
        ("kthvalue", lambda x, p: P.kthvalue(x, 2, axis=1)[0]),
        ("p_norm", lambda x, p: P.linalg.norm(x, 2.0, axis=1)),
        ("unbind", lambda x, p: P.unbind(x, 0)[1]),
        ("meshgrid", lambda x, p: P.meshgrid(x[0], p[0])[0]),
        ("atan2", lambda x, p: P.atan2(x, p)),
        ("mv", lambda x, p: P.mv(x, p[0])),
        ("dot", lambda x, p: P.dot(x, p)),
        ("bmm", lambda x, p: P.bmm(P.unsqueeze(x, 0), P.unsqueeze(P.transpose(p, [1, 0]), 0))),
    ]


def _nn(P):
    F = P.nn.functional

    def img(t):
        return P.reshape(t, [1, 1, 3, 4])

    return [
        ("conv2d", lambda x, p: F.conv2d(img(x), P.reshape(p[:2, :2], [1, 1, 2, 2]))),
        ("layer_norm", lambda x, p: F.layer_norm(x, [4])),
        ("group_norm", lambda x, p: F.group_norm(P.reshape(x, [1, 2, 6]), 1)),
        ("instance_norm", lambda x, p: F.instance_norm(P.reshape(x, [1, 2, 6]))),
        ("nearest_interp", lambda x, p: F.interpolate(img(x), scale_factor=2, mode="nearest")),
        ("bilinear_interp", lambda x, p: F.interpolate(img(x), size=[5, 7], mode="bilinear")),
        ("pixel_shuffle", lambda x, p: F.pixel_shuffle(P.reshape(x, [1, 4, 3, 1]), 2)),
        ("one_hot", lambda x, p: F.one_hot(p, 5)),
        ("embedding", lambda x, p: F.embedding(P.to_tensor([[0, 2]], dtype="int64"), x)),
        ("p_norm:normalize", lambda x, p: F.normalize(x, axis=1)),
        ("prelu", lambda x, p: F.prelu(x, P.full([1], 0.25, x.dtype))),
        ("mish", lambda x, p: F.mish(x)),
        ("selu", lambda x, p: F.selu(x)),
        ("softsign", lambda x, p: F.softsign(x)),
        ("tanh_shrink", lambda x, p: F.tanhshrink(x)),
        ("thresholded_relu", lambda x, p: F.thresholded_relu(x, 0.5)),
        ("celu", lambda x, p: F.celu(x)),
        ("hardtanh", lambda x, p: F.hardtanh(x)),
        ("logsigmoid", lambda x, p: F.log_sigmoid(x)),
        ("swish", lambda x, p: F.swish(x)),
        ("softshrink", lambda x, p: F.softshrink(x)),
        ("hardshrink", lambda x, p: F.hardshrink(x)),
        ("affine_grid", lambda x, p: F.affine_grid(P.reshape(x[:2, :3], [1, 2, 3]), [1, 1, 2, 3], align_corners=False)),
        ("grid_sample", lambda x, p: F.grid_sample(img(x), P.tanh(P.reshape(p[:, :2], [1, 1, 3, 2])), align_corners=False)),
        ("channel_shuffle", lambda x, p: F.channel_shuffle(P.reshape(x, [1, 4, 3, 1]), 2)),
    ]


def _pool(P):
    """Pooling (the pool mappers; 4-D NCHW from the (3, 4) inputs)."""
    F = P.nn.functional

    def img(t):
        return P.reshape(t, [1, 1, 3, 4])

    return [
        ("pool2d:avg", lambda x, p: F.avg_pool2d(img(x), 2, 1)),
        ("pool2d:max", lambda x, p: F.max_pool2d(img(x), 2, 1)),
        ("pool2d:global-avg", lambda x, p: F.adaptive_avg_pool2d(img(x), 1)),
        ("pool2d:global-max", lambda x, p: F.adaptive_max_pool2d(img(x), 1)),
        ("pool2d:adaptive-avg", lambda x, p: F.adaptive_avg_pool2d(img(x), [2, 2])),
        ("pool2d:avg-ceil", lambda x, p: F.avg_pool2d(img(x), 2, 2, ceil_mode=True, exclusive=False)),
    ]


def _zero_d(P):
    """Ops Paddle lets take or return 0-D tensors (x, p are 0-D; v a vector)."""
    return [
        ("relu", lambda x, p: P.nn.functional.relu(x)),
        ("abs", lambda x, p: P.abs(x)),
        ("add", lambda x, p: P.add(x, p)),
        ("multiply", lambda x, p: P.multiply(x, p)),
        ("equal", lambda x, p: P.equal(x, p)),
        ("where", lambda x, p: P.where(P.greater_than(x, p), x, p)),
        ("cast", lambda x, p: P.cast(x, "float32")),
        ("scale", lambda x, p: P.scale(x, 2.0)),
        ("sum", lambda x, p: P.sum(x)),
        ("mean", lambda x, p: P.mean(x)),
        ("max", lambda x, p: P.max(x)),
        ("prod", lambda x, p: P.prod(x)),
        ("all", lambda x, p: P.all(x)),
        ("argmax", lambda x, p: P.argmax(x)),
        ("cumsum", lambda x, p: P.cumsum(x)),
        ("cumsum:axis", lambda x, p: P.cumsum(x, axis=0)),
        ("topk", lambda x, p: P.topk(x, 1)[0]),
        ("topk:indices", lambda x, p: P.topk(x, 1)[1]),
        ("argsort", lambda x, p: P.argsort(x)),
        ("argsort:sort", lambda x, p: P.sort(x)),
        ("clip", lambda x, p: P.clip(x, -1, 2)),
        ("reshape", lambda x, p: P.reshape(x, [1])),
        ("reshape:to-0-d", lambda x, p: P.reshape(P.reshape(x, [1, 1]), [])),
        ("unsqueeze", lambda x, p: P.unsqueeze(x, 0)),
        ("squeeze", lambda x, p: P.squeeze(x)),
        ("expand", lambda x, p: P.expand(x, [2, 3])),
        ("stack", lambda x, p: P.stack([x, p])),
        ("flatten", lambda x, p: P.flatten(x)),
        ("transpose", lambda x, p: P.transpose(x, [])),
        ("full_like", lambda x, p: P.full_like(x, 1)),
        ("slice:index", lambda x, p: P.stack([x, p, x])[1]),
        ("gather:0-d-index", lambda x, p: P.gather(P.stack([x, p]), P.to_tensor(1, dtype="int64"))),
        ("softmax", lambda x, p: P.nn.functional.softmax(x)),
        ("logsumexp", lambda x, p: P.logsumexp(x)),
        ("sigmoid", lambda x, p: P.nn.functional.sigmoid(x)),
        ("exp", lambda x, p: P.exp(x)),
        ("floor", lambda x, p: P.floor(x)),
        ("maximum", lambda x, p: P.maximum(x, p)),
        ("tile", lambda x, p: P.tile(x, [3])),
        ("numel", lambda x, p: P.numel(x)),
        ("shape+shape64", lambda x, p: P.shape(P.unsqueeze(x, 0))),
    ]


for _group, (_table, _dims, _dtypes) in {
    # group: (table, input shape, dtypes)
    "unary": (_unary, (3, 4), DTYPES),
    "binary": (_binary, (3, 4), DTYPES),
    "reduce": (_reduce, (3, 4), DTYPES),
    "shape": (_shape, (3, 4), DTYPES),
    "math": (_math, (3, 4), DTYPES),
    "nn": (_nn, (3, 4), DTYPES),
    "pool": (_pool, (3, 4), DTYPES),
    "zerod": (_zero_d, (), ZERO_D_DTYPES),
    # the general tables again on 0-D inputs: what Paddle accepts there is tested there
    "unary0d": (_unary, (), ("float32", "int64", "bool")),
    "binary0d": (_binary, (), ("float32", "int64", "bool")),
    "reduce0d": (_reduce, (), ("float32", "int64", "bool")),
    "math0d": (_math, (), ("float32", "int64")),
}.items():
    register(__file__, _group, _table, _dims, _dtypes)
