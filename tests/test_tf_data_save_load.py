"""``dataset.save(path)`` / ``tf.data.Dataset.load(path)`` (and ``tf.data.experimental.save/load``):
the same pipelines saved and loaded on gradkit and, where it is installed, on TensorFlow, with
their elements, element_spec and cardinality compared (64-bit dtypes as gradkit's 32-bit ones)."""

import collections

import jax
import numpy as np
import pytest

import gradkit.tf as gtf

P = collections.namedtuple("P", "u v")
_NARROW = {"int64": "int32", "float64": "float32"}


def _pipelines(tf):
    return {
        "range": lambda: tf.data.Dataset.range(5),
        "dict": lambda: tf.data.Dataset.from_tensor_slices(
            {"b": np.arange(6.0).reshape(3, 2).astype("float32"), "a": [1, 2, 3]}
        ),
        "tuple_batch": lambda: tf.data.Dataset.from_tensor_slices((np.arange(7), np.arange(7) * 1.5)).batch(3),
        "padded": lambda: tf.data.Dataset.range(1, 5).map(lambda x: tf.range(x)).padded_batch(2),
        "filter_empty": lambda: tf.data.Dataset.range(5).filter(lambda x: x > 10),
        "namedtuple": lambda: tf.data.Dataset.from_tensor_slices(P(np.arange(3), np.ones(3))),
    }


def _described(tf, dataset):
    def spec(s):
        dtype = np.dtype(getattr(s.dtype, "as_numpy_dtype", s.dtype)).name
        return (tuple(s.shape), _NARROW.get(dtype, dtype))

    def value(t):
        return t.numpy().tolist()

    is_spec = lambda x: isinstance(x, tf.TensorSpec)  # noqa: E731
    specs = jax.tree_util.tree_map(spec, dataset.element_spec, is_leaf=is_spec)
    elements = [tf.nest.map_structure(value, e) for e in dataset]
    return type(dataset.element_spec).__name__, specs, int(dataset.cardinality()), elements


def _round_trip(tf, name, path):
    compression = "GZIP" if name == "dict" else None
    _pipelines(tf)[name]().save(str(path), compression=compression)
    return _described(tf, tf.data.Dataset.load(str(path), compression=compression))


@pytest.mark.parametrize("name", sorted(_pipelines(gtf)))
def test_save_then_load_gives_the_elements_spec_and_cardinality(tmp_path, name):
    got = _round_trip(gtf, name, tmp_path / "gk")
    kind, specs, _, elements = _described(gtf, _pipelines(gtf)[name]())
    assert got == (kind, specs, len(elements), elements)  # the saved elements, counted
    try:
        import tensorflow as tf
    except ImportError:
        return
    assert got == _round_trip(tf, name, tmp_path / "tf")


def test_experimental_save_and_load_with_the_element_spec(tmp_path):
    gtf.data.experimental.save(gtf.data.Dataset.range(3), str(tmp_path))
    loaded = gtf.data.experimental.load(str(tmp_path), element_spec=gtf.TensorSpec([], gtf.int64))
    assert [int(x) for x in loaded] == [0, 1, 2]
    with pytest.raises(ValueError, match="was saved with"):
        gtf.data.Dataset.load(str(tmp_path), element_spec=gtf.TensorSpec([2], gtf.float32))


def test_what_save_and_load_refuse(tmp_path):
    with pytest.raises(gtf.errors.NotFoundError, match="no dataset saved"):
        gtf.data.Dataset.load(str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="infinite dataset"):
        gtf.data.Dataset.range(2).repeat().save(str(tmp_path / "a"))
    with pytest.raises(NotImplementedError, match="shard_func"):
        gtf.data.Dataset.range(2).save(str(tmp_path / "b"), shard_func=lambda x: x % 2)
    with pytest.raises(TypeError, match="holding datasets"):
        gtf.data.Dataset.range(4).window(2).save(str(tmp_path / "c"))
    assert not any((tmp_path / d).exists() for d in "abc")  # a refused save writes nothing
