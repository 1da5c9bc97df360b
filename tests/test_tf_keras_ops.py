"""tf.keras.ops against real Keras 3 on TensorFlow: the same call on the same inputs gives the same
values, dtypes and shapes (integer and boolean inputs included, for Keras' dtype rules); gradients
of compositions match TensorFlow's GradientTape; ops record on gradkit's tape (through Variable
assignment too), run inside tf.function and on the functional API's KerasTensors."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import gradkit.tf as gtf  # noqa: E402

_RNG = np.random.default_rng(0)
F = _RNG.normal(size=(3, 4)).astype(np.float32)
P = _RNG.uniform(0.1, 0.9, size=(3, 4)).astype(np.float32)
I = _RNG.integers(-3, 4, size=(3, 4)).astype(np.int32)  # noqa: E741
N = np.abs(I)  # non-negative int32
I8 = I.astype(np.int8)
U8 = N.astype(np.uint8)
B = I > 0
H = F.astype(np.float16)
V = _RNG.normal(size=(4,)).astype(np.float32)
IV = np.array([2, 0, 1], np.int32)
F3 = _RNG.normal(size=(2, 3, 4)).astype(np.float32)
M45 = _RNG.normal(size=(4, 5)).astype(np.float32)
SQ = (_RNG.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.float32)
SPD = (SQ @ SQ.T).astype(np.float32)
X1 = _RNG.normal(size=(2, 6, 3)).astype(np.float32)
W1 = _RNG.normal(size=(3, 3, 4)).astype(np.float32)
X2 = _RNG.normal(size=(2, 5, 5, 3)).astype(np.float32)
W2 = _RNG.normal(size=(2, 2, 3, 4)).astype(np.float32)
WG = _RNG.normal(size=(2, 2, 1, 3)).astype(np.float32)  # a grouped (depthwise) kernel
T = np.eye(4, dtype=np.float32)[[0, 3, 1]]

_ELEMENTWISE_FLOAT = (
    "abs negative square sqrt sign round floor ceil trunc conj real imag reciprocal isfinite isinf isnan "
    "logical_not sin cos tan arctan sinh cosh tanh arcsinh exp exp2 expm1 log log2 log10 log1p"
)
_ELEMENTWISE_INT = "abs negative square sqrt sign round floor ceil trunc isfinite isinf isnan logical_not sin exp log2"
_BINARY = (
    "add subtract multiply divide true_divide maximum minimum mod floor_divide equal not_equal greater "
    "greater_equal less less_equal logical_and logical_or logical_xor arctan2 logaddexp divide_no_nan"
)
_REDUCTIONS = "sum prod mean max min std var all any argmax argmin cumsum cumprod average count_nonzero"
_ACTIVATIONS = (
    "relu relu6 sigmoid softplus softsign silu swish gelu elu selu leaky_relu log_sigmoid hard_sigmoid "
    "hard_silu hard_swish celu softmax log_softmax"
)

CASES = (
    [(n, (F,), {}) for n in _ELEMENTWISE_FLOAT.split()]
    + [(n, (I,), {}) for n in _ELEMENTWISE_INT.split()]
    + [(n, (P,), {}) for n in "arcsin arccos arctanh".split()]
    + [
        ("arccosh", (P + 1,), {}),
        ("round", (F, 1), {}),
        ("round", (I * 17, -1), {}),
        ("abs", (U8,), {}),
        ("sign", (U8,), {}),
        ("square", (B,), {}),
        ("absolute", (F,), {}),
        ("conjugate", (F,), {}),
        ("nan_to_num", (np.array([np.nan, np.inf, -np.inf, 1], np.float32),), {}),
    ]
    + [(n, (F, V), {}) for n in _BINARY.split()]
    + [(n, (I, 2), {}) for n in "add subtract multiply divide power maximum mod floor_divide equal greater".split()]
    + [(n, (I, 2.5), {}) for n in "add multiply divide power maximum".split()]
    + [(n, (I8, U8), {}) for n in "add multiply maximum".split()]
    + [
        ("add", (H, 2.0), {}),
        ("add", (H, I), {}),
        ("power", (P, V[:1]), {}),
        ("power", (N, N), {}),
        ("power", (U8, 2), {}),
        ("mod", (I8, 3), {}),
        ("clip", (F, -0.5, 0.5), {}),
        ("clip", (I, -1, 1), {}),
        ("clip", (B, 0, 1), {}),
        ("relu6", (I * 3,), {}),
        ("divide_no_nan", (H, 1.5), {}),
        ("divide_no_nan", (I, N), {}),
    ]
    + [(n, (x,), {}) for x in (F, I, B, I8, U8, H) for n in _REDUCTIONS.split()]
    + [(n, (F,), dict(axis=1, keepdims=True)) for n in "sum prod mean max min std var all any argmax argmin".split()]
    + [(n, (F3,), dict(axis=(0, 2))) for n in "sum mean max min std var amax amin".split()]
    + [
        ("max", (F,), dict(initial=0.5)),
        ("min", (B,), dict(axis=0, initial=True)),
        ("cumsum", (I,), dict(axis=1, dtype="float32")),
        ("average", (F,), dict(axis=1, weights=V)),
        ("average", (F,), dict(axis=None, weights=P)),
        ("quantile", (F, 0.3), {}),
        ("quantile", (F, np.array([0.2, 0.9], np.float32)), dict(axis=1, keepdims=True)),
        ("quantile", (F, np.array([[0.2, 0.9], [0.5, 0.1]], np.float32)), dict(axis=1)),
        ("quantile", (F, np.array([[0.2, 0.9], [0.5, 0.1]], np.float32)), dict(method="nearest")),
        ("percentile", (F, np.array([[20.0], [75.0]], np.float32)), dict(axis=0, keepdims=True)),
        ("argmax", (np.array([0.0, -0.0, 0.0], np.float32),), {}),
        ("argmin", (np.array([0.0, -0.0], np.float32),), {}),
        ("argmax", (np.array([1.0, np.nan, 3.0], np.float32),), {}),
    ]
    + [
        ("array", ([1, 2],), {}),
        ("array", ([1.5, 2],), {}),
        ("array", (I,), dict(dtype="float32")),
        ("zeros", ((2, 3),), {}),
        ("ones", (3,), dict(dtype="int32")),
        ("empty", ((2,),), {}),
        ("full", ((2,), 3), {}),
        ("full", ((2, 2), V[:2]), {}),
        ("full", ((2,), 3), dict(dtype="int8")),
        ("zeros_like", (I,), {}),
        ("ones_like", (F,), dict(dtype="bool")),
        ("full_like", (I, 2.5), {}),
        ("full_like", (F, 7), dict(dtype="int32")),
        ("eye", (3,), {}),
        ("eye", (3,), dict(k=1)),
        ("eye", (3,), dict(k=-1, dtype="int32")),
        ("eye", (2, 4), {}),
        ("identity", (2,), {}),
        ("tri", (3, 4), dict(k=1)),
        ("arange", (5,), {}),
        ("arange", (1.0, 3.0, 0.5), {}),
        ("arange", (1, 7, 2), dict(dtype="float32")),
        ("arange", (np.int32(2), 6), {}),
        ("linspace", (0, 1, 5), {}),
        ("linspace", (0.0, 2.0, 4), dict(endpoint=False)),
        ("linspace", (0, 10, 4), dict(dtype="int32")),
        ("linspace", (np.array([0.0, 1.0], np.float32), 4.0, 3), dict(axis=1)),
        ("linspace", (0.0, 1.0, 5), dict(retstep=True)),
    ]
    + [
        ("reshape", (F, (4, 3)), {}),
        ("reshape", (F, -1), {}),
        ("ravel", (F,), {}),
        ("transpose", (F3,), {}),
        ("transpose", (F3, (1, 0, 2)), {}),
        ("expand_dims", (F, 1), {}),
        ("expand_dims", (F, (0, -1)), {}),
        ("squeeze", (F[:, :1],), {}),
        ("squeeze", (F3[:1],), dict(axis=0)),
        ("concatenate", ([F, I],), dict(axis=0)),
        ("concatenate", ([F, F],), dict(axis=-1)),
        ("stack", ([V, V],), {}),
        ("stack", ([1, 2.5],), {}),
        ("hstack", ([F, I],), {}),
        ("hstack", ([V, V],), {}),
        ("vstack", ([F, F],), {}),
        ("split", (F, 2), dict(axis=1)),
        ("split", (F, [1, 3]), dict(axis=1)),
        ("tile", (V, 2), {}),
        ("tile", (F, (2, 1)), {}),
        ("tile", (V, (2, 2)), {}),
        ("repeat", (F, 2), {}),
        ("repeat", (F, [1, 2, 0]), dict(axis=0)),
        ("flip", (F,), {}),
        ("flip", (F3,), dict(axis=(0, 2))),
        ("roll", (F, 1), {}),
        ("roll", (F, -1), dict(axis=1)),
        ("moveaxis", (F3, 0, -1), {}),
        ("moveaxis", (F3, (0, 1), (2, 0)), {}),
        ("swapaxes", (F3, 0, 2), {}),
        ("broadcast_to", (V, (2, 3, 4)), {}),
        ("pad", (F, ((1, 0), (0, 2))), {}),
        ("pad", (F, ((1, 1), (2, 2))), dict(mode="reflect")),
        ("pad", (F, ((1, 1), (2, 2))), dict(mode="symmetric")),
        ("pad", (I, ((1, 1), (1, 1))), dict(constant_values=9)),
        ("take", (F, IV), dict(axis=0)),
        ("take", (F, -1), dict(axis=1)),
        ("take", (F, np.array([[0, 5], [11, -1]])), {}),
        ("take_along_axis", (F, np.argsort(F, axis=1)), dict(axis=1)),
        ("take_along_axis", (F, np.array([[0], [2], [1]], np.int32)), dict(axis=1)),
        ("where", (B, F, I), {}),
        ("where", (B, I, 0), {}),
        ("where", (B, 1.0, V), {}),
        ("where", (B,), {}),
        ("sort", (F,), {}),
        ("sort", (F,), dict(axis=0)),
        ("sort", (B,), {}),
        ("argsort", (F,), {}),
        ("argsort", (F,), dict(axis=None)),
        ("tril", (F,), {}),
        ("tril", (F,), dict(k=-1)),
        ("triu", (F3,), dict(k=1)),
        ("diag", (V,), {}),
        ("diag", (V,), dict(k=-1)),
        ("diag", (F,), dict(k=1)),
        ("diagonal", (F3,), dict(offset=1, axis1=1, axis2=2)),
        ("diagonal", (F,), {}),
        ("trace", (F,), {}),
        ("trace", (I8,), {}),
        ("trace", (F3,), dict(axis1=1, axis2=2)),
        ("size", (F,), {}),
    ]
    + [
        ("matmul", (F, M45), {}),
        ("matmul", (F3, M45), {}),
        ("matmul", (V, M45), {}),
        ("matmul", (F3, V), {}),
        ("matmul", (I, I.T), {}),
        ("matmul", (I8, I8.T), {}),
        ("matmul", (np.ones((2, 1, 3, 4), np.float32), np.ones((3, 4, 2), np.float32)), {}),
        ("dot", (F, M45), {}),
        ("dot", (F, V), {}),
        ("dot", (V, V), {}),
        ("dot", (I[0], I[1]), {}),
        ("dot", (F, 2.0), {}),
        ("einsum", ("ij,jk->ik", F, M45), {}),
        ("einsum", ("ij->j", I), {}),
        ("einsum", ("bij,j->bi", F3, V), {}),
        ("einsum", ("ij,ij->i", I8, I8), {}),
        ("tensordot", (F, M45, 1), {}),
        ("tensordot", (F3, F3, ((1, 2), (1, 2))), {}),
        ("tensordot", (I, I, 2), {}),
        ("outer", (V, V[:3]), {}),
        ("outer", (I[0], F[0]), {}),
        ("inner", (F, V), {}),
        ("vdot", (F, F), {}),
    ]
    + [
        ("segment_sum", (F, np.array([0, 0, 1], np.int32)), {}),
        ("segment_sum", (F, np.array([0, 1, 1], np.int32)), dict(sorted=True)),
        ("segment_sum", (V, np.array([2, 0, 2, 1], np.int32)), dict(num_segments=4)),
        ("segment_max", (F, np.array([1, 0, 1], np.int32)), {}),
        ("top_k", (F, 2), {}),
        ("top_k", (V, 3), {}),
        ("in_top_k", (np.array([0, 1, 2], np.int32), F, 2), {}),
        ("logsumexp", (F,), {}),
        ("logsumexp", (F,), dict(axis=1, keepdims=True)),
        ("erf", (F,), {}),
        ("erfinv", (P,), {}),
        ("rsqrt", (P,), {}),
    ]
    + [
        ("cholesky", (SPD,), {}),
        ("cholesky", (SPD,), dict(upper=True)),
        ("det", (SQ,), {}),
        ("inv", (SQ,), {}),
        ("lu_factor", (SQ,), {}),
        ("qr", (F.T,), {}),
        ("qr", (F.T,), dict(mode="complete")),
        ("solve", (SQ, V[:3]), {}),
        ("solve", (SQ, F), {}),
        ("solve_triangular", (np.triu(SQ), V[:3]), {}),
        ("solve_triangular", (np.tril(SQ), F), dict(lower=True)),
        ("svd", (F,), dict(compute_uv=False)),
        ("norm", (F,), {}),
        ("norm", (V,), {}),
        ("norm", (F,), dict(axis=1)),
        ("norm", (F,), dict(ord=1, axis=1, keepdims=True)),
        ("norm", (F,), dict(ord=np.inf, axis=0)),
        ("norm", (F,), dict(ord=3, axis=-1)),
        ("norm", (F,), dict(ord=0, axis=-1)),
        ("norm", (F,), dict(ord="fro")),
        ("norm", (F,), dict(ord="nuc")),
        ("norm", (F,), dict(ord=1)),
        ("norm", (F,), dict(ord=-np.inf)),
        ("norm", (F,), dict(ord=2)),
        ("norm", (F3,), dict(ord=1, axis=(0, 2), keepdims=True)),
        ("norm", (I,), dict(axis=0)),
    ]
    + [(n, (F,), {}) for n in _ACTIVATIONS.split()]
    + [
        ("relu", (I,), {}),
        ("gelu", (F,), dict(approximate=False)),
        ("elu", (F,), dict(alpha=0.5)),
        ("leaky_relu", (F,), dict(negative_slope=0.1)),
        ("celu", (F,), dict(alpha=2.0)),
        ("softmax", (F,), dict(axis=0)),
        ("softmax", (F,), dict(axis=None)),
        ("softmax", (X1,), dict(axis=(1, 2))),
        ("log_softmax", (X1,), dict(axis=(0, 2))),
        ("log_softmax", (F,), dict(axis=None)),
        ("one_hot", (IV, 3), {}),
        ("one_hot", (np.array([[0, 5], [1, -1]]), 4), dict(axis=0)),
        ("one_hot", (IV, 3), dict(dtype="int32")),
        ("one_hot", (IV, 4), dict(dtype="bool")),
        ("multi_hot", (np.array([[0, 2], [1, 1]]), 4), {}),
        ("multi_hot", (IV, 4), {}),
        ("binary_crossentropy", (np.round(P), P), {}),
        ("binary_crossentropy", (np.round(P), F), dict(from_logits=True)),
        ("categorical_crossentropy", (T, P), {}),
        ("categorical_crossentropy", (T, F), dict(from_logits=True)),
        ("categorical_crossentropy", (T.T[:3], P[:, :3]), dict(axis=0)),
        ("sparse_categorical_crossentropy", (np.array([0, 3, 1]), P), {}),
        ("sparse_categorical_crossentropy", (np.array([[0], [3], [1]]), F), dict(from_logits=True)),
        ("conv", (X1, W1), {}),
        ("conv", (X1, W1), dict(padding="same", strides=2)),
        ("conv", (X2, W2), {}),
        ("conv", (X2, W2), dict(strides=(2, 1), padding="same")),
        ("conv", (X2, W2), dict(dilation_rate=2)),
        ("conv", (X2, WG), {}),
        ("conv", (np.moveaxis(X2, -1, 1), W2), dict(data_format="channels_first")),
        ("max_pool", (X1, 2), {}),
        ("max_pool", (X2, (2, 2)), dict(strides=1, padding="same")),
        ("average_pool", (X2, 2), {}),
        ("average_pool", (X1, 3), dict(strides=2, padding="same")),
        ("max_pool", (np.moveaxis(X2, -1, 1), 2), dict(data_format="channels_first")),
        ("moments", (F, 0), {}),
        ("moments", (X2, [0, 1, 2]), dict(keepdims=True)),
        ("moments", (H, [1]), {}),
        ("batch_normalization", (F, P[0], P[1] + 0.5, -1), {}),
        ("batch_normalization", (F, V[:3], P[:, 0], 0), dict(offset=V[1:], scale=P[:, 1], epsilon=0.1)),
        ("normalize", (F,), {}),
        ("normalize", (F,), dict(axis=0, order=1)),
        ("normalize", (F,), dict(order=3, epsilon=0.5)),
    ]
    + [
        ("cast", (F, "int32"), {}),
        ("cast", (I, "bool"), {}),
        ("cast", (F, "float16"), {}),
        ("convert_to_tensor", ([1, 2],), {}),
        ("convert_to_tensor", (F, "int32"), {}),
        ("convert_to_tensor", (3.0,), {}),
        ("shape", (F,), {}),
        ("dtype", (I8,), {}),
        ("ndim", (F3,), {}),
        ("stop_gradient", (F,), {}),
        ("slice", (F, (1, 0), (2, 3)), {}),
        ("slice_update", (F, (1, 1), np.ones((2, 2), np.float32)), {}),
        ("scatter", (np.array([[0], [2]]), np.array([1.0, 2.0], np.float32), (4,)), {}),
        ("scatter_update", (F, np.array([[0, 0], [2, 3]]), np.array([9.0, 8.0], np.float32)), {}),
        ("unstack", (F,), {}),
        ("unstack", (F,), dict(axis=1)),
        ("saturate_cast", (F * 300, "int8"), {}),
    ]
)


def _ids(cases):
    seen: dict = {}
    out = []
    for name, _, _ in cases:
        seen[name] = seen.get(name, 0) + 1
        out.append(f"{name}-{seen[name]}")
    return out


IDS = _ids(CASES)
# Compiled in groups (one XLA program per group, fast), all but those that need concrete values:
# Python results (shape, dtype, ndim) and nonzero's data-dependent shape.
_EAGER_ONLY = {"shape-1", "dtype-1", "ndim-1", "where-4"}
_TRACEABLE = [(i, c) for i, c in zip(IDS, CASES) if i not in _EAGER_ONLY]
GROUPS = [_TRACEABLE[k : k + 30] for k in range(0, len(_TRACEABLE), 30)]
# Run eagerly too: every sixth case (each op family) and those that must.
EAGER = [(i, c) for n, (i, c) in enumerate(zip(IDS, CASES)) if n % 6 == 0 or i in _EAGER_ONLY]


def _plain(x):
    """A result as nested tuples of (dtype name, shape, values), or the Python value itself."""
    if isinstance(x, (tuple, list)):
        return tuple(_plain(v) for v in x)
    if hasattr(x, "dtype") and hasattr(x, "shape") and not isinstance(x, str):
        dtype = keras.backend.standardize_dtype(x.dtype)
        # gradkit has no 64-bit types (JAX without x64): Keras' int64/float64 are int32/float32 there.
        dtype = {"int64": "int32", "float64": "float32"}.get(dtype, dtype)
        return dtype, tuple(int(d) for d in x.shape), np.asarray(x)
    return x


def _assert_same(ours, theirs, where=""):
    if isinstance(theirs, tuple) and not (len(theirs) == 3 and isinstance(theirs[0], str)):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), (where, ours, theirs)
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same(a, b, f"{where}[{i}]")
        return
    if not isinstance(theirs, tuple):
        assert ours == theirs, (where, ours, theirs)
        return
    (dtype, shape, value), (want_dtype, want_shape, want) = ours, theirs
    assert (dtype, shape) == (want_dtype, want_shape), where
    if want.dtype.kind in "fc":
        tolerance = 3e-3 if dtype in ("float16", "bfloat16") else 2e-5
        np.testing.assert_allclose(value.astype(np.float64), want.astype(np.float64), rtol=tolerance, atol=tolerance)
    else:
        np.testing.assert_array_equal(value, want)


def _keras(name, args, kwargs):
    """Keras' result. TensorFlow runs channels-first convolutions on a CPU only with oneDNN, which
    some CPUs lack: there Keras' own channels-last result, its axes moved as channels-first's."""
    try:
        return getattr(keras.ops, name)(*args, **kwargs)
    except Exception as error:
        if kwargs.get("data_format") != "channels_first" or "NHWC" not in str(error):
            raise
    moved = (np.moveaxis(args[0], 1, -1), *args[1:])
    result = getattr(keras.ops, name)(*moved, **{**kwargs, "data_format": "channels_last"})
    return np.moveaxis(np.asarray(result), -1, 1)


@pytest.mark.parametrize("group", range(len(GROUPS)))
def test_ops_match_keras_inside_tf_function(group):
    cases = GROUPS[group]
    results = gtf.function(lambda: [getattr(gtf.keras.ops, n)(*a, **k) for _, (n, a, k) in cases])()
    failures = []
    for (case_id, (name, args, kwargs)), got in zip(cases, results):
        try:
            _assert_same(_plain(got), _plain(_keras(name, args, kwargs)), case_id)
        except AssertionError as error:
            failures.append(f"{case_id}: {error}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("case", [c for _, c in EAGER], ids=[i for i, _ in EAGER])
def test_op_matches_keras_eagerly(case):
    name, args, kwargs = case
    want = _plain(_keras(name, args, kwargs))
    got = _plain(getattr(gtf.keras.ops, name)(*args, **kwargs))
    _assert_same(got, want, name)


def test_results_are_gradkit_tensors():
    assert isinstance(gtf.keras.ops.add(F, 1.0), gtf.Tensor)
    assert isinstance(gtf.keras.ops.arange(3), gtf.Tensor)
    assert all(isinstance(t, gtf.Tensor) for t in gtf.keras.ops.split(F, 2, axis=1))
    assert isinstance(gtf.keras.ops.convert_to_numpy(gtf.constant(F)), np.ndarray)
    assert gtf.keras.ops.is_tensor(gtf.constant(F)) and gtf.keras.ops.is_tensor(gtf.Variable(F))
    assert not gtf.keras.ops.is_tensor(F)


def test_eigh_matches_keras_up_to_sign():
    w, v = (np.asarray(t) for t in gtf.keras.ops.eigh(SPD))
    want_w, want_v = (np.asarray(t) for t in keras.ops.eigh(SPD))
    np.testing.assert_allclose(w, want_w, rtol=1e-4)
    np.testing.assert_allclose(np.abs(v), np.abs(want_v), atol=1e-4)
    u, s, vh = (np.asarray(t) for t in gtf.keras.ops.svd(F, full_matrices=False))
    np.testing.assert_allclose((u * s) @ vh, F, atol=1e-5)


@pytest.mark.parametrize(
    "a,b",
    [
        (a, b)
        for a in ("bool", "int8", "uint8", "int16", "int32", "float16", "bfloat16", "float32")
        for b in (a, int, float)
    ]
    + [("int8", "uint8"), ("int32", "float16"), ("uint8", "float32"), ("bool", "float16"), ("int16", "uint8")],
)
def test_result_type_is_keras(a, b):
    assert gtf.keras.backend.result_type(a, b) == keras.backend.result_type(a, b)


def _composition(ops, w, x):
    h = ops.tanh(ops.matmul(x, w))
    h = ops.maximum(h, 0.1) + ops.abs(ops.clip(h, -0.2, 0.3))
    p = ops.softmax(h, axis=-1)
    loss = ops.mean(ops.categorical_crossentropy(ops.one_hot(ops.argmax(h, axis=-1), 4), p))
    return loss + 0.01 * ops.sum(ops.sqrt(ops.square(w) + 1.0)) + ops.logsumexp(h) + ops.norm(w)


def _attention(ops, w, x):
    h = ops.matmul(x, w)
    scores = ops.einsum("bj,cj->bc", h, h) / ops.sqrt(ops.cast(ops.shape(x)[-1], "float32"))
    weights = ops.softmax(ops.where(ops.greater(scores, -1.0), scores, -1e9), axis=-1)
    out = ops.matmul(weights, h)
    return ops.sum(ops.square(ops.normalize(out))) + ops.var(out) + ops.prod(ops.sigmoid(ops.take(out, [0, 2], axis=1)))


def _reduce_and_pool(ops, w, x):
    image = ops.reshape(ops.tile(ops.matmul(x, w), (1, 2)), (1, 5, 8, 1))
    pooled = ops.max_pool(image, 2, padding="same") + ops.average_pool(image, 2)[:, :1, :1]
    mean, variance = ops.moments(pooled, [1, 2])
    return ops.sum(ops.batch_normalization(pooled, mean, variance, -1)) + ops.max(ops.cumsum(ops.ravel(w)))


@pytest.mark.parametrize("fn", [_composition, _attention, _reduce_and_pool])
def test_gradients_match_tensorflow(fn):
    x = _RNG.normal(size=(5, 3)).astype(np.float32)
    w0 = _RNG.normal(size=(3, 4)).astype(np.float32)
    wt = tf_real.Variable(w0)
    with tf_real.GradientTape() as tape:
        want_loss = fn(keras.ops, wt, x)
    want = tape.gradient(want_loss, wt).numpy()
    wg = gtf.Variable(w0)
    with gtf.GradientTape() as tape:
        loss = fn(gtf.keras.ops, wg, x)
    got = tape.gradient(loss, wg).numpy()
    np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_gradient_flows_through_variable_assignment():
    ops = gtf.keras.ops
    w = gtf.Variable(np.array([0.1, 0.5, 1.0], np.float32))
    v = gtf.Variable(np.zeros(3, np.float32))
    with gtf.GradientTape() as tape:
        v.assign(ops.sin(w))
        v.assign_add(ops.multiply(v, 2.0))  # v = 3 sin(w)
        loss = ops.sum(ops.square(v))
    value = w.numpy()
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), 18 * np.sin(value) * np.cos(value), rtol=1e-5)


def test_ops_run_inside_tf_function_and_control_flow():
    ops = gtf.keras.ops

    def step(x):
        total = ops.fori_loop(0, 3, lambda i, acc: acc + ops.cast(i, "float32") * x, ops.zeros_like(x))
        carry, ys = ops.scan(lambda c, row: (c + ops.sum(row), ops.max(row)), 0.0, x)
        (k, y) = ops.while_loop(lambda k, y: k < 2, lambda k, y: (k + 1, y * 2.0), (0, ops.mean(x)))
        picked = ops.cond(ops.greater(ops.sum(x), 0.0), lambda: x, lambda: -x)
        mapped = ops.vectorized_map(lambda row: ops.dot(row, row), x)
        return total, carry, ys, y, picked, mapped, ops.switch(1, [ops.relu, ops.negative], x)

    eager = step(gtf.constant(F))
    compiled = gtf.function(step)(gtf.constant(F))
    for a, b in zip(eager, compiled):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(eager[0]), 3 * F, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(eager[2]), F.max(axis=1))
    np.testing.assert_allclose(float(eager[3]), 4 * F.mean(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(eager[6]), -F)


def test_ops_on_keras_tensors_build_a_functional_model():
    ops = gtf.keras.ops
    inputs = gtf.keras.Input((4,))
    hidden = ops.relu(ops.add(inputs, 1.0))
    outputs = ops.sum(hidden, axis=-1, keepdims=True)
    assert ops.shape(inputs) == (None, 4) and ops.dtype(inputs) == "float32" and ops.ndim(inputs) == 2
    model = gtf.keras.Model(inputs, outputs)
    np.testing.assert_allclose(model(F).numpy().ravel(), np.maximum(F + 1.0, 0.0).sum(axis=-1), rtol=1e-6)


def test_keras_tensors_with_arrays_of_a_fixed_batch_take_that_batch():
    # Keras takes the None batch to be the other argument's size: (2, 4) and (2,), not an error.
    ops, c, ids = gtf.keras.ops, np.arange(8, dtype=np.float32).reshape(2, 4), np.array([0, 1])
    inputs = gtf.keras.Input((4,))
    added, hits = ops.add(inputs, c), ops.in_top_k(ids, inputs, 2)
    summed = ops.segment_sum(inputs, ids, num_segments=2)
    assert (added.shape, hits.shape, summed.shape) == ((2, 4), (2,), (2, 4))
    assert ops.add(inputs, c[:1]).shape == (None, 4)  # broadcasts: the batch stays unknown
    model = gtf.keras.Model(inputs, [added, summed])
    got = model(F[:2])
    np.testing.assert_allclose(got[0].numpy(), F[:2] + c, rtol=1e-6)  # NumPy oracle
    np.testing.assert_allclose(got[1].numpy(), F[:2], rtol=1e-6)


def test_a_factorization_of_keras_tensors_builds_a_model():
    # The model is built on placeholder values; only the real inputs must be positive definite.
    ops = gtf.keras.ops
    inputs = gtf.keras.Input((3, 3))
    model = gtf.keras.Model(inputs, ops.cholesky(inputs))
    spd = np.stack([SPD, 2.0 * SPD])
    np.testing.assert_allclose(model(spd).numpy(), np.linalg.cholesky(spd), rtol=1e-5, atol=1e-6)  # NumPy oracle


def test_custom_layer_with_ops_trains():
    ops = gtf.keras.ops

    class Scaled(gtf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], 2), initializer="ones")

        def call(self, x):
            return ops.tanh(ops.matmul(x, self.w))

    layer = Scaled()
    opt = gtf.keras.optimizers.SGD(0.1)
    for _ in range(2):
        with gtf.GradientTape() as tape:
            loss = ops.mean(ops.square(layer(F) - 0.5))
        opt.apply_gradients(zip(tape.gradient(loss, layer.trainable_weights), layer.trainable_weights))
    assert not np.allclose(layer.w.numpy(), 1.0)


@pytest.mark.parametrize(
    "call,kind,text",
    [
        (lambda ops: ops.add(np.ones((2, 3)), np.ones(4)), ValueError, "broadcast"),
        (lambda ops: ops.squeeze(F, axis=0), ValueError, "squeeze"),
        (lambda ops: ops.max(np.zeros((0, 2), np.float32)), ValueError, "empty"),
        (lambda ops: ops.linspace(0, 1, -1), ValueError, "num"),
        (lambda ops: ops.pad(F, 1, mode="edge"), ValueError, "mode"),
        (lambda ops: ops.where(B, F), ValueError, "x1 and x2"),
        (lambda ops: ops.normalize(F, order=0), ValueError, "order"),
        (lambda ops: ops.qr(F, mode="full"), ValueError, "mode"),
        (lambda ops: ops.cholesky(-SPD), ValueError, "positive definite"),
        (lambda ops: ops.norm(F3), ValueError, "axis"),
        (lambda ops: ops.det(F), ValueError, "square"),
        (lambda ops: ops.one_hot(IV, 3, sparse=True), NotImplementedError, "sparse"),
        (lambda ops: ops.diag(F3), ValueError, "1-D or 2-D"),
        (lambda ops: ops.sparse_categorical_crossentropy(IV, P, axis=0), ValueError, "last axis"),
        (lambda ops: ops.cast(F, "string"), ValueError, "dtype"),
        (lambda ops: ops.segment_sum(F, np.zeros((3, 1), np.int32)), ValueError, "1-D"),
    ],
)
def test_bad_input_raises_a_gradkit_error(call, kind, text):
    with pytest.raises(kind, match=r"\[gradkit\].*" + text):
        call(gtf.keras.ops)


@pytest.mark.parametrize("sub", ["", "numpy", "nn", "linalg"])
def test_namespaces_list_keras_names_only(sub):
    ours, theirs = gtf.keras.ops, keras.ops
    if sub:
        ours, theirs = getattr(ours, sub), getattr(theirs, sub)
    names = {n for n in dir(ours) if not n.startswith("_")}
    assert names <= {n for n in dir(theirs) if not n.startswith("_")}
    assert len(names) > (100 if sub in ("", "numpy") else 8)


def test_missing_op_raises_gradkit_attribute_error():
    # Names Keras has nowhere there (no fft3; fft is keras.ops', not keras.ops.numpy's), so they stay missing.
    with pytest.raises(AttributeError, match=r"\[gradkit\].*'fft3'"):
        gtf.keras.ops.fft3  # noqa: B018
    with pytest.raises(AttributeError, match=r"\[gradkit\].*'fft'"):
        gtf.keras.ops.numpy.fft  # noqa: B018
