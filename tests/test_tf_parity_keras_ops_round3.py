"""The last of Keras 3's ``keras.ops`` on gradkit.tf: ``associative_scan``, ``custom_gradient``,
``rearrange``, ``get_item``, ``i0``, ``nextafter``, ``vectorize``, ``view``, ``eig``, ``jvp``,
``ctc_loss``, ``ctc_decode``, ``adaptive_average_pool``, ``adaptive_max_pool``, ``fold``, ``unfold``.

Each is checked against real Keras on TensorFlow (values, dtype names, shapes), against NumPy or
JAX where Keras' TensorFlow backend fails (``vectorize`` always raises there, ``nextafter`` rounds
its float64 step away, 3-D adaptive pooling crashes), and gradients against TensorFlow's.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from keras_ops_results import assert_same, case_ids, plain

import gradkit.tf as gtf

_RNG = np.random.default_rng(11)
X4 = _RNG.normal(size=(2, 7, 5, 3)).astype(np.float32)  # NCHW for unfold (C=7, H=5, W=3); NHWC for pools
M = _RNG.normal(size=(3, 4)).astype(np.float32)
V = _RNG.uniform(0.5, 2.0, size=(5,)).astype(np.float32)
COLS = _RNG.normal(size=(2, 12, 6)).astype(np.float32)
LOGITS = _RNG.normal(size=(2, 6, 4)).astype(np.float32)
LABELS = np.array([[1, 2], [3, 0]], np.int32)
LABEL_LEN, LOGIT_LEN = np.array([2, 1], np.int32), np.array([6, 4], np.int32)
SQ = np.array([[2.0, 1.0, 0.5], [0.0, 3.0, 1.0], [0.0, 0.0, -1.0]], np.float32)
CHAINS = np.stack([np.eye(2, dtype=np.float32) + 0.1 * i for i in range(6)])


def _sum(a, b):
    return a + b


def _pair(a, b):
    return [a[0] + b[0], a[1] * b[1]]


# (name, args, kwargs): the same call on gtf.keras.ops and keras.ops (TensorFlow tensors where its
# backend needs them; it reads no NumPy arrays in adaptive pooling).
def _cases(tf):
    return [
        ("associative_scan", (_sum, np.arange(5, dtype=np.int32)), {}),
        ("associative_scan", (_pair, [V, V]), dict(reverse=True)),
        ("associative_scan", (_sum, M), dict(axis=1)),
        ("associative_scan", (lambda a, b: a @ b, CHAINS), {}),
        ("rearrange", (X4, "b h w c -> (b h) w c"), {}),
        ("rearrange", (X4[:, :6, :4], "b (h1 h) (w1 w) c -> (b h1 w1) h w c"), dict(h1=2, w1=2)),
        ("rearrange", (X4[:, :6, :4], "b (h h1) (w w1) c -> b h w (c h1 w1)"), dict(h1=2, w1=2)),
        ("get_item", (X4, (1, slice(0, 2))), {}),
        ("get_item", (tf.constant(M), [1]), {}),
        ("i0", (np.array([1, 2, -3], np.int32),), {}),
        ("i0", (M,), {}),
        ("view", (M, "int32"), {}),
        ("view", (M, "uint8"), {}),
        ("view", (np.arange(6, dtype=np.int16).reshape(3, 2), "float32"), {}),
        ("view", (np.arange(6, dtype=np.int32),), {}),
        ("nextafter", (V, V), {}),
        ("eig", (SQ,), {}),
        ("ctc_loss", (LABELS, LOGITS, LABEL_LEN, LOGIT_LEN), {}),
        ("ctc_loss", (LABELS, LOGITS, LABEL_LEN, LOGIT_LEN), dict(mask_index=3)),
        ("ctc_decode", (LOGITS, LOGIT_LEN), {}),
        ("ctc_decode", (LOGITS, LOGIT_LEN), dict(merge_repeated=False, mask_index=2)),
        ("adaptive_average_pool", (tf.constant(X4), (3, 4)), {}),
        ("adaptive_max_pool", (tf.constant(X4), 3), {}),
        ("adaptive_average_pool", (tf.constant(X4[:, :, 0]), 4), dict(data_format="channels_first")),
        ("adaptive_max_pool", (tf.constant(X4[:, :3]), (5, 2)), {}),
        ("unfold", (X4, 2), {}),
        ("unfold", (X4, (2, 3)), dict(dilation=(2, 1), padding=1, stride=(1, 2))),
        ("fold", (COLS, (3, 4), 2), {}),
        ("fold", (COLS[:, :, :4], (4, 2), (2, 3)), dict(stride=(2, 1), padding=(0, 1))),
    ]


_NAMES = [c[0] for c in _cases(type("tf", (), {"constant": staticmethod(np.asarray)}))]


@pytest.mark.parametrize("index", range(len(_NAMES)), ids=case_ids([(n,) for n in _NAMES]))
def test_op_matches_keras(index):
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    name, args, kwargs = _cases(tf)[index]
    want = plain(getattr(keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
    got = plain(getattr(gtf.keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
    assert_same(got, want, name, tol=1e-4)


def test_jvp_matches_keras():
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    for ops, const in ((keras.ops, tf.constant), (gtf.keras.ops, gtf.constant)):
        primals, tangents = (const(M), const(M[::-1].copy())), (const(np.ones_like(M)), const(M))
        out = ops.linalg.jvp(lambda x, y, ops=ops: (x * y, ops.sin(x)), primals, tangents)
        aux = ops.jvp(lambda x: (x * x, x), (const(M),), (const(M[::-1].copy()),), has_aux=True)
        if ops is keras.ops:
            want = plain((out, aux), keras.backend.standardize_dtype)
        else:
            got = plain((out, aux), keras.backend.standardize_dtype)
    assert_same(got, want, "jvp")


def test_ops_inside_tf_function():
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    cases = [c for c in _cases(tf) if c[0] not in ("eig",)]
    results = gtf.function(lambda: [getattr(gtf.keras.ops, n)(*a, **k) for n, a, k in cases])()
    for (name, args, kwargs), got in zip(cases, results):
        want = plain(getattr(keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
        assert_same(plain(got, lambda d: np.dtype(d).name), want, name, tol=1e-4)


# -- where Keras' TensorFlow backend fails: NumPy and JAX --------------------------------------


def test_vectorize_matches_numpy():
    ops = gtf.keras.ops
    a, b = _RNG.normal(size=(3, 4)).astype(np.float32), _RNG.normal(size=(4,)).astype(np.float32)
    np.testing.assert_allclose(ops.vectorize(lambda x, y: x * y + 1)(a, b).numpy(), a * b + 1, rtol=1e-6)
    np.testing.assert_allclose(ops.vectorize(lambda x, y: x - y)(a, 2.0).numpy(), a - 2.0, rtol=1e-6)
    mats = _RNG.normal(size=(2, 3, 4)).astype(np.float32)
    matvec = ops.vectorize(lambda m, v: ops.matmul(m, v), signature="(m,n),(n)->(m)")
    np.testing.assert_allclose(matvec(mats, b).numpy(), mats @ b, rtol=1e-5)
    both = ops.vectorize(lambda v: (ops.sum(v), ops.max(v)), signature="(n)->(),()")(a)
    np.testing.assert_allclose(both[0].numpy(), a.sum(-1), rtol=1e-5)
    np.testing.assert_allclose(both[1].numpy(), a.max(-1))
    power = ops.vectorize(lambda x, n: x**n, excluded={1})
    np.testing.assert_allclose(power(a, 2).numpy(), a**2, rtol=1e-6)
    assert float(ops.vectorize(lambda x: x * 3)(2.0)) == 6.0


def test_nextafter_matches_numpy():
    x1 = np.array([1.0, 0.0, -2.5, 3.0, np.inf], np.float32)
    x2 = np.array([2.0, -1.0, -2.5, np.inf, 0.0], np.float32)
    got = gtf.keras.ops.nextafter(x1, x2)
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), np.nextafter(x1, x2))
    ints = gtf.keras.ops.nextafter(np.array([1, 2], np.int32), np.array([3, 0], np.int32))
    np.testing.assert_array_equal(np.asarray(ints), np.nextafter(np.float32([1, 2]), np.float32([3, 0])))


def _adaptive_numpy(x, sizes, reduce):
    for axis, out in enumerate(sizes, start=1):
        n = x.shape[axis]
        bounds = [((i * n) // out, -((-(i + 1) * n) // out)) for i in range(out)]
        x = np.stack([reduce(np.take(x, range(s, e), axis=axis), axis=axis) for s, e in bounds], axis=axis)
    return x


@pytest.mark.parametrize("reduce,name", [(np.mean, "adaptive_average_pool"), (np.max, "adaptive_max_pool")])
def test_adaptive_pool_3d_matches_numpy(reduce, name):
    x = X4[:, :, :4, None, :]  # (2, 7, 4, 1, 3): 3 spatial axes, channels_last
    got = getattr(gtf.keras.ops, name)(x, (3, 2, 2))
    np.testing.assert_allclose(got.numpy(), _adaptive_numpy(x, (3, 2, 2), reduce), rtol=1e-5)


def test_unfold_and_fold_are_adjoint():
    ops = gtf.keras.ops
    kw = dict(dilation=(2, 1), padding=1, stride=(1, 2))
    cols = ops.unfold(X4, (2, 3), **kw)
    weights = _RNG.normal(size=tuple(cols.shape)).astype(np.float32)
    lhs = float(np.sum(cols.numpy() * weights))
    rhs = float(np.sum(X4 * ops.fold(weights, (5, 3), (2, 3), **kw).numpy()))
    assert lhs == pytest.approx(rhs, rel=1e-4)


def test_custom_gradient_both_grad_forms():
    ops = gtf.keras.ops

    @ops.custom_gradient
    def log1pexp(x):
        e = ops.exp(x)

        def grad(*args, upstream=None):
            (upstream,) = args if upstream is None else (upstream,)
            return ops.multiply(upstream, 1.0 - 1.0 / ops.add(1, e))

        return ops.log(1 + e), grad

    @ops.custom_gradient
    def doubled(x):
        return x * 1.0, lambda upstream: upstream * 2.0

    w = gtf.Variable(np.array([0.0, 100.0], np.float32))
    with gtf.GradientTape() as tape:
        loss = ops.sum(log1pexp(w)) + ops.sum(doubled(w))
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [2.5, 3.0], rtol=1e-6)


def test_associative_scan_matches_jax():
    got = gtf.keras.ops.associative_scan(_pair, (V, V), reverse=True)
    want = jax.lax.associative_scan(
        lambda a, b: (a[0] + b[0], a[1] * b[1]), (jnp.asarray(V), jnp.asarray(V)), reverse=True
    )
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=1e-6)


# -- gradients against TensorFlow ---------------------------------------------------------------


def _losses(ops):
    return {
        "associative_scan": (lambda x: ops.associative_scan(lambda a, b: a * b, x, axis=1), M),
        "rearrange": (lambda x: ops.rearrange(x, "a (b c) -> c (a b)", c=2) * ops.reshape(ops.arange(12.0), (2, 6)), M),
        "get_item": (lambda x: x[1:, ::2] * 3.0, M),
        "i0": (lambda x: ops.i0(x), M),
        "nextafter": (lambda x: ops.nextafter(x, 5.0) * x, M),
        "ctc_loss": (lambda x: ops.ctc_loss(LABELS, x, LABEL_LEN, LOGIT_LEN), LOGITS),
        "adaptive_average_pool": (lambda x: ops.adaptive_average_pool(x, (3, 4)) ** 2, X4),
        "adaptive_max_pool": (lambda x: ops.adaptive_max_pool(x, (3, 2)) ** 2, X4),
        "unfold": (lambda x: ops.unfold(x, (2, 3), padding=1, stride=(1, 2)) ** 2, X4),
        "fold": (lambda x: ops.fold(x, (3, 4), 2) ** 2, COLS),
        "eig": (lambda x: ops.real(ops.eig(x)[0]) ** 2, SQ),
    }


@pytest.mark.parametrize("name", sorted(_losses(None)))
def test_gradient_matches_tensorflow(name):
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    fn, x0 = _losses(keras.ops)[name]
    xt = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        want_loss = tf.reduce_sum(fn(xt))
    want = tape.gradient(want_loss, xt).numpy()
    fn, _ = _losses(gtf.keras.ops)[name]
    xg = gtf.Variable(x0)
    with gtf.GradientTape() as tape:
        got_loss = gtf.reduce_sum(fn(xg))
    np.testing.assert_allclose(float(got_loss), float(want_loss), rtol=1e-4)
    np.testing.assert_allclose(tape.gradient(got_loss, xg).numpy(), want, rtol=1e-3, atol=1e-4)


def test_ctc_decode_has_no_gradient():
    w = gtf.Variable(LOGITS)
    with gtf.GradientTape() as tape:
        _, scores = gtf.keras.ops.ctc_decode(w, LOGIT_LEN)
    assert tape.gradient(scores, w) is None


# -- KerasTensors, namespaces, errors -----------------------------------------------------------


def test_ops_build_a_functional_model_with_keras_shapes():
    keras = pytest.importorskip("keras")
    shapes = {}
    for lib in (gtf.keras, keras):
        inputs = lib.Input((4, 6, 2))
        outs = [lib.ops.unfold(inputs, 2), lib.ops.i0(inputs), lib.ops.nextafter(inputs, inputs)]
        shapes[lib is keras] = [tuple(t.shape) for t in outs]
    assert shapes[False] == shapes[True]
    # Keras' symbolic adaptive pooling gets channels_last shapes wrong, and its rearrange cannot merge the
    # unknown batch axis: gradkit's KerasTensors take the shapes the ops give eagerly.
    ops = gtf.keras.ops
    inputs = gtf.keras.Input((4, 6, 2))
    outs = [
        ops.adaptive_average_pool(inputs, (2, 3)),
        ops.adaptive_max_pool(inputs, 3),
        ops.rearrange(inputs, "b h w c -> b c (h w)"),
    ]
    assert [tuple(t.shape) for t in outs] == [(None, 2, 3, 2), (None, 3, 3, 2), (None, 2, 24)]
    x = _RNG.normal(size=(3, 4, 6, 2)).astype(np.float32)
    got = gtf.keras.Model(inputs, outs)(x)
    np.testing.assert_allclose(got[0].numpy(), _adaptive_numpy(x, (2, 3), np.mean), rtol=1e-5)
    np.testing.assert_allclose(got[1].numpy(), _adaptive_numpy(x, (3, 3), np.max))
    np.testing.assert_allclose(got[2].numpy(), x.transpose(0, 3, 1, 2).reshape(3, 2, 24))


NAMESPACES = {
    "numpy": "get_item i0 nextafter vectorize view",
    "nn": "adaptive_average_pool adaptive_max_pool ctc_decode ctc_loss fold unfold",
    "linalg": "eig jvp",
    "": "associative_scan custom_gradient rearrange",
}


def test_names_are_in_keras_namespaces():
    keras = pytest.importorskip("keras")
    for sub, names in NAMESPACES.items():
        for name in names.split():
            assert callable(getattr(gtf.keras.ops, name)), name
            assert hasattr(keras.ops, name), name
            if sub:
                assert hasattr(getattr(keras.ops, sub), name), (sub, name)
                assert getattr(getattr(gtf.keras.ops, sub), name) is getattr(gtf.keras.ops, name), (sub, name)


def test_no_keras_ops_name_is_missing():
    keras = pytest.importorskip("keras")
    for sub in ("", "numpy", "nn", "linalg"):
        theirs = getattr(keras.ops, sub) if sub else keras.ops
        ours = getattr(gtf.keras.ops, sub) if sub else gtf.keras.ops
        missing = {n for n in dir(theirs) if not n.startswith("_")} - set(dir(ours)) - {"image"}
        assert not missing, (sub, sorted(missing))


@pytest.mark.parametrize(
    "call,kind,text",
    [
        (lambda ops: ops.associative_scan(3, M), TypeError, "callable"),
        (lambda ops: ops.associative_scan(_pair, [M, V]), ValueError, "one length"),
        (lambda ops: ops.rearrange(M, "a b c -> c b a"), ValueError, "3 input axes"),
        (lambda ops: ops.rearrange(M, "a b"), ValueError, "'->'"),
        (lambda ops: ops.rearrange(M, "a (b c) -> a b c"), ValueError, "unknown"),
        (lambda ops: ops.view(M, "float64"), TypeError, "64-bit"),
        (lambda ops: ops.view(np.arange(3, dtype=np.int16), "float32"), ValueError, "bytes"),
        (lambda ops: ops.vectorize(3), ValueError, "callable"),
        (lambda ops: ops.vectorize(lambda a, b: a, signature="(n),(n)->()")(V, V[:3]), ValueError, "core dimension"),
        (lambda ops: ops.eig(M), ValueError, "square"),
        (lambda ops: ops.jvp(ops.sin, M, M), TypeError, "tuple or list"),
        (lambda ops: ops.ctc_decode(LOGITS, LOGIT_LEN, strategy="beam_search"), NotImplementedError, "greedy"),
        (lambda ops: ops.ctc_decode(LOGITS, LOGIT_LEN, strategy="best"), ValueError, "greedy"),
        (lambda ops: ops.ctc_decode(LOGITS, LOGIT_LEN, mask_index=4), ValueError, "mask_index=4"),
        (lambda ops: ops.adaptive_max_pool(M, 2), ValueError, "rank 3 to 5"),
        (lambda ops: ops.adaptive_average_pool(X4.astype(np.int32), 2), TypeError, "float32"),
        (lambda ops: ops.unfold(M, 2), ValueError, "4-D"),
        (lambda ops: ops.unfold(X4, 9), ValueError, "does not fit"),
        (lambda ops: ops.fold(COLS, (3, 4), 3), ValueError, "blocks"),
        (lambda ops: ops.fold(X4, (3, 4), 2), ValueError, "3-D"),
    ],
)
def test_bad_input_raises_a_gradkit_error(call, kind, text):
    with pytest.raises(kind, match=r"\[gradkit\].*" + text):
        call(gtf.keras.ops)


# -- associative_scan on the functional API's KerasTensors ---------------------------------------

X_SEQ = _RNG.normal(size=(2, 5, 3)).astype(np.float32)


def _symbolic_scans(ops):
    return {
        "cumsum_axis1": (lambda inp: ops.associative_scan(_sum, inp, axis=1), [(5, 3)]),
        "cumprod_reverse": (lambda inp: ops.associative_scan(lambda a, b: a * b, inp, reverse=True, axis=1), [(5, 3)]),
        "pair_of_inputs": (lambda a, b: ops.associative_scan(_pair, [a, b], axis=1), [(5, 3), (5, 3)]),
    }


@pytest.mark.parametrize("name", sorted(_symbolic_scans(None)))
def test_associative_scan_builds_a_functional_model_as_keras_does(name):
    keras = pytest.importorskip("keras")
    outs = {}
    for mod, ops in ((keras, keras.ops), (gtf.keras, gtf.keras.ops)):
        fn, shapes = _symbolic_scans(ops)[name]
        inputs = [mod.Input(s) for s in shapes]
        out = fn(*inputs)
        flat = out if isinstance(out, (list, tuple)) else [out]
        model = mod.Model(inputs if len(inputs) > 1 else inputs[0], out)
        got = model([X_SEQ + i for i in range(len(inputs))] if len(inputs) > 1 else X_SEQ)
        got = got if isinstance(got, (list, tuple)) else [got]
        outs[mod] = ([tuple(t.shape) for t in flat], [np.asarray(g) for g in got])
    (want_shapes, want), (got_shapes, got) = outs[keras], outs[gtf.keras]
    assert got_shapes == want_shapes
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_associative_scan_on_a_keras_tensor_keeps_the_input_shape_and_trains():
    inp = gtf.keras.Input((5, 3))
    out = gtf.keras.ops.associative_scan(_sum, gtf.keras.layers.Dense(3)(inp), axis=1)
    assert tuple(out.shape) == (None, 5, 3)
    model = gtf.keras.Model(inp, out)
    np.testing.assert_allclose(
        np.asarray(model(X_SEQ)), np.cumsum(np.asarray(model.layers[1](X_SEQ)), axis=1), rtol=1e-5, atol=1e-5
    )
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(X_SEQ, np.zeros_like(X_SEQ), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
