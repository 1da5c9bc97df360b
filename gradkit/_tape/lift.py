"""Lifting JAX functions so that a recording tape sees them: ``gk.lift`` and ``gk.numpy``."""

from __future__ import annotations

import contextlib
import functools
import inspect
import types
import weakref
from collections.abc import Callable

import jax
import numpy as np

from .. import _errors
from .._core import frames
from . import record
from .tensor import Tensor


def lift(fn: Callable) -> Callable:
    """Make any JAX function recordable as one op.

    The lifted function takes the same arguments. Called on recorded tensors it records a
    single op (differentiated by JAX as a whole when the tape replays); on plain arrays it
    is ``fn`` itself. Works for jitted functions, optax updates, Flax/Equinox applies.

    The op is compiled once, so every Variable ``fn`` reads must be one of its arguments: one it
    reads from a closure would be a constant of the op (stale after an assignment, with no
    gradient), and the first call refuses it with an error saying so.

    >>> import gradkit as gk, jax, jax.numpy as jnp
    >>> f = gk.lift(jax.jit(lambda x: jnp.sin(x) ** 2))
    >>> x = gk.Variable(1.0)
    >>> with gk.GradientTape() as tape:
    ...     y = f(x)
    >>> round(float(tape.gradient(y, x)), 6)      # 2 sin(x) cos(x)
    0.909297
    """
    return _lifted(fn, check_reads=True)


def lift_op(fn: Callable) -> Callable:
    """``lift`` for gradkit's own ops, which take every Variable they read as an argument (no
    check of the first call)."""
    return _lifted(fn, check_reads=False)


def _lifted(fn: Callable, check_reads: bool) -> Callable:
    if getattr(fn, "__gradkit_lifted__", False):
        return fn
    name = getattr(fn, "__name__", type(fn).__name__)
    checked = [] if check_reads and not _already_checked(fn) else [True]

    @functools.wraps(fn)
    def lifted(*args, **kwargs):
        if not checked:
            _check_reads(fn, name, args, kwargs)
            checked.append(True)
            with contextlib.suppress(TypeError):  # a callable that takes no weak reference
                _CHECKED.add(fn)
        return record.apply(fn, *args, **kwargs)

    lifted.__gradkit_lifted__ = True
    return lifted


# The functions whose reads were checked: gk.lift(f) made anew at each step checks f once.
_CHECKED: weakref.WeakSet = weakref.WeakSet()


def _already_checked(fn) -> bool:
    try:
        return fn in _CHECKED
    except TypeError:
        return False


def _check_reads(fn, name, args, kwargs) -> None:
    """Trace ``fn`` once, abstractly, to refuse a Variable it reads without taking it as an
    argument: the recorded op is compiled once, so that Variable's value would be a constant of
    it (stale at later calls, with no gradient). Arguments that are not arrays stay as given."""

    def abstract(x):
        if isinstance(x, (Tensor, jax.Array, np.ndarray)) or hasattr(type(x), "_read_value"):
            return jax.ShapeDtypeStruct(np.shape(x), x.dtype)
        return x

    leaves, treedef = jax.tree_util.tree_flatten(
        (args, kwargs), is_leaf=lambda x: isinstance(x, Tensor) or hasattr(type(x), "_read_value")
    )
    shapes = [abstract(x) for x in leaves]
    dynamic = [i for i, x in enumerate(shapes) if isinstance(x, jax.ShapeDtypeStruct)]

    def call(*values):
        filled = list(shapes)
        for i, v in zip(dynamic, values):
            filled[i] = v
        a, k = jax.tree_util.tree_unflatten(treedef, filled)
        return fn(*a, **k)

    with frames.lifted_call(name):
        try:
            jax.make_jaxpr(call)(*[shapes[i] for i in dynamic])
        except _errors.GradkitValueError:
            raise
        except Exception:  # noqa: BLE001  (any other trouble shows in the call itself, with its own error)
            pass


def _lift_reporting(fn: Callable, what: str) -> Callable:
    """``lift(fn)`` for one of JAX's own functions: an error JAX raises for inputs it cannot take
    (shapes that do not broadcast, an axis out of range) becomes a ``[gradkit]`` error of the same
    kind that names ``what`` and the inputs."""

    @functools.wraps(fn)
    def lifted(*args, **kwargs):
        try:
            return record.apply(fn, *args, **kwargs)
        except (jax.errors.ConcretizationTypeError, jax.errors.NonConcreteBooleanIndexError) as error:
            reason = str(error).splitlines()[0].rstrip(".")
            advice = (
                "Pass the size it asks for (size=, as jax.jit needs too), or compute"
                if _takes(fn, "size")
                else "Compute"
            )
            raise _errors.GradkitTypeError(
                f"[gradkit] {what} needs a value known when it is recorded (its result's shape depends on its "
                "values, or it reads an argument as a constant), but the tape records each op as a compiled "
                f"program whose array arguments are traced: {reason}. {advice} on the value "
                "outside the tape (t.numpy()), or index with a NumPy mask (x[mask]), which the tape takes as known."
            ) from None
        except (TypeError, ValueError, IndexError) as error:
            raise _errors.bad_op_inputs(error, what, args) from error

    lifted.__gradkit_lifted__ = True
    return lifted


def _takes(fn: Callable, parameter: str) -> bool:
    try:
        return parameter in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False


def lift_namespace(namespace: types.ModuleType, into: dict, skip=()) -> None:
    """Copy ``namespace`` into ``into``, lifting every public function (autograd's wrap_namespace)."""
    for name in dir(namespace):
        if name.startswith("_") or name in skip:
            continue
        obj = getattr(namespace, name)
        if isinstance(obj, types.ModuleType):
            continue
        if callable(obj) and not isinstance(obj, type) and not _is_dtype(obj):
            what = f"{into.get('__name__', 'gradkit.numpy').replace('gradkit.', 'gk.', 1)}.{name}"
            into[name] = _lift_reporting(obj, what)
            # A ufunc's methods (np.add.outer, .reduce, .at, ...) are recorded as the ufunc is.
            for method in _UFUNC_METHODS:
                if isinstance(obj, jax.numpy.ufunc) and hasattr(obj, method):
                    setattr(into[name], method, _lift_reporting(getattr(obj, method), f"{what}.{method}"))
            if name in _FUNCTION_MAKERS:  # the function it makes is recorded as one op too
                into[name] = _lifting_what_it_makes(obj, what)
        else:
            into[name] = obj


_UFUNC_METHODS = ("outer", "reduce", "accumulate", "at", "reduceat")
# jax.numpy functions that return a new function (jnp.vectorize(f)): that function is lifted.
_FUNCTION_MAKERS = frozenset({"vectorize", "frompyfunc"})


def _lifting_what_it_makes(maker: Callable, what: str) -> Callable:
    @functools.wraps(maker)
    def make(*args, **kwargs):
        made = maker(*args, **kwargs)
        lifted = _lift_reporting(made, f"the function {what} made")
        for method in _UFUNC_METHODS:  # frompyfunc makes a ufunc
            if isinstance(made, jax.numpy.ufunc) and hasattr(made, method):
                setattr(lifted, method, _lift_reporting(getattr(made, method), f"{what}(...).{method}"))
        return lifted

    make.__gradkit_lifted__ = True
    return make


def _is_dtype(obj) -> bool:
    import numpy as np

    try:
        return isinstance(obj, type) or isinstance(obj, np.dtype) or hasattr(obj, "dtype") and isinstance(obj, type)
    except Exception:
        return False
