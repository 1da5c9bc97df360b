"""``tf.function`` on ``gk.jit``, and ``tf.TensorSpec``.

Arguments that are arrays, tensors or Python floats (also inside nested lists, tuples and
dicts) are traced, and the function sees them as ``gk.Tensor``s, so a tape inside it records
their Python operators. A Variable argument is passed to ``gk.jit`` as one, so the function
gets the Variable itself, read and assigned as one it closes over (one trace per Variable).
Python ints, bools, strings, None and other objects are static (TensorFlow retraces on them
too), so ``if training:`` and ``for i in range(n):`` work. A loop of same-shaped calls compiles once. There is
no autograph: Python control flow on a tensor's value raises a clear error.

A tensor a tape records that the function closes over is captured, as in TensorFlow: an input of
the compiled program (``gk.jit``'s captures), so the tape's gradient flows through it, and the
function keeps the tensor it captured when traced (a later call that does not retrace reads it).
"""

from __future__ import annotations

import copy
import functools
import inspect
import sys
import weakref

import jax
import numpy as np

from gradkit import _errors
from gradkit._core import frames, runtime_checks
from gradkit._core.jit import JitFunction
from gradkit._core.variable import Variable
from gradkit._tape import graph as _graph
from gradkit._tape.shape import Shape
from gradkit._tape.tensor import Tensor

from .._core import key_order
from . import _config, _dtypes, _name_scope, _random
from ._convert import TensorShape, check_python_value, convert, wrap
from ._trace_types import Static, TraceTypes


