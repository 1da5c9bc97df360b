"""TensorFlow's graph-building helpers, with their eager meaning: ``tf.device``,
``tf.control_dependencies``, ``tf.group``, ``tf.tuple``, ``tf.no_op``, ``tf.init_scope``,
``tf.inside_function`` and ``tf.get_current_name_scope``.

gradkit runs a program's ops in the order the program states them, inside ``tf.function``
too (an assignment is a step of the state it threads), so control dependencies have nothing
left to order: ``tf.control_dependencies`` calls its callables, ``tf.tuple`` gives its tensors
back, and ``tf.group``/``tf.no_op`` give None, as TensorFlow does eagerly (inside
``tf.function`` TensorFlow gives an Operation, which gradkit has not). JAX chooses where arrays
live, so ``tf.device`` checks its device string as TensorFlow parses it and places nothing.

>>> import gradkit.tf as tf
>>> with tf.device("/GPU:0"), tf.name_scope("block"):
...     tf.get_current_name_scope()
'block'
>>> tf.inside_function(), bool(tf.function(lambda: tf.inside_function())())
(False, True)
"""

from __future__ import annotations

import contextlib
import threading

import jax

from gradkit import _errors
from gradkit._tape import graph as _graph
from gradkit._tape.tensor import Tensor

from . import _name_scope
from ._control import executing_eagerly

# TensorFlow's device types (DeviceSpec reads a bare 'cpu' or 'GPU:0' as one of them).
_DEVICE_TYPES = ("CPU", "GPU", "TPU")


def _check_device_spec(spec: str) -> None:
    """Refuse what TensorFlow's ``DeviceSpec.from_string`` refuses (the same ValueErrors)."""
    device_type = None
    for part in spec.split("/"):
        fields = part.split(":")
        if fields[0] in ("job", "replica", "task") and len(fields) == 2:
            if fields[0] != "job" and not fields[1].isdigit():
                _bad_device(spec, f"{fields[0]} must be a number, got {fields[1]!r}")
            continue
        if fields[0].upper() in _DEVICE_TYPES and len(fields) <= 2 or fields[0] == "device" and len(fields) == 3:
            if device_type is not None:
                _bad_device(spec, "it names more than one device type")
            device_type = fields[1] if fields[0] == "device" else fields[0]
            index = fields[-1] if len(fields) > 1 else "*"
            if index != "*" and not index.isdigit():
                _bad_device(spec, f"the device index must be a number or '*', got {index!r}")
            continue
        if fields[0]:
            _bad_device(spec, f"{fields[0]!r} is no part of a device spec (job:, replica:, task:, device:, CPU:0, ...)")


def _bad_device(spec: str, why: str):
    raise _errors.GradkitValueError(
        f"tf.device got the device spec {spec!r}, but {why}, and TensorFlow refuses it too. "
        "Write it as TensorFlow does: '/CPU:0', 'GPU:1', '/job:localhost/replica:0/task:0/device:CPU:0'."
    )


@contextlib.contextmanager
def device(device_name):
    """``tf.device(device_name)``: the device string is checked as TensorFlow parses it; JAX places
    the arrays (on its default device), so nothing else changes inside."""
    if callable(device_name):
        raise _errors.GradkitRuntimeError(
            f"tf.device got the function {device_name!r}: tf.device does not support functions, as in "
            "TensorFlow 2. Pass a device string such as '/CPU:0'."
        )
    if device_name is not None and not isinstance(device_name, str):
        raise _errors.GradkitValueError(
            f"tf.device expects a string device name, but got {type(device_name).__name__} ({device_name!r}), "
            "as TensorFlow refuses it. Pass a string such as '/CPU:0', or None."
        )
    if device_name:
        _check_device_spec(device_name)
    yield None


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """``tf.control_dependencies(control_inputs)``: calls the callables among ``control_inputs`` now,
    as TensorFlow does eagerly; the ops inside run after everything before them anyway."""
    if control_inputs is not None:
        try:
            control_inputs = list(control_inputs)
        except TypeError:
            raise _errors.GradkitTypeError(
                f"tf.control_dependencies takes a list of tensors or callables (or None), but got "
                f"{control_inputs!r}, which is not a list, and TensorFlow refuses it too. Wrap it: [x]."
            ) from None
        for control in control_inputs:
            if callable(control):
                control()
    yield None


def group(*inputs, **kwargs):
    """``tf.group(*inputs, name=None)``: None, as in TensorFlow eagerly (the ops have run already)."""
    _only_name("tf.group", kwargs)
    return None


def no_op(name=None):
    """``tf.no_op()``: None, as in TensorFlow eagerly."""
    return None


def tuple(tensors, control_inputs=None, name=None):  # noqa: A001  (TensorFlow's name)
    """``tf.tuple(tensors, control_inputs=None)``: ``tensors`` as given, as TensorFlow gives them
    eagerly (``control_inputs`` have run already: nothing to wait for, nothing called)."""
    return tensors


def _only_name(what: str, kwargs: dict) -> None:
    unknown = sorted(set(kwargs) - {"name"})
    if unknown:
        raise _errors.GradkitTypeError(
            f"{what} got the keyword arguments {unknown}, but takes only name=, as TensorFlow's graph mode "
            f"refuses them too. Pass the tensors positionally: {what}(a, b, name='step')."
        )


class _Lifted(threading.local):
    def __init__(self):
        self.depth = 0  # how many tf.init_scope blocks entered while a tf.function traces


_lifted = _Lifted()


def inside_function() -> bool:
    """``tf.inside_function()``: True while a ``tf.function`` traces its function (an
    ``init_scope`` inside it included), False eagerly."""
    return _lifted.depth > 0 or not executing_eagerly()


@contextlib.contextmanager
def init_scope():
    """``tf.init_scope()``: leaves the ``tf.function`` being traced for the eager context around
    it, as TensorFlow does: every tape is paused, values made from constants are computed at once
    and ``tf.executing_eagerly()`` is True inside (the name scope stays as it is)."""
    traced = not executing_eagerly()
    with tapes_paused(), _name_scope.outside_graph() if traced else contextlib.nullcontext():
        if not traced:
            yield None
            return
        _lifted.depth += 1
        try:
            with jax.ensure_compile_time_eval():
                yield None
        finally:
            _lifted.depth -= 1


@contextlib.contextmanager
def tapes_paused():
    """Every tape recording in this thread paused, as each one's ``stop_recording`` pauses it."""
    session = _graph.local.session
    if session is None:
        yield
        return
    active, session.active = session.active, 0
    try:
        yield
    finally:
        session.active = active


def get_current_name_scope() -> str:
    """``tf.get_current_name_scope()``: the name scope here, without its last ``/`` (``''`` at the root)."""
    return _name_scope.current().rstrip("/")


def is_symbolic_tensor(tensor) -> bool:
    """``tf.is_symbolic_tensor(tensor)``: True for a tensor made while a ``tf.function`` traces (one
    that stands for a value the compiled function computes), False for an eager tensor, a Variable
    or a Python value."""
    return isinstance(tensor, Tensor) and not executing_eagerly()
