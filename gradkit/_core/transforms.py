"""JAX's transforms for imperative functions that read and assign Variables.

Each transform runs the function as a pure function of (the entry values of the ``wrt``
Variables, the differentiated arguments) and hands that to the matching ``jax``
transform. Derivatives are with respect to each Variable's value when the transform was
entered; every later read sees the latest assigned value, and that value carries its
history, so nothing is cut by an assignment. No transform changes a live Variable: pass
``return_state=True`` to get the final values of every Variable the function assigned,
as a State you can ``commit()``.

Result layout: with ``wrt=`` only, results mirror ``wrt``; with ``argnums`` only, they
are what the ``jax`` transform returns; with both, ``(argument results, wrt results)``.
With ``return_state=True`` every transform returns ``(result, state)``.

Called while a layer above the core holds the Variables' values (a recording tape), a
transform runs as one program over the values of the Variables its function reads and its
arguments (``programs.program_call``), which that layer records as one op: an outer tape
differentiates through ``gk.grad`` as through ``tape.gradient``.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from .. import _errors
from . import frames, runtime_checks
from .functionalize import StateFrame, values_of
from .programs import holds_custom_vjp, program_call
from .state import State, flatten_variables, unique
from .variable import Variable

_DEFAULT = object()


def _recorded() -> bool:
    """Whether a layer above the core (a recording tape) holds the Variables' values now.

    The transform then runs through ``program_call``: inside its trace a ``StateFrame`` is on
    top, so the call below runs as it does anywhere else, on the values the tape hands it.
    """
    top = frames.top()
    return top is not None and not isinstance(top, (StateFrame, frames.Suspend))


def _recordable(run: Callable, what: str) -> Callable:
    """``run``, or under a recording tape one recorded program of it (see ``_recorded``)."""

    # ``run`` is not a closure over this wrapper: a reference cycle would keep the Variables it
    # closes over alive after the call (a local Variable created inside gk.vmap would escape).
    def wrapper(*args, **kwargs):
        if _recorded():
            return program_call(run, args, kwargs, what)
        return run(*args, **kwargs)

    # A tf.debugging assertion in the function that fails when it runs raises from the call.
    return runtime_checks.checked(wrapper)


def int_or_ints(value, what: str) -> tuple[bool, tuple[int, ...]]:
    """An ``argnums``-style argument as (whether it was one int, the ints): Python or NumPy
    integers, alone or in a sequence, as jax takes them."""
    try:
        return True, (operator.index(value),)
    except TypeError:
        pass
    try:
        return False, tuple(operator.index(i) for i in value)
    except TypeError:
        raise _errors.GradkitTypeError(
            f"{what}={value!r} is not an int or a sequence of ints. Pass the positions of the arguments, "
            "e.g. 0 or (0, 2)."
        ) from None


class _Plan:
    """What one call differentiates: which arguments, which Variables, and how results nest."""

    def __init__(self, transform: str, argnums, wrt, args, *, default_argnums=0, needs_float=True, float_args=False):
        self.transform = transform
        self.has_wrt = wrt is not None
        if argnums is _DEFAULT:
            argnums = () if self.has_wrt else default_argnums
            self.explicit_argnums = not self.has_wrt
        else:
            self.explicit_argnums = True
        self.argnums_int, self.argnums = int_or_ints(argnums, f"{transform}: argnums")
        for i in self.argnums:
            if not -len(args) <= i < len(args):
                raise _errors.GradkitValueError(
                    f"{transform}: argnums={argnums!r} does not fit a call with {len(args)} positional "
                    "argument(s). Pass the arguments to differentiate positionally, or use wrt= for Variables."
                )
        requested = tuple(i % len(args) for i in self.argnums)
        # An argument named twice (argnums=(0, 0)) is differentiated once and its result
        # repeated, as a Variable listed twice in wrt= is: differentiating two copies of it
        # would give the gradient to the last copy only (each copy is written into the same
        # position of the call) and silently zero to the others.
        self.argnums = tuple(_unique_positions(requested))
        self.arg_positions = [self.argnums.index(i) for i in requested]
        if float_args:
            for i in self.argnums:
                _check_float_argument(transform, i, args[i])
        else:
            for i in self.argnums:
                for path, leaf in jax.tree_util.tree_leaves_with_path(args[i]):
                    _dtype_of_argument(transform, i, path, leaf)
        if self.has_wrt:
            self.wrt_leaves, self.wrt_tree = flatten_variables(wrt)
            self.variables = unique(self.wrt_leaves)
            position = {id(v): i for i, v in enumerate(self.variables)}
            self.wrt_positions = [position[id(v)] for v in self.wrt_leaves]
            if needs_float:
                for v in self.variables:
                    if not jnp.issubdtype(v.dtype, jnp.inexact):
                        raise _errors.GradkitTypeError(
                            _errors.MSG_INTEGER_WRT.format(what=f"Variable {v._label()}", dtype=v.dtype)
                        )
        else:
            self.variables = []
        self.args = args

    def entry_values(self) -> tuple:
        values = tuple(frames.read(v) for v in self.variables)
        for var, value in zip(self.variables, values):
            if hasattr(type(value), "__gradkit_value__"):
                raise _errors.GradkitTypeError(
                    _errors.MSG_TRANSFORM_UNDER_TAPE.format(transform=self.transform, name=var._label())
                )
        return values

    def primals(self) -> tuple:
        # A Variable given as an argument to differentiate is differentiated as its value (jax
        # would see a Variable in the primal tree and an array in the tangent tree).
        return (self.entry_values(), *(values_of(self.args[i]) for i in self.argnums))

    def pure(self, fn: Callable, kwargs: dict, has_aux: bool, check: Callable | None = None):
        """``pure(wrt_values, *diff_args) -> (out, (aux, assigned_state))``."""
        variables = tuple(self.variables)
        argnums = self.argnums
        args = self.args
        transform = self.transform

        def pure(wrt_values, *diff_args):
            full = list(args)
            for i, x in zip(argnums, diff_args):
                full[i] = x
            frame = StateFrame(
                State._make(variables, wrt_values), strict=False, created_are_local=True, warns_if_staged=True
            )
            with frame:
                try:
                    result = values_of(fn(*full, **kwargs))
                except AttributeError as error:
                    _explain_assigned_argument(error, transform, [args[i] for i in argnums])
                    raise
            if has_aux:
                if not (isinstance(result, (tuple, list)) and len(result) == 2):
                    raise _errors.GradkitTypeError(
                        f"{transform}(..., has_aux=True) needs the function to return a pair (output, aux), "
                        f"but it returned {_what_came(result)}. Return (output, aux), or leave has_aux out."
                    )
                out, aux = result
            else:
                out, aux = result, None
            if check is not None:
                check(out)
            return out, (aux, frame.assigned_state())

        return pure

    def pack(self, per_input: Sequence[Any]):
        """Arrange results computed per (wrt values, *diff args) as the caller asked."""
        wrt_part = per_input[0]
        arg_part = tuple(per_input[1 + p] for p in self.arg_positions)
        if self.argnums_int:
            arg_result = arg_part[0]
        else:
            arg_result = arg_part
        if not self.has_wrt:
            return arg_result
        wrt_result = jax.tree_util.tree_unflatten(self.wrt_tree, [wrt_part[i] for i in self.wrt_positions])
        if not self.explicit_argnums:
            return wrt_result
        return arg_result, wrt_result


def _explain_assigned_argument(error: AttributeError, transform: str, differentiated: list) -> None:
    """A function that assigns a Variable it was given as an argument to differentiate: it got the
    Variable's value (an array), which has no ``assign``; say so, and what to pass instead."""
    method = re.search(r"attribute '?(assign\w*|scatter\w*)", str(error))
    given = [v for v in differentiated if isinstance(v, Variable)]
    if method and given and transform == "gk.vmap":
        raise _errors.GradkitTypeError(
            f"gk.vmap passes its argument {given[0]._label()} as the Variable's value, an array, so the function's "
            f"{method.group(1)}() on it failed. Read the Variable inside the function instead of passing it (an "
            "existing Variable cannot be assigned per example), or map jax.vmap(gk.functionalize(fn)) over a State."
        ) from error
    if method and given:
        raise _errors.GradkitTypeError(
            f"{transform} differentiates its argument {given[0]._label()} as the Variable's value, an array, so the "
            f"function's {method.group(1)}() on it failed. To differentiate through assignments to a Variable, "
            f"pass it by wrt= ({transform}(f, wrt=v), with f reading v) instead of as the argument."
        ) from error


