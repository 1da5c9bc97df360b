"""Where ``fit``/``evaluate``/``predict`` take their batches from, epoch by epoch (Keras 3's
``EpochIterator`` and data adapters): arrays (``training_data.Batches``), a ``tf.data.Dataset``
(``training_dataset.py``), a ``tf.keras.utils.PyDataset`` (``Sequence``), or a Python
generator/iterator of batches.

As in Keras: a PyDataset gives ``num_batches`` (or ``len``) batches by index, in order or, with
``shuffle=True``, in an order drawn from Python's ``random`` (``tf.keras.utils.set_random_seed``
seeds it), and hears ``on_epoch_begin``/``on_epoch_end``; a generator is read as it comes,
``steps_per_epoch`` batches an epoch (continuing where the last epoch stopped), or until it is
exhausted (Keras then warns that the input ran out of data). As in Keras, the first two batches
a generator gave are read again whenever its batches start over (each epoch after one that
exhausted it, each evaluation of validation data).
"""

from __future__ import annotations

import contextlib
import itertools
import random
import warnings

from gradkit import _errors

from .._data.dataset import Dataset
from .training_data import Batches, as_arrays, unpack_x_y_sample_weight, weights_with_classes
from .training_dataset import DatasetAdapter, refuse_arguments


class PyDataset:
    """``tf.keras.utils.PyDataset`` (``Sequence``): subclass it with ``__getitem__(index)`` giving a
    batch ``(x, y)`` or ``(x, y, sample_weight)`` and ``__len__`` (or a ``num_batches``
    property: None for an endless dataset). ``workers``/``use_multiprocessing``/
    ``max_queue_size`` are kept for Keras' API; gradkit.tf reads the batches in order, in one
    thread."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    workers = property(lambda self: getattr(self, "_workers", 1), lambda self, v: setattr(self, "_workers", v))
    use_multiprocessing = property(
        lambda self: getattr(self, "_use_multiprocessing", False),
        lambda self, v: setattr(self, "_use_multiprocessing", v),
    )
    max_queue_size = property(
        lambda self: getattr(self, "_max_queue_size", 10), lambda self, v: setattr(self, "_max_queue_size", v)
    )

    def __getitem__(self, index):
        raise NotImplementedError(
            f"[gradkit] {type(self).__name__} must define __getitem__(index), returning batch number index."
        )

    def __iter__(self):
        try:
            count = self.num_batches
        except NotImplementedError:
            count = None
        for index in itertools.count() if count is None else range(count):
            yield self[index]

    @property
    def num_batches(self):
        """The number of batches (``len(self)``), or None for an endless dataset."""
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError(
            "[gradkit] You need to implement the `num_batches` property:\n\n@property\ndef num_batches(self):\n  return ..."
        )

    def on_epoch_begin(self):
        """Called at the beginning of every epoch."""

    def on_epoch_end(self):
        """Called at the end of every epoch."""


def _standardize(batch, class_weight, what: str):
    """A batch as ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)`` of NumPy arrays, with the
    class weights' sample weights added where asked."""
    if not isinstance(batch, tuple):
        batch = (batch,)
    x, y, sample_weight = unpack_x_y_sample_weight(batch)
    x, y, sample_weight = as_arrays(x, what), as_arrays(y, what), as_arrays(sample_weight, what)
    if y is not None:
        sample_weight = weights_with_classes(y, sample_weight, class_weight)
    return tuple(part for part in (x, y, sample_weight) if part is not None) if y is not None else (x,)


class _PyDatasetAdapter:
    def __init__(self, dataset: PyDataset, shuffle, class_weight):
        self.dataset, self.shuffle, self.class_weight = dataset, shuffle, class_weight

    @property
    def num_batches(self):
        return self.dataset.num_batches

    def iterator(self):
        count = self.dataset.num_batches
        if count is None:
            indices = itertools.count()
        else:
            indices = list(range(count))
            if self.shuffle:
                random.shuffle(indices)
        return (_standardize(self.dataset[i], self.class_weight, "a PyDataset's batch") for i in indices)

    def on_epoch_begin(self):
        self.dataset.on_epoch_begin()

    def on_epoch_end(self):
        self.dataset.on_epoch_end()


class _GeneratorAdapter:
    """Keras' generator adapter: it reads the first batches when made (to learn their specs)
    and every later pass over the generator starts with those same batches again, then
    continues the generator where it stands."""

    num_batches = None
    _PEEKED = 2  # Keras' NUM_BATCHES_FOR_TENSOR_SPEC

    def __init__(self, generator):
        self.first = list(itertools.islice(generator, self._PEEKED))
        self.generator = generator
        if not self.first:
            raise _errors.GradkitValueError(
                "When passing a Python generator to a Keras model, the generator must yield at least one batch. "
                "Received an empty generator."
            )
        if not isinstance(self.first[0], tuple):
            raise _errors.GradkitValueError(
                "When passing a Python generator to a Keras model, the generator must return a tuple, either "
                f"(input,) or (inputs, targets) or (inputs, targets, sample_weights). Received a "
                f"{type(self.first[0]).__name__}: yield (x,) for inputs alone."
            )

    def iterator(self):
        return (
            _standardize(batch, None, "a generator's batch") for batch in itertools.chain(self.first, self.generator)
        )

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass


