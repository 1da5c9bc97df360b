"""More of Keras 3's ``keras.ops`` on gradkit.tf: elementwise math (``cbrt``, ``hypot``, ``gcd``, ...),
the shrink/sparse activations, array ops (``rot90``, ``diff``, ``meshgrid``, ``bincount``, ``median``,
...) and linear algebra (``slogdet``, ``pinv``, ``lstsq``, ...).

Each op is checked against NumPy (or a hand value), which needs no TensorFlow, and against real
Keras on TensorFlow (values, dtype names and shapes, float32 and int32 inputs where Keras takes
them); a few against TensorFlow's or JAX's gradients, and on the functional API's KerasTensors.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from keras_ops_results import assert_same, case_ids, plain

import gradkit.tf as gtf

_RNG = np.random.default_rng(7)
F = _RNG.normal(size=(3, 4)).astype(np.float32)
F[0, 0], F[1, 1] = 0.0, -0.0
P = _RNG.uniform(0.5, 2.0, size=(3, 4)).astype(np.float32)
I = _RNG.integers(-6, 7, size=(3, 4)).astype(np.int32)  # noqa: E741
N = np.abs(I) + 1  # positive int32
V = _RNG.normal(size=(4,)).astype(np.float32)
F3 = _RNG.normal(size=(2, 3, 4)).astype(np.float32)
SPECIAL = np.array([np.inf, -np.inf, np.nan, 1.0, -0.0, 0.0], np.float32)
SQ = (_RNG.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.float32)
SPD = (SQ @ SQ.T).astype(np.float32)
CHOL = np.linalg.cholesky(SPD).astype(np.float32)
TALL = _RNG.normal(size=(5, 3)).astype(np.float32)
RHS = _RNG.normal(size=(5,)).astype(np.float32)
RANK2 = (TALL[:, :2] @ _RNG.normal(size=(2, 4))).astype(np.float32)
SEQ = np.array([0.0, 1.0, 1.0, 2.5, 4.0], np.float32)
COUNTS = np.array([0, 3, 1, 3, 3], np.int32)

ELEMENTWISE = "cbrt deg2rad rad2deg fabs signbit sinc isposinf isneginf isreal copy empty_like"
BINARY = "fmod hypot heaviside logaddexp2 isclose allclose fmax fmin"
ACTIVATIONS = "glu hard_shrink hard_tanh soft_shrink tanh_shrink squareplus sparse_plus sparse_sigmoid"

# (name, args, kwargs): the same call on gtf.keras.ops and keras.ops.
CASES = (
    [(n, (x,), {}) for x in (F, I, SPECIAL) for n in ELEMENTWISE.split()]
    + [(n, (F, P), {}) for n in BINARY.split()]
    + [(n, (I, N), {}) for n in BINARY.split()]
    + [
        ("empty_like", (F,), dict(dtype="int32")),
        ("fmod", (-F, P[0]), {}),
        ("fmax", (SPECIAL, SPECIAL[::-1]), {}),
        ("fmin", (SPECIAL, SPECIAL[::-1]), {}),
        ("fmax", (I, 2.5), {}),
        ("isclose", (F, F + 1e-6), {}),
        ("isclose", (SPECIAL, SPECIAL), dict(equal_nan=True)),
        ("allclose", (F, F + 1e-6), {}),
        ("allclose", (SPECIAL, SPECIAL), dict(equal_nan=True)),
        ("heaviside", (F, 0.5), {}),
        ("gcd", (I, N), {}),
        ("gcd", (I, 4), {}),
        ("lcm", (I, N), {}),
        ("lcm", (I[0], np.int32(6)), {}),
        ("erfc", (F,), {}),
    ]
    + [(n, (F,), {}) for n in ACTIVATIONS.split()]
    + [
        ("glu", (F,), dict(axis=0 if F.shape[0] % 2 == 0 else -1)),
        ("hard_shrink", (F,), dict(threshold=0.2)),
        ("soft_shrink", (F,), dict(threshold=1.0)),
        ("squareplus", (F,), dict(b=1)),
        ("threshold", (F, 0.1, -9.0), {}),
        ("threshold", (I, 1, 0), {}),
    ]
    + [
        ("fliplr", (F,), {}),
        ("flipud", (I,), {}),
        ("rot90", (F,), {}),
        ("rot90", (F3,), dict(k=3, axes=(1, 2))),
        ("rot90", (I[:, :3],), dict(k=2)),  # a square plane: Keras scrambles others for k=2
        ("rot90", (I,), dict(k=-1)),
        ("diff", (F,), {}),
        ("diff", (I,), dict(n=2, axis=0)),
        ("diff", (I > 0,), {}),
        ("append", (F, I), {}),
        ("append", (F, F), dict(axis=0)),
        ("dstack", ([F, I],), {}),
        ("dstack", ([V, V],), {}),
        ("hsplit", (F, 2), {}),
        ("vsplit", (F, [1]), {}),
        ("dsplit", (F3, 2), {}),
        ("array_split", (F, 3), dict(axis=1)),
        ("array_split", (I, 2), {}),
        ("meshgrid", (V[:3], V), {}),
        ("meshgrid", (V[:2], V[:3], V), dict(indexing="ij")),
        ("meshgrid", (I[0], I[1, :3]), {}),
        ("diagflat", (F[:2, :2],), {}),
        ("diagflat", (I[0],), dict(k=-1)),
        ("vander", (V,), {}),
        ("vander", (I[0],), dict(N=3, increasing=True)),
        ("select", ([F > 0.5, F < -0.5], [F, -F]), {}),
        ("select", ([I > 0, I < -2], [I, I * 2]), dict(default=7)),
        ("isin", (I, np.array([0, 2, -3], np.int32)), {}),
        ("isin", (F, F[1]), dict(invert=True)),
        ("unravel_index", (np.array([0, 5, 11], np.int32), (3, 4)), {}),
        ("digitize", (F, [-1.0, 0.0, 1.0]), {}),
        ("digitize", (I, [-2, 0, 3]), {}),
        ("searchsorted", (SEQ, F[0]), {}),
        ("searchsorted", (COUNTS, np.array([0, 3, 2], np.int32)), {}),
        ("searchsorted", (SEQ, np.array([1.0, 2.5, 9.0], np.float32)), dict(side="right")),
        ("bincount", (COUNTS,), {}),
        ("bincount", (COUNTS,), dict(weights=SEQ, minlength=6)),
        ("bincount", (COUNTS,), dict(weights=COUNTS)),
        ("median", (F,), {}),
        ("median", (I,), dict(axis=1, keepdims=True)),
        ("percentile", (F, 30.0), {}),
        ("percentile", (F, np.array([10.0, 90.0], np.float32)), dict(axis=0)),
        ("ptp", (F,), {}),
        ("ptp", (I,), dict(axis=0, keepdims=True)),
        ("trapezoid", (F,), {}),
        ("trapezoid", (I,), dict(dx=0.5, axis=0)),
        ("trapezoid", (F,), dict(x=np.cumsum(P, axis=-1))),
    ]
    + [
        ("slogdet", (SQ,), {}),
        ("slogdet", (-SQ,), {}),
        ("logdet", (SPD,), {}),
        ("pinv", (TALL,), {}),
        ("pinv", (RANK2,), dict(rcond=1e-4)),
        ("lstsq", (TALL, RHS), {}),
        ("lstsq", (TALL, TALL[:, :2]), dict(rcond=1e-3)),
        ("matrix_rank", (RANK2,), {}),
        ("matrix_rank", (SQ,), {}),
        ("cholesky_inverse", (CHOL,), {}),
        ("cholesky_inverse", (CHOL.T,), dict(upper=True)),
    ]
)

ADDED = sorted({name for name, _, _ in CASES} | {"isin"})


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_op_matches_keras(case):
    keras = pytest.importorskip("keras")
    name, args, kwargs = case
    want = plain(getattr(keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
    got = plain(getattr(gtf.keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
    assert_same(got, want, name)


def test_ops_match_keras_inside_tf_function():
    keras = pytest.importorskip("keras")
    cases = [c for c in CASES if c[0] != "bincount"]  # bincount's length is data-dependent: eager only
    results = gtf.function(lambda: [getattr(gtf.keras.ops, n)(*a, **k) for n, a, k in cases])()
    for (name, args, kwargs), got in zip(cases, results):
        want = plain(getattr(keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
        assert_same(plain(got, lambda d: np.dtype(d).name), want, name)


# -- independent oracles (no TensorFlow) ------------------------------------------------------


def _np(x):
    return np.asarray(x)


@pytest.mark.parametrize(
    "name,args,want",
    [
        ("cbrt", (F,), np.cbrt(F)),
        ("deg2rad", (F,), np.deg2rad(F)),
        ("rad2deg", (F,), np.rad2deg(F)),
        ("fabs", (I,), np.fabs(I).astype(np.float32)),
        ("signbit", (SPECIAL,), np.signbit(SPECIAL)),
        ("signbit", (I,), np.signbit(I)),
        ("sinc", (F,), np.sinc(F)),
        ("isposinf", (SPECIAL,), np.isposinf(SPECIAL)),
        ("isneginf", (SPECIAL,), np.isneginf(SPECIAL)),
        ("isreal", (F,), np.isreal(F)),
        ("copy", (F,), F.copy()),
        ("empty_like", (I,), np.zeros_like(I)),
        ("fmod", (F, P), np.fmod(F, P)),
        ("fmod", (I, N), np.fmod(I, N)),
        ("hypot", (F, P), np.hypot(F, P)),
        ("heaviside", (F, P), np.heaviside(F, P)),
        ("logaddexp2", (F, P), np.logaddexp2(F, P)),
        ("isclose", (F, F + 1e-6), np.isclose(F, F + 1e-6)),
        ("isclose", (SPECIAL[2:], SPECIAL[2:]), np.isclose(SPECIAL[2:], SPECIAL[2:])),  # Keras: inf not close to inf
        ("allclose", (SPECIAL, SPECIAL), np.allclose(SPECIAL, SPECIAL, equal_nan=False)),
        ("allclose", (SPECIAL, SPECIAL, 1e-5, 1e-8, True), np.allclose(SPECIAL, SPECIAL, equal_nan=True)),
        ("gcd", (I, N), np.gcd(I, N)),
        ("lcm", (I, N), np.lcm(I, N)),
        ("fmax", (SPECIAL, SPECIAL[::-1]), np.fmax(SPECIAL, SPECIAL[::-1])),
        ("fmin", (SPECIAL, SPECIAL[::-1]), np.fmin(SPECIAL, SPECIAL[::-1])),
        ("erfc", (np.array([0.0, 1.0, -1.0], np.float32),), np.array([1.0, 0.15729921, 1.84270079])),
        ("fliplr", (F,), np.fliplr(F)),
        ("flipud", (F,), np.flipud(F)),
        ("rot90", (F3, 3, (1, 2)), np.rot90(F3, 3, (1, 2))),
        ("diff", (I, 2, 0), np.diff(I, 2, 0)),
        ("diff", (I > 0,), np.diff(I > 0)),
        ("append", (F, I), np.append(F, I).astype(np.float32)),
        ("dstack", ([F, F],), np.dstack([F, F])),
        ("hsplit", (F, 2), tuple(np.hsplit(F, 2))),
        ("vsplit", (F, [1]), tuple(np.vsplit(F, [1]))),
        ("dsplit", (F3, [1, 3]), tuple(np.dsplit(F3, [1, 3]))),
        ("array_split", (F, 3, 1), tuple(np.array_split(F, 3, 1))),
        ("meshgrid", (V[:3], V), tuple(np.meshgrid(V[:3], V))),
        ("meshgrid", (V[:2], V[:3], V), None),
        ("diagflat", (F[:2, :2], 1), np.diagflat(F[:2, :2], 1)),
        ("vander", (V, 3, True), np.vander(V, 3, True)),
        ("select", ([I > 0, I < -2], [I, I * 2], 7), np.select([I > 0, I < -2], [I, I * 2], 7)),
        ("isin", (I, np.array([0, 2, -3])), np.isin(I, [0, 2, -3])),
        ("unravel_index", (np.array([0, 5, 11], np.int32), (3, 4)), np.unravel_index([0, 5, 11], (3, 4))),
        ("unravel_index", (np.array([[7], [23]], np.int32), (2, 3, 4)), np.unravel_index([[7], [23]], (2, 3, 4))),
        ("digitize", (F, [-1.0, 0.0, 1.0]), np.digitize(F, [-1.0, 0.0, 1.0])),
        ("searchsorted", (SEQ, F), np.searchsorted(SEQ, F)),
        ("searchsorted", (SEQ, SEQ, "right"), np.searchsorted(SEQ, SEQ, "right")),
        ("bincount", (COUNTS, SEQ, 6), np.bincount(COUNTS, SEQ, 6)),
        ("bincount", (np.array([[0, 1, 1], [2, 2, 2]], np.int32),), np.array([[1, 2, 0], [0, 0, 3]])),
        ("median", (F3, (0, 2)), np.median(F3, (0, 2))),
        ("percentile", (F, 30.0, 1), np.percentile(F, 30.0, 1)),
        ("ptp", (I, 0), np.ptp(I, 0)),
        ("trapezoid", (F, None, 0.5, 0), np.trapezoid(F, dx=0.5, axis=0)),
        ("trapezoid", (F, np.cumsum(P, axis=-1)), np.trapezoid(F, np.cumsum(P, axis=-1))),
        ("slogdet", (-SQ,), tuple(np.linalg.slogdet(-SQ))),
        ("logdet", (SPD,), np.linalg.slogdet(SPD)[1]),
        ("pinv", (TALL,), np.linalg.pinv(TALL)),
        ("lstsq", (TALL, RHS), np.linalg.lstsq(TALL, RHS, rcond=None)[0]),
        ("matrix_rank", (RANK2,), np.linalg.matrix_rank(RANK2)),
        ("cholesky_inverse", (CHOL,), np.linalg.inv(SPD)),
        ("cholesky_inverse", (CHOL.T, True), np.linalg.inv(SPD)),
        ("glu", (F,), F[:, :2] / (1 + np.exp(-F[:, 2:]))),
        ("hard_shrink", (F,), np.where(np.abs(F) > 0.5, F, 0)),
        ("hard_tanh", (F,), np.clip(F, -1, 1)),
        ("soft_shrink", (F,), np.sign(F) * np.maximum(np.abs(F) - 0.5, 0)),
        ("tanh_shrink", (F,), F - np.tanh(F)),
        ("threshold", (F, 0.1, -9.0), np.where(F > 0.1, F, -9.0)),
        ("squareplus", (F,), (F + np.sqrt(F * F + 4)) / 2),
        ("sparse_plus", (F,), np.where(F <= -1, 0, np.where(F < 1, (F + 1) ** 2 / 4, F))),
        ("sparse_sigmoid", (F,), np.clip((F + 1) / 2, 0, 1)),
    ],
)
def test_op_matches_numpy(name, args, want):
    if want is None:  # meshgrid with indexing="ij"
        got, want = gtf.keras.ops.meshgrid(*args, indexing="ij"), tuple(np.meshgrid(*args, indexing="ij"))
    else:
        got = getattr(gtf.keras.ops, name)(*args)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_allclose(_np(a), b, rtol=1e-5, atol=1e-5)
        return
    np.testing.assert_allclose(_np(got), want, rtol=1e-5, atol=1e-5)
    assert _np(got).shape == np.shape(want)


def test_hand_values():
    ops = gtf.keras.ops
    assert ops.gcd(12, 18).numpy().item() == 6 and ops.lcm(4, 6).numpy().item() == 12
    assert ops.cbrt(-27.0).numpy().item() == pytest.approx(-3.0)
    assert ops.signbit(-0.0).numpy().item() is True
    assert ops.sinc(0.0).numpy().item() == 1.0
    assert ops.matrix_rank(np.eye(3, dtype=np.float32)).numpy().item() == 3
    assert ops.bincount(np.array([1, 1, 3]), minlength=2).numpy().tolist() == [0, 2, 0, 1]


# -- gradients --------------------------------------------------------------------------------


def _jnp_grad(fn, x):
    return np.asarray(jax.grad(lambda v: jnp.sum(fn(v)))(jnp.asarray(x)))


@pytest.mark.parametrize(
    "name,formula",
    [
        ("cbrt", jnp.cbrt),
        ("hypot_p", lambda x: jnp.hypot(x, jnp.asarray(P))),
        ("sinc", jnp.sinc),
        ("logaddexp2_p", lambda x: jnp.logaddexp2(x, jnp.asarray(P))),
        ("squareplus", lambda x: (x + jnp.sqrt(x * x + 4)) / 2),
        ("tanh_shrink", lambda x: x - jnp.tanh(x)),
        ("glu", lambda x: x[:, :2] * jax.nn.sigmoid(x[:, 2:])),
        ("trapezoid", lambda x: jnp.trapezoid(x, axis=-1)),
        ("ptp", jnp.ptp),
    ],
)
def test_gradient_matches_jax(name, formula):
    ops = gtf.keras.ops
    call = {
        "hypot_p": lambda x: ops.hypot(x, P),
        "logaddexp2_p": lambda x: ops.logaddexp2(x, P),
    }.get(name, getattr(ops, name, None))
    x0 = P - 1.25  # no zeros: cbrt and sinc are smooth there
    w = gtf.Variable(x0)
    with gtf.GradientTape() as tape:
        loss = ops.sum(call(w))
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), _jnp_grad(formula, x0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["pinv", "slogdet", "lstsq", "cholesky_inverse"])
def test_linalg_gradient_matches_tensorflow(name):
    tf_real = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    x0 = {"pinv": TALL, "slogdet": SQ, "lstsq": TALL, "cholesky_inverse": CHOL}[name]

    def loss(ops, x):
        if name == "slogdet":
            return ops.slogdet(x)[1]
        if name == "lstsq":
            return ops.sum(ops.square(ops.lstsq(x, RHS)))
        return ops.sum(ops.square(getattr(ops, name)(x)))

    xt = tf_real.constant(x0)
    with tf_real.GradientTape() as tape:
        tape.watch(xt)
        want_loss = loss(keras.ops, xt)
    want = tape.gradient(want_loss, xt).numpy()
    xg = gtf.Variable(x0)
    with gtf.GradientTape() as tape:
        got_loss = loss(gtf.keras.ops, xg)
    np.testing.assert_allclose(float(got_loss), float(want_loss), rtol=1e-4)
    np.testing.assert_allclose(tape.gradient(got_loss, xg).numpy(), want, rtol=2e-3, atol=2e-4)


# -- KerasTensors, namespaces, errors ---------------------------------------------------------


def test_new_ops_build_a_functional_model_with_keras_shapes():
    keras = pytest.importorskip("keras")
    ops = gtf.keras.ops
    outputs = {}
    for lib, name in ((gtf.keras, "ours"), (keras, "keras")):
        inputs = lib.Input((4, 6))
        outputs[name] = [
            lib.ops.glu(inputs),
            lib.ops.rot90(inputs, axes=(1, 2)),
            lib.ops.diff(inputs, axis=1),
            lib.ops.hypot(inputs, inputs),
            lib.ops.median(inputs, axis=-1),
            lib.ops.fliplr(inputs),
        ]
    assert [tuple(t.shape) for t in outputs["ours"]] == [tuple(t.shape) for t in outputs["keras"]]
    inputs = gtf.keras.Input((4, 6))
    model = gtf.keras.Model(inputs, [ops.glu(inputs), ops.rot90(inputs, axes=(1, 2)), ops.cbrt(inputs)])
    x = _RNG.normal(size=(2, 4, 6)).astype(np.float32)
    glu, rotated, root = model(x)
    np.testing.assert_allclose(glu.numpy(), x[..., :3] / (1 + np.exp(-x[..., 3:])), rtol=1e-5)
    np.testing.assert_allclose(rotated.numpy(), np.rot90(x, axes=(1, 2)))
    np.testing.assert_allclose(root.numpy(), np.cbrt(x), rtol=1e-5)


NUMPY_NAMES = sorted(set(ADDED) - {"erfc", "logdet", "pinv", "lstsq", "matrix_rank", "cholesky_inverse"})
NUMPY_NAMES = sorted(set(NUMPY_NAMES) - set(ACTIVATIONS.split()) - {"threshold"})


def test_new_names_are_in_keras_namespaces():
    keras = pytest.importorskip("keras")
    for name in ADDED:
        assert callable(getattr(gtf.keras.ops, name)), name
        assert hasattr(keras.ops, name), name
    for name in NUMPY_NAMES:
        assert getattr(gtf.keras.ops.numpy, name) is getattr(gtf.keras.ops, name), name
    for name in [*ACTIVATIONS.split(), "threshold"]:
        assert getattr(gtf.keras.ops.nn, name) is getattr(gtf.keras.ops, name), name
    for name in ("pinv", "lstsq", "matrix_rank", "cholesky_inverse"):
        assert getattr(gtf.keras.ops.linalg, name) is getattr(gtf.keras.ops, name), name


@pytest.mark.parametrize(
    "call,kind,text",
    [
        (lambda ops: ops.gcd(F, F), TypeError, "integers"),
        (lambda ops: ops.lcm(I, F), TypeError, "integers"),
        (lambda ops: ops.glu(np.ones((2, 3), np.float32)), ValueError, "divisible by 2"),
        (lambda ops: ops.rot90(V), ValueError, "rank 2"),
        (lambda ops: ops.diff(F, n=-1), ValueError, "n >= 0"),
        (lambda ops: ops.array_split(F, [1, 2]), TypeError, "int"),
        (lambda ops: ops.array_split(F, 0), ValueError, "positive"),
        (lambda ops: ops.vander(F), ValueError, "1-D"),
        (lambda ops: ops.searchsorted(F, V), ValueError, "1-D"),
        (lambda ops: ops.bincount(COUNTS, sparse=True), NotImplementedError, "sparse"),
        (lambda ops: ops.select(F > 0, F), ValueError, "lists"),
        (lambda ops: ops.lstsq(TALL, V), ValueError, "lstsq"),
        (lambda ops: ops.logdet(TALL), ValueError, "square"),
    ],
)
def test_bad_input_raises_a_gradkit_error(call, kind, text):
    with pytest.raises(kind, match=r"\[gradkit\].*" + text):
        call(gtf.keras.ops)


@pytest.mark.parametrize(
    "a, b",
    [
        (np.arange(4, dtype="float32").reshape(2, 2), np.array([[1, 0], [0, 2]], "float32")),
        (np.arange(3, dtype="int32"), np.arange(6, dtype="int32").reshape(2, 3)),
    ],
)
def test_kron_is_numpys(a, b):
    got = gtf.keras.ops.kron(a, b)
    np.testing.assert_array_equal(np.asarray(got), np.kron(a, b))
    assert np.asarray(got).dtype == np.kron(a, b).dtype


def test_kron_matches_keras():
    keras = pytest.importorskip("keras")
    a, b = np.arange(3, dtype="float32"), np.arange(6, dtype="int32").reshape(2, 3)
    theirs = keras.ops.kron(a, b)
    ours = gtf.keras.ops.kron(a, b)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert np.asarray(ours).dtype.name == theirs.dtype.name
