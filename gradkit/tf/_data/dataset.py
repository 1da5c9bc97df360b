"""``tf.data.Dataset``: TensorFlow's input pipelines, run in the calling thread.

A dataset is a recipe: each pass over it (a ``for`` loop, ``iter``, each epoch of Keras'
``fit``) runs the recipe again, so a ``shuffle`` reshuffles and a generator is called afresh.
Elements come out as ``gk.Tensor``s (what ``tf.constant`` returns) in the element's structure
(tuples, namedtuples, dicts). The functions given to ``map``, ``filter``, ``flat_map``,
``interleave`` and ``reduce`` run eagerly, element by element, on gk.Tensors, with every tape
paused (a pipeline is input, not part of what a tape differentiates). TensorFlow traces such a
function once, when ``map`` (``filter``, ...) is called, which fixes the Python values it reads;
gradkit fixes them then too: the values of its closure and of the module globals it names are
taken at that call, so ``[ds.filter(lambda x, y: y == c) for c in range(3)]`` gives one class
per dataset, and a variable rebound after ``map`` is not seen. Objects are not copied: a
``tf.Variable`` (or a list changed in place) is read as it is when the function runs, as
TensorFlow reads a captured Variable. A function's ``element_spec`` is found by tracing it with
``tf.function`` the first time it is asked for (or the first element is read); where it cannot
be traced (Python control flow on a tensor's value), from its result for the first element, its
dimensions then unknown, and a later result of another structure or dtype raises a TypeError. A dataset iterated inside a
``tf.function`` is read while the function is traced (there is no autograph loop): its elements
are constants of the compiled program, so a pipeline whose functions read the tf.function's
arguments, Variables or random draws is refused there, and so is a ``shuffle`` that reshuffles
at each pass (each call would see the same order); iterate outside and pass batches in.

>>> import gradkit.tf as tf
>>> ds = tf.data.Dataset.from_tensor_slices(([1.0, 2.0, 3.0], [0, 1, 0]))
>>> ds = ds.map(lambda x, y: (x * 2.0, y)).batch(2)
>>> [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ds]
[([2.0, 4.0], [0, 1]), ([6.0], [0])]
>>> ds.element_spec
(TensorSpec(shape=(None,), dtype=tf.float32, name=None), TensorSpec(shape=(None,), dtype=tf.int32, name=None))
>>> int(ds.cardinality()), len(ds)
(2, 2)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from . import options as options_module
from .options import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .structure import DatasetSpec, canonical, to_numpy, to_public


def _scalar_array(value):
    """A tensor's or array's value as a NumPy array (None for anything else)."""
    if isinstance(value, Tensor):
        return np.asarray(value.numpy())
    if isinstance(value, (np.ndarray, jax.Array)):
        return np.asarray(value)
    return None


def int_arg(value, what: str) -> int:
    """An integer argument (a Python or NumPy int, an integer scalar tensor) as a Python int."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)  # TensorFlow converts True to 1
    if isinstance(value, (int, np.integer)):
        return int(value)
    array = _scalar_array(value)
    if array is not None and array.ndim == 0 and array.dtype.kind in "iu":
        return int(array)
    error = _errors.GradkitValueError if value is None else _errors.GradkitTypeError
    raise error(f"{what} got {value!r}: it must be an integer, as TensorFlow converts it to an int64 scalar.")


