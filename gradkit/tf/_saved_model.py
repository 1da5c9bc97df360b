"""``tf.saved_model.save`` / ``load`` for a Module's Variables and ``tf.function``s, via ``jax.export``.

``save`` walks the object as TensorFlow walks a ``tf.Module`` (``_saved_model_objects``): its
Variables, submodules, lists and dicts of them, and every ``tf.function`` with an
``input_signature`` among them. It writes the Variables' values, the tree, and each function
exported with ``jax.export`` as a program of the Variables it reads and its arguments, serialised
with ``vjp_order=2`` where jax can (else 1), so custom gradients and second derivatives survive.
``load`` makes new Variables with the saved values at the same places (``loaded.w``,
``loaded.sub.v``), and functions that read them at each call, assign the ones the function
assigned, and are recorded by a tape (a gradient with respect to ``loaded.w`` works).
``signatures=`` (a function, or a dict of them or of their concrete functions) becomes
``loaded.signatures``, whose functions take keyword arguments and return a dict, as in TensorFlow;
an object with exactly one function of its own serves it as ``serving_default``, and a Keras
model with declared inputs given as it is serves its call (``inputs=``, the batch size unknown),
as TensorFlow saves one; the loaded object is then called as the model was.

A ``TensorSpec`` dimension of None becomes a symbolic dimension (each its own, except that a
leading one is shared by all arguments when the function combines them); ``TensorSpec(None)`` (any
shape) is exported for scalars. An argument may be a tuple, list or dict of ``TensorSpec``s.
Arguments are tensors inside the function, as in ``tf.function``. A Variable the function reads
that the object does not hold is saved as a constant, and assigning one is refused. A function
that draws random numbers (``tf.random``, ``tf.nn.dropout``) is exported with a runtime seed as
its first argument after the Variables, which the loaded function passes at each call, so it draws
afresh at each call, as TensorFlow's does. A function holding a runtime check (a
``tf.debugging`` assertion on traced values) is refused: the check is a host callback, which
``jax.export`` cannot serialize, and saving the function without it would drop it silently. A
``tf.function`` without an ``input_signature`` is saved, as TensorFlow saves it, once per type of
call it was traced for before saving (``_saved_model_objects.traced_signatures``: tensors by
shape and dtype, Python values as they were); the loaded function runs the first whose types a
call fits, a left-out parameter taking its default, and raises where none fits.

A signature function takes one keyword per tensor of its input signature, named as TensorFlow
names them: the ``TensorSpec``'s name, else its argument's, made unique (``pair``, ``pair_1``).
An object without functions is saved with its Variables; an object ``load`` made that holds
functions is refused (its functions are saved programs, not tf.functions to trace again). A
Variable declared with a None size is exported at any size of that dimension and loaded so.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
from collections.abc import Mapping

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
    GradkitNotFoundError,
    GradkitNotImplementedError,
    GradkitTypeError,
    GradkitValueError,
    OpInputError,
)
from gradkit._tape.lift import lift_op as lift
from gradkit._tape.tensor import Tensor

from . import _random
from . import _saved_model_functions as _functions
from . import _saved_model_objects as _objects
from ._convert import TensorShape, convert, wrap
from ._exported_batching import looped_when_batched
from ._function import Function, TensorSpec
from ._variables import Variable as TfVariable

_MANIFEST = "gradkit_saved_model.json"
_VALUES = "variables.npz"

_MSG_RUNTIME_CHECKS = (
    "saved_model.save cannot save {fn}: it checks values when it runs (a tf.debugging assertion or "
    "check_numerics on a tensor computed from its arguments), and gradkit runs such a check as a host callback, "
    "which jax.export cannot serialize. Nothing was saved for it. Check the values outside the saved function "
    "(before calling it, or on its results), or save a variant of the function without the assertions."
)

_MSG_ASSIGNS = (
    "saved_model.save cannot save {fn}: it assigns Variable {name}, which the saved object does not hold (no "
    "attribute of it or of its submodules, lists or dicts refers to it), so nothing would restore it and the "
    "assignment would be lost at every call of the loaded function. Keep the Variable as an attribute of the "
    "module (self.v = tf.Variable(...)), or leave {fn} without an input_signature so that save skips it."
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


def _arg_specs(signature, shared_batch=False, variables=()):
    # Every symbolic dimension of one export must come from one scope: jax.export refuses
    # arguments whose dimensions were made in separate scopes (two TensorSpec([None]) arguments).
    # Each None is its own dimension, as TensorFlow's unknown dimensions are unrelated; with
    # shared_batch, a None leading dimension is one "batch" dimension for every argument.
    # ``variables``: ``(shape, dtype)`` of the Variables the program takes first, a None size
    # (a Variable declared with shape=[None]) a dimension of its own, never the batch.
    scope = jax.export.SymbolicScope()
    count = 0
    specs = []
    for k, spec in enumerate([*variables, *signature]):
        shape_in, dtype = spec if k < len(variables) else (spec.shape, spec.dtype)
        if shape_in is None:
            shape = ()
        else:
            dims = []
            for axis, d in enumerate(shape_in):
                if d is not None:
                    dims.append(str(d))
                elif shared_batch and axis == 0 and k >= len(variables):
                    dims.append("batch")
                else:
                    dims.append(f"d{count}")
                    count += 1
            shape = jax.export.symbolic_shape(", ".join(dims), scope=scope) if dims else ()
        specs.append(jax.ShapeDtypeStruct(shape, dtype))
    return specs


# What jax raises when a traced program needs a relation between symbolic dimensions that
# the export does not know (x + y for x of shape (d0,) and y of shape (d1,)).
_SHAPE_ERRORS = (TypeError, ValueError, InconclusiveDimensionOperation)


def _export(name, fn, values, signature, seeded=False):
    """``fn`` exported for ``signature``.

    TensorFlow checks at each call that the unknown dimensions of arguments combined by the
    function agree; an export must know it when traced. The first try keeps every None
    dimension independent; when that fails and several arguments have a None leading
    dimension, they are taken as one batch dimension, as a function that combines them
    needs them to be at every call anyway. ``seeded``: ``fn`` takes a runtime seed (a uint32
    pair) before the arguments.
    """
    seed = [jax.ShapeDtypeStruct((2,), np.uint32)] if seeded else []

    def specs(shared_batch=False):
        all_specs = _arg_specs(signature, shared_batch, values)
        return [*all_specs[: len(values)], *seed, *all_specs[len(values) :]]

    leading = sum(1 for spec in signature if spec.shape is not None and len(spec.shape) > 0 and spec.shape[0] is None)
    try:
        return jax.export.export(jax.jit(fn))(*specs())
    except _SHAPE_ERRORS as error:
        advice = isinstance(error, GradkitError) and not isinstance(error, OpInputError)
        if advice and leading < 2:  # not a relation between unknown sizes: the function's own error
            raise
        first = error
    if leading >= 2:
        try:
            return jax.export.export(jax.jit(fn))(*specs(shared_batch=True))
        except _SHAPE_ERRORS as error:
            if isinstance(error, GradkitError) and not isinstance(error, OpInputError):
                raise
        if advice:  # (a Keras merge of two batch sizes refuses unrelated ones in its own words)
            raise first
    raise GradkitValueError(
        f"saved_model.save could not export {name} for its input_signature {signature}: tracing it with each "
        f"None dimension as an unknown size failed ({type(first).__name__}: {str(first).splitlines()[0].removeprefix(PREFIX)}). "
        "jax.export must know every relation between unknown dimensions when it traces (TensorFlow checks them "
        "at each call). Give the dimensions the function combines fixed sizes in the input_signature, or the "
        "same role (a leading None dimension is shared by all arguments when the function needs it)."
    ) from first


def save(obj, export_dir, signatures=None, options=None):
    """Save ``obj``: its Variables' values, the tree of its tracked attributes, and every
    ``tf.function`` with an ``input_signature`` (its own and its submodules'), each exported as
    a program of the Variables it reads and its arguments. Nothing is written unless all of them
    export."""
    walk = _objects.Walk(obj)
    uncalled = [f for _, f in walk.functions if f.input_signature is not None and not (f._called or f._created)]
    if uncalled:
        # As TensorFlow's save traces them: a function never called makes the Variables it creates
        # on its first call (a layer built lazily), which are then saved with the others.
        for function in uncalled:
            function.get_concrete_function()
        walk = _objects.Walk(obj)
    functions, dispatch = [], {}
    for stem, function in walk.functions:
        if function.input_signature is not None:
            functions.append((stem, function.python_function, function.input_signature))
            continue
        # Traced without an input_signature: a concrete function per type it was traced for, and
        # the loaded function calls the one a call's arguments fit, as TensorFlow's does.
        dispatch[stem] = []
        for k, signature in enumerate(_objects.traced_signatures(function)):
            dispatch[stem].append(f"{stem}.{k}")
            functions.append((dispatch[stem][-1], function.python_function, signature))
    if not functions and signatures is None:
        signatures = _keras_serving_function(obj)
    serving = _signature_stems(signatures, walk, functions)
    if signatures is not None and "__call__" not in walk.tree["functions"] and "serving_default" in serving:
        # A Keras model saved as it is: the loaded object is called as the model was.
        walk.tree["functions"]["__call__"] = serving["serving_default"]
    if walk.loaded_functions:
        raise GradkitNotImplementedError(
            f"saved_model.save got an object loaded by tf.saved_model.load that holds saved functions "
            f"({', '.join(sorted(walk.loaded_functions))}); TensorFlow saves it again, but gradkit cannot: a loaded "
            "function is a deserialized jax.export program, not a tf.function gradkit can trace again. Save the "
            "original object instead: build it again, copy the loaded values into it (for a, b in "
            "zip(model.variables, loaded.variables): a.assign(b)) and save that."
        )
    # No function at all (a Module holding Variables only): its Variables are saved, as TensorFlow saves them.
    blobs, entries = {}, {}
    for stem, fn, signature in functions:
        blobs[stem], entries[stem], outputs = _export_function(stem, fn, list(signature), walk)
        for key in [key for key, s in serving.items() if s == stem]:
            if signatures is None and not _valid_signature_outputs(outputs):
                # The one function picked as serving_default returns what a signature cannot (a
                # nested structure, None): TensorFlow then saves no signature, the function itself.
                del serving[key]
                continue
            _check_signature_outputs(outputs, stem, key)
    os.makedirs(export_dir, exist_ok=True)
    for stem, blob in blobs.items():
        with open(os.path.join(export_dir, f"{stem}.jaxexport"), "wb") as f:
            f.write(blob)
    np.savez(
        os.path.join(export_dir, _VALUES),
        **{f"v{i}": np.asarray(jax.device_get(var.value)) for i, var in enumerate(walk.variables)},
    )
    variables = [
        {"name": var.name, "trainable": bool(var._trainable), "shape": list(_saved_shape(var))}
        for var in walk.variables
    ]
    manifest = {
        "functions": entries,
        "dispatch": dispatch,
        "tree": walk.tree,
        "variables": variables,
        "signatures": serving,
    }
    with open(os.path.join(export_dir, _MANIFEST), "w") as f:
        json.dump(manifest, f)


def _export_function(stem, fn, signature, walk):
    """``(serialized program, manifest entry)`` of one function: the program takes the saved
    Variables' values (``walk.variables``, each in its place), then a runtime seed when it draws
    random numbers, then its arguments' leaves; it returns its output and the new values of
    the Variables it assigned."""
    structure = _objects.signature_structure(signature)
    flat = _objects.flat_specs(signature)
    variables = tuple(walk.variables)
    assigned: list = []

    def pure(*inputs, _seeded=False):
        values, rest = inputs[: len(variables)], inputs[len(variables) :]
        seed, xs = (rest[0], rest[1:]) if _seeded else (None, rest)
        # Under a frame of its own, the saved Variables read the program's inputs, and an
        # assignment stays in the frame: the program returns the new value, the loaded
        # function assigns it.
        frame = StateFrame(State._make(variables, tuple(values)), strict=False, created_are_local=True)
        leaves = iter([Tensor.concrete(x) for x in xs])
        with frame, _random.tracing(seed):
            out = _plain(fn(*(_objects.unflatten_argument(s, leaves) for s in structure)))
        new = frame.assigned_state()
        indices = []
        for var in new.variables:
            index = walk.index_of(var)
            if index is None:
                raise GradkitValueError(_MSG_ASSIGNS.format(fn=stem, name=var._label()))
            indices.append(index)
        assigned[:] = indices
        # An assigned value may be a Tensor (the argument itself, ``v.assign(x)``): the program
        # returns plain arrays, as jax.export serializes no other type in an output.
        return out, _plain(tuple(new[var] for var in new.variables))

    # A Variable declared with a None size (shape=tf.TensorShape([None])) is taken at any size.
    values = [(_saved_shape(var), np.dtype(var.dtype)) for var in variables]
    checks_before = runtime_checks.count()
    seeded = False
    try:
        try:
            exported = _export(stem, pure, values, flat)
        except _random.NeedsSeed:
            # It draws random numbers: a runtime seed argument, so that each call draws afresh.
            exported = _export(stem, functools.partial(pure, _seeded=True), values, flat, seeded=True)
            seeded = True
    except NotImplementedError:  # what jax.export raises for a host callback
        if runtime_checks.count() == checks_before:
            raise
        raise GradkitNotImplementedError(_MSG_RUNTIME_CHECKS.format(fn=stem)) from None
    if runtime_checks.count() != checks_before:
        raise GradkitNotImplementedError(_MSG_RUNTIME_CHECKS.format(fn=stem))
    with _serialization():
        # Second order too (a Hessian through the loaded function) where jax can serialize it, else
        # the first; a function with no reverse derivative at all (a while_loop whose length is a
        # tensor) is saved to run forward, and a gradient through the loaded one is refused.
        for vjp_order in (2, 1, 0):
            try:
                blob = exported.serialize(vjp_order=vjp_order)
                break
            except Exception:  # noqa: BLE001 - whatever stops this order, a lower one may serialize
                if vjp_order == 0:
                    raise
    entry = {
        "specs": [[None if spec.shape is None else list(spec.shape), np.dtype(spec.dtype).name] for spec in flat],
        "arguments": _argument_names(fn, len(signature)),
        "keywords": _signature_keywords(signature, _argument_names(fn, len(signature))),
        "names": [getattr(spec, "name", None) for spec in flat],
        "defaults": _argument_defaults(fn, len(signature)),
        "structure": structure,
        "seeded": seeded,
        "vjp_order": vjp_order,
        "assigns": list(assigned),
        "reads": [i for i in exported.module_kept_var_idx if i < len(variables)],
    }
    return blob, entry, _functions.output_specs(exported)


def _valid_signature_outputs(outputs) -> bool:
    try:
        _check_signature_outputs(outputs, "", "")
    except GradkitValueError:
        return False
    return True


def _check_signature_outputs(outputs, stem: str, key: str) -> None:
    """A signature function returns a tensor, a sequence of tensors or a dict of string keys to
    tensors (TensorFlow refuses anything else, as its signature's outputs are named tensors)."""
    if isinstance(outputs, TensorSpec):
        return
    if isinstance(outputs, Mapping):
        items = list(outputs.items())
    elif isinstance(outputs, (list, tuple)):
        items = list(enumerate(outputs))
    else:
        items = [(0, outputs)]
    for name, value in items:
        if not isinstance(value, TensorSpec) or (isinstance(outputs, Mapping) and not isinstance(name, str)):
            raise GradkitValueError(
                f"saved_model.save: the function {stem} used for the SavedModel signature {key!r} returns {value!r} "
                f"for key {name!r}: outputs for functions used as signatures must be a single Tensor, a sequence of "
                "Tensors, or a dictionary from string to Tensor (TensorFlow's ValueError). Return the tensors flat, "
                "e.g. a dict of named tensors."
            )


def _plain(tree):
    """``tree`` with Variables as their values and Tensors as their arrays (flattening a Tensor gives
    its array, and rebuilding its node gives the array back)."""
    leaves, treedef = jax.tree_util.tree_flatten(values_of(tree))
    return jax.tree_util.tree_unflatten(treedef, leaves)


def _saved_shape(var) -> tuple:
    """The shape a program takes ``var`` at: its value's, with None where it was declared with a
    None size (of its value's rank where it was declared with any shape)."""
    shape = tuple(getattr(var, "_shape", var.shape))
    declared = getattr(var, "__dict__", {}).get("_declared_shape")
    if declared is None:
        return shape
    if declared.rank is None:
        return (None,) * len(shape)
    return tuple(None if d is None else int(d) for d in declared)


def _keras_serving_function(obj):
    """A Keras model's call for its declared inputs (``inputs=``, batch dimension unknown), which
    TensorFlow saves as the ``serving_default`` signature of a model given as it is; None for
    anything else, and for a model without declared inputs (a subclassed one)."""
    from ._keras.model import Model

    if not isinstance(obj, Model):
        return None
    try:
        inputs = list(obj.inputs)
    except Exception:  # noqa: BLE001 - a subclassed or unbuilt model has no symbolic inputs
        return None
    if not inputs:
        return None
    specs = [TensorSpec((None, *tuple(t.shape)[1:]), t.dtype, name="inputs") for t in inputs]
    signature = [specs[0] if len(specs) == 1 else specs]

    def serve(inputs):
        return obj(inputs)

    return Function(serve, input_signature=signature)


def _signature_stems(signatures, walk, functions: list) -> dict:
    """``signatures=`` as ``{key: file stem}``: a function already saved by its stem, another
    one added to ``functions``. With none given, an object with exactly one function of its own
    serves it as ``serving_default``, as TensorFlow does."""
    from ._concrete_function import ConcreteFunction

    if signatures is None:
        own = [stem for stem, f in walk.functions if "." not in stem and f.input_signature is not None]
        return {"serving_default": own[0]} if len(own) == 1 else {}
    if not isinstance(signatures, Mapping):
        signatures = {"serving_default": signatures}
    stems = {}
    for key, value in signatures.items():
        function, signature = value, None
        if isinstance(value, ConcreteFunction):
            function = value._function
            # A Python value bound in the concrete function (a default, training=False) is part of
            # its type: saved as fixed, as TensorFlow bakes it into the graph.
            signature = [_fixed_python_values(arg, key) for arg in value.structured_input_signature[0]]
        if not isinstance(function, Function):
            raise GradkitTypeError(
                f"saved_model.save: signatures[{key!r}] is {type(value).__name__}, not a tf.function. Pass a "
                "tf.function with an input_signature, or its get_concrete_function(...)."
            )
        signature = signature if signature is not None else function.input_signature
        saved = [stem for stem, f in walk.functions if f is function]
        if saved and signature == function.input_signature:
            stems[key] = saved[0]
        elif signature is None:
            raise GradkitValueError(
                f"saved_model.save: signatures[{key!r}] has no input_signature. Give the tf.function one, or pass "
                "f.get_concrete_function(tf.TensorSpec(...), ...)."
            )
        else:
            stems[key] = f"signature_{key}"
            functions.append((stems[key], function.python_function, signature))
    return stems


def _fixed_python_values(arg, key):
    """``arg`` of a concrete function's signature with its Python values as ``Fixed``."""
    if isinstance(arg, (TensorSpec, _objects.Fixed)):
        return arg
    if isinstance(arg, (list, tuple)):
        return type(arg)(_fixed_python_values(a, key) for a in arg)
    if isinstance(arg, Mapping):
        return {k: _fixed_python_values(v, key) for k, v in arg.items()}
    if arg is None or isinstance(arg, (bool, int, float, str)):
        return _objects.Fixed(arg)
    raise GradkitTypeError(
        f"saved_model.save: signatures[{key!r}] is a concrete function with the Python value {arg!r} "
        f"({type(arg).__name__}) among its arguments; gradkit saves Python values that are None, bool, int, float "
        "or str only. Pass that argument as a tensor (a tf.TensorSpec in get_concrete_function), or one of those."
    )


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


def _signature_keywords(signature, names) -> list:
    """The keyword of each leaf of ``signature`` (in ``flat_specs`` order) in a signature function,
    as TensorFlow names them: the ``TensorSpec``'s name where it has one, else its argument's name,
    made unique as TensorFlow's graph names are (``pair``, ``pair_1``, ... for the leaves of a tuple
    argument ``pair``; a name already taken, compared without case, moves on to the next number)."""
    in_use: dict = {}
    out = []
    for position, (spec, name) in enumerate(zip(signature, names)):
        for leaf in _objects.flat_specs([spec]):
            base = getattr(leaf, "name", None) or name or f"args_{position}"
            key = base.lower()
            i = in_use.get(key, 0)
            in_use[key] = i + 1
            keyword = base
            if i > 0:
                while key in in_use:
                    key = f"{base.lower()}_{i}"
                    i += 1
                in_use[key] = 1
                keyword = f"{base}_{i - 1}"
            out.append(keyword)
    return out


def _argument_defaults(fn, count):
    """Per parameter of ``fn``, ``[default]`` where it has a Python default JSON can write, else
    None: a call of the loaded function that leaves the parameter out passes that default."""
    try:
        params = list(inspect.signature(fn).parameters.values())[:count]
    except (TypeError, ValueError):
        return [None] * count
    out = []
    for p in params:
        default = p.default
        plain = default is None or isinstance(default, (bool, int, float, str))
        out.append([default] if default is not inspect.Parameter.empty and plain else None)
    return out + [None] * (count - len(out))


def _forward_only(call, name: str):
    """The call of a program saved without a derivative: a gradient through it is refused."""

    @jax.custom_vjp
    def program(*args):
        return call(*args)

    def forward(*args):
        return call(*args), None

    def backward(_, cotangent):
        raise GradkitNotImplementedError(
            f"a gradient through the loaded function {name!r} was asked for, but it was saved without one: its "
            "program has no reverse-mode derivative (a tf.while_loop whose length is a tensor, for example), so "
            "tf.saved_model.save kept it to run forward only. Take the gradient through the original function, "
            "or give the loop a length known when it is traced (maximum_iterations, or a Python int)."
        )

    program.defvjp(forward, backward)
    return program


def _callable(name, exported, entry, variables):
    """The loaded function: it passes the Variables the program reads (zeros for the others, so
    that a tape sees no path to those), converts and checks the arguments, calls
    the program recordably, and assigns the new values of the Variables it assigned."""
    program = exported.call if entry.get("vjp_order", 1) else _forward_only(exported.call, name)
    call = lift(looped_when_batched(program))
    reads = set(entry.get("reads", range(len(variables))))
    seeded = entry.get("seeded", False)
    structure = entry.get("structure") or [None] * (len(exported.in_avals) - len(variables) - seeded)
    in_avals = exported.in_avals[len(variables) + (1 if seeded else 0) :]
    count = len(structure)
    arg_names = entry.get("arguments") or [None] * count
    any_rank = [spec[0] is None for spec in entry.get("specs", ())] or [False] * len(in_avals)

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
                f"the loaded function {name} takes {count} argument(s), one per entry of the "
                f"input_signature it was saved with, but got {len(args)} positional and keyword "
                f"{sorted(kwargs)}. Pass exactly {count}."
            )
        leaves = [
            leaf for i, (a, s) in enumerate(zip(args, structure)) for leaf in _objects.flatten_argument(a, s, name, i)
        ]
        for position, (a, aval) in enumerate(zip(leaves, in_avals)):
            # A tensor must have the signature's dtype (TensorFlow's loaded function refuses another,
            # as the tf.function did); Python and NumPy values are converted to it.
            if isinstance(a, (Tensor, Variable, jax.Array)) and np.dtype(a.dtype) != np.dtype(aval.dtype):
                raise GradkitTypeError(
                    f"the loaded function {name} got a tensor of dtype {np.dtype(a.dtype).name} as argument "
                    f"{position}, where its input_signature has {np.dtype(aval.dtype).name}; TensorFlow refuses it "
                    f"too. Cast it first: tf.cast(x, tf.{np.dtype(aval.dtype).name})."
                )
        xs = [convert(a, np.dtype(aval.dtype)) for a, aval in zip(leaves, in_avals)]
        for position, (x, aval) in enumerate(zip(xs, in_avals)):
            if not _shape_fits(tuple(x.shape), _signature_shape(aval.shape)) and any_rank[position]:
                raise GradkitNotImplementedError(
                    f"the loaded function {name} got a value of shape {tuple(x.shape)} as argument {position}, whose "
                    "input_signature is TensorSpec(shape=None): any shape in TensorFlow, but gradkit saves such an "
                    "argument for scalars only (a saved program fixes each argument's rank). Save the function with "
                    "a TensorSpec of the rank you call it with, e.g. tf.TensorSpec([None]) for vectors of any length."
                )
            if not _shape_fits(tuple(x.shape), _signature_shape(aval.shape)):
                raise GradkitTypeError(
                    f"the loaded function {name} got a value of shape {tuple(x.shape)} as argument {position}, "
                    f"where its input_signature has shape {_signature_shape(aval.shape)}; TensorFlow refuses it too. "
                    "Reshape it to the signature's shape, or save the function with a signature that covers it."
                )
        if seeded:  # a new seed at each call (inside a tf.function, from its runtime seed)
            xs.insert(0, _random.function_seed())
        # The program ignores the values of those it does not read: zeros, not a read a tape would see.
        held = [
            var if i in reads else np.zeros(getattr(var, "_shape", var.shape), var.dtype)
            for i, var in enumerate(variables)
        ]
        out, new = call(*held, *xs)
        for index, value in zip(entry.get("assigns", ()), new):
            variables[index].assign(value)
        return wrap(out)

    return run


def _signature_shape(saved: tuple) -> tuple:
    """A saved program's input shape with None for the sizes the export made symbolic."""
    return tuple(d if isinstance(d, int) else None for d in saved)


def _dispatcher(name, concrete: list):
    """A function saved for each type it was traced for: a call runs the first whose arguments
    it fits (same structure and Python values, tensors of the same dtype and a shape the saved
    one covers), and one that fits none raises, as TensorFlow's loaded function does."""

    def call(*args, **kwargs):
        for run, entry in concrete:
            full = _fitting_arguments(entry, args, kwargs)
            if full is not None:
                return run(*full)
        saved = "; ".join(_describe_entry(entry) for _, entry in concrete) or "none"
        raise GradkitValueError(
            f"Could not find matching concrete function to call loaded from the SavedModel (TensorFlow's error): "
            f"{name} got {len(args)} positional argument(s) and keywords {sorted(kwargs)}, which fit none of the "
            f"signatures it was traced for before saving: {saved}. Call it as it was called before saving, or "
            "save it with an input_signature (None for a size that varies)."
        )

    return call


def _fitting_arguments(entry, args, kwargs):
    """``args`` and ``kwargs`` as the positional arguments of ``entry``'s function, or None where
    they do not fit it."""
    names, structure = entry["arguments"], entry["structure"]
    if len(args) > len(names) or any(k not in names[len(args) :] for k in kwargs):
        return None
    full = list(args)
    defaults = entry.get("defaults") or [None] * len(names)
    for name, default in zip(names[len(args) :], defaults[len(args) :]):
        if name in kwargs:
            full.append(kwargs[name])
        elif default is not None:
            full.append(default[0])  # the parameter's default, as a call leaving it out passes
        else:
            return None
    try:
        leaves = [
            leaf for i, (a, s) in enumerate(zip(full, structure)) for leaf in _objects.flatten_argument(a, s, "", i)
        ]
    except GradkitTypeError:
        return None
    for leaf, (shape, dtype) in zip(leaves, entry["specs"]):
        if isinstance(leaf, TensorSpec):  # get_concrete_function(tf.TensorSpec(...)): it fits a saved spec covering it
            if np.dtype(leaf.dtype) != np.dtype(dtype) or not _spec_fits(leaf.shape, shape):
                return None
            continue
        if isinstance(leaf, (Tensor, Variable, jax.Array, np.ndarray)):
            kind = np.dtype(leaf.dtype)
        else:
            try:
                kind = np.dtype(convert(leaf).dtype)  # a Python number or list, as TensorFlow converts it
            except Exception:  # noqa: BLE001 - no tensor at all: it fits no signature
                return None
        got = tuple(np.shape(leaf)) if not hasattr(leaf, "shape") else tuple(leaf.shape)
        if kind != np.dtype(dtype) or (shape is not None and not _shape_fits(got, shape)):
            return None
    return full


def _spec_fits(spec_shape, saved) -> bool:
    if saved is None or spec_shape is None:
        return saved is None
    got = tuple(spec_shape)
    return len(got) == len(saved) and all(s is None or (g is not None and int(g) == s) for g, s in zip(got, saved))


def _shape_fits(got, saved) -> bool:
    return len(got) == len(saved) and all(s is None or int(g) == s for g, s in zip(got, saved))


def _describe_entry(entry) -> str:
    return "(" + ", ".join(f"{dtype}{shape}" for shape, dtype in entry["specs"]) + ")"


def _argument_count(entry) -> int:
    return len(entry.get("arguments") or entry.get("structure") or ())


def _serving(run, entry: dict, name: str = "serving_default"):
    """A signature function: keyword arguments (one per tensor of the input signature, named as
    TensorFlow names them: ``_signature_keywords``), or the one argument by position where it
    takes one, and a dict of outputs (``output_0``, ... for outputs that are not a dict), as
    TensorFlow's ``loaded.signatures[key]``."""
    count = _argument_count(entry)
    keywords = entry.get("keywords")

    def serve(*args, **kwargs):
        if args and (count != 1 or len(args) > 1 or kwargs):
            raise GradkitTypeError(
                "a SavedModel signature function of several arguments takes them by keyword only, as in "
                f"TensorFlow: call it as loaded.signatures[{name!r}]("
                + ", ".join(f"{k}=..." for k in keywords or entry.get("arguments") or ())
                + "), one keyword per tensor of its input_signature."
            )
        if kwargs and keywords is not None:
            if sorted(kwargs) != sorted(keywords):
                raise GradkitTypeError(
                    f"the SavedModel signature function {name!r} got the keyword arguments {sorted(kwargs)}, but it "
                    f"takes exactly {keywords}: one per tensor of its input_signature, named by the TensorSpec's "
                    "name where it has one, else by its argument's name (pair, pair_1, ... for the tensors of a "
                    "nested argument), as in TensorFlow. Pass each of those once."
                )
            leaves = iter([kwargs[k] for k in keywords])
            args = [_objects.unflatten_argument(s, leaves) for s in entry.get("structure") or [None] * count]
            kwargs = {}
        out = run(*args, **kwargs)
        if isinstance(out, Mapping):
            return dict(out)
        leaves = list(out) if isinstance(out, (list, tuple)) else [out]
        return {f"output_{i}": leaf for i, leaf in enumerate(leaves)}

    return serve


def _check_gradkit_saved_model(export_dir) -> None:
    """A directory ``save`` wrote, or an error that says what the directory is instead."""
    export_dir = os.fspath(export_dir)
    if os.path.isfile(os.path.join(export_dir, _MANIFEST)):
        return
    if not os.path.isdir(export_dir):
        raise GradkitNotFoundError(
            f"SavedModel file does not exist at: {export_dir} (no such directory). Pass the directory "
            "tf.saved_model.save wrote."
        )
    if any(os.path.isfile(os.path.join(export_dir, n)) for n in ("saved_model.pb", "saved_model.pbtxt")):
        raise GradkitNotFoundError(
            f"{export_dir} holds a SavedModel that TensorFlow wrote (saved_model.pb); gradkit.tf reads only the "
            "SavedModels gradkit.tf saves (jax.export programs). Save the model's weights from TensorFlow "
            "(model.save_weights('w.weights.h5'), or model.save('m.keras') for a Keras model) and load those."
        )
    raise GradkitNotFoundError(
        f"{export_dir} is not a SavedModel that gradkit.tf saved: it has no {_MANIFEST}. Pass the directory "
        "tf.saved_model.save wrote."
    )


def load(export_dir, tags=None, options=None):
    """Load what ``save`` wrote: new Variables with the saved values at the saved places, and
    each function a ``gk.lift``-ed ``Exported.call`` that reads and assigns them."""
    _check_gradkit_saved_model(export_dir)
    with open(os.path.join(export_dir, _MANIFEST)) as f:
        manifest = json.load(f)
    with np.load(os.path.join(export_dir, _VALUES)) as stored:
        variables = [
            TfVariable(
                stored[f"v{i}"],
                name=_plain_name(entry["name"]),
                trainable=entry["trainable"],
                # A Variable declared with a None size is loaded so: an assign may change that size.
                shape=TensorShape(entry["shape"]) if None in entry.get("shape", ()) else None,
            )
            for i, entry in enumerate(manifest["variables"])
        ]
    concrete = {}
    for stem, entry in manifest["functions"].items():
        with open(os.path.join(export_dir, f"{stem}.jaxexport"), "rb") as f:
            with _serialization():
                exported = jax.export.deserialize(bytearray(f.read()))
        run = _callable(stem, exported, entry, variables)
        concrete[stem] = _functions.LoadedConcreteFunction(stem, run, entry, _functions.output_specs(exported))
    functions = {
        stem: _functions.LoadedFunction(stem, [c], _functions.input_signature(manifest["functions"][stem]), c)
        for stem, c in concrete.items()
    }
    for stem, stems in manifest.get("dispatch", {}).items():
        each = [concrete[c] for c in stems]
        call = _dispatcher(stem, [(c, c._entry) for c in each])
        functions[stem] = _functions.LoadedFunction(stem, each, None, call)
    root = _objects.rebuild(manifest["tree"], variables, functions)
    root.signatures = {
        key: _functions.SignatureFunction(
            key,
            _serving(concrete[stem], manifest["functions"][stem], key),
            manifest["functions"][stem],
            concrete[stem].structured_outputs,
        )
        for key, stem in manifest.get("signatures", {}).items()
    }
    return root


def _plain_name(name: str) -> str:
    """A Variable's name without TensorFlow's ``:0`` output suffix (the new Variable adds it)."""
    return name[:-2] if name.endswith(":0") else name
