"""tf.linalg.diag_part / set_diag / diag with a band of diagonals ``k=(lower, upper)`` and each
``align``: values and gradients against a NumPy oracle written from TensorFlow's documentation,
against real TensorFlow where it is installed (first and second order, the inputs it refuses),
and through a Variable assignment against a pure-JAX rewrite."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from refusals import assert_gradkit_refusal

import gradkit as gk
import gradkit.tf as gtf

ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")
RNG = np.random.default_rng(5)
X = RNG.normal(size=(2, 3, 4)).astype(np.float32)
# (input shape, k): wide, tall, square, a single diagonal given as a pair, a band past the
# shorter side, an empty matrix.
BANDS = [
    ((2, 3, 4), (-1, 2)),
    ((4, 3), (-3, 0)),
    ((3, 3), (-2, 2)),
    ((3, 4), (1, 1)),
    ((2, 4), (-1, 3)),
    ((0, 3), (0, 2)),
]


def _aligned_right(align, d):
    return align.split("_")[0 if d >= 0 else 1] == "RIGHT"


def np_diag_part(x, k, align, padding=0.0):
    lower, upper = k
    rows, cols = x.shape[-2:]
    longest = min(rows + min(upper, 0), cols - max(lower, 0))
    out = np.full(x.shape[:-2] + (upper - lower + 1, longest), padding, x.dtype)
    for slot, d in enumerate(range(upper, lower - 1, -1)):
        diagonal = np.diagonal(x, offset=d, axis1=-2, axis2=-1)
        n = diagonal.shape[-1]
        start = longest - n if _aligned_right(align, d) else 0
        out[..., slot, start : start + n] = diagonal
    return out[..., 0, :] if lower == upper else out


def np_set_diag(x, band, k, align):
    lower, upper = k
    band = band[..., None, :] if lower == upper else band
    out = x.copy()
    for slot, d in enumerate(range(upper, lower - 1, -1)):
        n = np.diagonal(x, offset=d, axis1=-2, axis2=-1).shape[-1]
        start = band.shape[-1] - n if _aligned_right(align, d) else 0
        rows, cols = np.arange(n) + max(-d, 0), np.arange(n) + max(d, 0)
        out[..., rows, cols] = band[..., slot, start : start + n]
    return out


def _band_for(shape, k, align):
    like = np_diag_part(np.zeros(shape, np.float32), k, align)
    return np.cos(np.arange(like.size)).reshape(like.shape).astype(np.float32)


@pytest.mark.parametrize("align", ALIGNS)
@pytest.mark.parametrize("shape, k", BANDS)
def test_values_and_gradients_match_a_numpy_oracle(shape, k, align):
    x = RNG.normal(size=shape).astype(np.float32)
    band = _band_for(shape, k, align)
    np.testing.assert_array_equal(
        gtf.linalg.diag_part(x, k=k, align=align, padding_value=9.0), np_diag_part(x, k, align, 9.0)
    )
    np.testing.assert_array_equal(gtf.linalg.set_diag(x, band, k=k, align=align), np_set_diag(x, band, k, align))
    # Both ops are linear, so the gradient of sum(w * y) is the op's transpose applied to w.
    xv, bv = gtf.Variable(x), gtf.Variable(band)
    w_part, w_set = np.sin(np.arange(band.size)).reshape(band.shape), np.sin(np.arange(x.size)).reshape(shape)
    with gtf.GradientTape(persistent=True) as tape:
        part = gtf.reduce_sum(gtf.linalg.diag_part(xv, k=k, align=align, padding_value=9.0) * w_part)
        written = gtf.reduce_sum(gtf.linalg.set_diag(xv, bv, k=k, align=align) * w_set)
    np.testing.assert_allclose(tape.gradient(part, xv), np_set_diag(np.zeros_like(x), w_part, k, align), atol=1e-6)
    kept = np_set_diag(w_set, np.zeros_like(band), k, align)
    np.testing.assert_allclose(tape.gradient(written, xv), kept, atol=1e-6)
    np.testing.assert_allclose(tape.gradient(written, bv), np_diag_part(w_set, k, align), atol=1e-6)


@pytest.mark.parametrize("align", ALIGNS)
def test_diag_builds_the_matrix_from_a_band(align):
    band = _band_for((3, 4), (-1, 2), align)  # 4 diagonals of length 3
    want = np_set_diag(np.full((3, 4), -1.0, np.float32), band, (-1, 2), align)
    got = gtf.linalg.diag(band, k=(-1, 2), num_cols=4, padding_value=-1.0, align=align)
    np.testing.assert_array_equal(got, want)
    square = np_set_diag(np.zeros((3, 3), np.float32), band, (-1, 2), align)  # the default: square
    np.testing.assert_array_equal(gtf.linalg.diag(band, k=(-1, 2), align=align), square)


def test_the_gradient_of_diag_reaches_only_diagonals_inside_the_matrix():
    # Four diagonals of length 3 make a (3, 3) matrix, which has no diagonal k=3: its slot gets
    # zeros (TensorFlow's own gradient raises here, see
    # test_tensorflow_raises_where_the_gradient_of_diag_exists).
    band = _band_for((3, 4), (0, 3), "LEFT_RIGHT")
    bv = gtf.Variable(band)
    w = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.linalg.diag(bv, k=(0, 3), align="LEFT_RIGHT") * w)
    want = np.zeros_like(band)
    want[1:] = np_diag_part(w, (0, 2), "LEFT_RIGHT")
    np.testing.assert_array_equal(tape.gradient(y, bv), want)


def test_the_gradient_through_an_assigned_variable_is_exact():
    k, align = (-1, 1), "LEFT_LEFT"
    band = _band_for((2, 3, 4), k, align)

    def pure(x):
        v = jnp.tanh(x)
        cells = np_set_diag(np.zeros(X.shape), np.ones(band.shape), k, align).astype(bool)
        updated = jnp.where(cells, 0.0, v) + jnp.asarray(np_set_diag(np.zeros(X.shape, np.float32), band, k, align))
        return jnp.sum(updated**3)

    source, v = gtf.Variable(X), gtf.Variable(np.zeros_like(X))
    with gtf.GradientTape() as tape:
        v.assign(gtf.tanh(source))
        v.assign(gtf.linalg.set_diag(v, band, k=k, align=align))
        loss = gtf.reduce_sum(v**3)
    np.testing.assert_allclose(loss.numpy(), pure(jnp.asarray(X)), rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(loss, source), jax.grad(pure)(jnp.asarray(X)), rtol=1e-5)


REFUSED = {
    "lower_above_upper": (lambda tf: tf.linalg.diag_part(X, k=(2, 1)), ValueError),
    "three_offsets": (lambda tf: tf.linalg.diag_part(X, k=(0, 1, 2)), ValueError),
    "float_offset": (lambda tf: tf.linalg.diag_part(X, k=1.0), TypeError),
    "lower_outside": (lambda tf: tf.linalg.diag_part(X, k=(-3, 1)), ValueError),
    "upper_outside": (lambda tf: tf.linalg.set_diag(X, np.ones((2, 2, 3), np.float32), k=(0, 4)), ValueError),
    "align": (lambda tf: tf.linalg.diag_part(X, k=(0, 1), align="RIGHT"), ValueError),
    "band_count": (lambda tf: tf.linalg.set_diag(X, np.ones((2, 3, 3), np.float32), k=(0, 1)), ValueError),
    "diag_band_count": (lambda tf: tf.linalg.diag(np.ones((3, 3), np.float32), k=(0, 1)), ValueError),
    "diag_vector_for_band": (lambda tf: tf.linalg.diag(np.ones(3, np.float32), k=(0, 1)), ValueError),
    "padding_not_scalar": (lambda tf: tf.linalg.diag_part(X, k=(0, 1), padding_value=[1.0, 2.0]), ValueError),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bad_bands_are_gradkit_errors(name):
    call, error = REFUSED[name]
    assert_gradkit_refusal(lambda: call(gtf), error, r"tf\.linalg\.")


# Real TensorFlow.


def _tf():
    return pytest.importorskip("tensorflow")


def _program(tf, shape, k, align):
    x0 = RNG_TF.normal(size=shape).astype(np.float32)
    band0 = _band_for(shape, k, align)
    xv, bv = tf.Variable(x0), tf.Variable(band0)
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape(persistent=True) as tape:
            part = tf.linalg.diag_part(xv, k=k, align=align, padding_value=-2.0)
            written = tf.linalg.set_diag(xv, bv, k=k, align=align)
            loss = tf.reduce_sum(part**3) + tf.reduce_sum(written**3)
        grads = tape.gradient(loss, [xv, bv])
        norm = tf.reduce_sum(grads[0] ** 2) + tf.reduce_sum(grads[1] ** 2)
    return [part, written, *grads, *outer.gradient(norm, [xv, bv])]


RNG_TF = np.random.default_rng(8)


@pytest.mark.parametrize("align", ALIGNS)
@pytest.mark.parametrize("shape, k", BANDS)
def test_values_and_first_and_second_order_gradients_match_tensorflow(shape, k, align):
    tf = _tf()
    state = RNG_TF.bit_generator.state
    want = _program(tf, shape, k, align)
    RNG_TF.bit_generator.state = state
    got = _program(gtf, shape, k, align)
    if 0 in shape:
        # The second derivatives of an empty matrix are empty either way; gradkit's are None
        # (no entry reads the input), TensorFlow's empty zeros.
        want, got = want[:4], got[:4]
    for w, g in zip(want, got):
        assert (w is None) == (g is None), (w, g)
        if w is None:
            continue
        assert g.shape == tuple(w.shape) and g.dtype == w.dtype.as_numpy_dtype
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("align", ALIGNS)
@pytest.mark.parametrize("num_rows, num_cols", [(-1, -1), (3, -1), (-1, 5), (4, 3)])
def test_diag_matches_tensorflow(align, num_rows, num_cols):
    tf = _tf()
    band = _band_for((3, 4), (-1, 1), align)
    kwargs = dict(k=(-1, 1), num_rows=num_rows, num_cols=num_cols, padding_value=7.0, align=align)
    want = tf.linalg.diag(band, **kwargs)
    np.testing.assert_array_equal(gtf.linalg.diag(band, **kwargs), want.numpy())
    bv, tv = gtf.Variable(band), tf.Variable(band)
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.linalg.diag(bv, **kwargs) ** 2)
    with tf.GradientTape() as tf_tape:
        y_tf = tf.reduce_sum(tf.linalg.diag(tv, **kwargs) ** 2)
    np.testing.assert_allclose(tape.gradient(y, bv), tf_tape.gradient(y_tf, tv).numpy(), rtol=1e-6)


def test_tensorflow_raises_where_the_gradient_of_diag_exists():
    # TensorFlow's gradient of MatrixDiagV3 is diag_part of the upstream with the same k, which
    # refuses a band reaching past the (3, 3) result that diag itself accepted; gradkit gives
    # the gradient (checked against NumPy in test_the_gradient_of_diag_reaches_only_diagonals_inside_the_matrix).
    tf = _tf()
    tv = tf.Variable(_band_for((3, 4), (0, 3), "LEFT_RIGHT"))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.linalg.diag(tv, k=(0, 3), align="LEFT_RIGHT"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="upper_diag_index is out of bound"):
        tape.gradient(y, tv)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bad_bands_are_refused_as_tensorflow_refuses_them(name):
    from refusals import assert_refused_like_tensorflow

    assert_refused_like_tensorflow(REFUSED[name][0], _tf(), gtf, r"tf\.linalg\.")


def test_a_band_inside_tf_function_matches_tensorflow():
    tf = _tf()

    def program(tf):
        xv = tf.Variable(X)

        @tf.function
        def f(band):
            return tf.linalg.set_diag(xv, band, k=(-1, 1), align="RIGHT_RIGHT") * 2.0

        band = tf.constant(_band_for((2, 3, 4), (-1, 1), "RIGHT_RIGHT"))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(f(band) ** 2)
        return [loss, tape.gradient(loss, xv)]

    for w, g in zip(program(tf), program(gtf)):
        np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=1e-5)


def test_gk_error_class_is_a_gradkit_error():
    with pytest.raises(gk.GradkitError):
        gtf.linalg.diag_part(X, k=(1, 0))


INT_MATRIX = np.arange(9, dtype=np.int32).reshape(3, 3)
FLOAT_PADDING = {
    "diag_part": lambda tf: tf.linalg.diag_part(INT_MATRIX, k=(0, 1), padding_value=1.5),
    "diag": lambda tf: tf.linalg.diag(INT_MATRIX[:2], k=(0, 1), padding_value=2.0),
}


@pytest.mark.parametrize("name", sorted(FLOAT_PADDING))
def test_a_python_float_padding_for_an_integer_matrix_is_refused(name):
    # A cast would silently truncate 1.5 to 1.
    assert_gradkit_refusal(lambda: FLOAT_PADDING[name](gtf), TypeError, rf"tf\.linalg\.{name}'s padding_value")


@pytest.mark.parametrize("name", sorted(FLOAT_PADDING))
def test_a_python_float_padding_is_refused_as_tensorflow_refuses_it(name):
    from refusals import assert_refused_like_tensorflow

    assert_refused_like_tensorflow(FLOAT_PADDING[name], pytest.importorskip("tensorflow"), gtf, r"tf\.linalg\.")


def test_an_int_or_numpy_padding_for_an_integer_matrix_is_taken():
    for padding in (2, np.float32(2.0)):
        got = gtf.linalg.diag_part(INT_MATRIX, k=(0, 1), padding_value=padding)
        assert got.dtype == np.int32 and got.numpy().tolist() == [[2, 1, 5], [0, 4, 8]]
