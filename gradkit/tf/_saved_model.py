"""``tf.saved_model.save`` / ``load`` for a Module's ``tf.function``s, via ``jax.export``.

Each ``tf.function`` attribute with an ``input_signature`` is exported with
``jax.export`` and serialised with ``vjp_order=1``, so custom gradients survive: the
loaded function is differentiable under a tape in a fresh process. A ``TensorSpec``
dimension of None becomes a symbolic dimension (each its own, except that a leading one
is shared by all arguments when the function combines them); ``TensorSpec(None)`` (any
shape) is exported for scalars. Arguments are tensors inside the function, as in
``tf.function``. Variables the function reads are saved as constants, so a function that
assigns one is refused. A function that draws random numbers (``tf.random``, ``tf.nn.dropout``)
is exported with a runtime seed as its first argument, which the loaded function passes at
each call, so it draws afresh at each call, as TensorFlow's does. A function holding a runtime
check (a ``tf.debugging`` assertion on traced values) is refused: the check is a host callback,
which ``jax.export`` cannot serialize, and saving the function without it would drop it silently.
"""

from __future__ import annotations

import functools
import inspect
import json
import os

import jax
import jax.export  # a submodule jax < 0.8 does not import with jax itself
import numpy as np

from gradkit._core import runtime_checks
from gradkit._core.compat import InconclusiveDimensionOperation
from gradkit._core.functionalize import StateFrame, values_of
from gradkit._core.state import State
from gradkit._core.variable import Variable
from gradkit._errors import (
    PREFIX,
    GradkitError,
    GradkitNotImplementedError,
    GradkitTypeError,
    GradkitValueError,
    OpInputError,
)
from gradkit._tape.lift import lift
from gradkit._tape.tensor import Tensor

from . import _random
from ._convert import convert, wrap
from ._function import Function

_MANIFEST = "gradkit_saved_model.json"

_MSG_RUNTIME_CHECKS = (
    "saved_model.save cannot save {fn}: it checks values when it runs (a tf.debugging assertion or "
    "check_numerics on a tensor computed from its arguments), and gradkit runs such a check as a host callback, "
    "which jax.export cannot serialize. Nothing was saved for it. Check the values outside the saved function "
    "(before calling it, or on its results), or save a variant of the function without the assertions."
)

_MSG_ASSIGNS = (
    "saved_model.save cannot save {fn}: it assigns Variable {name}, and a saved function holds the Variables "
    "it reads as constants (saved with their values at save time), so the assignment would be lost at every "
    "call of the loaded function. Save a function that returns the new value instead (the caller assigns "
    "it), or leave {fn} without an input_signature so that save skips it."
)


class SaveOptions:
    """``tf.saved_model.SaveOptions``: options are accepted; custom gradients are always kept."""

    def __init__(
        self,
        namespace_whitelist=None,
        save_debug_info=False,
        function_aliases=None,
        experimental_io_device=None,
        experimental_variable_policy=None,
        experimental_custom_gradients=True,
        **kwargs,
    ):
        self.experimental_custom_gradients = experimental_custom_gradients


def _arg_specs(signature, shared_batch=False):
    # Every symbolic dimension of one export must come from one scope: jax.export refuses
    # arguments whose dimensions were made in separate scopes (two TensorSpec([None]) arguments).
    # Each None is its own dimension, as TensorFlow's unknown dimensions are unrelated; with
    # shared_batch, a None leading dimension is one "batch" dimension for every argument.
    scope = jax.export.SymbolicScope()
    count = 0
    specs = []
    for spec in signature:
        if spec.shape is None:
            shape = ()
        else:
            dims = []
            for axis, d in enumerate(spec.shape):
                if d is not None:
                    dims.append(str(d))
                elif shared_batch and axis == 0:
                    dims.append("batch")
                else:
                    dims.append(f"d{count}")
                    count += 1
            shape = jax.export.symbolic_shape(", ".join(dims), scope=scope) if dims else ()
        specs.append(jax.ShapeDtypeStruct(shape, spec.dtype))
    return specs


# What jax raises when a traced program needs a relation between symbolic dimensions that
# the export does not know (x + y for x of shape (d0,) and y of shape (d1,)).
_SHAPE_ERRORS = (TypeError, ValueError, InconclusiveDimensionOperation)


