"""``gradkit.tf.data``: TensorFlow's ``tf.data`` input pipelines (``dataset.py`` and the modules
of each kind of step); ``gradkit/tf/__init__.py`` builds the ``tf.data`` namespace from them."""

from gradkit import _errors

from .._namespace import Namespace, missing
from .bucketing import bucket_by_sequence_length
from .dataset import Dataset
from .grouping import group_by_window
from .ignoring import ignore_errors
from .iterator import Iterator
from .optional import Optional, OptionalSpec
from .options import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    AutoShardPolicy,
    AutotuneOptions,
    DistributeOptions,
    OptimizationOptions,
    Options,
    ThreadingOptions,
)
from .sources import FromList
from .structure import DatasetSpec
from .transforms import AssertCardinality


def assert_cardinality(expected_cardinality):
    """``tf.data.experimental.assert_cardinality``: for ``dataset.apply``, the dataset with its
    cardinality stated as ``expected_cardinality``, checked as it is read (TensorFlow's
    FailedPreconditionError where the count differs)."""
    return lambda dataset: AssertCardinality(dataset, expected_cardinality)


def cardinality(dataset):
    """``tf.data.experimental.cardinality``: ``dataset.cardinality()``."""
    return dataset.cardinality()


def get_single_element(dataset):
    """``tf.data.experimental.get_single_element``: ``dataset.get_single_element()``."""
    return dataset.get_single_element()


def enumerate_dataset(start=0):
    """``tf.data.experimental.enumerate_dataset``: for ``dataset.apply``, ``dataset.enumerate(start)``."""
    return lambda dataset: dataset.enumerate(start)


def from_list(elements, name=None):
    """``tf.data.experimental.from_list``: one element per item of ``elements`` (one structure each)."""
    return FromList(elements)


def get_structure(dataset_or_iterator):
    """``tf.data.experimental.get_structure``: the ``element_spec`` of a dataset or an iterator."""
    if not isinstance(dataset_or_iterator, (Dataset, Iterator)):
        raise _errors.GradkitTypeError(
            "Invalid `dataset_or_iterator`. `dataset_or_iterator` must be a `tf.data.Dataset` or tf.data.Iterator "
            f"object, but got {type(dataset_or_iterator)}. Pass the dataset (or iter(dataset))."
        )
    return dataset_or_iterator.element_spec


def get_next_as_optional(iterator):
    """``tf.data.experimental.get_next_as_optional``: ``iterator.get_next_as_optional()``."""
    return iterator.get_next_as_optional()


def save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    """``tf.data.experimental.save``: ``dataset.save(path, ...)``."""
    dataset.save(path, compression, shard_func, checkpoint_args)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False, num_parallel_calls=None):
    """``tf.data.experimental.map_and_batch``: for ``dataset.apply``, ``map`` then ``batch``."""
    return lambda dataset: dataset.map(map_func).batch(batch_size, drop_remainder=drop_remainder)


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """``tf.data.experimental.shuffle_and_repeat``: for ``dataset.apply``, ``shuffle`` (a new order
    each pass) then ``repeat``."""
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def scan(initial_state, scan_func):
    """``tf.data.experimental.scan``: for ``dataset.apply``, ``dataset.scan(initial_state, scan_func)``."""
    return lambda dataset: dataset.scan(initial_state, scan_func)


def take_while(predicate):
    """``tf.data.experimental.take_while``: for ``dataset.apply``, ``dataset.take_while(predicate)``."""
    return lambda dataset: dataset.take_while(predicate)


def unique():
    """``tf.data.experimental.unique``: for ``dataset.apply``, ``dataset.unique()``."""
    return lambda dataset: dataset.unique()


__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "AutoShardPolicy",
    "AutotuneOptions",
    "Dataset",
    "DatasetSpec",
    "DistributeOptions",
    "Iterator",
    "Optional",
    "OptionalSpec",
    "OptimizationOptions",
    "Options",
    "ThreadingOptions",
    "assert_cardinality",
    "bucket_by_sequence_length",
    "cardinality",
    "enumerate_dataset",
    "from_list",
    "get_next_as_optional",
    "get_single_element",
    "get_structure",
    "group_by_window",
    "ignore_errors",
    "map_and_batch",
    "save",
    "scan",
    "shuffle_and_repeat",
    "take_while",
    "unique",
]


class _DataNamespace(Namespace):
    """``tf.data`` and ``tf.data.experimental``: a missing name raises gradkit's AttributeError,
    which points at the way in for data gradkit.tf does not read itself."""

    def __getattr__(self, name):
        raise AttributeError(
            missing(self._qualname, name) + " For tf.data's file readers (TFRecordDataset, TextLineDataset, CSV), "
            "read the data with Python or NumPy and pass it to tf.data.Dataset.from_tensor_slices, or yield it from "
            "a generator read by tf.data.Dataset.from_generator."
        )


def namespace():
    """The ``tf.data`` namespace."""
    experimental = _DataNamespace(
        "gradkit.tf.data.experimental",
        AUTOTUNE=AUTOTUNE,
        INFINITE_CARDINALITY=INFINITE_CARDINALITY,
        UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY,
        AutoShardPolicy=AutoShardPolicy,
        AutotuneOptions=AutotuneOptions,
        DistributeOptions=DistributeOptions,
        OptimizationOptions=OptimizationOptions,
        ThreadingOptions=ThreadingOptions,
        assert_cardinality=assert_cardinality,
        bucket_by_sequence_length=bucket_by_sequence_length,
        cardinality=cardinality,
        get_single_element=get_single_element,
        enumerate_dataset=enumerate_dataset,
        from_list=from_list,
        get_structure=get_structure,
        get_next_as_optional=get_next_as_optional,
        save=save,
        load=Dataset.load,
        Optional=Optional,
        group_by_window=group_by_window,
        ignore_errors=ignore_errors,
        map_and_batch=map_and_batch,
        shuffle_and_repeat=shuffle_and_repeat,
        choose_from_datasets=Dataset.choose_from_datasets,
        sample_from_datasets=Dataset.sample_from_datasets,
        Counter=Dataset.counter,
        scan=scan,
        take_while=take_while,
        unique=unique,
    )
    return _DataNamespace(
        "gradkit.tf.data",
        AUTOTUNE=AUTOTUNE,
        INFINITE_CARDINALITY=INFINITE_CARDINALITY,
        UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY,
        Dataset=Dataset,
        DatasetSpec=DatasetSpec,
        Iterator=Iterator,
        Options=Options,
        ThreadingOptions=ThreadingOptions,
        experimental=experimental,
    )
