"""Inside ``tf.function``: sizes computed from ``tf.shape`` by vector arithmetic stay static
(``tf.image.resize(x, tf.shape(x)[1:3] * 2)``, the usual 2x upsampling), and arguments that do
not decide a shape may be traced tensors (``band_part``'s bounds, ``roll``'s shift). Oracles:
NumPy (np.roll, a band built by hand), the shapes by hand, and TensorFlow."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.arange(2 * 6 * 5 * 3, dtype=np.float32).reshape(2, 6, 5, 3)
M = np.arange(12, dtype=np.float32).reshape(3, 4)

SHAPES = {
    "resize_times_two": (lambda tf, x: tf.image.resize(x, tf.shape(x)[1:3] * 2), (2, 12, 10, 3)),
    "resize_plus_one": (lambda tf, x: tf.image.resize(x, tf.shape(x)[1:3] + 1), (2, 7, 6, 3)),
    "zeros_of_twice_the_shape": (lambda tf, x: tf.zeros(tf.shape(x) * 2), (4, 12, 10, 6)),
}


@pytest.mark.parametrize("name", ["resize_times_two", "resize_plus_one", "zeros_of_twice_the_shape"])
def test_shape_vector_arithmetic_gives_static_sizes(name):
    program, shape = SHAPES[name]
    assert tuple(gtf.function(lambda x: program(gtf, x))(X).shape) == shape


def test_band_part_with_traced_bounds():
    band = gtf.function(lambda a, lower, upper: gtf.linalg.band_part(a, lower, upper))
    i, j = np.indices(M.shape)
    for lower, upper in [(1, 0), (0, 2), (-1, 0), (0, -1)]:
        keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
        np.testing.assert_array_equal(band(M, gtf.constant(lower), gtf.constant(upper)).numpy(), np.where(keep, M, 0))


def test_roll_with_a_traced_shift_and_its_gradient():
    roll = gtf.function(lambda a, s: gtf.roll(a, s, axis=1))
    for shift in (1, 3, -2):
        np.testing.assert_array_equal(roll(M, gtf.constant(shift)).numpy(), np.roll(M, shift, axis=1))
    both = gtf.function(lambda a, s: gtf.roll(a, s, axis=[0, 1]))
    np.testing.assert_array_equal(both(M, gtf.constant([1, 2])).numpy(), np.roll(M, (1, 2), axis=(0, 1)))
    weights = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    v = gtf.constant(M)
    with gtf.GradientTape() as tape:
        tape.watch(v)
        loss = gtf.reduce_sum(roll(v, gtf.constant(1)) * weights)
    np.testing.assert_array_equal(tape.gradient(loss, v).numpy(), np.roll(weights, -1, axis=1))  # roll's adjoint


def test_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for name in ("resize_times_two", "resize_plus_one"):
        program, _ = SHAPES[name]
        np.testing.assert_allclose(
            gtf.function(lambda x, p=program: p(gtf, x))(X).numpy(),
            tf.function(lambda x, p=program: p(tf, x))(X).numpy(),
            rtol=1e-5,
        )
    bands = [lib.function(lambda a, k, lib=lib: lib.linalg.band_part(a, k, 0)) for lib in (tf, gtf)]
    np.testing.assert_array_equal(bands[1](M, gtf.constant(1)).numpy(), bands[0](M, tf.constant(1)).numpy())


def test_sizes_computed_from_python_values_stay_known_in_tf_function():
    # Seed 001's Newton step inside tf.function: n = reduce_prod(kernel.shape) is 15, a static size.
    kernel = gtf.Variable(gtf.ones([3, 5]))

    @gtf.function
    def shapes():
        n = gtf.reduce_prod(kernel.shape)
        return gtf.reshape(kernel, [n, 1]), gtf.eye(n), gtf.zeros([gtf.math.multiply(3, 5)])

    column, eye, zeros = shapes()
    assert (tuple(column.shape), tuple(eye.shape), tuple(zeros.shape)) == ((15, 1), (15, 15), (15,))
