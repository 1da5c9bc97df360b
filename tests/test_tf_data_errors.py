"""Bad input to ``gradkit.tf.data`` is refused with a ``[gradkit]`` message of the Python type
TensorFlow raises (its InvalidArgumentError where TensorFlow's kernels refuse it): each case
below raises that type in real TensorFlow too, checked where TensorFlow is installed."""

import builtins

import numpy as np
import pytest

import gradkit.tf as gtf

try:
    import tensorflow as tf_real
except ImportError:  # the gradkit side still runs
    tf_real = None


def _gen(values):
    return lambda: iter(values)


def _spec(tf, shape, dtype="float32"):
    return tf.TensorSpec(shape, getattr(tf, dtype))


# name -> (the program (tf -> anything; run to its end), the error class name, a pattern of gradkit's message)
CASES = {
    "batch_size_zero": (
        lambda tf: list(tf.data.Dataset.range(3).batch(0)),
        "InvalidArgumentError",
        "greater than zero",
    ),
    "batch_size_float": (lambda tf: tf.data.Dataset.range(3).batch(1.5), "TypeError", "must be an integer"),
    "shuffle_buffer_zero": (
        lambda tf: list(tf.data.Dataset.range(3).shuffle(0)),
        "InvalidArgumentError",
        "buffer_size",
    ),
    "slices_mismatch": (
        lambda tf: tf.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(4))),
        "ValueError",
        "Dimensions 3 and 4",
    ),
    "slices_scalar": (lambda tf: tf.data.Dataset.from_tensor_slices(1.0), "ValueError", "rank >= 1"),
    "slices_ragged": (lambda tf: tf.data.Dataset.from_tensor_slices([[1, 2], [3]]), "ValueError", "rectangular"),
    "slices_empty": (lambda tf: tf.data.Dataset.from_tensor_slices(()), "ValueError", "empty"),
    "unbatch_scalar": (lambda tf: tf.data.Dataset.range(3).unbatch(), "ValueError", "scalar components"),
    "padded_batch_to_a_smaller_size": (
        lambda tf: list(tf.data.Dataset.range(1, 6).map(lambda x: tf.fill([x], x)).padded_batch(2, padded_shapes=[4])),
        "DataLossError",
        "pad to a smaller size than the input element",
    ),
    "unbatch_known_sizes_differ": (
        lambda tf: tf.data.Dataset.from_tensors((np.zeros((2,), np.float32), np.ones((3,), np.float32))).unbatch(),
        "ValueError",
        "matching leading dimension. Encountered both 2 and 3",
    ),
    "concatenate_dtypes": (
        lambda tf: tf.data.Dataset.range(3).concatenate(tf.data.Dataset.from_tensor_slices(np.zeros(3, np.float32))),
        "TypeError",
        "Incompatible dataset elements",
    ),
    "concatenate_structures": (
        lambda tf: tf.data.Dataset.range(3).concatenate(
            tf.data.Dataset.zip(tf.data.Dataset.range(3), tf.data.Dataset.range(3))
        ),
        "TypeError",
        "Incompatible dataset elements",
    ),
    "len_infinite": (lambda tf: len(tf.data.Dataset.range(3).repeat()), "TypeError", "infinite"),
    "len_unknown": (lambda tf: len(tf.data.Dataset.range(3).filter(lambda v: v > 0)), "TypeError", "unknown"),
    "batch_of_shapes": (
        lambda tf: list(
            tf.data.Dataset.from_generator(_gen([np.zeros(2), np.zeros(3)]), output_signature=_spec(tf, [None])).batch(
                2
            )
        ),
        "InvalidArgumentError",
        "different shapes in component 0",
    ),
    "unbatch_sizes": (
        lambda tf: list(
            tf.data.Dataset.zip(tf.data.Dataset.range(6).batch(2), tf.data.Dataset.range(6).batch(3)).unbatch()
        ),
        "InvalidArgumentError",
        "same batch size",
    ),
    "padded_shape_small": (
        lambda tf: tf.data.Dataset.from_tensor_slices(np.zeros((3, 4))).padded_batch(2, padded_shapes=[2]),
        "ValueError",
        "not compatible with the shape",
    ),
    "padding_value_not_scalar": (
        lambda tf: tf.data.Dataset.range(3).padded_batch(2, padding_values=np.array([1], np.int64)),
        "ValueError",
        "should be scalars",
    ),
    "padding_value_dtype": (
        lambda tf: tf.data.Dataset.range(3).padded_batch(2, padding_values=0.5),
        "TypeError",
        "does not match type",
    ),
    "generator_shape": (
        lambda tf: list(tf.data.Dataset.from_generator(_gen([np.zeros(3)]), output_signature=_spec(tf, [2]))),
        "InvalidArgumentError",
        "yielded an element of shape",
    ),
    "generator_structure": (
        lambda tf: list(
            tf.data.Dataset.from_generator(_gen([[1, 2]]), output_signature=(_spec(tf, []), _spec(tf, [])))
        ),
        "InvalidArgumentError",
        "did not match the expected structure",
    ),
    "generator_conversion": (
        lambda tf: list(tf.data.Dataset.from_generator(_gen([[1, 2], "a"]), output_signature=_spec(tf, [None]))),
        "InvalidArgumentError",
        "could not be converted",
    ),
    "generator_not_callable": (
        lambda tf: tf.data.Dataset.from_generator(iter([1]), output_signature=_spec(tf, [])),
        "TypeError",
        "must be a Python callable",
    ),
    "generator_no_signature": (lambda tf: tf.data.Dataset.from_generator(_gen([1])), "TypeError", "output_signature"),
    "generator_both_signatures": (
        lambda tf: tf.data.Dataset.from_generator(_gen([1]), output_types=tf.int32, output_signature=_spec(tf, [])),
        "TypeError",
        "can not be used together",
    ),
    "generator_signature_not_spec": (
        lambda tf: tf.data.Dataset.from_generator(_gen([1]), output_signature=tf.int32),
        "TypeError",
        "tf.TypeSpec",
    ),
    "take_float": (lambda tf: tf.data.Dataset.range(3).take(1.5), "TypeError", "must be an integer"),
    "zip_list": (
        lambda tf: tf.data.Dataset.zip(tf.data.Dataset.range(3), [1, 2]),
        "TypeError",
        "use `tuple` instead",
    ),
    "zip_nothing": (lambda tf: tf.data.Dataset.zip(), "TypeError", "at least one dataset"),
    "filter_not_boolean": (
        lambda tf: list(tf.data.Dataset.range(3).filter(lambda v: v)),
        "ValueError",
        "must return a `tf.bool` scalar",
    ),
    "single_of_none": (
        lambda tf: tf.data.Dataset.range(0).get_single_element(),
        "InvalidArgumentError",
        "Dataset was empty",
    ),
    "single_of_two": (
        lambda tf: tf.data.Dataset.range(2).get_single_element(),
        "InvalidArgumentError",
        "more than one element",
    ),
    "reduce_dtype_change": (
        lambda tf: tf.data.Dataset.range(3).reduce(np.int32(0), lambda s, v: tf.cast(s, tf.float32)),
        "TypeError",
        "must match the initial state",
    ),
    "range_no_args": (lambda tf: tf.data.Dataset.range(), "ValueError", "between 1 and 3"),
    "range_step_zero": (lambda tf: list(tf.data.Dataset.range(1, 5, 0)), "InvalidArgumentError", "non-zero"),
    "shard_index": (lambda tf: tf.data.Dataset.range(5).shard(3, 3), "InvalidArgumentError", "between 0 and 2"),
    "options_unknown": (lambda tf: setattr(tf.data.Options(), "bogus", 1), "AttributeError", "Cannot set the property"),
}


