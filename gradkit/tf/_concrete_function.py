"""``ConcreteFunction``: a ``tf.function`` for one input signature (``get_concrete_function``).

``f.get_concrete_function(*args, **kwargs)`` takes the arguments of a call, each tensor as a
value or a ``tf.TensorSpec`` (a ``None`` dimension is any size); Python values (ints, floats,
strings, None) are part of the signature, as TensorFlow takes them. The result is called as
TensorFlow's ConcreteFunction is:

- with every argument of the signature, by position or name, defaulted ones included (they
  are part of the traced signature). A tensor must have the spec's dtype and a compatible
  shape; a NumPy array, Python number or list is converted to the spec's dtype; a Python
  value must equal the one traced. Anything else raises TypeError, as in TensorFlow.
- or with the tensors alone, in the order of ``structured_input_signature``'s specs (or by
  their names): then only the dtypes are checked (ValueError), as TensorFlow checks them.

The call runs the ``tf.function`` itself: an input of another shape than the traced one is
traced for that shape (TensorFlow runs its one graph for it), and gradients flow through it
as through the ``tf.function``. ``structured_outputs`` (and ``output_shapes``,
``output_dtypes``) are ``tf.TensorSpec``s found by tracing: at ``get_concrete_function``
for a signature of known shapes, as TensorFlow traces then; with unknown dimensions at the
first use, by tracing twice with two sizes for them (an output dimension that differs is
unknown, ``None`` as in TensorFlow).

>>> import gradkit.tf as tf
>>> @tf.function
... def scaled(x, scale=2.0):
...     return {"y": x * scale}
>>> f = scaled.get_concrete_function(tf.TensorSpec([None, 2], tf.float32))
>>> f.structured_input_signature
((TensorSpec(shape=(None, 2), dtype=tf.float32, name='x'), 2.0), {})
>>> f(tf.ones([3, 2]))["y"].numpy().tolist()
[[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]
>>> f.structured_outputs
{'y': TensorSpec(shape=(None, 2), dtype=tf.float32, name=None)}
"""

from __future__ import annotations

import inspect

import jax
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from ._convert import TensorShape, check_python_value, convert
from ._function import TensorSpec, _fits

_TENSORS = (Tensor, Variable, jax.Array)

# TensorFlow's graph-side attributes, which have nothing to stand for in gradkit.tf.
_GRAPH_ONLY = ("graph", "inputs", "outputs", "function_def", "captured_inputs", "variables", "trainable_variables")


def _is_leaf(x) -> bool:
    return isinstance(x, (TensorSpec, Tensor, Variable))


def _is_tensor(x) -> bool:
    return isinstance(x, (*_TENSORS, np.ndarray, np.generic))


def _shape_text(shape) -> str:
    return "None" if shape is None else str(tuple(shape))


def _describe(x) -> str:
    if isinstance(x, TensorSpec):
        return repr(x)
    return f"TensorSpec(shape={_shape_text(tuple(x.shape))}, dtype=tf.{np.dtype(x.dtype).name}, name=None)"


def _type_text(value) -> str:
    """A value of a signature as TensorFlow's ``pretty_printed_signature`` writes its type."""
    if isinstance(value, TensorSpec) or _is_tensor(value):
        return _describe(value)  # a spec by its own name (None unless given), as TensorFlow's function type
    if isinstance(value, dict):
        return "Dict[" + ", ".join(f"[{key!r}, {_type_text(v)}]" for key, v in value.items()) + "]"
    if isinstance(value, (list, tuple)):
        kind = "List" if isinstance(value, list) else "Tuple"
        return f"{kind}[" + ", ".join(_type_text(v) for v in value) + "]"
    return f"Literal[{value!r}]"


def _path_name(path) -> str:
    parts = []
    for key in path:
        for attr in ("key", "idx", "name"):
            if hasattr(key, attr):
                parts.append(str(getattr(key, attr)))
                break
    return "_".join(parts)


_OPTIONAL_SIZES = (0, 1, 11)
# A large size too, where its zeros stay small: an output that saturates above 11 (padded up to a
# minimum length of 16, say) is then told from a fixed one.
_LARGE_SIZE, _LARGE_ELEMENTS = 1031, 1 << 22
# Sizes for a function that traced at one size alone: multiples of 2 and 3, which reshapes and
# splits into 2 or 3 parts take.
_MORE_SIZES = (4, 6, 8, 9)