def _export(name, fn, signature, seeded=False):
    """``fn`` exported for ``signature``.

    TensorFlow checks at each call that the unknown dimensions of arguments combined by the
    function agree; an export must know it when traced. The first try keeps every None
    dimension independent; when that fails and several arguments have a None leading
    dimension, they are taken as one batch dimension, as a function that combines them
    needs them to be at every call anyway. ``seeded``: ``fn`` takes a runtime seed (a uint32
    pair) before the arguments.
    """
    seed_spec = [jax.ShapeDtypeStruct((2,), np.uint32)] if seeded else []
    try:
        return jax.export.export(jax.jit(fn))(*seed_spec, *_arg_specs(signature))
    except _SHAPE_ERRORS as error:
        if isinstance(error, GradkitError) and not isinstance(error, OpInputError):  # advice, not a shape relation
            raise
        first = error
    leading = sum(1 for spec in signature if spec.shape is not None and len(spec.shape) > 0 and spec.shape[0] is None)
    if leading >= 2:
        try:
            return jax.export.export(jax.jit(fn))(*seed_spec, *_arg_specs(signature, shared_batch=True))
        except _SHAPE_ERRORS as error:
            if isinstance(error, GradkitError) and not isinstance(error, OpInputError):
                raise
    raise GradkitValueError(
        f"saved_model.save could not export {name} for its input_signature {signature}: tracing it with each "
        f"None dimension as an unknown size failed ({type(first).__name__}: {str(first).splitlines()[0].removeprefix(PREFIX)}). "
        "jax.export must know every relation between unknown dimensions when it traces (TensorFlow checks them "
        "at each call). Give the dimensions the function combines fixed sizes in the input_signature, or the "
        "same role (a leading None dimension is shared by all arguments when the function needs it)."
    ) from first


def _functions(obj):
    """``(name, function of the arguments, input_signature)`` per ``tf.function`` of ``obj`` to save.

    Methods decorated in the class, and ``tf.function``s stored as attributes of the instance
    (``self.f = tf.function(self._f, input_signature=...)``, which TensorFlow saves too; an
    instance attribute hides a class one of the same name).
    """
    found = {}
    for name, attr in inspect.getmembers(type(obj)):
        if isinstance(attr, Function) and attr.input_signature is not None:
            found[name] = (functools.partial(attr.python_function, obj), attr.input_signature)
    for name, attr in vars(obj).items() if hasattr(obj, "__dict__") else ():
        if isinstance(attr, Function) and attr.input_signature is not None:
            found[name] = (attr.python_function, attr.input_signature)
    return [(name, fn, signature) for name, (fn, signature) in sorted(found.items())]


def save(obj, export_dir, signatures=None, options=None):
    """Export every ``tf.function`` of ``obj`` that has an ``input_signature``."""
    os.makedirs(export_dir, exist_ok=True)
    names, arguments, seeded = [], {}, []
    for name, fn, signature in _functions(obj):

        def pure(*xs, _fn=fn, _name=name, _seeded=False):
            # Under a frame of its own, an assignment stays in the frame instead of reaching
            # the live Variable as a tracer; a function that makes one cannot be saved (below).
            seed, xs = (xs[0], xs[1:]) if _seeded else (None, xs)
            frame = StateFrame(State.of(()), strict=False, created_are_local=True)
            with frame, _random.tracing(seed):
                out = values_of(_fn(*(Tensor.concrete(x) for x in xs)))
            if frame.assigned:
                var = next(iter(frame.assigned.values()))
                raise GradkitValueError(_MSG_ASSIGNS.format(fn=_name, name=var._label()))
            return out

        checks_before = runtime_checks.count()
        try:
            try:
                exported = _export(name, pure, signature)
            except _random.NeedsSeed:
                # It draws random numbers: a runtime seed argument, so that each call draws afresh.
                exported = _export(name, functools.partial(pure, _seeded=True), signature, seeded=True)
                seeded.append(name)
        except NotImplementedError:  # what jax.export raises for a host callback
            if runtime_checks.count() == checks_before:
                raise
            raise GradkitNotImplementedError(_MSG_RUNTIME_CHECKS.format(fn=name)) from None
        if runtime_checks.count() != checks_before:
            raise GradkitNotImplementedError(_MSG_RUNTIME_CHECKS.format(fn=name))
        with _serialization():
            blob = exported.serialize(vjp_order=1)
        with open(os.path.join(export_dir, f"{name}.jaxexport"), "wb") as f:
            f.write(blob)
        names.append(name)
        arguments[name] = _argument_names(fn, len(signature))
    if not names:
        raise GradkitValueError(
            "saved_model.save found no tf.function with an input_signature on this object; decorate the methods "
            "to save with @tf.function(input_signature=[tf.TensorSpec(...)])."
        )
    with open(os.path.join(export_dir, _MANIFEST), "w") as f:
        json.dump({"functions": names, "arguments": arguments, "seeded": seeded}, f)


