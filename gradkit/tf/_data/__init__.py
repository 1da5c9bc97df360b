"""``gradkit.tf.data``: TensorFlow's ``tf.data`` input pipelines (``dataset.py`` and the modules
of each kind of step); ``gradkit/tf/__init__.py`` builds the ``tf.data`` namespace from them."""

from .._namespace import Namespace, missing
from .dataset import Dataset
from .iterator import Iterator
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
    "OptimizationOptions",
    "Options",
    "ThreadingOptions",
    "assert_cardinality",
    "cardinality",
    "get_single_element",
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
        cardinality=cardinality,
        get_single_element=get_single_element,
        choose_from_datasets=Dataset.choose_from_datasets,
        sample_from_datasets=Dataset.sample_from_datasets,
        Counter=Dataset.counter,
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