def _unique_positions(positions):
    seen: set[int] = set()
    return [i for i in positions if not (i in seen or seen.add(i))]


def _dtype_of_argument(transform: str, i: int, path, leaf):
    """The dtype of a leaf of an argument to differentiate; anything but an array or a number is refused."""
    try:
        return jnp.result_type(leaf)
    except TypeError:
        where = f" (its leaf {jax.tree_util.keystr(path)})" if path else ""
        raise _errors.GradkitTypeError(
            f"{transform} differentiates argument {i}, but it is a {type(leaf).__name__}{where} ({_short(leaf)}), "
            "not an array or a number. Leave it out of the arguments (close over it), or pass a float array."
        ) from None


def _check_float_argument(transform: str, i: int, arg) -> None:
    """Refuse an integer or boolean argument to differentiate, as jax.grad does, but saying what to do."""
    for path, leaf in jax.tree_util.tree_leaves_with_path(arg):
        dtype = _dtype_of_argument(transform, i, path, leaf)
        if not jnp.issubdtype(dtype, jnp.inexact):
            what = f"a Python {type(leaf).__name__}" if isinstance(leaf, (bool, int)) else "an array"
            if path:
                # Inside a structure (a gk.State's entry for one Variable, a dict's item): say which.
                what = f"a {type(arg).__name__} whose leaf {jax.tree_util.keystr(path)} is {what}"
            raise _errors.GradkitTypeError(
                _errors.MSG_INTEGER_ARGUMENT.format(transform=transform, i=i, what=what, dtype=dtype)
            )