def _specs(value, name):
    """``value`` with each tensor (or spec) a TensorSpec named after its place, as TensorFlow names them."""
    leaves, treedef = jax.tree_util.tree_flatten_with_path(value, is_leaf=_is_leaf)
    out = []
    for path, leaf in leaves:
        if isinstance(leaf, TensorSpec) or _is_tensor(leaf):
            spec_name = getattr(leaf, "name", None) if isinstance(leaf, TensorSpec) else None
            spec_name = spec_name or "_".join(p for p in (name, _path_name(path)) if p)
            shape = leaf.shape if not isinstance(leaf, TensorSpec) or leaf.shape is not None else None
            leaf = TensorSpec(None if shape is None else tuple(shape), leaf.dtype, spec_name)
        out.append(leaf)
    return jax.tree_util.tree_unflatten(treedef, out)


def _binding_error(reason: str, args, kwargs, signature) -> _errors.GradkitTypeError:
    return _errors.GradkitTypeError(
        f"Binding inputs to tf.function failed due to `{reason}`. Received args: {args!r:.200} and kwargs: "
        f"{kwargs!r:.200} for signature: {signature}. Call the concrete function with every argument of the "
        "traced signature (defaulted ones too), tensors of its specs' dtypes and shapes and the same Python "
        "values, or with its tensors alone; call the tf.function itself for other arguments."
    )


def _same_literal(expected, given) -> bool:
    # True is not Literal[3] in TensorFlow, though 3.0 is: bools match bools only.
    if isinstance(expected, bool) or isinstance(given, bool):
        return type(expected) is type(given) and expected == given
    if expected is given:
        return True
    try:
        return bool(expected == given)
    except Exception:
        return False


def _bind_spec(spec: TensorSpec, x):
    """``x`` as the tensor for ``spec`` in a structured call: a tensor must fit it; a NumPy array,
    Python number or list is converted to its dtype first, as TensorFlow converts them."""
    if not isinstance(x, _TENSORS):
        if isinstance(x, TensorSpec) or x is None or isinstance(x, (str, bytes, dict)):
            raise TypeError(f"Can not cast {x!r} to {spec!r}")
        check_python_value(x, spec.dtype, "a ConcreteFunction argument")
        try:
            x = convert(x, spec.dtype)
        except (TypeError, ValueError):
            raise TypeError(f"Can not cast {x!r:.80} to {spec!r}") from None
    if np.dtype(x.dtype) != spec.dtype or not _fits(tuple(x.shape), spec.shape):
        raise TypeError(f"Can not cast {_describe(x)} to {spec!r}")
    return x


def _match(expected, given):
    """``given`` checked against the traced ``expected`` (TensorSpecs and Python values)."""
    if isinstance(expected, TensorSpec):
        return _bind_spec(expected, given)
    if isinstance(expected, dict):
        if not isinstance(given, dict) or set(given) != set(expected):
            raise TypeError(f"{given!r:.120} has different keys than the traced {expected!r:.120}")
        return {k: _match(expected[k], given[k]) for k in expected}
    if isinstance(expected, (list, tuple)):
        if not isinstance(given, (list, tuple)) or len(given) != len(expected):
            raise TypeError(f"{given!r:.120} does not have the structure of the traced {expected!r:.120}")
        items = [_match(e, g) for e, g in zip(expected, given)]
        return type(expected)(*items) if hasattr(expected, "_fields") else type(expected)(items)
    if not _same_literal(expected, given):
        raise TypeError(f"Can not cast {given!r:.80} to Literal[{expected!r:.80}]")
    return expected


def _signature_of(fn, args, kwargs) -> inspect.Signature:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):  # a callable without one: its arguments as given
        kinds = inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.KEYWORD_ONLY
        return inspect.Signature(
            [inspect.Parameter(f"arg{i}", kinds[0]) for i in range(len(args))]
            + [inspect.Parameter(k, kinds[1]) for k in kwargs]
        )


