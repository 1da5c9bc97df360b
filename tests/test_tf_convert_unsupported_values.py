"""Values no tensor can hold (None, often a gradient a tape gave for an unconnected source; ragged
rows; an object) raise TensorFlow's ValueError, with gradkit's prefix and what to do instead.
Oracle: TensorFlow's documented errors, and TensorFlow itself where installed."""

import pytest

import gradkit.tf as gtf

CASES = [
    (lambda tf: tf.reduce_mean([None, None]), "Attempt to convert a value"),
    (lambda tf: tf.reduce_sum(None), "Attempt to convert a value"),
    (lambda tf: tf.constant([[1.0], [1.0, 2.0]]), "non-rectangular"),
    (lambda tf: tf.convert_to_tensor(object()), "Attempt to convert a value"),
]


@pytest.mark.parametrize("case, words", CASES)
def test_unsupported_values_raise_value_error(case, words):
    with pytest.raises(ValueError, match=r"^\[gradkit\] ") as info:
        case(gtf)
    assert words in str(info.value)


def test_the_none_error_says_where_none_comes_from():
    x = gtf.Variable(1.0)
    with gtf.GradientTape() as tape:
        y = gtf.constant(2.0) * 3.0
    with pytest.raises(ValueError, match="UnconnectedGradients.ZERO"):
        gtf.reduce_mean([tape.gradient(y, x)])


@pytest.mark.parametrize("case, words", CASES)
def test_tensorflow_raises_value_error_too(case, words):
    rtf = pytest.importorskip("tensorflow")
    with pytest.raises(ValueError, match=words):
        case(rtf)
