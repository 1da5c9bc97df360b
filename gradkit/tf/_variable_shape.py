"""``tf.Variable``'s graph-era arguments, as TensorFlow 2 takes them eagerly.

``shape=`` declares the Variable's shape; a declared size of ``None`` (``tf.TensorShape([None])``)
lets a later ``assign`` give that axis another size, as in TensorFlow, and ``v.shape`` reports
the declared shape. ``validate_shape=`` has no effect eagerly in TensorFlow 2 (its ``shape=``
decides), and so has none here. ``caching_device=`` is checked as TensorFlow parses a device
string; JAX places arrays itself. ``variable_def=`` (restoring from a graph's protocol buffer)
is graph-only and refused; ``import_scope=`` only qualifies its names, and TensorFlow 2
ignores it without one. A change of shape is taken eagerly, outside a tape and a compiled
function (there it is refused).

>>> import gradkit.tf as tf
>>> v = tf.Variable([1.0, 2.0], shape=tf.TensorShape([None]))
>>> v.shape, v.assign([1.0, 2.0, 3.0]).numpy().tolist(), v.shape
(TensorShape([None]), [1.0, 2.0, 3.0], TensorShape([None]))
"""

from __future__ import annotations

import numbers

import numpy as np

from gradkit import _errors
from gradkit._core import frames

from ._convert import TensorShape
from ._graph_helpers import _check_device_spec


def _dims(shape, what: str) -> tuple:
    """``shape=`` (a TensorShape, list or tuple of ints and Nones, or an int) as a tuple."""
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        return (int(shape),)
    try:
        dims = tuple(shape)
    except TypeError:
        dims = None
    ok = dims is not None and all(
        d is None or (isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 0) for d in dims
    )
    if not ok:
        raise _errors.GradkitTypeError(
            f"{what} got shape={shape!r}, which is not a shape: TensorFlow takes a tf.TensorShape or a list of "
            "sizes, each an int >= 0 or None (a size an assign may change). Pass e.g. shape=tf.TensorShape([None, 3])."
        )
    return tuple(None if d is None else int(d) for d in dims)


def compatible(declared: tuple, shape: tuple) -> bool:
    """Whether a value of ``shape`` fits the declared shape (a None size takes any; an unknown
    rank, any shape)."""
    if isinstance(declared, TensorShape) and declared.rank is None:
        return True
    return len(declared) == len(shape) and all(d is None or d == s for d, s in zip(declared, shape))


def declared_shape(shape, value_shape: tuple, what: str):
    """The declared shape as a TensorShape when it leaves some size open (None when ``shape=``
    is not given or names the initial value's shape exactly), checked against the initial value."""
    if shape is None:
        return None
    if isinstance(shape, TensorShape) and shape.rank is None:
        return shape  # tf.TensorShape(None): an assign may change the rank too
    dims = _dims(shape, what)
    if not compatible(dims, tuple(value_shape)):
        raise _errors.GradkitValueError(
            f"{what}: the initial value's shape {tuple(value_shape)} is not compatible with the explicitly "
            f"supplied shape={list(dims)}, as TensorFlow refuses too. Pass a shape whose known sizes are the "
            "initial value's (None where an assign may change it), or leave shape out."
        )
    return None if None not in dims else TensorShape(dims)


def check_assignable(declared: TensorShape, value, name: str) -> tuple:
    """The shape of ``value``, which a Variable declared with ``declared`` may take; raise if not."""
    got = getattr(value, "shape", None)
    got = tuple(np.shape(value) if got is None else got)
    if not compatible(declared, got):
        raise _errors.AssignmentError(
            f"cannot assign a value of shape {got} to Variable {name}, declared with shape {tuple(declared)}: the "
            "sizes it declared must stay, as TensorFlow requires (a None size may change). Assign a value of a "
            "compatible shape, or create the Variable with shape=tf.TensorShape([None, ...]) where it may change."
        )
    return got


def check_resizable_here(name: str, current: tuple, new: tuple) -> None:
    """A change of shape is taken where nothing records or traces: a tape or a compiled call
    (tf.function, gk.jit, a transform) keeps the Variable's shape as it found it, so it is
    refused there."""
    if current != new and not frames.idle():
        raise _errors.GradkitNotImplementedError(
            f"Variable {name}, declared with a None size, got an assign of shape {new} (it holds {current}) under "
            "a GradientTape or inside tf.function, gk.jit or a functional transform, which gradkit.tf does not "
            "implement: they keep each Variable's shape as they found it. Make the assignment that changes its "
            "shape outside them (before the tape or the call)."
        )


def check_caching_device(caching_device) -> None:
    """TensorFlow parses the device string eagerly (and refuses what is not one)."""
    if caching_device is None:
        return
    if not isinstance(caching_device, str):
        raise _errors.GradkitValueError(
            f"tf.Variable got caching_device={caching_device!r} ({type(caching_device).__name__}); TensorFlow "
            "expects a string device name such as '/CPU:0'. Pass one, or leave it out (gradkit.tf places "
            "arrays with JAX)."
        )
    _check_device_spec(caching_device)


def refuse_variable_def(variable_def, initial_value) -> None:
    if variable_def is None:
        return
    if initial_value is not None:
        raise _errors.GradkitValueError(
            "tf.Variable got both variable_def= and initial_value=, which TensorFlow takes as mutually exclusive. "
            "Pass initial_value= only."
        )
    raise _errors.GradkitNotImplementedError(
        "tf.Variable(variable_def=...) restores a Variable from a graph's VariableDef protocol buffer, "
        "which is graph-only and not implemented in gradkit.tf. Create it from its value: "
        "tf.Variable(initial_value, name=...), or restore it with tf.train.Checkpoint."
    )