def _wrt_tangent(var: Variable, tangent):
    """``tangent`` for the entry value of ``var``: its shape and dtype checked, never cast across kinds."""
    converted = jnp.asarray(tangent)
    python = isinstance(tangent, (float, complex, list, tuple))
    if python and any(
        jnp.issubdtype(converted.dtype, kind) and jnp.issubdtype(var.dtype, kind)
        for kind in (jnp.floating, jnp.complexfloating)
    ):
        # A Python float has no precision of its own: it takes the Variable's, as in jax.jvp.
        converted = converted.astype(var.dtype)
    elif python and jnp.issubdtype(converted.dtype, jnp.floating) and jnp.issubdtype(var.dtype, jnp.complexfloating):
        converted = converted.astype(var.dtype)  # a real direction of a complex Variable: 1.0 is 1 + 0j
    if converted.shape != var.shape:
        raise _errors.GradkitValueError(
            _errors.MSG_TANGENT_SHAPE.format(name=var._label(), got=converted.shape, want=var.shape)
        )
    if converted.dtype != var.dtype:
        raise _errors.GradkitTypeError(
            _errors.MSG_TANGENT_DTYPE.format(name=var._label(), got=converted.dtype, want=var.dtype)
        )
    return converted


@contextlib.contextmanager
def _complex_errors(transform: str):
    """jax's refusal of complex inputs or outputs without ``holomorphic=True`` as gradkit's error,
    which names the transform's own option and the way for a non-holomorphic function."""
    try:
        yield
    except TypeError as e:
        if str(e).startswith("[gradkit]"):
            raise
        if "requires real-valued outputs" in str(e) and "holomorphic" not in str(e):
            got = re.search(r"but got (\w+)", str(e))
            raise _errors.GradkitTypeError(
                f"{transform} got an output of an integer or bool dtype ({got.group(1) if got else 'not float'}): "
                "integer outputs have no derivative. Cast the output to a float, or return it as has_aux."
            ) from None
        if "holomorphic" not in str(e):
            raise
        what = str(e).splitlines()[0].split(". ")[0].rstrip(".") + "."  # jax's advice names jax's own calls
        if "holomorphic=True requires" in what:
            raise _errors.GradkitTypeError(
                f"{transform} got holomorphic=True with real values: {what} holomorphic=True is for complex "
                "functions of complex inputs: pass complex inputs (x.astype(jnp.complex64)) and return complex "
                "outputs, or leave holomorphic out for a real function."
            ) from None
        raise _errors.GradkitTypeError(
            f"{transform} got complex values: {what} For a holomorphic function of complex "
            f"inputs with complex outputs, pass {transform}(..., holomorphic=True). For a real function of complex "
            "inputs, gk.grad (or gk.vjp) gives its gradient, as jax.grad does; for other non-holomorphic functions, "
            "differentiate the real and imaginary parts as separate real inputs."
        ) from None


def check_callable(fn, transform: str) -> None:
    """A transform's function must be callable: ``gk.grad(loss(x))`` is a common slip."""
    if not callable(fn):
        raise _errors.GradkitTypeError(
            f"{transform} takes the function to transform, but got {_short(fn)} ({type(fn).__name__}). Pass the "
            f"function itself: {transform}(loss)(x), not {transform}(loss(x))."
        )


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _what_came(result) -> str:
    """A function's result as a user would name it: an array by shape and dtype (a tracer's
    class is jax's business), anything else by its type and contents."""
    if hasattr(result, "shape") and hasattr(result, "dtype"):
        return f"an array of shape {tuple(result.shape)} and dtype {result.dtype}"
    if isinstance(result, (tuple, list)):
        return f"a {type(result).__name__} of {len(result)} ({_describe_tree(result)})"
    return f"{_short(result)} ({type(result).__name__})"


# The first words of jax's refusals of a tangent or cotangent that does not fit its primal or output.
_MISMATCH_MARKERS = (
    "jvp called with different primal and tangent shapes",
    "primal and tangent arguments to jax.jvp do not match",
    "for argument to VJP function",
    "unexpected tree structure",
)


@contextlib.contextmanager
def _mismatch_errors(transform: str, fix: str):
    """jax's refusal of a tangent (cotangent) whose shape, dtype or structure is not its primal's
    (output's) as gradkit's error, with what to pass instead."""
    try:
        yield
    except (TypeError, ValueError) as e:
        text = str(e)
        if text.startswith("[gradkit]") or not any(marker in text for marker in _MISMATCH_MARKERS):
            raise
        error = _errors.GradkitTypeError if isinstance(e, TypeError) else _errors.GradkitValueError
        detail = " ".join(line.strip() for line in text.splitlines()[:6] if line.strip())
        raise error(f"{transform}: {detail} {fix}") from None