class _ArrayAdapter:
    def __init__(self, batches: Batches):
        self.batches = batches
        self.num_batches = batches.num_batches

    def iterator(self):
        return iter(self.batches)

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass


def _is_generator(x) -> bool:
    return callable(getattr(x, "__next__", None))


def is_batched(x) -> bool:
    """Whether ``x`` gives whole batches (a tf.data.Dataset, a PyDataset or a generator) rather than arrays."""
    return isinstance(x, (Dataset, PyDataset)) or _is_generator(x)


class EpochIterator:
    """Keras' ``EpochIterator``: ``(step, batch)`` pairs of one epoch per ``for`` loop, over
    one of the adapters above."""

    def __init__(
        self,
        x,
        y=None,
        sample_weight=None,
        batch_size=None,
        steps_per_epoch=None,
        shuffle=False,
        class_weight=None,
        what="x",
    ):
        if steps_per_epoch is not None and (
            isinstance(steps_per_epoch, bool) or not isinstance(steps_per_epoch, int) or steps_per_epoch < 1
        ):
            raise _errors.GradkitValueError(
                f"tf.keras.Model: steps_per_epoch is {steps_per_epoch!r}; pass a positive int (batches per epoch) or None."
            )
        if isinstance(x, Dataset):
            refuse_arguments(y, sample_weight)
            if shuffle:
                _ignored_shuffle(
                    "a tf.data.Dataset. The Dataset is expected to already be shuffled (via `.shuffle(buffer_size)`)."
                )
            self.adapter = DatasetAdapter(x, class_weight)  # batch_size is ignored, as Keras ignores it
        elif is_batched(x):
            if y is not None or sample_weight is not None or batch_size is not None:
                kind = "PyDataset" if isinstance(x, PyDataset) else "generator"
                raise _errors.GradkitValueError(
                    f"tf.keras.Model: x is a {kind}, which gives whole batches (x, y[, sample_weight]); do not also "
                    f"pass {'y' if y is not None else 'sample_weight' if sample_weight is not None else 'batch_size'}."
                )
            if isinstance(x, PyDataset):
                if shuffle and x.num_batches is None:
                    _ignored_shuffle("an infinite PyDataset. The PyDataset is expected to already be shuffled.")
                self.adapter = _PyDatasetAdapter(x, shuffle, class_weight)
            else:
                if class_weight is not None:
                    raise _errors.GradkitValueError(
                        "Argument `class_weight` is not supported for Python generator inputs. Received: "
                        f"class_weight={class_weight}. Yield (x, y, sample_weight) batches with the weights instead."
                    )
                if shuffle:
                    _ignored_shuffle("a generator. The generator is expected to yield already-shuffled data.")
                self.adapter = _GeneratorAdapter(x)
        else:
            x, y, sample_weight = as_arrays(x, what), as_arrays(y, "y"), as_arrays(sample_weight, "sample_weight")
            sample_weight = weights_with_classes(y, sample_weight, class_weight)
            if batch_size is None and steps_per_epoch:
                count = Batches((x, y, sample_weight), 1, False, what).count
                batch_size = -(-count // steps_per_epoch)  # Keras: ceil(examples / steps)
            self.adapter = _ArrayAdapter(Batches((x, y, sample_weight), batch_size, shuffle, what))
        self.steps_per_epoch = steps_per_epoch
        self._num_batches = self.adapter.num_batches
        self._current = None
        self._seen = 0

    @property
    def num_batches(self):
        return self.steps_per_epoch or self._num_batches

    def reset(self) -> None:
        """Start over (Keras resets before training and before each evaluation: a PyDataset's
        ``on_epoch_end`` is called then too)."""
        self._current = None
        self._num_batches = self.adapter.num_batches
        self._seen = 0
        self.adapter.on_epoch_end()

    def __iter__(self):
        self.adapter.on_epoch_begin()
        steps = self.steps_per_epoch or self._num_batches or -1
        with self._catch_stop_iteration():
            if steps > 0:
                if self._current is None or self.steps_per_epoch is None:
                    self._current = self.adapter.iterator()
                    self._seen = 0
                for step in range(steps):
                    if self._num_batches and self._seen >= self._num_batches:
                        if self.steps_per_epoch:
                            _ran_out_warning()
                        break
                    self._seen += 1
                    yield step, next(self._current)
                if self._num_batches and self._seen >= self._num_batches:
                    self._current = self.adapter.iterator()
                    self._seen = 0
            else:
                iterator = self.adapter.iterator()
                for step in itertools.count():
                    self._seen = step + 1
                    yield step, next(iterator)
            self.adapter.on_epoch_end()

    @contextlib.contextmanager
    def _catch_stop_iteration(self):
        try:
            yield
        except StopIteration:
            if self._num_batches is None:
                self._num_batches = self._seen - 1  # the last step found nothing
            _ran_out_warning()
            self._current = None
            self.adapter.on_epoch_end()


def _ignored_shuffle(what: str) -> None:
    warnings.warn(
        f"`shuffle=True` was passed, but will be ignored since the data `x` was provided as {what}", stacklevel=4
    )


def _ran_out_warning():
    warnings.warn(
        "Your input ran out of data; interrupting training. Make sure that your dataset or generator can generate "
        "at least `steps_per_epoch * epochs` batches. You may need to use the `.repeat()` function when building "
        "your dataset.",
        stacklevel=3,
    )