def _with_input_signature(function, args, kwargs):
    """The arguments of ``get_concrete_function`` for a function with an ``input_signature``: its
    specs, once the arguments given (if any) are checked against them."""
    signature = function.input_signature
    if not args and not kwargs:
        return tuple(signature)
    if kwargs or len(args) != len(signature):
        raise _errors.GradkitTypeError(
            f"get_concrete_function of a tf.function with an input_signature of {len(signature)} TensorSpecs got "
            f"{len(args)} positional and {len(kwargs)} keyword arguments. Pass one per TensorSpec, or none."
        )
    for spec, given in zip(signature, args):
        if isinstance(given, TensorSpec):
            ok = given.dtype == spec.dtype and (spec.shape is None or given.shape is not None)
            ok = ok and (given.shape is None or _fits(tuple(given.shape), spec.shape))
            if not ok:
                raise _errors.GradkitTypeError(
                    f"Binding inputs to tf.function failed due to `Can not cast {given!r} to {spec!r}`: "
                    "get_concrete_function takes specs that fit the input_signature. Pass those."
                )
        else:
            try:
                _bind_spec(spec, given)
            except TypeError as e:
                raise _errors.GradkitTypeError(
                    f"Binding inputs to tf.function failed due to `{e}`: get_concrete_function takes values "
                    "that fit the input_signature. Pass those."
                ) from None
    return tuple(signature)


class OutputSpecs:
    """``output_shapes`` and ``output_dtypes`` of a concrete function's ``structured_outputs``."""

    @property
    def output_shapes(self):
        return jax.tree_util.tree_map(
            lambda s: TensorShape(None) if s.shape is None else s.shape, self.structured_outputs, is_leaf=_is_leaf
        )

    @property
    def output_dtypes(self):
        return jax.tree_util.tree_map(lambda s: s.dtype, self.structured_outputs, is_leaf=_is_leaf)