class TensorSpec:
    """``tf.TensorSpec(shape, dtype=tf.float32, name=None)``; ``shape=None`` means any shape."""

    def __init__(self, shape=None, dtype=_dtypes.float32, name=None):
        # An unknown dimension is None, as in TensorFlow (-1 is taken for one too).
        unknown_rank = shape is None or (isinstance(shape, TensorShape) and shape.rank is None)
        self.shape = None if unknown_rank else TensorShape(None if d is None or d == -1 else int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.name = name

    def __repr__(self) -> str:
        shape = "<unknown>" if self.shape is None else str(tuple(self.shape))  # TensorFlow's unknown rank
        return f"TensorSpec(shape={shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"

    def __eq__(self, other):
        if not isinstance(other, TensorSpec):
            return NotImplemented
        return (self.shape, self.dtype, self.name) == (other.shape, other.dtype, other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """``tf.TensorSpec.from_tensor``: the spec of ``tensor``'s shape and dtype."""
        return cls(tuple(tensor.shape), tensor.dtype, name)

    @classmethod
    def from_spec(cls, spec, name=None):
        """``tf.TensorSpec.from_spec``: a spec of ``spec``'s shape and dtype (and name unless given)."""
        return cls(spec.shape, spec.dtype, spec.name if name is None else name)

    def is_compatible_with(self, spec_or_value) -> bool:
        """Whether a tensor, Variable or spec of that dtype and shape fits this spec, as TensorFlow's
        (a list, NumPy array or number is not a tensor: False, as in TensorFlow)."""
        if isinstance(spec_or_value, (np.ndarray, np.generic)) or not (
            hasattr(spec_or_value, "dtype") and hasattr(spec_or_value, "shape")
        ):
            return False
        dtype = np.dtype(spec_or_value.dtype)
        shape = spec_or_value.shape
        if dtype != self.dtype:
            return False
        if self.shape is None or shape is None:
            return True
        return len(shape) == len(self.shape) and all(
            d is None or s is None or s == -1 or d == s for s, d in zip(shape, self.shape)
        )


def _is_traced(x) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, (Tensor, Variable, jax.Array, np.ndarray, np.generic, float, complex))


def _is_leaf(x) -> bool:
    # A Variable is a handle (gk.jit passes it as one), not the array jax would flatten it to.
    return isinstance(x, (Tensor, Variable))


def _python_number_as_tensor(x):
    if isinstance(x, (str, bytes)):
        raise _errors.GradkitTypeError(
            f"a tf.function returned the string {x!r:.40}; TensorFlow returns it as a string tensor, but gradkit "
            "has no string tensors (JAX arrays hold numbers). Return it from a plain Python function, or keep it "
            "out of the compiled function's results."
        )
    from ._tensor_array import TensorArray  # (here: it builds on modules that import this one)

    if isinstance(x, TensorArray):
        raise _errors.GradkitTypeError(
            f"a tf.function returned a TensorArray of {x.dtype.name}; its elements live only inside the "
            "function, and TensorFlow's returned handle cannot be read either. Return ta.stack() (or "
            "ta.concat()) instead."
        )
    if isinstance(x, Shape):  # x.shape returned: TensorFlow returns it as an int32 tensor
        if any(d is None for d in x):
            raise _errors.GradkitValueError(
                f"a tf.function returned the shape {tuple(x)}, which has unknown sizes; TensorFlow cannot make a "
                "tensor of it either. Return tf.shape(x), the shape computed when the function runs."
            )
        return convert(np.asarray(tuple(x), np.int32))
    return convert(x) if isinstance(x, (bool, int, float, complex)) else x


def _typed(traced) -> list:
    """The traced arguments as jax takes them: a Python float or complex as TensorFlow converts it
    (float32; complex128, complex64 without 64-bit types), not as jax would (float64 with them)."""
    return [convert(x) if type(x) in (float, complex) else x for x in traced]


def _plain(x):
    # With no tape recording, pass a Tensor's value: gk.jit retraces once more on the
    # second call when given gk.Tensor arguments; under a tape the Tensor must stay, so
    # that the tape records the call.
    if isinstance(x, Tensor) and _graph.local.session is None:
        return x.__gradkit_value__()
    return x


class _Layout:
    """Where the traced leaves go among the arguments: the static part of one call."""

    __slots__ = ("treedef", "statics", "key_orders", "_key", "_hash")

    def __init__(self, treedef, statics: tuple, key_orders=None):
        self.treedef = treedef
        self.statics = statics  # Static per static leaf, None where a traced leaf goes
        # The key order of each dict among the arguments: jax's pytrees sort them, and the function
        # sees them as the caller built them (it may concatenate a dict of features in order).
        self.key_orders = key_orders
        self._key = (treedef, statics, key_order.frozen(key_orders))
        self._hash = hash(self._key)

    def __eq__(self, other):
        return isinstance(other, _Layout) and self._key == other._key

    def __hash__(self):
        return self._hash

    def rebuild(self, traced):
        it = iter(traced)
        # Traced arguments arrive as tracers; as gk.Tensors their Python operators
        # (x * x, x[0]) are recorded by a tape inside the function, as in TensorFlow.
        # A Variable arrives as itself (gk.jit holds its value).
        leaves = [_as_tensor(next(it)) if s is None else s.value for s in self.statics]
        return key_order.in_order(self.key_orders, jax.tree_util.tree_unflatten(self.treedef, leaves))


def _as_tensor(x):
    return x if isinstance(x, Variable) else Tensor.concrete(x)


_TRACER_ERRORS = frames.TRACER_VALUE_ERRORS

_MSG_CONTROL_FLOW = (
    "{fn} needed the value of a tensor while being traced ({kind}): Python control flow on a tensor "
    "(`if`, `while`, `for ... in tf.range(n)`) or bool(), int(), float(), .numpy() of one. "
    "gradkit's tf.function traces the function with jax.jit and has no autograph: it does "
    "not convert Python control flow on tensor values. Use tf.where(cond, x, y) to choose values, "
    "tf.cond(pred, true_fn, false_fn) or tf.while_loop(cond, body, loop_vars) for a traced branch or "
    "loop (they run as jax.lax.cond / jax.lax.while_loop there), pass the value "
    "as a Python int/bool argument (static: one trace per value), or call the function without "
    "@tf.function (eager, where Python control flow works as in TensorFlow). A Python float argument "
    "is such a traced tensor too, unlike TensorFlow's (a learning rate that changes at every call does "
    "not recompile): `if temperature > 0.5`, math.sqrt(temperature) or float(temperature) on one raise "
    "here; use tf.math functions on it, or pass a flag as a bool or int."
)

_MSG_OP_NEEDS_VALUE = (
    "{fn}: {op} needed a tensor's value while being traced: the shape of its result (or a size, axis or "
    "index it takes) depends on that value, which a compiled program cannot leave open. Call {op} outside "
    "the tf.function, pass the value as a Python int argument (one trace per value), or use an op of fixed "
    "shape (tf.where(cond, x, y), masks with tf.cast(cond, x.dtype) * x)."
)


def _op_needing_value(error) -> str | None:
    """The public gradkit.tf op (``tf.zeros``, ``tf.where``) inside which ``error`` was raised, or
    None where the value was asked for by the traced function itself (``if x > 0``)."""
    from ._convert import public_name

    inside = []
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__", "").startswith("gradkit.tf."):
            inside.append(tb.tb_frame)
        tb = tb.tb_next
    # From the innermost out (a generator's frame has no f_back to walk, so each is asked).
    for frame in reversed(inside):
        name = public_name(frame)
        if name != "this gradkit.tf op":
            return name
    return None


_MSG_VARIABLE_ON_LATER_CALL = (
    "{fn} created Variable {name} after its first trace (on a later call, or again while its first call "
    "was traced once more) and keeps it after the call (stored in an attribute, a list or a dict). "
    "tf.function only supports singleton tf.Variables created on the first call, and TensorFlow raises "
    "ValueError here too: the function may be traced again (new shapes, dtypes or Python arguments), and a "
    "trace after the one that created the Variables must not create more. Create each Variable once: outside "
    "the function, or on its first call only (if self.v is None: self.v = tf.Variable(...)). No Variable was "
    "assigned by this call."
)

_MSG_SIGNATURE = (
    "{fn} was called with {got} where its input_signature expects {spec}. Pass a value of that "
    "dtype and a compatible shape (tf.cast(x, {dtype}) to convert the dtype), or widen the "
    "input_signature (None for an unknown dimension)."
)


def _structure(tree) -> str:
    """A nest's containers with its leaves as ``*`` (``([*, *],)``), for an error message."""
    return str(jax.tree_util.tree_map(lambda _: _Star(), tree, is_leaf=lambda s: isinstance(s, TensorSpec)))


class _Star:
    def __repr__(self) -> str:
        return "*"


_MSG_UNHASHABLE = (
    "tf.function {fn} was called with an argument of type {kind} that cannot be hashed ({value}). "
    "tf.function keys its traces by the value of each Python argument, and a mutable one could change "
    "after a trace that read it, which would then be reused with the old value; TensorFlow raises "
    "TypeError here too. Pass what the function reads from it as tensors or Python numbers "
    "(f(x, cfg.scale)), or make the class immutable and hashable (@dataclasses.dataclass(frozen=True))."
)


def _by_position(fn, count: int, args: tuple, kwargs: dict):
    """``(args, kwargs)`` of a call of ``fn`` whose ``input_signature`` has ``count`` specs, keyword
    arguments naming its first ``count`` parameters moved into place, as TensorFlow binds them;
    unchanged where they do not fit (the caller's error then says what is wrong)."""
    try:
        everything = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return args, kwargs
    parameters = everything[:count]
    args, kwargs = _without_defaults_given(everything, count, args, kwargs)
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    names = [p.name for p in parameters if p.kind in kinds]
    missing = names[len(args) :]
    if len(names) != count or set(kwargs) != set(missing):
        return args, kwargs
    return (*args, *(kwargs[name] for name in missing)), {}


def _without_defaults_given(parameters: list, count: int, args: tuple, kwargs: dict):
    """The call without the arguments past the ``input_signature``'s ``count`` that pass their
    parameter's default value, which TensorFlow accepts (``f(x, 2.0)`` for ``def f(x, s=2.0)``)."""

    def is_default(param, value) -> bool:
        default = param.default
        return default is not inspect.Parameter.empty and type(value) is type(default) and value == default

    args = list(args)
    while len(args) > count and len(args) <= len(parameters) and is_default(parameters[len(args) - 1], args[-1]):
        args.pop()
    extra = {p.name: p for p in parameters[count:]}
    kwargs = {k: v for k, v in kwargs.items() if not (k in extra and is_default(extra[k], v))}
    return tuple(args), kwargs


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _short_repr(value) -> str:
    try:
        text = repr(value)
    except Exception:
        text = object.__repr__(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _fits(shape, spec_shape) -> bool:
    if spec_shape is None:
        return True
    return len(shape) == len(spec_shape) and all(d is None or d == s for s, d in zip(shape, spec_shape))


def _bind(fn_name, spec, x):
    """``x`` as ``spec`` asks: Python values converted to its dtype, tensors checked."""
    if not isinstance(spec, TensorSpec):
        return x
    # A tensor must match the spec; NumPy and Python values are converted to it, as TensorFlow
    # converts them.
    if isinstance(x, (Tensor, Variable, jax.Array)):
        if np.dtype(x.dtype) != spec.dtype or not _fits(tuple(x.shape), spec.shape):
            got = f"shape={tuple(x.shape)} dtype={np.dtype(x.dtype).name}"
            raise _errors.GradkitTypeError(
                _MSG_SIGNATURE.format(fn=fn_name, got=got, spec=spec, dtype=f"tf.{spec.dtype.name}")
            )
        return x.value if isinstance(x, Variable) else x
    check_python_value(x, spec.dtype, f"{fn_name}'s input_signature {spec}")
    out = convert(x, spec.dtype)
    if not _fits(tuple(out.shape), spec.shape):
        got = f"shape={tuple(out.shape)}"
        raise _errors.GradkitTypeError(
            _MSG_SIGNATURE.format(fn=fn_name, got=got, spec=spec, dtype=f"tf.{spec.dtype.name}")
        )
    return out


def _released(out):
    """``out`` with the datasets the function returned given back (``_data/held.py``)."""
    held = sys.modules.get("gradkit.tf._data.held")  # not imported: no trace returned a dataset
    return out if held is None else held.release(out)


class Function:
    """A ``tf.function``: call it like the original; ``python_function`` is the original.

    Arguments may be nested lists, tuples and dicts: their tensor and float leaves are
    traced, the other leaves are static.
    """

    def __init__(self, fn, input_signature=None, jit_compile=None, reduce_retracing=False, **options):
        self.python_function = fn
        self.input_signature = None if input_signature is None else list(input_signature)
        self._compiled = JitFunction(functools.partial(self._run, seeded=False), 0, on_created_kept=self._check_created)
        self._called = False  # whether a call has returned: later traces must not create Variables
        self._created = False  # whether a trace created Variables it keeps: no other trace may
        # A function that draws random numbers (tf.random) is compiled with a runtime seed as
        # an argument, so each call draws afresh, as in TensorFlow; found at its first trace.
        self._seeded = None
        self._aborted = 0  # traces given up for that
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._reduce_retracing = reduce_retracing
        self._traces = TraceTypes(fn, self.input_signature, reduce_retracing)  # TensorFlow's count
        self._key_orders: dict = {}  # per layout, the order of the dict keys its trace returned
        self._options = dict(jit_compile=jit_compile, reduce_retracing=reduce_retracing, **options)
        functools.update_wrapper(self, fn)

    def __deepcopy__(self, memo):
        """A new, untraced ``tf.function`` of a deep copy of the Python function (a function is
        itself, a bound method is bound to the copy of its object) with the same options, as
        TensorFlow's copy of one; its traces and locks are its own."""
        signature = copy.deepcopy(self.input_signature, memo)
        return type(self)(copy.deepcopy(self.python_function, memo), input_signature=signature, **self._options)

    def _run(self, layout: _Layout, *traced, seeded):
        seed, traced = (traced[0], traced[1:]) if seeded else (None, traced)
        args, kwargs = layout.rebuild(traced)
        try:
            with _random.tracing(seed), _name_scope.graph():
                out = self.python_function(*args, **kwargs)
            self._key_orders[layout] = key_order.key_orders(out)
            from ._data import held  # (here: the tf.data package imports this module)

            out = held.hold(out)  # a dataset it returns: the one the trace built (see held.py)
            # A Python number it returns is a tensor of TensorFlow's dtype for it (int32,
            # float32), also where JAX's 64-bit types are on.
            return jax.tree_util.tree_map(_python_number_as_tensor, out, is_leaf=_is_leaf)
        except _TRACER_ERRORS as e:
            name = getattr(self.python_function, "__qualname__", repr(self.python_function))
            message = _MSG_CONTROL_FLOW.format(fn=name, kind=type(e).__name__)
            op = _op_needing_value(e)
            if op is not None:
                message = _MSG_OP_NEEDS_VALUE.format(fn=name, op=op) + " " + message
            raise _errors.TracedValueNeededError(message) from e

    def __call__(self, *args, **kwargs):
        if _config.functions_run_eagerly():  # tf.config.run_functions_eagerly(True), as TensorFlow
            return self.python_function(*args, **kwargs)
        layout, traced = self._layout(args, kwargs)
        if self._seeded is None:
            try:
                out = wrap(self._compiled(layout, *_typed(traced)))
            except _random.NeedsSeed:
                self._start_seeded()
            except BaseException as error:
                self._note_failed_run(error, layout, traced, args, kwargs)
                raise
            else:
                self._called = True
                self._traces.note_call(layout, traced, args, kwargs)
                return key_order.in_order(self._key_orders.get(layout), _released(out))
        seed = _random.function_seed(self)
        try:
            out = wrap(self._seeded(layout, seed, *_typed(traced)))
        except BaseException as error:
            _random.give_back(seed, self)
            self._note_failed_run(error, layout, traced, args, kwargs)
            raise
        self._called = True
        self._traces.note_call(layout, traced, args, kwargs)
        return key_order.in_order(self._key_orders.get(layout), _released(out))

    def _note_failed_run(self, error, layout, traced, args, kwargs) -> None:
        """A call whose program was traced and then failed a runtime check (a tf.debugging
        assertion) counts its trace, as TensorFlow's does."""
        if runtime_checks.failed_when_run(error):
            self._traces.note_call(layout, traced, args, kwargs)

    def _layout(self, args, kwargs):
        """The static part of a call (a ``_Layout``) and its traced leaves, the input_signature applied."""
        if self.input_signature is not None:
            name = getattr(self.python_function, "__qualname__", "the function")
            if kwargs or len(args) > len(self.input_signature):
                args, kwargs = _by_position(self.python_function, len(self.input_signature), args, kwargs)
            if kwargs or len(args) != len(self.input_signature):
                raise _errors.GradkitTypeError(
                    f"{name} has an input_signature of {len(self.input_signature)} TensorSpecs but was called "
                    f"with {len(args)} positional and {len(kwargs)} keyword arguments. Pass exactly one "
                    "positional argument per TensorSpec."
                )
            try:
                args = jax.tree_util.tree_map(
                    functools.partial(_bind, name),
                    tuple(self.input_signature),
                    tuple(args),
                    is_leaf=lambda s: isinstance(s, TensorSpec),
                )
            except ValueError as error:
                if isinstance(error, _errors.GradkitError):
                    raise
                raise _errors.GradkitTypeError(
                    f"[gradkit] {name} was called with arguments of structure {_structure(tuple(args))} where its "
                    f"input_signature has {_structure(tuple(self.input_signature))}: as in TensorFlow, a list "
                    "binds only to a list, a tuple to a tuple and a dict by its keys. Pass the arguments in the "
                    "input_signature's structure (list(xs) or tuple(xs))."
                ) from None
        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_leaf)
        traced = [_plain(x) for x in leaves if _is_traced(x)]
        statics = tuple(None if _is_traced(x) else Static(x) for x in leaves)
        for static in statics:
            if static is not None and not _hashable(static.value):
                raise _errors.GradkitTypeError(
                    _MSG_UNHASHABLE.format(
                        fn=getattr(self.python_function, "__qualname__", "the function"),
                        kind=type(static.value).__name__,
                        value=_short_repr(static.value),
                    )
                )
        # Keyword arguments reach the function sorted by name, as TensorFlow passes them.
        orders = key_order.key_orders((args, dict(sorted(kwargs.items()))))
        return _Layout(treedef, statics, orders), traced

    def _start_seeded(self) -> None:
        """The function draws random numbers: from now on it is compiled with a runtime seed argument."""
        self._aborted = self._compiled.trace_count
        # An initial value lifted out of the call draws with a seed of its own (position 1).
        self._seeded = JitFunction(
            functools.partial(self._run, seeded=True),
            0,
            init_arguments={1: _random.init_seed},
            on_created_kept=self._check_created,
        )

    def _output_info(self, args, kwargs):
        """The shapes and dtypes (``jax.ShapeDtypeStruct``) of what a call with these arguments returns,
        traced as that call would be (Variables its first trace creates are made, as TensorFlow's
        ``get_concrete_function`` makes them), without running it."""
        layout, traced = self._layout(args, kwargs)
        traced = [x.__gradkit_value__() if isinstance(x, Tensor) else x for x in _typed(traced)]
        if self._seeded is None:
            try:
                return self._compiled.lower(layout, *traced).out_info[0]
            except _random.NeedsSeed:
                self._start_seeded()
        seed = _random.function_seed(self)
        try:
            return self._seeded.lower(layout, seed, *traced).out_info[0]
        finally:
            _random.give_back(seed, self)

    def get_concrete_function(self, *args, **kwargs):
        """TensorFlow's ``get_concrete_function``: the function for one input signature.

        Arguments are given as for a call, each tensor as a value or a ``tf.TensorSpec``; with an
        ``input_signature``, none are needed. See ``ConcreteFunction`` for how it is called.
        """
        from ._concrete_function import ConcreteFunction

        return ConcreteFunction(self, args, kwargs)

    def pretty_printed_concrete_signatures(self, verbose=True) -> str:
        """TensorFlow's listing of the concrete functions traced so far (the one of the
        ``input_signature`` where there is one), each as ``pretty_printed_signature`` writes it."""
        if self.input_signature is not None:
            concrete = [self.get_concrete_function()]
        else:
            concrete = [self.get_concrete_function(*args, **kwargs) for args, kwargs in self._traces.examples()]
        return ("\n\n" if verbose else "\n").join(c.pretty_printed_signature(verbose=verbose) for c in concrete)

    def experimental_get_tracing_count(self) -> int:
        """How many times TensorFlow would have traced the Python function for the calls so far:
        once per new function type (see ``_trace_types.py``), and once more for a first call that
        creates Variables, as TensorFlow traces that call twice. gradkit's own traces, which
        ``trace_count`` counts, may be more (one per shape, one to find the Variables read)."""
        return len(self._traces) + (1 if self._created else 0)

    def _check_created(self, variables, used: bool = True) -> None:
        # Called inside a trace that created Variables and keeps them: as TensorFlow, only the first
        # call's first trace may (a layer built on it; the traces after it read the Variables it
        # made), and a refusal here assigns nothing. Ones the call neither read nor assigned are
        # refused on later calls only: the first call may be traced twice (to learn the Variables
        # it reads), and its second trace makes them anew.
        if not used:
            if self._called:
                self._refuse_created(variables)
            return
        if self._called or self._created:
            self._refuse_created(variables)
        self._created = True

    def _refuse_created(self, variables) -> None:
        fn = self.python_function
        fn = getattr(fn, "func", fn)  # a method's Function holds a partial over its instance
        name = getattr(fn, "__qualname__", repr(fn))
        raise _errors.GradkitValueError(_MSG_VARIABLE_ON_LATER_CALL.format(fn=name, name=variables[0]._label()))

    @property
    def trace_count(self) -> int:
        """How many times gradkit traced the Python function (all argument kinds together): one
        compiled program per trace, so a step that traces nothing new compiles nothing new.
        ``experimental_get_tracing_count`` is TensorFlow's count instead."""
        seeded = self._seeded.trace_count if self._seeded is not None else 0
        return self._compiled.trace_count - self._aborted + seeded

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        bound = self._bound.get(instance)
        if bound is None:
            bound = Function(
                functools.partial(self.python_function, instance),
                self.input_signature,
                reduce_retracing=self._reduce_retracing,
            )
            self._bound[instance] = bound
        return bound


def function(
    func=None,
    input_signature=None,
    autograph=True,
    jit_compile=None,
    reduce_retracing=False,
    experimental_implements=None,
    experimental_autograph_options=None,
    experimental_attributes=None,
    experimental_relax_shapes=None,
    experimental_compile=None,
    experimental_follow_type_hints=None,
):
    """``tf.function``: compile with ``gk.jit`` (Variables read are inputs, assignments outputs).

    >>> import gradkit.tf as tf
    >>> v = tf.Variable(1.0)
    >>> @tf.function
    ... def step(x):
    ...     v.assign_add(x)
    ...     return v * 2
    >>> [float(step(tf.constant(float(i)))) for i in range(3)], float(v.numpy()), step.trace_count <= 2
    ([2.0, 4.0, 8.0], 4.0, True)
    """
    # TensorFlow's deprecated name for reduce_retracing.
    reduce_retracing = reduce_retracing or bool(experimental_relax_shapes)
    if func is None:
        return functools.partial(
            function, input_signature=input_signature, jit_compile=jit_compile, reduce_retracing=reduce_retracing
        )
    return Function(func, input_signature=input_signature, jit_compile=jit_compile, reduce_retracing=reduce_retracing)