def _error_class(tf, name):
    return getattr(tf.errors, name) if hasattr(tf.errors, name) else getattr(builtins, name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_refused_as_tensorflow_refuses_it(name):
    program, error, match = CASES[name]
    with pytest.raises(_error_class(gtf, error), match=r"\[gradkit\].*" + match):
        program(gtf)
    if tf_real is not None:
        with pytest.raises(_error_class(tf_real, error)):
            program(tf_real)


def _traced_pipeline():
    """A pipeline whose map reads a Variable, iterated inside a tf.function: its elements are traced."""
    v = gtf.Variable(2.0)
    ds = gtf.data.Dataset.range(3).map(lambda x: gtf.cast(x, gtf.float32) * v)

    @gtf.function
    def total():
        s = gtf.constant(0.0)
        for x in ds:
            s = s + x
        return s

    return total()


@pytest.mark.parametrize(
    "program, error, match",
    [
        (lambda: gtf.data.Dataset.range(3, dtype=gtf.int32), TypeError, "takes output_type="),
        (lambda: gtf.data.Dataset.from_tensor_slices(["a", "b"]), TypeError, "not strings"),
        (lambda: gtf.data.Dataset.from_tensors((1.0, None)), TypeError, "holds None"),
        (lambda: list(gtf.data.Dataset.range(3).map(lambda v: None)), TypeError, "holds None"),
        (lambda: list(gtf.data.Dataset.range(3).map(lambda v: ())), ValueError, "holds no tensor"),
        (lambda: gtf.data.Dataset.range(3).map(3), TypeError, "where a function goes"),
        (lambda: list(gtf.data.Dataset.range(3).flat_map(lambda v: v)), TypeError, "must return a `Dataset`"),
        (lambda: gtf.data.Dataset.range(3).window(2).batch(2).element_spec, TypeError, "dataset of datasets"),
        (lambda: gtf.data.Dataset.range(3).apply(lambda d: 3), TypeError, "must return a tf.data.Dataset"),
        (lambda: gtf.data.Dataset.range(3).concatenate([1, 2]), TypeError, "pass a tf.data.Dataset"),
        (_traced_pipeline, TypeError, "Iterate the dataset outside the tf.function"),
        (lambda: gtf.data.TFRecordDataset, AttributeError, "from_generator"),
        (lambda: gtf.data.experimental.snapshot, AttributeError, "from_tensor_slices"),
        (lambda: gtf.data.Dataset.range(3).ragged_batch, AttributeError, "map, filter or flat_map"),
    ],
)
def test_what_gradkit_does_not_take_is_refused_clearly(program, error, match):
    with pytest.raises(error, match=r"\[gradkit\].*" + match):
        program()
