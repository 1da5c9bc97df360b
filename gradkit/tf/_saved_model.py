"""``tf.saved_model.save`` / ``load`` for a Module's ``tf.function``s, via ``jax.export``.

Each ``tf.function`` attribute with an ``input_signature`` is exported with
``jax.export`` and serialised with ``vjp_order=1``, so custom gradients survive: the
loaded function is differentiable under a tape in a fresh process. A ``TensorSpec``
dimension of None becomes a symbolic dimension; ``TensorSpec(None)`` (any shape) is
exported for scalars. Variables the function reads are saved as constants.
"""

from __future__ import annotations

import inspect
import json
import os
import string

import jax
import numpy as np

from gradkit._core.functionalize import values_of
from gradkit._errors import GradkitValueError
from gradkit._tape.lift import lift

from ._convert import convert, wrap
from ._function import Function

_MANIFEST = "gradkit_saved_model.json"


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


def _arg_specs(signature):
    letters = iter(string.ascii_lowercase)
    specs = []
    for spec in signature:
        if spec.shape is None:
            shape = ()
        else:
            dims = [next(letters) if d == -1 else str(d) for d in spec.shape]
            shape = jax.export.symbolic_shape(", ".join(dims)) if dims else ()
        specs.append(jax.ShapeDtypeStruct(shape, spec.dtype))
    return specs


def save(obj, export_dir, signatures=None, options=None):
    """Export every ``tf.function`` of ``obj`` that has an ``input_signature``."""
    os.makedirs(export_dir, exist_ok=True)
    names = []
    for name, attr in inspect.getmembers(type(obj)):
        if not isinstance(attr, Function) or attr.input_signature is None:
            continue
        fn = attr.python_function

        def pure(*xs, _fn=fn):
            return values_of(_fn(obj, *xs))

        exported = jax.export.export(jax.jit(pure))(*_arg_specs(attr.input_signature))
        with _serialization():
            blob = exported.serialize(vjp_order=1)
        with open(os.path.join(export_dir, f"{name}.jaxexport"), "wb") as f:
            f.write(blob)
        names.append(name)
    if not names:
        raise GradkitValueError(
            "saved_model.save found no tf.function with an input_signature on this object; decorate the methods "
            "to save with @tf.function(input_signature=[tf.TensorSpec(...)])."
        )
    with open(os.path.join(export_dir, _MANIFEST), "w") as f:
        json.dump({"functions": names}, f)


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


def _callable(exported):
    call = lift(exported.call)

    def run(*args):
        xs = [convert(a, np.dtype(aval.dtype)) for a, aval in zip(args, exported.in_avals)]
        return wrap(call(*xs))

    return run


def load(export_dir, tags=None, options=None):
    """Load what ``save`` wrote; each function is ``gk.lift``-ed ``Exported.call``."""
    with open(os.path.join(export_dir, _MANIFEST)) as f:
        names = json.load(f)["functions"]
    obj = _Loaded()
    for name in names:
        with open(os.path.join(export_dir, f"{name}.jaxexport"), "rb") as f:
            with _serialization():
                exported = jax.export.deserialize(bytearray(f.read()))
        setattr(obj, name, _callable(exported))
    return obj
