"""``ignore_errors``: the elements of a dataset whose production raised an error left out.

TensorFlow drops each element for which a step before ``ignore_errors`` failed with one of its
runtime errors (``tf.errors.OpError``: ``check_numerics``'s InvalidArgumentError, a failed
``py_function``) and goes on with the next. gradkit's steps run as Python generators, which a
raised error ends, so the steps that call a function per element (``map``, ``filter``) ask
``skipping()`` and leave the element out themselves while an ``ignore_errors`` reads them; an
error anywhere else (a generator that raised) ends the input there, as a failed Python generator
ends TensorFlow's ``from_generator``. The cardinality is unknown, as in TensorFlow.
"""

from __future__ import annotations

import contextlib
import threading

from gradkit._op_errors import OpError

from .dataset import Dataset, bool_arg

IGNORABLE = OpError  # TensorFlow's runtime errors: what ignore_errors leaves out
_state = threading.local()


def skipping() -> bool:
    """Whether the step asking runs for an ``ignore_errors`` (an element that fails is left out)."""
    return getattr(_state, "depth", 0) > 0


@contextlib.contextmanager
def _depth(value: int):
    before = getattr(_state, "depth", 0)
    _state.depth = value
    try:
        yield
    finally:
        _state.depth = before


def not_skipping():
    """Where a step calls its function: the pipelines the function iterates itself fail as usual
    (its error reaches the step, which leaves the element out)."""
    return _depth(0)


class IgnoreErrors(Dataset):
    def __init__(self, dataset: Dataset, log_warning=False):
        super().__init__(dataset)
        bool_arg(log_warning, "tf.data.Dataset.ignore_errors(log_warning)")  # TensorFlow's logging: none here

    def _chunks(self):
        chunks = self._inputs[0]._chunks()
        try:
            while True:
                with _depth(getattr(_state, "depth", 0) + 1):
                    try:
                        chunk = next(chunks, None)
                    except IGNORABLE:  # the input cannot go on past it
                        return
                if chunk is None:
                    return
                yield chunk
        finally:
            getattr(chunks, "close", lambda: None)()

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()


def ignore_errors(log_warning=False):
    """``tf.data.experimental.ignore_errors``: for ``dataset.apply``."""
    return lambda dataset: IgnoreErrors(dataset, log_warning)
