"""``iter(dataset)``: TensorFlow's ``OwnedIterator``, also where a ``tf.function`` calls ``next`` on it.

TensorFlow's custom training loops pass an iterator into a compiled step (``train_step(it)`` with
``x, y = next(it)`` inside), and each call reads the next batch. gradkit's pipelines run in NumPy
on the host, so a ``next`` traced inside a ``tf.function`` on an iterator made outside it becomes an
ordered ``io_callback``: each run of the compiled program takes the next element then, with the
shapes and dtypes of the element it was traced with (the first one, held back for that run). An
iterator made inside the function is its own for each call, as in TensorFlow: it gives the
dataset's elements as constants of the trace, as a dataset iterated there does.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
from jax.experimental import io_callback

from gradkit import _errors
from gradkit._core import runtime_checks
from gradkit._tape.tensor import Tensor

from .. import _graph_helpers
from .optional import Optional

_NOTHING = object()


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


class Iterator:
    """What ``iter(dataset)`` gives (TensorFlow's ``OwnedIterator``): ``next()`` raises
    StopIteration at the end, ``get_next()`` TensorFlow's OutOfRangeError."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._elements = dataset._elements()
        self._made_in_function = _graph_helpers.inside_function()
        self._held = _NOTHING  # an element read while a tf.function was traced, not yet given

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self):
        if self._traced_here():
            raise _errors.GradkitNotImplementedError(
                "A for loop over an iterator made outside the tf.function being traced: TensorFlow runs it "
                "until the iterator ends, a number of steps gradkit's trace cannot know. Loop over the dataset "
                "instead (for x in dataset), call next(iterator) a known number of times inside, or loop "
                "outside the tf.function."
            )
        return self

    def __next__(self):
        if self._traced_here():
            return self._traced_next()
        return self._take()

    next = __next__

    def get_next(self):
        if self._traced_here():
            return self._traced_next()
        try:
            return self._take()
        except StopIteration:
            raise _end_of_sequence() from None

    def get_next_as_optional(self):
        """The next element as a ``tf.experimental.Optional``: empty at the end, where ``get_next``
        raises."""
        if self._traced_here():
            return self._traced_optional()
        try:
            element = self._take()
        except StopIteration:
            return Optional.empty(self.element_spec)
        return Optional(element, self.element_spec, True)

    def _traced_here(self) -> bool:
        return not self._made_in_function and _graph_helpers.inside_function()

    def _take(self):
        if self._held is not _NOTHING:
            element, self._held = self._held, _NOTHING
            return element
        return next(self._elements)

    def _traced_next(self):
        """The next element, read when the compiled program runs (an ordered ``io_callback``)."""
        if self._held is _NOTHING:
            try:
                self._held = next(self._elements)  # its shapes are the trace's; the first run takes it
            except StopIteration:
                raise _end_of_sequence() from None
        leaves, structure = jax.tree_util.tree_flatten(self._held, is_leaf=_is_tensor)
        specs = [jax.ShapeDtypeStruct(np.shape(x), np.dtype(x.dtype)) for x in leaves]
        runtime_checks.note()  # the call raises the callback's error as its own
        values = io_callback(functools.partial(self._pull, specs), specs, ordered=True)
        return jax.tree_util.tree_unflatten(structure, [Tensor.concrete(v) for v in values])

    def _traced_optional(self):
        """The next element as an Optional whose ``has_value()`` is read when the compiled program
        runs (zeros in the value where there was no element)."""
        if self._held is _NOTHING:
            try:
                self._held = next(self._elements)
            except StopIteration:  # at its end already: every run of the program finds it so
                return Optional.empty(self.element_spec)
        leaves, structure = jax.tree_util.tree_flatten(self._held, is_leaf=_is_tensor)
        specs = [jax.ShapeDtypeStruct(np.shape(x), np.dtype(x.dtype)) for x in leaves]
        runtime_checks.note()
        flag, *values = io_callback(
            functools.partial(self._pull_optional, specs), [jax.ShapeDtypeStruct((), np.bool_), *specs], ordered=True
        )
        value = jax.tree_util.tree_unflatten(structure, [Tensor.concrete(v) for v in values])
        return Optional(value, self.element_spec, Tensor.concrete(flag))

    def _pull_optional(self, specs):
        try:
            element = self._take()
        except StopIteration:
            return [np.asarray(False), *[np.zeros(spec.shape, spec.dtype) for spec in specs]]
        return [np.asarray(True), *self._checked(element, specs)]

    def _pull(self, specs):
        try:
            element = self._take()
        except StopIteration:
            raise runtime_checks.host_failure(_end_of_sequence()) from None
        return self._checked(element, specs)

    @staticmethod
    def _checked(element, specs):
        arrays = [np.asarray(x) for x in jax.tree_util.tree_leaves(element, is_leaf=_is_tensor)]
        for array, spec in zip(arrays, specs):
            if array.shape != spec.shape or array.dtype != spec.dtype:
                raise runtime_checks.host_failure(
                    _errors.GradkitInvalidArgumentError(
                        f"next(iterator) inside a tf.function read an element of shape {array.shape} "
                        f"({array.dtype}) where the function was traced for {spec.shape} ({spec.dtype}): a "
                        "compiled step takes elements of the shapes it was traced with. Batch with "
                        "drop_remainder=True, or call next(iterator) outside and pass the batch as an argument."
                    )
                )
        return arrays


def _end_of_sequence():
    return _errors.GradkitOutOfRangeError(
        "End of sequence: the iterator has given every element. Loop with for, or catch tf.errors.OutOfRangeError."
    )
