"""``gradkit.tf.data`` against real TensorFlow: the same pipeline text run by both, every element
compared (structure, values, dtypes and shapes; int64/float64 as gradkit's dtype for them), and
the element_spec and cardinality. Shuffle orders are not compared (TensorFlow draws with its own
generator): ``test_tf_data_shuffle.py`` checks shuffles by their properties."""

import collections

import jax
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402
from gradkit._tape.tensor import Tensor  # noqa: E402

_RNG = np.random.default_rng(0)
X = _RNG.normal(size=(10, 3)).astype(np.float32)
Y = np.arange(10, dtype=np.int64)
W = _RNG.uniform(size=(10,))  # float64
Point = collections.namedtuple("Point", "a b")


def _canonical(dtype) -> np.dtype:
    return np.dtype(jax.dtypes.canonicalize_dtype(np.dtype(dtype)))


def _assert_same_element(expected, got, path):
    if isinstance(expected, dict):
        assert type(got) is dict and list(got) == list(expected), (path, got)
        for key in expected:
            _assert_same_element(expected[key], got[key], f"{path}[{key!r}]")
    elif isinstance(expected, tuple):
        assert type(got) is type(expected) and len(got) == len(expected), (path, type(got))
        for i, (e, g) in enumerate(zip(expected, got)):
            _assert_same_element(e, g, f"{path}[{i}]")
    elif isinstance(expected, tf_real.data.Dataset):
        assert isinstance(got, gtf.data.Dataset), (path, got)
        _assert_same_elements(expected, got, path)
    else:
        assert isinstance(got, Tensor), (path, type(got))
        want = expected.numpy()
        assert np.dtype(got.dtype) == _canonical(want.dtype), (path, got.dtype, want.dtype)
        assert tuple(got.shape) == want.shape, (path, got.shape, want.shape)
        np.testing.assert_allclose(got.numpy(), want.astype(got.dtype), rtol=1e-6, err_msg=path)


def _assert_same_elements(expected_ds, got_ds, path="element"):
    expected, got = list(expected_ds), list(got_ds)
    assert len(got) == len(expected), (path, len(got), len(expected))
    for i, (e, g) in enumerate(zip(expected, got)):
        _assert_same_element(e, g, f"{path} {i}")


def _assert_same_spec(expected, got, path="element_spec"):
    if isinstance(expected, dict):
        assert list(got) == list(expected), (path, got)
        for key in expected:
            _assert_same_spec(expected[key], got[key], f"{path}[{key!r}]")
    elif isinstance(expected, tuple):
        assert type(got) is type(expected) and len(got) == len(expected), (path, got)
        for i, (e, g) in enumerate(zip(expected, got)):
            _assert_same_spec(e, g, f"{path}[{i}]")
    elif isinstance(expected, tf_real.data.DatasetSpec):
        assert isinstance(got, gtf.data.DatasetSpec), (path, got)
        _assert_same_spec(expected.element_spec, got.element_spec, path)
    else:
        want = None if expected.shape.rank is None else tuple(expected.shape.as_list())
        assert (None if got.shape is None else tuple(got.shape)) == want, (path, got, expected)
        assert np.dtype(got.dtype) == _canonical(expected.dtype.as_numpy_dtype), (path, got, expected)


def _generator(n):
    def gen():
        for i in range(n):
            yield np.full((i % 3 + 1,), i, np.float32), i

    return gen