def _describe_tree(out) -> str:
    leaves = jax.tree_util.tree_leaves(out)
    shapes = ", ".join(str(tuple(jnp.shape(x))) if hasattr(x, "shape") else type(x).__name__ for x in leaves[:4])
    return f"leaves of shapes {shapes}{', ...' if len(leaves) > 4 else ''}"


def _check_scalar(transform):
    def check(out):
        if isinstance(out, (tuple, list, dict)):
            kinds = type(out).__name__ + (f" of {len(out)}" if isinstance(out, (tuple, list)) else "")
            raise _errors.GradkitTypeError(
                f"{transform} needs a function that returns a scalar, but it returned a {kinds} "
                f"({_describe_tree(out)}). If the function returns (loss, aux), pass has_aux=True: "
                f"{transform}(fn, ..., has_aux=True) differentiates the first element and returns the aux "
                "as it is; otherwise reduce the output to one scalar."
            )
        if not (hasattr(out, "shape") and hasattr(out, "dtype")) and not isinstance(out, (int, float, complex)):
            raise _errors.GradkitTypeError(
                f"{transform} needs a function that returns a scalar, but it returned {_what_came(out)}. "
                "Return the loss (a float scalar) from the function."
            )
        shape = jnp.shape(out)
        if shape != ():
            raise _errors.GradkitTypeError(_errors.MSG_NON_SCALAR.format(transform=transform, shape=shape))
        if not jnp.issubdtype(jnp.result_type(out), jnp.inexact):
            raise _errors.GradkitTypeError(
                f"{transform} needs a function with a float output, but it returned dtype "
                f"{jnp.result_type(out)}. Integer outputs have no gradient; cast the output to a float."
            )

    return check


def _finish(result, state, return_state):
    return (result, state) if return_state else result