class ConcreteFunction(OutputSpecs):
    """TensorFlow's ConcreteFunction over a gradkit ``tf.function``; see the module docstring."""

    def __init__(self, function, args, kwargs):
        self._function = function
        fn = function.python_function
        self._name = getattr(getattr(fn, "func", fn), "__name__", "function")
        if function.input_signature is not None:
            args = _with_input_signature(function, args, kwargs)
        self._signature = _signature_of(fn, args, kwargs)
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise _binding_error(str(e), args, kwargs, self._signature) from None
        bound.apply_defaults()
        self._examples = dict(bound.arguments)  # the values given, for tracing the outputs
        for name, value in bound.arguments.items():
            bound.arguments[name] = _specs(value, name)
        self._bound = bound
        function._traces.note(bound.args, bound.kwargs)  # TensorFlow traces this signature here
        self._outputs = None
        if not self._unknown_dims() or not (function._called or function._created):
            # TensorFlow traces here too; a first trace also makes the Variables the function
            # creates on its first call (a layer built lazily), before a call or a save reads them.
            self._outputs = self._trace_outputs()

    # -- the signature ------------------------------------------------------------------------

    @property
    def structured_input_signature(self):
        """``(args, kwargs)`` of the traced signature: TensorSpecs and Python values."""
        return tuple(self._bound.args), dict(self._bound.kwargs)

    def _flat_specs(self) -> list:
        return [
            leaf
            for value in self._bound.arguments.values()
            for leaf in jax.tree_util.tree_leaves(value, is_leaf=_is_leaf)
            if isinstance(leaf, TensorSpec)
        ]

    def _unknown_dims(self) -> bool:
        return any(spec.shape is None or None in spec.shape for spec in self._flat_specs())

    def _with_tensors(self, tensors: list):
        """The traced arguments with their TensorSpecs replaced by ``tensors``, in order."""
        it = iter(tensors)
        bound = inspect.BoundArguments(self._signature, dict(self._bound.arguments))
        for name, value in bound.arguments.items():
            bound.arguments[name] = jax.tree_util.tree_map(
                lambda x: next(it) if isinstance(x, TensorSpec) else x, value, is_leaf=_is_leaf
            )
        return bound.args, bound.kwargs

    # -- calling --------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        try:
            call_args, call_kwargs = self._structured(args, kwargs)
        except TypeError as e:
            flat = self._flat(args, kwargs)
            if flat is None:
                raise _binding_error(str(e), args, kwargs, self._signature) from None
            call_args, call_kwargs = flat
        return self._function(*call_args, **call_kwargs)

    def _structured(self, args, kwargs):
        bound = self._signature.bind(*args, **kwargs)
        for parameter in self._signature.parameters.values():
            if parameter.name not in bound.arguments:
                if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
                    bound.arguments[parameter.name] = ()
                elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
                    bound.arguments[parameter.name] = {}
                else:  # defaulted ones too: they are part of the traced signature
                    raise TypeError(f"missing a required argument: {parameter.name!r}")
        for name, value in bound.arguments.items():
            bound.arguments[name] = _match(self._bound.arguments[name], value)
        return bound.args, bound.kwargs

    def _flat(self, args, kwargs):
        """The call with the tensors alone (TensorFlow's flat signature), or None if it is not one."""
        specs = self._flat_specs()
        given = [*args, *kwargs.values()]
        if len(args) > len(specs) or not all(isinstance(x, (Tensor, Variable)) for x in given):
            return None
        tensors = list(args) + [None] * (len(specs) - len(args))
        names = {spec.name: i for i, spec in enumerate(specs)}
        for key, value in kwargs.items():
            i = names.get(key)
            if i is None or tensors[i] is not None:
                return None
            tensors[i] = value
        if any(t is None for t in tensors):
            return None
        for i, (spec, x) in enumerate(zip(specs, tensors)):
            if np.dtype(x.dtype) != spec.dtype:  # TensorFlow's InvalidArgumentError
                raise _errors.InvalidArgumentValueError(
                    f"cannot compute {self._name} as input #{i}(zero-based) was expected to be a "
                    f"{spec.dtype.name} tensor but is a {np.dtype(x.dtype).name} tensor. Cast it first: "
                    f"tf.cast(x, tf.{spec.dtype.name})."
                )
        return self._with_tensors(tensors)

    # -- the outputs ----------------------------------------------------------------------------

    def _examples_for(self, size: int, sizes: dict | None = None, rank: int = 1) -> list:
        """A value per TensorSpec to trace with: the one given, or zeros (``size`` for a None
        dimension, or ``sizes[k]`` for the k-th None dimension of the flat signature; a spec of
        unknown rank has ``rank`` of them)."""
        return [
            np.zeros(shape, dtype) if shape is not None else example
            for example, shape, dtype in self._examples_at(size, sizes, rank)
        ]

    def _examples_at(self, size: int, sizes: dict | None = None, rank: int = 1) -> list:
        """``(given example or None, shape or None, dtype)`` per TensorSpec, at ``size`` (see
        ``_examples_for``)."""
        out, unknown = [], 0
        for name, value in self._bound.arguments.items():
            given = jax.tree_util.tree_leaves(self._examples[name], is_leaf=_is_leaf)
            specs = jax.tree_util.tree_leaves(value, is_leaf=_is_leaf)
            for example, spec in zip(given, specs):
                if not isinstance(spec, TensorSpec):
                    continue
                if _is_tensor(example):
                    out.append((example, None, None))
                    continue
                shape = []
                for d in (None,) * rank if spec.shape is None else spec.shape:
                    if d is None:
                        d = (sizes or {}).get(unknown, size)
                        unknown += 1
                    shape.append(d)
                out.append((None, tuple(shape), spec.dtype))
        return out

    def _trace_outputs(self):
        if not self._unknown_dims():
            first = self._function._output_info(*self._with_tensors(self._examples_for(2)))
            return jax.tree_util.tree_map(lambda s: TensorSpec(s.shape, s.dtype), first)
        # gradkit has no symbolic shapes: a None dimension is traced at several sizes, and an
        # output dimension is static only where every trace agrees: 2, 3, 0 and 1 (where ``x[:1]``
        # and ``x[:2]`` saturate), 11 (where ``n // 4`` moves) and a large one, each counting where it traces
        # (a None dimension that meets a fixed size, ``v * x``, traces at that size and 1 only).
        # A function that traces at one size alone is traced at more (``reshape(v, [2, -1])``
        # takes even sizes), and with several None dimensions each is then varied alone, the
        # others at a size that traced (``v @ w`` with ``w`` of 3 rows, ``v`` ``[None, None]``):
        # a dimension one trace saw would otherwise pass for a fixed one.
        # A function no size traces raises what the trace at size 2 raised.
        large = sum(int(np.prod(shape)) for _, shape, _ in self._examples_at(_LARGE_SIZE) if shape is not None)
        traces, refusal, traced_at = [], None, []

        def trace(size, sizes=None, rank=1):
            nonlocal refusal
            try:
                examples = self._examples_for(size, sizes, rank)
                traces.append(self._function._output_info(*self._with_tensors(examples)))
                traced_at.append(size)
            except Exception as e:  # noqa: BLE001  (a size this function refuses tells nothing)
                refusal = refusal or e

        for size in (2, 3, *_OPTIONAL_SIZES, *((_LARGE_SIZE,) if large <= _LARGE_ELEMENTS else ())):
            trace(size)
        if len(traces) == 1:
            for size in _MORE_SIZES:
                trace(size)
        # How many None dimensions the signature has: those the size -1 fills.
        unknown = sum(shape.count(-1) for _, shape, _ in self._examples_at(-1) if shape is not None)
        if unknown > 1 and len(set(traced_at)) == 1:
            base = traced_at[0]
            for k in range(unknown):
                for size in (2, 3, 1, *_MORE_SIZES):
                    if size != base:
                        trace(base, {k: size})
        if any(spec.shape is None for spec in self._flat_specs()):
            # An input of unknown rank: traced at rank 2 (and 0) too, so that an output whose rank
            # follows it (``x`` itself, ``tf.shape(x)``'s length) is unknown, as in TensorFlow.
            trace(2, rank=2)
            trace(2, rank=0)
        if not traces:
            raise refusal

        def spec(a, *others):
            if any(len(o.shape) != len(a.shape) for o in others):
                return TensorSpec(None, a.dtype)
            return TensorSpec(
                tuple(d if all(o.shape[i] == d for o in others) else None for i, d in enumerate(a.shape)), a.dtype
            )

        return jax.tree_util.tree_map(spec, *traces)

    @property
    def structured_outputs(self):
        """What a call returns, with a ``tf.TensorSpec`` for each tensor."""
        if self._outputs is None:
            self._outputs = self._trace_outputs()
        return self._outputs

    def pretty_printed_signature(self, verbose=True) -> str:
        """TensorFlow's text of the signature: each parameter's kind and type (a ``TensorSpec``,
        or ``Literal[value]`` for a Python value), the output type, and the captures (gradkit
        lists none: its captured inputs are the compiled program's own)."""
        params = self._signature.parameters
        types = {name: _type_text(value) for name, value in self._examples.items()}
        output = _type_text(self.structured_outputs)
        if not verbose:
            parts, keyword_only = [], False
            for name, param in params.items():
                if param.kind is inspect.Parameter.KEYWORD_ONLY and not keyword_only:
                    parts.append("*")
                    keyword_only = True
                parts.append(f"{name}: {types.get(name, 'Literal[None]')}")
            return f"({', '.join(parts)}) -> {output}"
        lines = ["Input Parameters:"]
        lines += [f"  {name} ({param.kind.name}): {types.get(name, 'Literal[None]')}" for name, param in params.items()]
        return "\n".join([*lines, "Output Type:", f"  {output}", "Captures:", "  None"])

    def __repr__(self) -> str:
        parameters = ", ".join(
            f"{name}: {value!r}" if isinstance(value, TensorSpec) else f"{name}: {value!r:.60}"
            for name, value in self._bound.arguments.items()
        )
        return f"<ConcreteFunction {self._name}({parameters})>"

    def __getattr__(self, name):
        if name in _GRAPH_ONLY:
            raise AttributeError(
                f"[gradkit] ConcreteFunction.{name} is TensorFlow's graph (symbolic tensors and captures), which "
                "gradkit.tf does not build: its tf.function compiles with jax.jit. Use structured_input_signature, "
                "structured_outputs, output_shapes and output_dtypes, or call the function."
            )
        raise AttributeError(f"[gradkit] ConcreteFunction has no attribute {name!r}.")
