"""Array-op edges against TensorFlow's kernels (their rules by hand in NumPy) and TensorFlow itself
where installed.

- ``tf.range`` of floats: the arguments in float32, the length ``ceil(|(limit - start) / delta|)``
  computed in float32 and the values ``start + i * delta`` (in float64, 0.3 / 0.1 is
  2.9999999999999996 and the length would be off by one).
- ``tf.squeeze(x, [])`` squeezes every size-1 axis (TensorFlow's default ``axis=[]``);
  ``tf.expand_dims`` takes an axis given as a list, tuple or tensor of one element.
- ``unsorted_segment_max``/``_min`` start each segment at the dtype's lowest/highest value: a segment
  of -inf entries only is float32's lowest, and they get no gradient.
- An op that TensorFlow gives no gradient (``one_hot``'s on_value, ``random.shuffle``, ``truncatediv``,
  ``bincount`` weights) gives None inside a ``tf.function`` too, as it does eagerly.
"""

import numpy as np
import pytest

import gradkit.tf as gtf


def _kernel_range(start, limit, delta):
    start, limit, delta = np.float32(start), np.float32(limit), np.float32(delta)
    size = int(np.ceil(np.abs((limit - start) / delta)))
    return start + np.arange(size, dtype=np.float32) * delta


GRID = [
    (float(s), float(s + span), d)
    for s in np.round(np.arange(0.0, 2.0, 0.1), 1)
    for span in np.round(np.arange(0.1, 2.0, 0.1), 1)
    for d in (0.1, 0.2, 0.3, 0.05, 0.25)
]


def test_float_ranges_have_the_kernels_length_and_values():
    wrong = [args for args in GRID if not np.array_equal(np.asarray(gtf.range(*args)), _kernel_range(*args))]
    assert not wrong, wrong[:5]
    assert np.asarray(gtf.range(1.0, 2.2, 0.2)).shape == (6,)
    assert np.asarray(gtf.range(0.1, 0.3, 0.1)).shape == (3,)
    tensors = gtf.range(gtf.constant(0.0), gtf.constant(0.3), gtf.constant(0.1))
    np.testing.assert_array_equal(np.asarray(tensors), _kernel_range(0.0, 0.3, 0.1))
    np.testing.assert_array_equal(
        np.asarray(gtf.function(lambda: gtf.range(1.0, 2.2, 0.2))()), _kernel_range(1, 2.2, 0.2)
    )
    tf = pytest.importorskip("tensorflow")
    for args in GRID[::7]:
        np.testing.assert_array_equal(np.asarray(gtf.range(*args)), tf.range(*args).numpy())


def test_squeeze_of_no_named_axis_squeezes_every_unit_axis():
    x = np.zeros([3, 1, 4, 1], np.float32)
    for axis in ([], (), None, gtf.constant([], gtf.int32)):
        assert gtf.squeeze(x, axis).shape == (3, 4)
    assert gtf.squeeze(x, [1]).shape == (3, 4, 1)


def test_expand_dims_takes_one_axis_in_a_list_or_tensor():
    x = np.zeros([3, 4], np.float32)
    for axis in ([1], (1,), np.array([1]), gtf.constant([1]), 1):
        assert gtf.expand_dims(x, axis).shape == (3, 1, 4)
    assert gtf.expand_dims(x, [-1]).shape == (3, 4, 1)
    with pytest.raises(ValueError, match=r"\[gradkit\].*one integer axis"):
        gtf.expand_dims(x, [1, 2])


def _extremes(tf):
    x = tf.Variable(np.array([np.inf, 1.0, -np.inf, 2.0, -np.inf, -np.inf], np.float32))
    ids = [0, 0, 1, 2, 3, 3]
    with tf.GradientTape(persistent=True) as tape:
        top = tf.math.unsorted_segment_max(x, ids, 5)
        bottom = tf.math.unsorted_segment_min(-x, ids, 5)
    return [np.asarray(v) for v in (top, tape.gradient(top, x), bottom, tape.gradient(bottom, x))]


def test_unsorted_segment_extremes_start_at_the_dtypes_bounds():
    top, top_grad, bottom, bottom_grad = _extremes(gtf)
    lowest, highest = np.finfo(np.float32).min, np.finfo(np.float32).max
    np.testing.assert_array_equal(top, [np.inf, lowest, 2.0, lowest, lowest])
    np.testing.assert_array_equal(top_grad, [1, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(bottom, [-np.inf, highest, -2.0, highest, highest])
    np.testing.assert_array_equal(bottom_grad, [-1, 0, 0, -1, 0, 0])
    tf = pytest.importorskip("tensorflow")
    for got, want in zip(_extremes(gtf), _extremes(tf)):
        np.testing.assert_array_equal(got, want)


CUT = {
    "one_hot": lambda tf, x: tf.reduce_sum(tf.one_hot([0, 2], 3, on_value=x[0])),
    "shuffle": lambda tf, x: tf.reduce_sum(tf.random.shuffle(x)),
    "truncatediv": lambda tf, x: tf.reduce_sum(tf.truncatediv(x, 2.0)),
    "zero_fraction": lambda tf, x: tf.math.zero_fraction(x),
}


@pytest.mark.parametrize("name", sorted(CUT))
@pytest.mark.parametrize("compiled", [False, True])
def test_ops_without_a_gradient_give_none_inside_tf_function_too(name, compiled):
    x = gtf.constant([1.0, 2.0, 3.0])
    fn = CUT[name]
    program = gtf.function(lambda x: fn(gtf, x)) if compiled else (lambda x: fn(gtf, x))
    with gtf.GradientTape() as tape:
        tape.watch(x)
        y = program(x)
    assert tape.gradient(y, x) is None