# name -> the pipeline, written once for TensorFlow and gradkit.tf (given as `tf`).
PIPELINES = {
    "slices_tuple_batch": lambda tf: tf.data.Dataset.from_tensor_slices((X, Y)).batch(4),
    "slices_batch_drop": lambda tf: tf.data.Dataset.from_tensor_slices((X, W)).batch(3, drop_remainder=True),
    "slices_list_and_float64": lambda tf: tf.data.Dataset.from_tensor_slices(([[1, 2], [3, 4]], [0.5, 1.5])),
    "slices_dict_map": lambda tf: tf.data.Dataset.from_tensor_slices({"y": Y, "x": X}).map(
        lambda d: {"sum": tf.reduce_sum(d["x"]), "y": d["y"] * 2}
    ),
    "slices_namedtuple_map": lambda tf: tf.data.Dataset.from_tensor_slices(Point(X, Y)).map(
        lambda p: (p.a * 2.0, tf.cast(p.b, tf.float32))
    ),
    "from_tensors_nested": lambda tf: tf.data.Dataset.from_tensors((1, {"k": [2.0, 3.0]})).repeat(2),
    "range_forms": lambda tf: tf.data.Dataset.range(2, 20, 3).concatenate(tf.data.Dataset.range(10, 2, -3)),
    "range_output_type": lambda tf: tf.data.Dataset.range(1, 5, 2, output_type=tf.float32).batch(2),
    "range_empty": lambda tf: tf.data.Dataset.range(5, 1),
    "generator_signature": lambda tf: tf.data.Dataset.from_generator(
        _generator(5), output_signature=(tf.TensorSpec((None,), tf.float32), tf.TensorSpec((), tf.int32))
    ),
    "generator_types_shapes": lambda tf: tf.data.Dataset.from_generator(
        _generator(4), output_types=(tf.float64, tf.int64), output_shapes=((None,), ())
    ),
    "generator_types_only": lambda tf: tf.data.Dataset.from_generator(
        lambda: iter([[1, 2], [3, 4]]), output_types=tf.int32
    ).map(lambda v: v + 1),
    "generator_args_dict": lambda tf: tf.data.Dataset.from_generator(
        lambda a, b: ({"v": i * 1.5} for i in range(a, b)),
        args=(2, 5),
        output_signature={"v": tf.TensorSpec((), tf.float32)},
    ),
    "zip_positional_enumerate": lambda tf: tf.data.Dataset.zip(
        tf.data.Dataset.range(7), tf.data.Dataset.from_tensor_slices(X)
    ).enumerate(start=3),
    "zip_nested": lambda tf: tf.data.Dataset.zip(
        (tf.data.Dataset.range(4), {"k": tf.data.Dataset.from_tensor_slices(X).batch(3)})
    ),
    "zip_with_infinite": lambda tf: tf.data.Dataset.zip(
        datasets=(tf.data.Dataset.range(3).repeat(), tf.data.Dataset.range(5).map(lambda v: v * 10))
    ),
    "concatenate_shapes": lambda tf: tf.data.Dataset.from_tensor_slices(np.zeros((2, 3), np.float32)).concatenate(
        tf.data.Dataset.from_tensor_slices(np.ones((2, 4), np.float32))
    ),
    "unbatch": lambda tf: tf.data.Dataset.from_tensor_slices((X, Y)).batch(4).unbatch(),
    "unbatch_known": lambda tf: tf.data.Dataset.from_tensor_slices(X).batch(2, drop_remainder=True).unbatch(),
    "padded_batch_default": lambda tf: tf.data.Dataset.range(1, 6).map(lambda v: tf.fill([v], v)).padded_batch(2),
    "padded_batch_shapes_values": lambda tf: (
        tf.data.Dataset.range(1, 5)
        .map(lambda v: (tf.fill([v, 2], tf.cast(v, tf.float32)), v))
        .padded_batch(3, padded_shapes=([None, 3], []), padding_values=(-1.0, np.int64(7)))
    ),
    "padded_batch_dict_drop": lambda tf: (
        tf.data.Dataset.range(1, 6)
        .map(lambda v: {"a": tf.fill([v], v), "b": v})
        .padded_batch(2, padded_shapes={"a": [5], "b": []}, drop_remainder=True)
    ),
    "rebatch": lambda tf: tf.data.Dataset.range(10).batch(4).rebatch(3),
    "rebatch_list_drop": lambda tf: tf.data.Dataset.range(11).batch(4).rebatch([2, 3], drop_remainder=True),
    "filter_tuple": lambda tf: tf.data.Dataset.from_tensor_slices((X, Y)).filter(lambda x, y: y % 3 != 1),
    "take_skip_repeat": lambda tf: tf.data.Dataset.range(6).skip(2).take(3).repeat(3),
    "take_of_infinite": lambda tf: tf.data.Dataset.range(4).repeat().batch(3).take(5),
    "take_skip_negative": lambda tf: tf.data.Dataset.range(5).take(-1).skip(-1).concatenate(tf.data.Dataset.range(2)),
    "shard": lambda tf: tf.data.Dataset.range(11).shard(3, 1),
    "cache_prefetch": lambda tf: tf.data.Dataset.range(5).map(lambda v: v * v).cache().prefetch(tf.data.AUTOTUNE),
    "flat_map": lambda tf: tf.data.Dataset.range(4).flat_map(lambda v: tf.data.Dataset.range(v)),
    "flat_map_tuple": lambda tf: tf.data.Dataset.zip(tf.data.Dataset.range(3), tf.data.Dataset.range(3)).flat_map(
        lambda a, b: tf.data.Dataset.from_tensor_slices(tf.fill([a + 1], a + b))
    ),
    "interleave_blocks": lambda tf: tf.data.Dataset.range(1, 6).interleave(
        lambda v: tf.data.Dataset.from_tensors(v).repeat(v), cycle_length=2, block_length=3
    ),
    "interleave_uneven": lambda tf: tf.data.Dataset.range(1, 5).interleave(
        lambda v: tf.data.Dataset.range(v), cycle_length=3, block_length=2, num_parallel_calls=tf.data.AUTOTUNE
    ),
    "window_flat_map": lambda tf: tf.data.Dataset.range(7).window(3, shift=2, stride=2).flat_map(lambda w: w.batch(3)),
    "window_drop_tuple": lambda tf: (
        tf.data.Dataset.zip(tf.data.Dataset.range(6), tf.data.Dataset.range(6, 12))
        .window(2, shift=3, drop_remainder=True)
        .flat_map(lambda a, b: tf.data.Dataset.zip(a.batch(2), b.batch(2)))
    ),
    "window_of_datasets": lambda tf: tf.data.Dataset.zip(
        tf.data.Dataset.range(5), tf.data.Dataset.from_tensor_slices(X[:5])
    ).window(2),
    "window_map_reduce": lambda tf: (
        tf.data.Dataset.range(5).window(2).map(lambda w: w.reduce(np.int64(0), lambda total, v: total + v))
    ),
    "map_returns_list_and_python": lambda tf: tf.data.Dataset.range(3).map(lambda v: [v, 2.5]),
    "shuffle_buffer_one": lambda tf: tf.data.Dataset.from_tensor_slices(X).shuffle(1).batch(4),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipeline_matches_tensorflow(name):
    expected, got = PIPELINES[name](tf_real), PIPELINES[name](gtf)
    _assert_same_elements(expected, got)
    _assert_same_elements(expected, got)  # a second pass gives the same elements again
    _assert_same_spec(expected.element_spec, got.element_spec)
    assert int(got.cardinality()) == int(expected.cardinality())


def test_cardinalities_match_tensorflow():
    def cases(tf):
        d = tf.data.Dataset
        endless, unknown = d.range(10).repeat(), d.range(10).filter(lambda v: v > 3)
        return [
            d.range(10).repeat(0),
            d.range(0).repeat(),
            unknown.repeat(),
            unknown.repeat(2),
            endless.take(3),
            endless.skip(3),
            unknown.take(3),
            d.range(10).skip(20),
            endless.batch(3),
            unknown.batch(2),
            d.zip(endless, endless),
            d.zip(unknown, d.range(3)),
            d.range(3).concatenate(endless),
            endless.concatenate(unknown),
            d.range(10).window(3, shift=2, drop_remainder=True),
            d.range(10).window(3, shift=2),
            endless.batch(2).unbatch(),
            d.range(10).shard(3, 0),
            d.range(10).shuffle(3).enumerate(),
        ]

    assert [int(c.cardinality()) for c in cases(gtf)] == [int(c.cardinality()) for c in cases(tf_real)]


def test_len_reduce_and_single_element_match_tensorflow():
    for tf in (tf_real, gtf):
        assert len(tf.data.Dataset.from_tensor_slices(X).batch(3)) == 4
    expected = tf_real.data.Dataset.range(5).reduce((np.int64(0), np.int64(1)), lambda s, v: (s[0] + v, s[1] * (v + 1)))
    got = gtf.data.Dataset.range(5).reduce((np.int64(0), np.int64(1)), lambda s, v: (s[0] + v, s[1] * (v + 1)))
    _assert_same_element(expected, got, "reduce")
    got = gtf.data.Dataset.range(4).reduce({"n": 0.0}, lambda s, v: {"n": s["n"] + gtf.cast(v, gtf.float32)})
    assert float(got["n"]) == 6.0 and isinstance(got["n"], Tensor)
    expected = tf_real.data.Dataset.from_tensors((X[0], 3)).get_single_element()
    _assert_same_element(expected, gtf.data.Dataset.from_tensors((X[0], 3)).get_single_element(), "single")


def test_as_numpy_iterator_gives_numpy_values_as_tensorflow():
    ds = gtf.data.Dataset.from_tensor_slices({"b": [1, 2], "a": [3.0, 4.0]})
    got = list(ds.as_numpy_iterator())
    assert got == [{"b": 1, "a": 3.0}, {"b": 2, "a": 4.0}] and list(got[0]) == ["b", "a"]
    assert isinstance(got[0]["b"], np.int32) and isinstance(got[0]["a"], np.float32)
    batch = next(gtf.data.Dataset.from_tensor_slices(X).batch(4).as_numpy_iterator())
    batch[:] = 0.0  # a copy: the dataset keeps its values
    np.testing.assert_array_equal(next(gtf.data.Dataset.from_tensor_slices(X).batch(4).as_numpy_iterator()), X[:4])


def test_inputs_are_copied_and_iterators_are_tensorflows():
    source = X.copy()
    ds = gtf.data.Dataset.from_tensor_slices(source)
    source[:] = 0.0  # TensorFlow makes the tensors constants: a later write does not reach the dataset
    np.testing.assert_array_equal(np.stack([x.numpy() for x in ds]), X)
    it = iter(gtf.data.Dataset.range(2))
    assert iter(it) is it and int(next(it)) == 0 and int(it.get_next()) == 1
    with pytest.raises(gtf.errors.OutOfRangeError, match=r"\[gradkit\] End of sequence"):
        it.get_next()
    with pytest.raises(StopIteration):
        next(it)
    assert repr(gtf.data.Dataset.range(3).batch(2)) == (
        "<BatchDataset element_spec=TensorSpec(shape=(None,), dtype=tf.int32, name=None)>"
    )


def test_map_runs_eagerly_with_tapes_paused_and_sees_tensors():
    seen = []
    v = gtf.Variable(2.0)

    def scale(x):
        seen.append(type(x))
        return x * v  # a Variable read inside the pipeline

    with gtf.GradientTape() as tape:
        total = sum(float(x) for x in gtf.data.Dataset.from_tensor_slices([1.0, 2.0]).map(scale))
        loss = v * 3.0
    assert total == 6.0 and seen == [Tensor, Tensor]
    assert float(tape.gradient(loss, v)) == 3.0  # the pipeline's ops were not recorded


def test_element_spec_of_an_untraceable_map_is_found_by_running_it():
    def branchy(x):
        if float(x) > 2:  # Python control flow on a value: no tf.function trace
            return gtf.fill([2], x)
        return gtf.fill([2], -x)

    ds = gtf.data.Dataset.from_tensor_slices([1.0, 3.0]).map(branchy)
    assert [x.numpy().tolist() for x in ds] == [[-1.0, -1.0], [3.0, 3.0]]
    spec = ds.element_spec
    assert tuple(spec.shape) == (None,) and spec.dtype == np.float32


def test_options_are_kept_and_merged():
    for tf in (tf_real, gtf):
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
        options.deterministic = False
        ds = tf.data.Dataset.range(3).with_options(options).map(lambda v: v)
        got = ds.options()
        assert got.deterministic is False
        assert int(got.experimental_distribute.auto_shard_policy) == 2
        assert got.threading.private_threadpool_size is None
    assert gtf.data.experimental.cardinality(gtf.data.Dataset.range(4)).numpy() == 4
    assert (gtf.data.AUTOTUNE, gtf.data.experimental.AUTOTUNE) == (tf_real.data.AUTOTUNE, -1)
    assert (gtf.data.INFINITE_CARDINALITY, gtf.data.UNKNOWN_CARDINALITY) == (-1, -2)
    assert int(gtf.data.Dataset.range(4).apply(lambda d: d.skip(1)).cardinality()) == 3


def test_large_slices_batch_without_copying_each_element():
    big = np.arange(200_000, dtype=np.float32).reshape(50_000, 4)
    batches = list(gtf.data.Dataset.from_tensor_slices((big, big[:, 0])).batch(1000).as_numpy_iterator())
    assert len(batches) == 50 and batches[-1][0].shape == (1000, 4)
    np.testing.assert_array_equal(batches[7][1], big[7000:8000, 0])


def test_a_dataset_iterated_inside_tf_function_matches_tensorflow():
    def program(tf):
        ds = tf.data.Dataset.from_tensor_slices(X).map(lambda x: x * 2.0).batch(4)

        @tf.function
        def total():
            s = tf.zeros([3])
            for batch in ds:  # gradkit.tf reads the pipeline while tracing (no autograph loop)
                s = s + tf.reduce_sum(batch, axis=0)
            return s

        return total().numpy()

    np.testing.assert_allclose(program(gtf), program(tf_real), rtol=1e-6)
