"""``tf.summary``'s writers and the per-thread state summary ops read.

``create_file_writer(logdir)`` opens an event file at once; ``writer.as_default()`` makes it
the thread's default writer (and, given ``step``, sets the default step) until the ``with``
block ends, then flushes it; ``record_if`` turns recording off and on. As in TensorFlow, a
``tf.function`` keeps the writer that was the default when it was traced.

>>> import tempfile, gradkit.tf as tf
>>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
>>> with writer.as_default(step=3):
...     tf.summary.experimental.get_step(), bool(tf.summary.should_record_summaries())
(3, True)
>>> writer.close()
"""

from __future__ import annotations

import contextlib
import os
import threading

from jax.experimental import io_callback

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from .. import _untaken
from .._control import executing_eagerly
from .events_file import EventFile


class _State(threading.local):
    def __init__(self):
        self.writer = None  # the default SummaryWriter, or None
        self.step = None  # the default step: a number, tensor or Variable, or None
        self.recording = None  # record_if's condition (a bool, a bool tensor or a callable), or None


state = _State()


class SummaryWriter:
    """``tf.summary.SummaryWriter``: what ``create_file_writer`` and ``create_noop_writer`` return."""

    def set_as_default(self, step=None):
        """Make this writer the thread's default (and ``step`` the default step, unless None)."""
        self.as_default(step).__enter__()

    def as_default(self, step=None):
        """A context manager making this writer the default inside (and ``step`` the default step,
        unless None); on exit the writer is flushed and the previous default restored."""
        return _Default(self, step)

    def init(self):
        """Nothing to do: the writer is ready when made (TensorFlow 2's eager writers are too)."""

    def flush(self):
        """Write out the events not yet written."""

    def close(self):
        """Flush the writer and close its file."""


class _Default:
    """``writer.as_default(step)``: TensorFlow's ``_SummaryContextManager``."""

    def __init__(self, writer: SummaryWriter, step):
        self._writer = writer
        self._step = step
        self._outer = []

    def __enter__(self):
        self._outer.append((state.writer, state.step))
        state.writer = self._writer
        if self._step is not None:
            state.step = self._step
        return self._writer

    def __exit__(self, *exc):
        state.writer.flush()
        writer, step = self._outer.pop()
        state.writer = writer
        if self._step is not None:
            state.step = step
        return False


class FileWriter(SummaryWriter):
    """A writer of one event file in ``logdir``."""

    def __init__(self, logdir: str, max_queue: int, flush_millis: int, suffix: str):
        self._file = EventFile(logdir, max_queue, flush_millis, suffix)

    def __repr__(self) -> str:
        return f"<gradkit.tf.summary.SummaryWriter {self._file.path!r}>"

    def _refuse_closed(self, what: str) -> None:
        if self._file.closed:
            raise _errors.GradkitRuntimeError(
                f"SummaryWriter.{what} was called after close(): the writer of {self._file.path!r} is closed, and "
                "TensorFlow refuses it too. Create a new writer with tf.summary.create_file_writer(logdir)."
            )

    def set_as_default(self, step=None):
        self._refuse_closed("set_as_default")
        super().set_as_default(step)

    def as_default(self, step=None):
        self._refuse_closed("as_default")
        return super().as_default(step)

    def init(self):
        self._refuse_closed("init")

    def flush(self):
        """Write out the events not yet written; inside ``tf.function``, at each call of the
        compiled function (after the summaries before it), as TensorFlow's flush op runs."""
        if _untaken.quiet():
            return
        if executing_eagerly():
            self._file.flush()
        else:
            io_callback(self._file.flush, None, ordered=True)

    def close(self):
        self._file.close()

    def check_open(self) -> None:
        """Refuse a summary written with this writer, closed, as the default writer."""
        if self._file.closed:
            raise _errors.GradkitNotFoundError(
                f"a summary was written with the closed writer of {self._file.path!r} as the default writer; "
                "TensorFlow raises NotFoundError too. Close a writer after its last summary, or create a new one "
                "with tf.summary.create_file_writer(logdir)."
            )

    def add_event(self, event: bytes) -> None:
        """Queue one encoded Event (called when a summary op runs)."""
        self.check_open()
        self._file.add(event)


class NoopWriter(SummaryWriter):
    """``tf.summary.create_noop_writer()``: as the default writer, summaries are dropped."""

    def set_as_default(self, step=None):
        pass

    @contextlib.contextmanager
    def as_default(self, step=None):
        yield


def _count(value, default: int, what: str) -> int:
    if value is None:
        return default
    number = value.numpy() if isinstance(value, Tensor) else value
    if isinstance(number, bool) or not hasattr(number, "__index__"):
        raise _errors.GradkitTypeError(
            f"tf.summary.create_file_writer got {what}={value!r}: it takes an integer. Pass an int "
            f"(or leave it out for {default})."
        )
    return int(number)


def create_file_writer(
    logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None, experimental_trackable=False
):
    """``tf.summary.create_file_writer``: a writer of a new event file in ``logdir``.

    ``max_queue`` (default 10) events wait before they are written, ``flush_millis`` (default
    120000) at most; ``filename_suffix`` ends the file name (default ``.v2``). ``name`` and
    ``experimental_trackable`` are taken and change nothing.
    """
    del name, experimental_trackable
    if logdir is None:
        raise _errors.GradkitValueError(
            "tf.summary.create_file_writer got logdir=None: it needs a directory, and TensorFlow refuses None too. "
            "Pass a path, or use tf.summary.create_noop_writer() for a writer that writes nothing."
        )
    if isinstance(logdir, Tensor) or not isinstance(logdir, (str, bytes, os.PathLike)):
        raise _errors.GradkitTypeError(
            f"tf.summary.create_file_writer got logdir={logdir!r} ({type(logdir).__name__}): it takes a path "
            "(str or os.PathLike). Pass the directory as a string."
        )
    logdir = os.fsdecode(os.fspath(logdir))
    suffix = ".v2" if filename_suffix is None else filename_suffix
    if not isinstance(suffix, str):
        raise _errors.GradkitTypeError(
            f"tf.summary.create_file_writer got filename_suffix={suffix!r}: it takes a string such as '.v2'."
        )
    return FileWriter(logdir, _count(max_queue, 10, "max_queue"), _count(flush_millis, 120_000, "flush_millis"), suffix)


def create_noop_writer():
    """``tf.summary.create_noop_writer()``: a writer that writes nothing."""
    return NoopWriter()


def flush(writer=None, name=None):
    """``tf.summary.flush``: flush ``writer`` (default: the default writer, if any)."""
    del name
    if writer is None:
        writer = state.writer
        if writer is None:
            return None
    if not isinstance(writer, SummaryWriter):
        raise _errors.GradkitValueError(
            f"tf.summary.flush got writer={writer!r}: it takes a tf.summary.SummaryWriter (or None for the "
            "default writer), and TensorFlow refuses other values too. Pass the writer create_file_writer returned."
        )
    return writer.flush()


@contextlib.contextmanager
def record_if(condition):
    """``tf.summary.record_if(condition)``: summaries inside are written only where ``condition``
    (a bool, a bool tensor, or a callable returning one, called at each summary) holds."""
    outer = state.recording
    state.recording = condition
    try:
        yield
    finally:
        state.recording = outer


def get_step():
    """``tf.summary.experimental.get_step()``: the default step, or None."""
    return state.step


def set_step(step):
    """``tf.summary.experimental.set_step(step)``: the default step (a Variable is read each time a
    summary is written); None unsets it."""
    state.step = step
