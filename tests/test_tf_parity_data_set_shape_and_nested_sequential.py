"""A ``Dataset.map`` function's ``set_shape`` sets the element spec's static sizes (the
time-series tutorial's ``split_window``), and a Sequential whose first layer is a model with a
declared input (a data-augmentation Sequential) is built at once, as in Keras 3. Oracles: the
sizes set_shape declares, the tensors the pipeline yields, and TensorFlow where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

_DATA = np.arange(60, dtype=np.float32).reshape(20, 3)


def _windows(tf):
    ds = tf.data.Dataset.from_tensor_slices(_DATA).window(7, shift=1, drop_remainder=True)
    ds = ds.flat_map(lambda w: w.batch(7)).batch(4)

    def split(x):
        inputs, labels = x[:, :6, :], x[:, 6:, 1]
        inputs.set_shape([None, 6, None])
        labels.set_shape([None, 1])
        return inputs, labels

    mapped = ds.map(split)
    first = next(iter(mapped))
    return [tuple(s.shape) for s in mapped.element_spec], [np.asarray(t) for t in first]


def test_set_shape_in_a_map_sets_the_element_spec():
    specs, (inputs, labels) = _windows(gtf)
    assert specs == [(None, 6, 3), (None, 1)]  # the declared sizes; the batch unknown, the features traced
    np.testing.assert_array_equal(inputs, np.stack([_DATA[i : i + 6] for i in range(4)]))
    np.testing.assert_array_equal(labels, np.stack([_DATA[i + 6 : i + 7, 1] for i in range(4)]))


def test_set_shape_specs_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    ours, theirs = _windows(gtf), _windows(tf)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_array_equal(a, b)


def test_a_wrong_set_shape_still_raises_on_the_data():
    ds = gtf.data.Dataset.from_tensor_slices(_DATA).batch(4)

    def wrong(x):
        x.set_shape([None, 5])
        return x

    with pytest.raises(ValueError, match=r"\[gradkit\] set_shape\(\[None, 5\]\) does not fit"):
        next(iter(ds.map(wrong)))


def _nested(K):
    augment = K.Sequential([K.Input((8, 8, 3)), K.layers.RandomFlip("horizontal")])
    model = K.Sequential([augment, K.layers.Flatten(), K.layers.Dense(2)])
    return model.built, [w.shape for w in model.get_weights()], model.output_shape


def test_a_sequential_after_an_augmentation_model_is_built_at_once():
    assert _nested(gtf.keras) == (True, [(192, 2), (2,)], (None, 2))


def test_nested_sequential_matches_keras():
    keras = pytest.importorskip("keras")
    assert _nested(gtf.keras) == _nested(keras)