class _serialization:
    """Turns the ImportError of a missing serializer into advice."""

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if kind is not None and issubclass(kind, ImportError):
            raise ImportError(
                "[gradkit] saved_model needs the 'flatbuffers' package to serialize with jax.export: "
                "pip install 'gradkit[export]' (or pip install flatbuffers)."
            ) from error
        return False


class _Loaded:
    """The loaded object: one attribute per saved function, recordable by the tape."""

    def __repr__(self) -> str:
        return f"<gradkit.tf loaded SavedModel with {sorted(vars(self))}>"


def _argument_names(fn, count):
    """The names of ``fn``'s first ``count`` parameters, so that the loaded function takes
    them as keywords too, as TensorFlow's does (None where a parameter has none)."""
    try:
        params = list(inspect.signature(fn).parameters.values())[:count]
    except (TypeError, ValueError):
        return [None] * count
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name if p.kind in positional else None for p in params]
    return names + [None] * (count - len(names))


def _callable(name, exported, arg_names, seeded=False):
    call = lift(exported.call)
    in_avals = exported.in_avals[1:] if seeded else exported.in_avals
    count = len(in_avals)
    arg_names = arg_names or [None] * count

    def run(*args, **kwargs):
        args = list(args)
        for key in kwargs:
            if key not in arg_names or arg_names.index(key) < len(args):
                known = ", ".join(n for n in arg_names if n) or "none"
                raise GradkitTypeError(
                    f"the loaded function {name} got an unexpected or repeated keyword argument {key!r} "
                    f"(its arguments, in order: {known}). Pass each argument once, by position or by name."
                )
        for key in arg_names[len(args) :]:
            if key is None or key not in kwargs:
                break
            args.append(kwargs.pop(key))
        if len(args) != count or kwargs:
            raise GradkitTypeError(
                f"the loaded function {name} takes {count} argument(s), one per TensorSpec of the "
                f"input_signature it was saved with, but got {len(args)} positional and keyword "
                f"{sorted(kwargs)}. Pass exactly {count}."
            )
        for position, (a, aval) in enumerate(zip(args, in_avals)):
            # A tensor must have the signature's dtype (TensorFlow's loaded function refuses another,
            # as the tf.function did); Python and NumPy values are converted to it.
            if isinstance(a, (Tensor, Variable, jax.Array)) and np.dtype(a.dtype) != np.dtype(aval.dtype):
                raise GradkitTypeError(
                    f"the loaded function {name} got a tensor of dtype {np.dtype(a.dtype).name} as argument "
                    f"{position}, where its input_signature has {np.dtype(aval.dtype).name}; TensorFlow refuses it "
                    f"too. Cast it first: tf.cast(x, tf.{np.dtype(aval.dtype).name})."
                )
        xs = [convert(a, np.dtype(aval.dtype)) for a, aval in zip(args, in_avals)]
        if seeded:  # a new seed at each call (inside a tf.function, from its runtime seed)
            xs.insert(0, _random.function_seed())
        return wrap(call(*xs))

    return run


def load(export_dir, tags=None, options=None):
    """Load what ``save`` wrote; each function is ``gk.lift``-ed ``Exported.call``."""
    with open(os.path.join(export_dir, _MANIFEST)) as f:
        manifest = json.load(f)
    names, arguments = manifest["functions"], manifest.get("arguments", {})
    obj = _Loaded()
    for name in names:
        with open(os.path.join(export_dir, f"{name}.jaxexport"), "rb") as f:
            with _serialization():
                exported = jax.export.deserialize(bytearray(f.read()))
        setattr(obj, name, _callable(name, exported, arguments.get(name), name in manifest.get("seeded", ())))
    return obj
