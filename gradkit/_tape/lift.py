"""Lifting JAX functions so that a recording tape sees them: ``gk.lift`` and ``gk.numpy``."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable

import jax

from .. import _errors
from . import record


def lift(fn: Callable) -> Callable:
    """Make any JAX function recordable as one op.

    The lifted function takes the same arguments. Called on recorded tensors it records a
    single op (differentiated by JAX as a whole when the tape replays); on plain arrays it
    is ``fn`` itself. Works for jitted functions, optax updates, Flax/Equinox applies.

    >>> import gradkit as gk, jax, jax.numpy as jnp
    >>> f = gk.lift(jax.jit(lambda x: jnp.sin(x) ** 2))
    >>> x = gk.Variable(1.0)
    >>> with gk.GradientTape() as tape:
    ...     y = f(x)
    >>> round(float(tape.gradient(y, x)), 6)      # 2 sin(x) cos(x)
    0.909297
    """
    if getattr(fn, "__gradkit_lifted__", False):
        return fn

    @functools.wraps(fn)
    def lifted(*args, **kwargs):
        return record.apply(fn, *args, **kwargs)

    lifted.__gradkit_lifted__ = True
    return lifted


def _lift_reporting(fn: Callable, what: str) -> Callable:
    """``lift(fn)`` for one of JAX's own functions: an error JAX raises for inputs it cannot take
    (shapes that do not broadcast, an axis out of range) becomes a ``[gradkit]`` error of the same
    kind that names ``what`` and the inputs."""

    @functools.wraps(fn)
    def lifted(*args, **kwargs):
        try:
            return record.apply(fn, *args, **kwargs)
        except (jax.errors.ConcretizationTypeError, jax.errors.NonConcreteBooleanIndexError) as error:
            raise _errors.GradkitTypeError(
                f"[gradkit] {what} needs a value known when it is recorded (its result's shape depends on its "
                "values, or it reads an argument as a constant), but the tape records each op as a compiled "
                f"program whose array arguments are traced: {str(error).splitlines()[0]} Pass the size it asks for "
                "(size=, as jax.jit needs too), or compute on the value outside the tape (t.numpy())."
            ) from None
        except (TypeError, ValueError, IndexError) as error:
            raise _errors.bad_op_inputs(error, what, args) from error

    lifted.__gradkit_lifted__ = True
    return lifted


def lift_namespace(namespace: types.ModuleType, into: dict, skip=()) -> None:
    """Copy ``namespace`` into ``into``, lifting every public function (autograd's wrap_namespace)."""
    for name in dir(namespace):
        if name.startswith("_") or name in skip:
            continue
        obj = getattr(namespace, name)
        if isinstance(obj, types.ModuleType):
            continue
        if callable(obj) and not isinstance(obj, type) and not _is_dtype(obj):
            into[name] = _lift_reporting(
                obj, f"{into.get('__name__', 'gradkit.numpy').replace('gradkit.', 'gk.', 1)}.{name}"
            )
        else:
            into[name] = obj


def _is_dtype(obj) -> bool:
    import numpy as np

    try:
        return isinstance(obj, type) or isinstance(obj, np.dtype) or hasattr(obj, "dtype") and isinstance(obj, type)
    except Exception:
        return False
