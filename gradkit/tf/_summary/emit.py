"""Writing one summary: now, or each time a compiled ``tf.function`` runs.

A summary op hands ``emit`` its step, a function giving its data, and a function that makes the
serialized ``Summary`` (tag, metadata, tensor) from the data's NumPy values. Eagerly the event is
made and queued at once.
While a ``tf.function`` (``gk.jit``) is traced, the data and step are values of the program,
known only when it runs: ``emit`` puts an ordered ``jax.experimental.io_callback`` into the
program, so each call of the compiled function writes one event with that call's values, in
program order, as TensorFlow's summary ops run at each call. Values go to the callback through
``stop_gradient`` and are read with every tape paused, so logging changes no gradient.

As in TensorFlow, a traced function keeps the default writer and the recording condition it
was traced with (a condition that is a tensor is checked at each call). A summary inside a
``tf.function`` whose call an outer ``GradientTape`` records is written when the tape computes
the call (when a result is read, or a gradient through it taken, which may compute it twice);
take the gradient inside the ``tf.function`` (TensorFlow's usual training step) for one write
per call.
"""

from __future__ import annotations

import time

import jax
import numpy as np
from jax.experimental import io_callback

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from .. import _untaken
from .._control import _value, executing_eagerly
from .._graph_helpers import tapes_paused
from . import protos
from .writer import FileWriter, state


def read(x):
    """The value behind a tensor or Variable (a tracer inside ``tf.function``); anything else as it is."""
    if isinstance(x, (Tensor, Variable)):
        with tapes_paused():
            return _value(x)
    return x


def _is_traced(x) -> bool:
    return isinstance(x, jax.core.Tracer)


_FLAGS: dict = {}  # True/False as tensors, made once outside any trace


def _flag(value: bool):
    flag = _FLAGS.get(value)
    if flag is None:
        array = jax.numpy.asarray(value)
        flag = Tensor.concrete(array)
        if not _is_traced(array):
            _FLAGS[value] = flag
    return flag


def check_step(step, what: str):
    """TensorFlow's check of an explicit ``step``: an integer with exactly one element."""
    if step is None:
        return
    value = read(step)
    if isinstance(value, (bool, float)):
        raise _errors.GradkitTypeError(
            f"{what} got step={step!r} ({type(value).__name__}): a step is an integer, and TensorFlow cannot "
            "convert this to int64 either. Pass an int (int(step) for a whole-number float)."
        )
    dtype = np.dtype(value.dtype) if hasattr(value, "dtype") else np.asarray(value).dtype
    if dtype.kind not in "iu":
        raise _errors.GradkitValueError(
            f"{what} got a step of dtype {dtype}: a step is an integer (TensorFlow converts it to int64 and "
            "refuses this too). Pass an int, an integer tensor or an integer Variable (tf.cast(step, tf.int64))."
        )
    if np.size(value) != 1:
        raise _errors.GradkitValueError(
            f"{what} got a step of shape {tuple(np.shape(value))}: the step must be a scalar, and TensorFlow "
            "refuses this too. Pass one integer."
        )


def condition():
    """record_if's condition now: True/False, or a boolean value of the program being traced."""
    cond = state.recording
    if callable(cond) and not isinstance(cond, (Tensor, Variable)):
        cond = cond()
    if cond is None:
        return True
    value = read(cond)
    if _is_traced(value):
        return jax.numpy.reshape(value, ()).astype(bool)
    return bool(np.asarray(value))


def should_record_summaries():
    """``tf.summary.should_record_summaries()``: a bool tensor, False without a default writer,
    else ``record_if``'s condition (True outside any ``record_if``)."""
    if not isinstance(state.writer, FileWriter):
        return _flag(False)
    cond = condition()
    return Tensor.concrete(cond) if _is_traced(cond) else _flag(cond)


def emit(what: str, step, data, make_summary):
    """Write the event of ``make_summary(*arrays)`` (a serialized ``Summary`` from the NumPy values
    of what ``data()`` returns) to the default writer, now or at each call of the program being
    traced. ``data`` is called only when a summary is written. Returns TensorFlow's result: True
    when written, False without a default writer or outside ``record_if``."""
    writer = state.writer
    if not isinstance(writer, FileWriter):  # None, or a writer that writes nothing
        return _flag(False)
    if _untaken.quiet():  # a branch tf.cond does not take, traced for what it reads: it never runs
        return _flag(True)
    writer.check_open()
    cond = condition()
    if cond is False:
        return _flag(False)
    if step is None:
        step = state.step
    if step is None:
        raise _errors.GradkitValueError(
            f"{what} has no step: no step= was given and tf.summary.experimental.set_step() set none, so the "
            "event has no x-coordinate (TensorFlow refuses this too). Pass step= (the epoch or batch number), "
            "or set a default with writer.as_default(step=...) or tf.summary.experimental.set_step(step)."
        )
    values = [read(step), *data()]
    dynamic = [i for i, v in enumerate(values) if isinstance(v, jax.Array)]

    def write(cond_value, *arrays):
        if cond_value is not None and not bool(np.asarray(cond_value)):
            return
        merged = list(values)
        for i, array in zip(dynamic, arrays):
            merged[i] = array
        step_value = int(np.asarray(merged[0]).reshape(-1)[0])
        summary = make_summary(*[np.asarray(v) for v in merged[1:]])
        writer.add_event(protos.event(time.time(), step_value, summary))

    traced_cond = _is_traced(cond)
    if traced_cond or any(_is_traced(values[i]) for i in dynamic) or not executing_eagerly():
        operands = [jax.lax.stop_gradient(values[i]) for i in dynamic]
        if traced_cond:
            io_callback(write, None, jax.lax.stop_gradient(cond), *operands, ordered=True)
            return Tensor.concrete(cond)
        io_callback(lambda *arrays: write(None, *arrays), None, *operands, ordered=True)
        return _flag(True)
    write(None, *[values[i] for i in dynamic])
    return _flag(True)