def bool_arg(value, what: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    array = _scalar_array(value)
    if array is not None and array.ndim == 0 and array.dtype == bool:
        return bool(array)
    raise _errors.GradkitTypeError(f"{what} got {value!r}: it must be a Python bool (or a boolean scalar tensor).")


class _DatasetType(type):
    """``tf.data.Dataset.<name>`` for a static method gradkit.tf lacks: gradkit's error, as for
    an instance's missing method."""

    def __getattr__(cls, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise _errors.GradkitAttributeError(_MSG_MISSING.format(name=name))


_MSG_MISSING = (
    "tf.data.Dataset has no {name!r} in gradkit.tf, which covers the sources, transformations and "
    "reductions input pipelines for training use. Write the step with map, filter or flat_map, or as a "
    "Python generator read by tf.data.Dataset.from_generator."
)


class Dataset(metaclass=_DatasetType):
    """``tf.data.Dataset``: build one with ``from_tensor_slices``, ``from_tensors``, ``range``,
    ``from_generator`` or ``zip``, chain transformations, iterate it (see the module docstring)."""

    def __init__(self, *inputs: Dataset):
        self._inputs = inputs
        self._spec = None
        # TensorFlow merges its inputs' options, in order (a later input's set options win).
        self._opts = options_module.Options()
        for dataset in inputs:
            self._opts = self._opts.merge(dataset._opts)

    # -- what each kind of dataset defines ---------------------------------------------------------
    def _chunks(self):
        """One pass over the elements, as ``chunks.Chunk``s."""
        raise NotImplementedError

    def _compute_spec(self):
        """``(structure, [TensorSpec per component])`` of the elements."""
        raise NotImplementedError

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    # -- what every dataset has -------------------------------------------------------------------
    def _structure_and_specs(self):
        if self._spec is None:
            self._spec = self._compute_spec()
        return self._spec

    @property
    def element_spec(self):
        """The elements' ``tf.TensorSpec``s, in their structure (an unknown dimension is None)."""
        structure, specs = self._structure_and_specs()
        return structure.pack(specs)

    def cardinality(self):
        """The number of elements as an integer scalar tensor: ``tf.data.INFINITE_CARDINALITY``
        (-1) for an endless dataset, ``UNKNOWN_CARDINALITY`` (-2) where it is only known by
        iterating (after ``filter``, of a generator), as in TensorFlow."""
        return Tensor.concrete(jnp.asarray(np.array(self._cardinality(), canonical(np.int64))))

    def __len__(self) -> int:
        count = self._cardinality()
        if count == INFINITE_CARDINALITY:
            raise _errors.GradkitTypeError(
                "The dataset is infinite: len() needs a finite dataset. Use dataset.cardinality(), which gives "
                "tf.data.INFINITE_CARDINALITY (-1) here."
            )
        if count == UNKNOWN_CARDINALITY:
            raise _errors.GradkitTypeError(
                "The dataset length is unknown (a filter, a generator, flat_map...): len() needs it known. Use "
                "dataset.cardinality() (tf.data.UNKNOWN_CARDINALITY, -2, here), or count the elements by iterating."
            )
        return count

    def __bool__(self) -> bool:
        return True  # as in TensorFlow: a dataset is not tested by its length

    def __iter__(self):
        from .iterator import Iterator

        return Iterator(self)

    def _elements(self):
        """The elements, each as gk.Tensors in its structure."""
        for chunk in self._chunks():
            pack = chunk.structure.pack
            for row in chunk.rows():
                yield pack([to_public(c) for c in row])

    def _numpy_elements(self):
        """The elements with NumPy arrays as components (views into the pipeline: read only)."""
        for chunk in self._chunks():
            pack = chunk.structure.pack
            for row in chunk.rows():
                yield pack([np.asarray(c) if c.dtype != object else c[()] for c in row])

    def as_numpy_iterator(self):
        """The elements with NumPy arrays as components (a scalar as a NumPy scalar), as
        TensorFlow's ``as_numpy_iterator`` gives them."""
        # Told at the call where the element_spec is known already; else at the first element
        # (learning the spec may run a map function once more than iterating does).
        if self._spec is not None and any(isinstance(s, DatasetSpec) for s in self._spec[1]):
            raise _refuse_numpy_of_datasets()
        return self._numpy_elements()

    def _numpy_elements(self):
        for chunk in self._chunks():
            if any(a.dtype == object for a in chunk.arrays):
                raise _refuse_numpy_of_datasets()
            pack = chunk.structure.pack
            for row in chunk.rows():
                yield pack([to_numpy(c) for c in row])

    def __repr__(self) -> str:
        try:
            spec = repr(self.element_spec)
        except Exception:  # noqa: BLE001  (a repr must not raise for a function that fails)
            spec = "<not traced>"
        return f"<{type(self).__name__}Dataset element_spec={spec}>"

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        descriptor = getattr(type(self), name, None)
        if isinstance(descriptor, property):
            # A property that raised AttributeError (element_spec of a map whose function reads a
            # missing attribute) lands here: run it again to raise its own error, not "missing".
            return descriptor.fget(self)
        raise _errors.GradkitAttributeError(_MSG_MISSING.format(name=name))

    # -- sources ----------------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None) -> Dataset:
        """One element per slice along the first axis of each component of ``tensors``."""
        return sources.TensorSlices(tensors)

    @staticmethod
    def from_tensors(tensors, name=None) -> Dataset:
        """One element: ``tensors`` itself."""
        return sources.Tensors(tensors)

    @staticmethod
    def range(*args, **kwargs) -> Dataset:
        """``range(stop)``, ``range(start, stop[, step])`` as Python's ``range``; int64 elements
        (``output_type=`` another dtype)."""
        return sources.Range(*args, **kwargs)

    @staticmethod
    def from_generator(
        generator, output_types=None, output_shapes=None, args=None, output_signature=None, name=None
    ) -> Dataset:
        """The elements ``generator(*args)`` yields, checked against ``output_signature`` (or the
        older ``output_types``/``output_shapes``); the generator is called afresh for each pass."""
        return sources.Generated(generator, output_types, output_shapes, args, output_signature)

    @staticmethod
    def counter(start=0, step=1, dtype=np.int64, name=None) -> Dataset:
        """``start``, ``start + step``, ... without end (int64, or ``dtype``)."""
        return choosing.Counter(start, step, dtype)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True) -> Dataset:
        """The next element of ``datasets[i]`` for each index ``i`` of ``choice_dataset``."""
        return choosing.ChooseFromDatasets(datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def sample_from_datasets(
        datasets, weights=None, seed=None, stop_on_empty_dataset=False, rerandomize_each_iteration=None
    ) -> Dataset:
        """Each element from one of ``datasets``, drawn with ``weights`` (equal by default); see
        ``choosing.py`` for how its draws relate to TensorFlow's."""
        return choosing.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration)

    @staticmethod
    def zip(*args, datasets=None, name=None) -> Dataset:
        """Elements of several datasets side by side (positional datasets, or one nested structure
        of them), as long as the shortest."""
        return combine.Zip(args, datasets)

    # -- transformations --------------------------------------------------------------------------
    def concatenate(self, dataset, name=None) -> Dataset:
        return combine.Concatenate(self, dataset)

    def batch(
        self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None
    ) -> Dataset:
        """Consecutive elements stacked into batches (the last one smaller unless ``drop_remainder``)."""
        return batching.Batch(self, batch_size, drop_remainder)

    def unbatch(self, name=None) -> Dataset:
        return batching.Unbatch(self)

    def padded_batch(
        self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None
    ) -> Dataset:
        """Batches whose elements are padded (with ``padding_values``, zeros by default) to
        ``padded_shapes`` (by default, and where a dimension is None, the batch's largest)."""
        return batching.PaddedBatch(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def rebatch(self, batch_size, drop_remainder=False, name=None) -> Dataset:
        """The batches' elements batched again: ``batch_size`` each, or the sizes of a list in turn."""
        return batching.Rebatch(self, batch_size, drop_remainder)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None) -> Dataset:
        """TensorFlow's buffered shuffle (see ``shuffle.py``): a new order each pass unless
        ``reshuffle_each_iteration=False``."""
        return shuffle_module.Shuffle(self, buffer_size, seed, reshuffle_each_iteration)

    def map(
        self,
        map_func,
        num_parallel_calls=None,
        deterministic=None,
        synchronous=None,
        use_unbounded_threadpool=False,
        name=None,
    ) -> Dataset:
        """``map_func`` applied to each element (a tuple's components as its positional arguments)."""
        return mapping.Map(self, map_func)

    def filter(self, predicate, name=None) -> Dataset:
        """The elements for which ``predicate`` gives True (a boolean scalar)."""
        return mapping.Filter(self, predicate)

    def take_while(self, predicate, name=None) -> Dataset:
        """The elements up to (not including) the first for which ``predicate`` gives False."""
        return mapping.TakeWhile(self, predicate)

    def unique(self, name=None) -> Dataset:
        """Each element the first time it comes, in order (one int32 or int64 component, of any shape)."""
        return mapping.Unique(self)

    def flat_map(self, map_func, name=None) -> Dataset:
        """The elements of the datasets ``map_func`` makes of each element, one dataset after the other."""
        return mapping.Interleave(self, map_func, 1, 1, "flat_map")

    def interleave(
        self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None, deterministic=None, name=None
    ) -> Dataset:
        """The datasets ``map_func`` makes, ``cycle_length`` at a time, ``block_length`` elements
        from each in turn (TensorFlow's deterministic order; ``num_parallel_calls`` sets the
        cycle length when ``cycle_length`` is AUTOTUNE, as in TensorFlow)."""
        return mapping.Interleave(self, map_func, cycle_length, block_length, "interleave", num_parallel_calls)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None, name=None) -> Dataset:
        """The elements grouped by ``key_func``'s int64 key, each group of ``window_size`` (or
        ``window_size_func(key)``) given to ``reduce_func(key, window_dataset)``, whose dataset's
        elements come out (``grouping.py``)."""
        return grouping.GroupByWindow(self, key_func, reduce_func, window_size, window_size_func)

    def bucket_by_sequence_length(
        self,
        element_length_func,
        bucket_boundaries,
        bucket_batch_sizes,
        padded_shapes=None,
        padding_values=None,
        pad_to_bucket_boundary=False,
        no_padding=False,
        drop_remainder=False,
        name=None,
    ) -> Dataset:
        """The elements bucketed by ``element_length_func`` at ``bucket_boundaries`` and batched per
        bucket, ``bucket_batch_sizes[i]`` at a time, padded (``bucketing.py``)."""
        options = dict(
            padded_shapes=padded_shapes,
            padding_values=padding_values,
            pad_to_bucket_boundary=pad_to_bucket_boundary,
            no_padding=no_padding,
            drop_remainder=drop_remainder,
        )
        return bucketing.BucketBySequenceLength(
            self, element_length_func, bucket_boundaries, bucket_batch_sizes, options
        )

    def ignore_errors(self, log_warning=False, name=None) -> Dataset:
        """The elements, those whose ``map`` or ``filter`` function raised a TensorFlow runtime error
        left out (``ignoring.py``)."""
        return ignoring.IgnoreErrors(self, log_warning)

    def take(self, count, name=None) -> Dataset:
        return transforms.Take(self, count)

    def skip(self, count, name=None) -> Dataset:
        return transforms.Skip(self, count)

    def repeat(self, count=None, name=None) -> Dataset:
        """The elements ``count`` times over (forever for None or a negative count)."""
        return transforms.Repeat(self, count)

    def shard(self, num_shards, index, name=None) -> Dataset:
        """Every ``num_shards``-th element, starting at ``index``."""
        return transforms.Shard(self, num_shards, index)

    def enumerate(self, start=0, name=None) -> Dataset:
        """``(index, element)`` pairs, the index an int64 scalar counting from ``start``."""
        return transforms.Enumerate(self, start)

    def prefetch(self, buffer_size, name=None) -> Dataset:
        """The same elements: gradkit.tf reads a pipeline when asked, so there is nothing to prefetch."""
        return transforms.Passthrough(self, "prefetch", buffer_size)

    def cache(self, filename="", name=None) -> Dataset:
        """The elements of the first complete pass, kept in memory and given again by later ones.
        A ``filename`` is accepted and not written: gradkit.tf keeps the cache in memory always."""
        return transforms.Cache(self)

    def save(self, path, compression=None, shard_func=None, checkpoint_args=None) -> None:
        """Write the elements under the directory ``path``, for ``tf.data.Dataset.load``
        (gradkit's own format: see ``persistence.py``)."""
        from . import persistence

        persistence.save(self, path, compression, shard_func, checkpoint_args)

    @staticmethod
    def load(path, element_spec=None, compression=None, reader_func=None) -> Dataset:
        """The dataset ``dataset.save(path)`` wrote, with its element_spec and cardinality."""
        from . import persistence

        return persistence.load(path, element_spec, compression, reader_func)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None) -> Dataset:
        """Windows of ``size`` elements each ``shift`` apart, each window a dataset per component
        (``.flat_map(lambda w: w.batch(size))`` makes them batches)."""
        return combine.Window(self, size, shift, stride, drop_remainder)

    def apply(self, transformation_func) -> Dataset:
        """``transformation_func(self)``, which must return a dataset."""
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise _errors.GradkitTypeError(
                f"tf.data.Dataset.apply: the transformation returned a {type(result).__name__}; it must return a "
                "tf.data.Dataset."
            )
        return result

    def with_options(self, options, name=None) -> Dataset:
        """The same elements, with ``options`` merged into the dataset's (kept, not used)."""
        passed = transforms.Passthrough(self, "with_options", None)
        passed._opts = self._opts.merge(options)
        return passed

    def options(self):
        return self._opts

    def scan(self, initial_state, scan_func, name=None) -> Dataset:
        """``scan_func(state, element)`` gives ``(new_state, output)``: the outputs, the state carried
        from ``initial_state`` through the elements in order."""
        return mapping.Scan(self, initial_state, scan_func)

    def reduce(self, initial_state, reduce_func, name=None):
        """``reduce_func(state, element)`` folded over the elements from ``initial_state``."""
        return mapping.reduce(self, initial_state, reduce_func)

    def get_single_element(self, name=None):
        """The dataset's one element (InvalidArgumentError for none or more than one, as in TensorFlow)."""
        elements = self._elements()
        try:
            first = next(elements, None)
            if first is None:
                raise _errors.GradkitInvalidArgumentError(
                    "Dataset was empty: get_single_element needs a dataset of exactly one element."
                )
            if next(elements, None) is not None:
                raise _errors.GradkitInvalidArgumentError(
                    "Dataset had more than one element: get_single_element needs exactly one (use take(1) for "
                    "the first)."
                )
            return first
        finally:
            elements.close()


def _refuse_numpy_of_datasets():
    return _errors.GradkitTypeError(
        "Dataset.as_numpy_iterator() got a dataset whose elements are datasets (from window or group_by_window); "
        "NumPy has no array of them, and TensorFlow raises TypeError too. Iterate the dataset itself, and each "
        "inner dataset's as_numpy_iterator(), or flat_map them into one dataset (e.g. "
        "ds.flat_map(lambda w: w.batch(size)))."
    )


# The kinds of datasets subclass Dataset, so they are imported once it exists.
from . import batching, bucketing, choosing, combine, grouping, ignoring, mapping, sources, transforms  # noqa: E402
from . import shuffle as shuffle_module  # noqa: E402