def value_and_grad(
    fn: Callable,
    argnums: int | Sequence[int] = _DEFAULT,
    *,
    wrt=None,
    has_aux: bool = False,
    return_state: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """Like ``jax.value_and_grad``, for functions that read and assign Variables.

    Args:
      fn: a function returning a scalar float (and an aux value if ``has_aux``).
      argnums: positional arguments to differentiate (default 0 when ``wrt`` is not given).
      wrt: a Variable or a nested list/tuple/dict of Variables to differentiate with
        respect to (their values on entry); the gradients mirror this structure.
      has_aux: ``fn`` returns ``(output, aux)``; aux is returned beside the value.
      return_state: also return the State of every Variable ``fn`` assigned.
      holomorphic: ``fn`` is holomorphic in complex inputs (and returns a complex scalar), as
        ``jax.value_and_grad``'s ``holomorphic``.

    Returns:
      A function returning ``(value, grads)`` (``((value, aux), grads)`` with ``has_aux``).

    Called while a ``GradientTape`` records, it differentiates the Variables' current values
    and the tape records the call as one op, so an outer tape differentiates through it (a
    meta-gradient through ``w.assign_sub(lr * gk.grad(loss, wrt=w)())``). Its arguments must
    then be arrays, tensors or numbers; the other transforms behave the same way.

    >>> import gradkit as gk, jax.numpy as jnp
    >>> a, b, c = gk.Variable(1.0), gk.Variable(2.0), gk.Variable(3.0)
    >>> def loss():
    ...     c.assign(a + b)
    ...     return jnp.mean(c ** 2)
    >>> value, (da, db) = gk.value_and_grad(loss, wrt=[a, b])()
    >>> float(value), float(da), float(db)
    (9.0, 6.0, 6.0)
    """
    return _value_and_grad(fn, argnums, wrt, has_aux, return_state, holomorphic, "gk.value_and_grad")


def _value_and_grad(fn, argnums, wrt, has_aux, return_state, holomorphic, name):
    check_callable(fn, name)

    def run(*args, **kwargs):
        plan = _Plan(name, argnums, wrt, args, float_args=True)
        pure = plan.pure(fn, kwargs, has_aux, _check_scalar(name))
        n = 1 + len(plan.argnums)
        with _complex_errors(name):
            (value, (aux, state)), grads = jax.value_and_grad(
                pure, argnums=tuple(range(n)), has_aux=True, holomorphic=holomorphic
            )(*plan.primals())
        head = (value, aux) if has_aux else value
        return _finish((head, plan.pack(grads)), state, return_state)

    return _recordable(run, name)


def grad(
    fn: Callable,
    argnums=_DEFAULT,
    *,
    wrt=None,
    has_aux: bool = False,
    return_state: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """Like ``jax.grad``, for functions that read and assign Variables.

    Arguments as for :func:`value_and_grad`. Returns the gradients (``(grads, aux)`` with
    ``has_aux``), mirroring ``wrt`` and/or ``argnums``.

    >>> import gradkit as gk, jax.numpy as jnp
    >>> a, b, c = gk.Variable(1.0), gk.Variable(2.0), gk.Variable(3.0)
    >>> def pipeline(x):
    ...     c.assign((1 - x) * a + x * b)
    ...     return jnp.mean(c ** 2)
    >>> [float(g) for g in gk.grad(pipeline, wrt=[a, b])(0.5)]   # [2c(1-x), 2cx], c = 1.5
    [1.5, 1.5]
    >>> float(gk.grad(pipeline)(0.5))                            # 2c(b - a)
    3.0
    """
    vg = _value_and_grad(fn, argnums, wrt, has_aux, True, holomorphic, "gk.grad")

    def run(*args, **kwargs):
        (head, grads), state = vg(*args, **kwargs)
        result = (grads, head[1]) if has_aux else grads
        return _finish(result, state, return_state)

    # Recorded as itself, not as ``vg``: a State it drops must not be a result of the program.
    return _recordable(run, "gk.grad")


def _jacobian(jax_transform, name):
    def transform(
        fn: Callable,
        argnums=_DEFAULT,
        *,
        wrt=None,
        has_aux: bool = False,
        return_state: bool = False,
        holomorphic: bool = False,
    ):
        check_callable(fn, name)

        def run(*args, **kwargs):
            plan = _Plan(name, argnums, wrt, args, float_args=True)
            pure = plan.pure(fn, kwargs, has_aux)
            n = 1 + len(plan.argnums)
            out_tree = []

            def outputs_only(*xs):
                out, rest = pure(*xs)
                out_tree.append(jax.tree_util.tree_structure(out))
                return out, rest

            options = {"argnums": tuple(range(n)), "has_aux": True, "holomorphic": holomorphic}
            with _complex_errors(name):
                try:
                    jac, (aux, state) = jax_transform(outputs_only, **options)(*plan.primals())
                except TypeError as e:
                    if jax_transform is not jax.jacfwd or not _no_forward_rule(e):
                        raise
                    # A custom gradient inside (a jax.custom_vjp) has no forward rule: the same
                    # Jacobian, by reverse mode.
                    out_tree.clear()
                    jac, (aux, state) = jax.jacrev(outputs_only, **options)(*plan.primals())
            per_output = out_tree[0].flatten_up_to(jac)
            packed = out_tree[0].unflatten([plan.pack(j) for j in per_output])
            return _finish((packed, aux) if has_aux else packed, state, return_state)

        return _recordable(run, name)

    return transform


jacrev = _jacobian(jax.jacrev, "gk.jacrev")
jacrev.__name__ = "jacrev"
jacrev.__doc__ = """Like ``jax.jacrev`` (reverse mode), for functions that read and assign Variables.

    The Jacobian has, for each output leaf, one entry per differentiated input (arranged
    as for :func:`grad`), each of shape ``output.shape + input.shape``.

    >>> import gradkit as gk, jax.numpy as jnp
    >>> w = gk.Variable(jnp.array([1.0, 2.0]))
    >>> gk.jacrev(lambda x: w * x, wrt=w)(3.0)
    Array([[3., 0.],
           [0., 3.]], dtype=float32)
    """
jacfwd = _jacobian(jax.jacfwd, "gk.jacfwd")
jacfwd.__name__ = "jacfwd"
jacfwd.__doc__ = """Like ``jax.jacfwd`` (forward mode), for functions that read and assign Variables.

    Arguments and layout as for :func:`jacrev`.
    """


def hessian(fn: Callable, argnums=_DEFAULT, *, wrt=None, has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """Like ``jax.hessian`` (forward over reverse), for functions over Variables.

    With ``wrt=[u, v]`` the result is nested ``H[i][j] = d2 f / d wrt[i] d wrt[j]``, each
    block of shape ``wrt[i].shape + wrt[j].shape``.

    >>> import gradkit as gk
    >>> x = gk.Variable(2.0)
    >>> def f():
    ...     x.assign(x * 2)       # f = (2x)^3 through the assignment
    ...     return x ** 3
    >>> float(gk.hessian(f, wrt=x)())   # 48 x
    96.0
    """
    check_callable(fn, "gk.hessian")
    inner = jacrev(fn, argnums, wrt=wrt, has_aux=has_aux, holomorphic=holomorphic)
    return jacfwd(inner, argnums, wrt=wrt, has_aux=has_aux, holomorphic=holomorphic)


def jvp(
    fn: Callable,
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    wrt=None,
    wrt_tangents=None,
    has_aux: bool = False,
    return_state: bool = False,
):
    """Like ``jax.jvp``, for functions over Variables: push tangents forward.

    Args:
      primals, tangents: the positional arguments and their tangents, as for ``jax.jvp``.
      wrt: Variables whose entry values also get tangents ...
      wrt_tangents: ... given here, in the same structure as ``wrt``.

    Returns:
      ``(out, out_tangent)`` (and ``aux`` third with ``has_aux``).

    Through a ``custom_gradient`` (which has a reverse rule only), the tangent is pushed through
    the transpose of its ``grad_fn``, as TensorFlow's forward mode does. That is exact when
    ``grad_fn`` is linear in ``dy``, as a gradient is; a rule that is not (one that clips ``dy``)
    has no single forward derivative, and this one takes it at ``dy = 1``. ``gk.jacfwd`` and
    ``gk.jacrev`` take its rows at one-hot cotangents instead.

    >>> import gradkit as gk
    >>> a = gk.Variable(3.0)
    >>> out, t = gk.jvp(lambda x: a * x ** 2, (2.0,), (1.0,), wrt=a, wrt_tangents=1.0)
    >>> float(out), float(t)    # d(a x^2) = x^2 da + 2 a x dx
    (12.0, 16.0)
    """
    check_callable(fn, "gk.jvp")
    for what, given in (("primals", primals), ("tangents", tangents)):
        if not isinstance(given, (tuple, list)):
            raise _errors.GradkitTypeError(
                f"gk.jvp takes {what} as a tuple or list, one entry per positional argument of the function, as "
                f"jax.jvp does, but got {_short(given)} ({type(given).__name__}). Write gk.jvp(f, (x,), (v,))."
            )
    if _recorded():

        def pushed(primals, tangents, wrt_tangents):
            return jvp(
                fn, primals, tangents, wrt=wrt, wrt_tangents=wrt_tangents, has_aux=has_aux, return_state=return_state
            )

        return program_call(pushed, (tuple(primals), tuple(tangents), wrt_tangents), {}, "gk.jvp")
    primals, tangents = tuple(primals), tuple(tangents)
    # A Variable given as a primal is pushed forward as its value (as gk.vjp and gk.grad take it).
    p_tree = jax.tree_util.tree_structure(tuple(values_of(p) for p in primals))
    t_tree = jax.tree_util.tree_structure(tangents)
    if p_tree != t_tree:
        # Checked here: jax's own message would show the tuple of Variable values gradkit adds.
        raise _errors.GradkitValueError(
            f"gk.jvp: tangents= must have the structure of primals= ({p_tree}), one tangent per primal, "
            f"but it has {t_tree}. Tangents of Variables go in wrt_tangents=, beside wrt=."
        )
    if wrt is None and wrt_tangents is not None:
        raise _errors.GradkitTypeError(
            "gk.jvp: wrt_tangents= was given without wrt=, so it would be ignored. Name the Variables the "
            "tangents belong to: gk.jvp(fn, primals, tangents, wrt=[v], wrt_tangents=[t])."
        )
    plan = _Plan("gk.jvp", tuple(range(len(primals))), wrt, primals)
    if wrt is not None:
        if wrt_tangents is None:
            raise _errors.GradkitTypeError("gk.jvp: wrt= needs wrt_tangents= with the same structure.")
        try:
            t_leaves = plan.wrt_tree.flatten_up_to(wrt_tangents)
        except (ValueError, TypeError) as e:
            raise _errors.GradkitValueError(
                f"gk.jvp: wrt_tangents= must have the structure of wrt= ({plan.wrt_tree}), one tangent per "
                f"Variable, but it does not: {e}"
            ) from None
        by_var = {}
        for v, t in zip(plan.wrt_leaves, t_leaves):
            t = _wrt_tangent(v, t)
            # A Variable listed twice is one entry of the state, and gk.vjp gives each listing
            # its whole cotangent; the JVP dual to that pushes the sum of its tangents.
            by_var[id(v)] = by_var[id(v)] + t if id(v) in by_var else t
        var_tangents = tuple(by_var[id(v)] for v in plan.variables)
    else:
        var_tangents = ()
    pure = plan.pure(fn, {}, has_aux)

    def call(wrt_values, *xs):
        out, rest = pure(wrt_values, *xs)
        return out, rest

    all_tangents = (var_tangents, *tangents)
    if frames.trace_state() != _EAGER and holds_custom_vjp(call, *plan.primals()):
        # Inside a trace jax refuses forward mode through a custom_vjp only when the program
        # is compiled: the function's program decides here instead.
        out, out_t, (aux, state) = _jvp_by_transposed_vjp(call, plan.primals(), all_tangents)
    else:
        try:
            with _mismatch_errors("gk.jvp", _JVP_FIX):
                out, out_t, (aux, state) = jax.jvp(call, plan.primals(), all_tangents, has_aux=True)
        except TypeError as e:
            if not _no_forward_rule(e):
                raise
            out, out_t, (aux, state) = _jvp_by_transposed_vjp(call, plan.primals(), all_tangents)
    result = (out, out_t, aux) if has_aux else (out, out_t)
    return _finish(result, state, return_state)


_EAGER = frames.trace_state()  # no jax trace active (jax's own eager evaluation)
_JVP_FIX = (
    "Each tangent has its primal's shape and dtype: pass e.g. jnp.ones_like(x) for the primal x "
    "(tangents of Variables go in wrt_tangents=)."
)
_VJP_FIX = (
    "The cotangent has the structure, shapes and dtypes of the function's output: pass e.g. "
    "jax.tree_util.tree_map(jnp.ones_like, out) for the out gk.vjp returned."
)


def _no_forward_rule(error: TypeError) -> bool:
    """Whether jax refused forward mode because the function holds a ``jax.custom_vjp`` (a
    ``custom_gradient``, or gradkit.tf's ``sqrt`` with TensorFlow's gradient kernel)."""
    return "custom_vjp" in str(error)


def _jvp_by_transposed_vjp(f, primals: tuple, tangents: tuple):
    """``jax.jvp(f, primals, tangents, has_aux=True)`` as the transpose of ``f``'s VJP (the
    double-backward trick TensorFlow's forward mode uses), for a function with a custom VJP
    rule and so no forward rule: the VJP is linear in its cotangent, so its VJP at any cotangent
    is its transpose, the JVP. Taken at ones, not zeros: a rule may branch on the cotangent's sign
    and be flat in it exactly at zero (``tf.math.cumulative_logsumexp``'s)."""
    out, pull, aux = jax.vjp(f, *primals, has_aux=True)
    _, pull_back = jax.vjp(pull, jax.tree_util.tree_map(jnp.ones_like, out))
    (out_t,) = pull_back(tuple(tangents))
    return out, out_t, aux


def vjp(fn: Callable, *primals, wrt=None, has_aux: bool = False, return_state: bool = False):
    """Like ``jax.vjp``, for functions over Variables: pull cotangents back.

    Returns ``(out, vjp_fn)`` (``(out, vjp_fn, aux)`` with ``has_aux``). ``vjp_fn(ct)``
    returns the cotangents of the primals as a tuple, or ``(that tuple, wrt cotangents)``
    when ``wrt`` is given.

    >>> import gradkit as gk, jax.numpy as jnp
    >>> w = gk.Variable(jnp.array([1.0, 2.0]))
    >>> out, pull = gk.vjp(lambda: w * 3.0, wrt=w)
    >>> pull(jnp.array([1.0, 1.0]))[1]
    Array([3., 3.], dtype=float32)
    """
    check_callable(fn, "gk.vjp")
    if _recorded():
        return _recorded_vjp(fn, primals, wrt, has_aux, return_state)
    plan = _Plan("gk.vjp", tuple(range(len(primals))), wrt, primals)
    plan.explicit_argnums = True
    pure = plan.pure(fn, {}, has_aux)
    out, pull, (aux, state) = jax.vjp(pure, *plan.primals(), has_aux=True)

    def vjp_fn(cotangent):
        with _mismatch_errors("gk.vjp's pullback", _VJP_FIX):
            cts = pull(cotangent)
        return plan.pack(cts)

    result = (out, vjp_fn, aux) if has_aux else (out, vjp_fn)
    return _finish(result, state, return_state)


def _recorded_vjp(fn: Callable, primals: tuple, wrt, has_aux: bool, return_state: bool):
    """``gk.vjp`` while a tape records: the forward call and each pull are recorded programs.

    A pull sees the Variables as the forward call did, as ``jax.vjp``'s residuals do: their
    values are read at the ``gk.vjp`` call and passed to every pull, so an assignment made
    in between changes nothing.
    """
    traced: dict = {}

    def forward(*p):
        result = vjp(fn, *p, wrt=wrt, has_aux=has_aux, return_state=return_state)
        (out, _, *aux), state = result if return_state else (result, None)
        return out, aux, state

    out, aux, state = program_call(forward, primals, {}, "gk.vjp", traced)
    ((variables, *_),) = traced.values()
    at_call = tuple(frames.read(v) for v in variables)

    def vjp_fn(cotangent):
        def pull(values, cotangent, primals):
            with StateFrame(State._make(variables, values), strict=False):
                return vjp(fn, *primals, wrt=wrt, has_aux=has_aux)[1](cotangent)

        return program_call(pull, (at_call, cotangent, primals), {}, "gk.vjp")

    return _finish((out, vjp_fn, *aux), state, return_state)


class _VmapFrame(StateFrame):
    """The frame of one traced call of a ``gk.vmap`` function.

    Variables created during the call are local to it: their assignments are kept here, per
    example, and dropped when the call ends. A Variable that existed before the call
    outlives it, so assigning it is refused at the assignment.
    """

    def __init__(self):
        super().__init__(State._make((), ()), strict=False, created_are_local=True, warns_if_staged=True)

    def assign(self, var, value):
        if not self.is_local(var):
            _refuse_vmap_assign(var)
        super().assign(var, value)


def _refuse_vmap_assign(var, kept: bool = False) -> None:
    if kept:
        raise _errors.GradkitTypeError(_errors.MSG_VMAP_ASSIGN_KEPT.format(name=var._label()))
    raise _errors.GradkitTypeError(_errors.MSG_VMAP_ASSIGN.format(name=var._label(), name_plain=var.name))


def _check_axes_spec(what: str, spec) -> None:
    """Refuse a gk.State of values used as an axes spec, saying how to build one."""
    for leaf in jax.tree_util.tree_leaves(spec, is_leaf=lambda x: isinstance(x, State)):
        if isinstance(leaf, State) and not all(x is None or type(x) is int for x in leaf.values()):
            raise _errors.GradkitTypeError(_errors.MSG_STATE_AS_AXES.format(what=what))


def vmap(fn: Callable, in_axes=0, out_axes=0, *, axis_name=None, axis_size=None, spmd_axis_name=None) -> Callable:
    """Like ``jax.vmap``, for functions that read Variables and assign their own.

    Arguments as for ``jax.vmap``; keyword arguments of the call are mapped over their
    leading axis, as ``jax.vmap`` maps them. Outputs may be Variables (their values are
    returned) or any pytree of arrays.

    - A Variable that exists before the call is read as the same value by every example
      (it is not batched; inside ``gk.grad`` it is the transform's traced value, so
      ``gk.grad(..., wrt=v)`` of a function using ``gk.vmap`` differentiates through it).
      Assigning one is refused with a ``[gradkit]`` error: each example would write its own
      value into one Variable. Use ``jax.vmap(gk.functionalize(fn), in_axes=(None, 0))``
      over a State instead, which returns the per-example States.
    - A Variable created inside the mapped function is local to the call: it may be read
      and assigned (``acc = gk.Variable(0.0); acc.assign_add(x * w)``), its values are per
      example, and it may start from a traced value (``fast = gk.Variable(w)`` inside
      ``gk.grad``, ``gk.Variable(x)`` of a mapped ``x``). A Variable created inside and kept
      after the call is an ordinary one: assigning it is refused, and it must start from a
      concrete value.

    Called while a tape records, the mapped call is one op the tape records over the values
    of the Variables it reads (read anew at each call), traced once per argument structure for
    each ``gk.vmap`` function, as ``jax.jit`` traces; a new function with the same program (a
    lambda built each step) is traced again but is the same op, so it compiles nothing new.

    To map over a ``gk.State`` argument, give ``in_axes`` an axes spec of the same structure,
    ``state.axes(0)`` or ``state.axes({w: 0}, default=None)``.

    >>> import gradkit as gk, jax.numpy as jnp
    >>> w = gk.Variable(jnp.array([1.0, 2.0]))
    >>> def dot(x):
    ...     acc = gk.Variable(0.0)
    ...     for i in range(2):
    ...         acc.assign_add(x[i] * w[i])
    ...     return acc
    >>> gk.vmap(dot)(jnp.array([[1.0, 1.0], [3.0, -1.0]]))
    Array([3., 1.], dtype=float32)
    """
    check_callable(fn, "gk.vmap")
    _check_axes_spec("in_axes", in_axes)
    _check_axes_spec("out_axes", out_axes)

    given_variables = []

    @functools.wraps(fn)
    def run(*args, **kwargs):
        frame = _VmapFrame()
        with frame:
            try:
                out = values_of(fn(*args, **kwargs))
            except AttributeError as error:
                _explain_assigned_argument(error, "gk.vmap", given_variables)
                raise
        for var in frame.escaped(assigned=True):
            _refuse_vmap_assign(var, kept=True)  # created during the call, but kept by something that outlives it
        return out

    vectorised = jax.vmap(
        run,
        in_axes=in_axes,
        out_axes=out_axes,
        axis_name=axis_name,
        axis_size=axis_size,
        spmd_axis_name=spmd_axis_name,
    )

    @functools.wraps(fn)
    def call(*args, **kwargs):
        given_variables[:] = [a for a in args if is_variable(a)]
        try:
            return _call(*args, **kwargs)
        finally:
            given_variables.clear()  # named in an error only; not kept alive after the call

    def _call(*args, **kwargs):
        if not _recorded():
            return vectorised(*args, **kwargs)
        # A layer above the core (a recording tape) keeps the Variables' values: inside the
        # vectorised trace they would be its own objects, not arrays. As one interned program
        # over the values of the Variables it reads, the call is one op that layer records and
        # differentiates, the same op for every equal program (a new lambda each step too).
        # Traced at every call, as the eager jax.vmap runs ``fn`` at every call: a program
        # remembered per function would keep the Python state and the Variables of its first
        # call (a global it reads, a Variable it reaches through a dict).
        return program_call(vectorised, args, kwargs, "gk.vmap")

    # A tf.debugging assertion in the function that fails when it runs raises from the call.
    return runtime_checks.checked(call)


def is_variable(x) -> bool:
    return isinstance(x, Variable)
