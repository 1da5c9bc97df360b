"""TensorFlow's functional control flow: ``cond``, ``while_loop``, ``map_fn``, ``scan``,
``foldl``, ``foldr``, and ``executing_eagerly``, ``print``, ``is_tensor``.

Eagerly (a tape recording or not) they run as TensorFlow's eager ops do: ``cond`` calls one
branch, ``while_loop`` loops in Python, so a tape records what runs; so do they inside
``tf.function`` while the predicate is one Python can read (a loop counter), where the
chosen branch's results still read what the other branch's read, as TensorFlow's If op does
(``_untaken.py``: a gradient there is zeros, not None). A traced
predicate makes ``cond`` and ``while_loop`` ``jax.lax.cond`` / ``jax.lax.while_loop`` (their
functions must then be pure: no Variable assignment inside, no tape recording them); reverse
mode differentiates such a loop only with ``maximum_iterations`` (a bounded ``jax.lax.scan``
then). ``map_fn``, ``scan`` and ``foldl`` loop over the leading axis, whose length is always
known, so they run the same way in both.

>>> import gradkit.tf as tf
>>> x = tf.Variable(3.0)
>>> with tf.GradientTape() as tape:
...     y = tf.cond(x > 2.0, lambda: x * x, lambda: -x)
...     (i, z) = tf.while_loop(lambda i, z: i < 3, lambda i, z: (i + 1, z * x), (0, y))
>>> float(z), float(tape.gradient(z, x))   # z = x^5
(243.0, 405.0)
"""

from __future__ import annotations

import builtins
import contextlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core import frames
from gradkit._core.custom import stop_gradient
from gradkit._core.variable import Variable, VariableSlice
from gradkit._tape import record
from gradkit._tape.tensor import Tensor

from . import _name_scope, _print_format, _random, _untaken
from . import _nest as nest
from ._array import convert_to_tensor, identity, stack, unstack
from ._control_compiled import compiled_loop
from ._convert import TENSOR_LIKE, call, convert, wrap


def _value(x):
    """The value behind a tensor, Variable or number (a tracer inside tf.function)."""
    if isinstance(x, (Variable, VariableSlice)):
        x = convert(x)
    return x.__gradkit_value__() if isinstance(x, Tensor) else x


def _traced(x) -> bool:
    return isinstance(_value(x), jax.core.Tracer)


def _is_value(x) -> bool:
    return isinstance(x, TENSOR_LIKE)


def _arrays(tree):
    return jax.tree_util.tree_map(_value, tree, is_leaf=_is_value)


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``tf.cond(pred, true_fn, false_fn)``: the result of the branch ``pred`` picks."""
    for arg, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
        if not callable(fn):
            raise _errors.GradkitTypeError(
                f"tf.cond(): '{arg}' must be a callable (a function of no arguments returning the branch's value), "
                f"but got {type(fn).__name__}, as TensorFlow requires. Write lambda: value."
            )
    if not _traced(pred):
        if isinstance(pred, (builtins.bool, builtins.int)) and not executing_eagerly():
            # TensorFlow's graph takes a boolean tensor only: a Python bool raises TypeError, a
            # Python int fails building the op's boolean input.
            raise _errors.GradkitTypeError(
                f"tf.cond inside tf.function got the Python {type(pred).__name__} {pred!r} as pred; TensorFlow "
                "refuses it there (a Python bool: 'pred must not be a Python bool'). Pass a boolean tensor "
                "(tf.constant(True)), or pick the branch in Python: `true_fn() if pred else false_fn()`."
            )
        taken = builtins.bool(np.asarray(_value(pred)))
        return picked(true_fn if taken else false_fn, [false_fn if taken else true_fn])
    with branch_assignments_refused("tf.cond"):
        out = jax.lax.cond(
            _scalar_predicate(_value(pred)),
            lambda: _traced_arrays(true_fn(), "cond"),
            lambda: _traced_arrays(false_fn(), "cond"),
        )
    return wrap(out)


def _scalar_predicate(pred):
    """A predicate of one element (shape [1], as TensorFlow takes it) as the scalar jax needs."""
    return jnp.reshape(pred, ()) if jnp.size(pred) == 1 else pred


_MSG_BRANCH_ASSIGNMENT = (
    "{what} inside tf.function, driven by a value known only when the program runs, cannot assign "
    "Variables in its branches or body (gradkit runs them as jax.lax.cond / while_loop, whose bodies "
    "are pure), where TensorFlow can. Compute the new value and assign once outside: "
    "v.assign(tf.where(pred, v + x, v - x)), or carry the value through tf.while_loop's loop_vars and "
    "assign the result after the loop; or make the predicate known when tracing (a Python value)."
)


class _AssignmentsRefused(frames.Frame):
    """On top while a traced branch or loop body is traced: reads see the Variables as below;
    any assignment raises (one of a value made outside the body, a constant or an argument,
    would otherwise be applied whether or not the body runs)."""

    def __init__(self, what: str):
        self.what = what

    def assign(self, var, value) -> None:
        raise _errors.AssignmentError(_MSG_BRANCH_ASSIGNMENT.format(what=self.what))

    def read_is_recorded(self, var) -> bool:
        return self.parent is not None and self.parent.read_is_recorded(var)

    def cuts_assignments(self) -> bool:
        return self.parent is not None and self.parent.cuts_assignments()


@contextlib.contextmanager
def branch_assignments_refused(what: str):
    """A Variable assigned in a branch or loop body that a traced value drives (a jax control-flow
    body) as an error that says how to write it for gradkit.tf."""
    try:
        with _AssignmentsRefused(what):
            yield
    except TypeError as e:
        if not any(m in str(e) for m in ("must have equal output types", "must have identical types")):
            raise
        raise _errors.GradkitTypeError(_mismatch_message(what, str(e))) from None
    except _errors.AssignmentError as e:
        if "was assigned inside a jax transform or control-flow body" not in str(e):
            raise
        raise _errors.AssignmentError(_MSG_BRANCH_ASSIGNMENT.format(what=what)) from None


def _mismatch_message(what: str, jax_message: str) -> str:
    """Why jax refused branches (or a loop body) whose outputs differ, and what to write instead.
    Branches of different shapes are a gradkit limit: TensorFlow's If op takes them."""
    lines = jax_message.splitlines()
    detail = next((line for line in lines if line.startswith("The output")), lines[0])
    start = (
        f"{what} inside tf.function, driven by a value known only when the program runs, got branches (or a loop body)"
    )
    if "shapes do not match" in jax_message:
        return (
            f"{start} that return values of different shapes ({detail}). TensorFlow takes branches of different shapes; "
            "this is a gradkit limit, as gradkit runs it as a jax.lax "
            "control-flow op and XLA needs every branch to return one shape. Pad or reshape the results to one "
            "shape (tf.pad, tf.reshape), or decide the branch with a Python bool known while tracing "
            "(`true_fn() if flag else false_fn()`)."
        )
    return (
        f"{start} that return different dtypes or structures, which TensorFlow refuses too: {detail} "
        "Make every branch return the same (tf.cast)."
    )


def picked(fn, others):
    """``fn()``, the branch a choice known while tracing picks; inside ``tf.function`` joined to
    what the ``others`` (the branches not taken) read, as TensorFlow's If/Case op reads it
    (``_untaken.py``). Eagerly, as there, ``fn()`` alone."""
    if executing_eagerly():
        return fn()
    other = _untaken.results(others)  # first: they read the Variables as the op finds them
    return _join(fn(), _float_leaves(other))


def _traced_arrays(tree, what: str):
    """The arrays of a branch's or loop body's result inside ``tf.function``, which must not
    be ones a tape records there: a ``jax.lax`` control-flow op is not recorded op by op."""
    leaves = jax.tree_util.tree_leaves(tree, is_leaf=_is_value)
    if builtins.any(getattr(x, "_gradkit_tensor_array", False) for x in leaves):
        raise _errors.GradkitTypeError(
            f"tf.{what} with a traced condition inside tf.function got a tf.TensorArray among its values. "
            "gradkit's TensorArray holds one tensor per step, known while tracing, so it cannot be a variable "
            "of a jax.lax loop or branch. Loop in Python (`for t in range(n)`), or carry a preallocated "
            "tensor and update it with tf.tensor_scatter_nd_update."
        )
    # A Variable among them is read, as TensorFlow's branch or loop reads it: under a tape,
    # a recorded value too.
    read = [x.read_value() if isinstance(x, Variable) else x for x in leaves]
    if builtins.any(isinstance(x, Tensor) and record.is_recorded(x) for x in read):
        raise _errors.GradkitTypeError(
            f"tf.{what} with a traced condition computed values a GradientTape records inside tf.function; "
            f"gradkit runs it as jax.lax.{what if what in ('cond', 'while_loop') else 'switch'}, which that tape cannot "
            f"record. Open the GradientTape outside the tf.function (it then differentiates the whole call), "
            f"or use tf.where instead of tf.cond."
        )
    return _arrays(tree)


def while_loop(
    cond,
    body,
    loop_vars,
    shape_invariants=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    maximum_iterations=None,
    name=None,
):  # noqa: A002
    """``tf.while_loop(cond, body, loop_vars)``: ``loop_vars = body(*loop_vars)`` while
    ``cond(*loop_vars)``; returns the final ``loop_vars`` in their structure.

    ``back_prop=False`` (deprecated in TensorFlow) stops the gradient at the loop's results
    inside ``tf.function``, as TensorFlow does there; eagerly TensorFlow ignores it, and so does
    gradkit. ``swap_memory`` (moving a GPU loop's tensors to host memory) is a hint with no
    effect here: XLA manages the loop's memory."""
    return _without_back_prop(_while_loop(cond, body, loop_vars, maximum_iterations), back_prop)


def _without_back_prop(out, back_prop):
    """``back_prop=False`` (deprecated in TensorFlow): no gradient through a loop's results inside
    ``tf.function``, as TensorFlow's graph loops; eagerly TensorFlow ignores it, and so does gradkit."""
    if back_prop or executing_eagerly():
        return out
    return nest.map_structure(lambda x: wrap(stop_gradient(x)) if isinstance(x, Tensor) else x, out)


def _while_loop(cond, body, loop_vars, maximum_iterations):
    if not isinstance(loop_vars, (list, tuple)):
        # TensorFlow takes len() of loop_vars and unpacks it into cond(*loop_vars): a lone tensor,
        # Variable or number raises there (TypeError, or ValueError for a tensor of several elements).
        raise _errors.OpInputError(
            f"tf.while_loop takes loop_vars as a tuple or list of loop variables, as TensorFlow does, but got "
            f"a {type(loop_vars).__name__}, which TensorFlow refuses. Pass [x] (cond and body then take one "
            f"argument) and read the result's [0]."
        )
    state = list(loop_vars)

    def step(values):
        out = body(*values)
        if len(values) == 1 and not isinstance(out, (list, tuple)) and not executing_eagerly():
            out = [out]  # TensorFlow's graph takes a lone result for a one-element loop_vars too
        if not isinstance(out, (list, tuple)) or len(out) != len(values):
            raise _errors.GradkitValueError(
                f"tf.while_loop: body must return the structure of loop_vars ({len(values)} values in a "
                f"{type(loop_vars).__name__}), as in TensorFlow, but it returned {type(out).__name__}."
            )
        # TensorFlow checks the nesting: eagerly the inner sequences' types too (a list for a tuple
        # raises TypeError), inside tf.function not, where the results take loop_vars' types.
        eager = executing_eagerly()
        try:
            nest.assert_same_structure(list(values), list(out), check_types=eager)
        except TypeError as error:
            raise _errors.GradkitTypeError(_regrouped(error)) from None
        except ValueError as error:
            raise _errors.GradkitValueError(_regrouped(error)) from None
        if not eager:
            return nest.pack_sequence_as(list(values), nest.flatten(list(out)))
        return list(out)

    if maximum_iterations is not None and _traced(maximum_iterations):
        # A bound known only when the program runs (a tf.function argument): a jax loop.
        return _traced_while(cond, step, state, maximum_iterations, 0, loop_vars)
    count = 0
    while maximum_iterations is None or count < maximum_iterations:
        go = cond(*state)
        if _traced(go):  # a condition Python can read (a counter) unrolls, even inside tf.function
            return _traced_while(cond, step, state, maximum_iterations, count, loop_vars)
        if not builtins.bool(np.asarray(_value(go))):
            break
        state = step(state)
        count += 1
    # TensorFlow hands back tensors, even for loop_vars given as Python numbers or Variables
    # (a TensorArray stays one).
    state = nest.map_structure(lambda x: convert_to_tensor(x) if _tensor_like(x) else x, state)
    return _like(loop_vars, _one_op(state, loop_vars))


def _regrouped(error) -> str:
    return (
        f"tf.while_loop: body returned values nested otherwise than loop_vars, which TensorFlow refuses too: "
        f"{str(error).removeprefix('[gradkit] ')} Return the loop variables in loop_vars' structure."
    )


def _tensor_like(x) -> bool:
    return isinstance(x, (Tensor, Variable, jax.Array, np.ndarray, np.generic, builtins.int, builtins.float, complex))


def _like(loop_vars, values):
    """``values`` in the sequence type of ``loop_vars`` (a list, tuple or namedtuple)."""
    if isinstance(loop_vars, tuple):
        return type(loop_vars)(*values) if hasattr(loop_vars, "_fields") else tuple(values)
    return list(values)


def _traced_while(cond, step, state, maximum_iterations, done, loop_vars):
    """The loop inside ``tf.function``: ``jax.lax.while_loop``, or with ``maximum_iterations`` a
    ``jax.lax.scan`` of that length that stops changing the values once ``cond`` is False,
    which, unlike a while loop, reverse mode can differentiate. A ``maximum_iterations`` known
    only when the program runs bounds a ``jax.lax.while_loop`` (forward mode only)."""

    # The body (and condition) are traced once: a tf.random draw in them folds in the
    # iteration, so each iteration draws anew, as TensorFlow's stateful random ops do.
    body_draws, cond_draws = _random.replaying(op_seeds=False), _random.replaying(op_seeds=False)

    # The loop carries the loop variables' leaves (a dict or tuple among them is structure).
    def structured(values):
        return nest.pack_sequence_as(state, list(wrap(values)))

    def go_on(carry):
        i, values = carry
        with cond_draws.at(i):
            return _scalar_predicate(jnp.asarray(_traced_arrays(cond(*structured(values)), "while_loop"), bool))

    def advance(carry):
        i, values = carry
        with body_draws.at(i):
            out = nest.flatten(_traced_arrays(step(structured(values)), "while_loop"))
        if len(out) != len(values):
            raise _errors.GradkitValueError(
                f"tf.while_loop's body returned {len(out)} values for {len(values)} loop variables' entries; "
                "TensorFlow requires the body to return loop_vars' structure."
            )
        for v, w in zip(out, values):
            if jnp.shape(v) != jnp.shape(w):
                raise _errors.GradkitValueError(
                    f"tf.while_loop inside tf.function, with a condition known only when the program runs, got a "
                    f"loop variable of shape {tuple(jnp.shape(w))} back from its body as shape {tuple(jnp.shape(v))}. "
                    "gradkit runs it as jax.lax.while_loop, whose loop variables keep their shapes (TensorFlow's "
                    "shape_invariants cannot loosen that). Preallocate the largest shape and fill it "
                    "(tf.tensor_scatter_nd_update), or loop in Python with a known number of steps."
                )
        for v, w in zip(out, values):
            if not isinstance(v, (builtins.bool, builtins.int, builtins.float)) and jnp.result_type(v) != w.dtype:
                raise _errors.GradkitTypeError(
                    f"tf.while_loop: a loop variable enters the loop with type {np.dtype(w.dtype).name} but has type "
                    f"{np.dtype(jnp.result_type(v)).name} after 1 iteration, which TensorFlow refuses too. Cast it "
                    "in the body (tf.cast(value, dtype)) or start the loop variable with the body's dtype."
                )
        return i + 1, [jnp.asarray(v, jnp.asarray(w).dtype) for v, w in zip(out, values)]

    flat = nest.flatten(_traced_arrays(state, "while_loop"))
    initial = (jnp.asarray(done, jnp.uint32), [jnp.asarray(v) for v in flat])
    if maximum_iterations is None:
        with branch_assignments_refused("tf.while_loop"):
            _, final = jax.lax.while_loop(go_on, advance, initial)
    elif _traced(maximum_iterations):
        limit = jnp.asarray(_value(maximum_iterations))

        def bounded(carry):
            return jnp.logical_and(carry[0].astype(limit.dtype) < limit, go_on(carry))

        with branch_assignments_refused("tf.while_loop"):
            _, final = jax.lax.while_loop(bounded, advance, initial)
    else:

        def masked(carry, _):
            stopped, (i, values) = carry
            go = jnp.logical_and(jnp.logical_not(stopped), go_on((i, values)))
            # Only the iterations the loop takes run its body (a cond, not a select of both): the
            # body's side effects (tf.print, assertions) and its derivative at the state the loop
            # stopped in (x / n at n = 0: 0 * inf) stay out of the rest.
            i, values = jax.lax.cond(go, advance, lambda c: (c[0] + 1, [jnp.asarray(v) for v in c[1]]), (i, values))
            return (jnp.logical_not(go), (i, values)), None

        carry = (jnp.asarray(False), initial)
        with branch_assignments_refused("tf.while_loop"):
            (_, (_, final)), _ = jax.lax.scan(masked, carry, None, length=int(maximum_iterations) - done)
    return _like(loop_vars, structured(final))


def _over_leading_axis(elems):
    """``elems`` (a tensor, or a nested structure of them) as a list of per-row structures."""
    leaves = nest.flatten(elems)
    columns = [unstack(convert(leaf)) for leaf in leaves]
    if len({len(c) for c in columns}) > 1:
        raise _errors.GradkitValueError(
            f"The elements' leading dimensions differ ({', '.join(str(len(c)) for c in columns)}): TensorFlow "
            "raises 'Dimensions ... are not compatible'. Every tensor in elems must have the same number of rows."
        )
    return [nest.pack_sequence_as(elems, list(row)) for row in zip(*columns)]


def _no_rows(fn, elems, *before):
    """What stacking ``fn``'s per-row results gives over zero rows: each result's shape and dtype
    (``fn`` traced abstractly, on one row's shape), with a leading axis of 0, as TensorFlow gives."""
    leaves = [convert(leaf) for leaf in nest.flatten(elems)]
    specs = [jax.ShapeDtypeStruct(tuple(leaf.shape[1:]), leaf.dtype) for leaf in leaves]

    def one_row(*row):
        return _arrays(fn(*before, nest.pack_sequence_as(elems, list(wrap(list(row))))))

    with frames.Suspend():  # only shapes are read: a Variable's value is a constant here, on purpose
        shapes = jax.eval_shape(one_row, *specs)
    return jax.tree_util.tree_map(lambda s: wrap(jnp.zeros((0, *s.shape), s.dtype)), shapes)


def _stacked(outputs):
    """Per-row results (structures of tensors) stacked leaf by leaf, in their structure."""
    columns = zip(*[nest.flatten(out) for out in outputs])
    return nest.pack_sequence_as(outputs[0], [stack(list(column)) for column in columns])


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):  # fmt: skip
    """``tf.map_fn(fn, elems)``: ``fn`` of each row of ``elems`` (along axis 0), stacked."""
    compiled = None if executing_eagerly() else compiled_loop(fn, elems, None, False, "map")
    if compiled is not None:
        return _without_back_prop(_one_op(compiled, elems), back_prop)
    rows = _over_leading_axis(elems)
    if not rows:
        return _no_rows(fn, elems)
    return _without_back_prop(_one_op(_stacked([fn(row) for row in rows]), elems), back_prop)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):  # fmt: skip
    """``tf.scan(fn, elems, initializer)``: every accumulator ``a = fn(a, row)``, stacked."""
    what = "tf.scan"
    compiled = None if executing_eagerly() else compiled_loop(fn, elems, initializer, reverse, "scan")
    if compiled is not None:
        return _without_back_prop(_one_op(compiled, (elems, initializer)), back_prop)
    rows = _over_leading_axis(elems)
    if reverse:
        rows = rows[::-1]
    if not rows and initializer is not None:
        return _no_rows(fn, elems, initializer)
    acc = _first_row(rows, what) if initializer is None else initializer
    outputs = [acc] if initializer is None else []
    for row in rows:
        acc = fn(acc, row)
        outputs.append(acc)
    return _without_back_prop(_one_op(_stacked(outputs[::-1] if reverse else outputs), (elems, initializer)), back_prop)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """``tf.foldl(fn, elems, initializer)``: the last accumulator of ``scan``."""
    what = "tf.foldl"
    compiled = None if executing_eagerly() else compiled_loop(fn, elems, initializer, False, "fold")
    if compiled is not None:
        return _without_back_prop(_one_op(compiled, (elems, initializer)), back_prop)
    rows = _over_leading_axis(elems)
    acc = _first_row(rows, what) if initializer is None else initializer
    for row in rows:
        acc = fn(acc, row)
    return _without_back_prop(_one_op(_as_tensors(acc), (elems, initializer)), back_prop)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """``tf.foldr(fn, elems, initializer)``: ``foldl`` from the last row to the first."""
    what = "tf.foldr"
    compiled = None if executing_eagerly() else compiled_loop(fn, elems, initializer, True, "fold")
    if compiled is not None:
        return _without_back_prop(_one_op(compiled, (elems, initializer)), back_prop)
    rows = _over_leading_axis(elems)[::-1]
    acc = _first_row(rows, what) if initializer is None else initializer
    for row in rows:
        acc = fn(acc, row)
    return _without_back_prop(_one_op(_as_tensors(acc), (elems, initializer)), back_prop)


def _first_row(rows: list, what: str):
    """The first row, the accumulator's start when no initializer is given."""
    if not rows:
        raise _errors.GradkitOutOfRangeError(
            f"{what} got elems with no rows and no initializer (TensorFlow: 'Tried to read from index 0 but array "
            "size is: 0'). Pass initializer= for the accumulator to start from."
        )
    return rows.pop(0)


def _as_tensors(structure):
    """A fold's result as tensors, as TensorFlow returns: an initializer never folded into (no
    rows) is converted, a Python number too (``initializer=5.`` gives a float32 tensor), and a
    Variable is read (a later assignment to it must not change the result)."""
    return nest.map_structure(_as_tensor, structure)


def _as_tensor(x):
    if isinstance(x, Variable):
        return identity(x)
    return convert_to_tensor(x) if _tensor_like(x) else x


def _is_float(x) -> bool:
    return isinstance(x, (Tensor, Variable, jax.Array)) and jnp.issubdtype(x.dtype, jnp.inexact)


def _float_leaves(tree) -> list:
    return [x for x in jax.tree_util.tree_leaves(tree, is_leaf=_is_value) if _is_float(x)]


def _one_op(result, inputs):
    """``result`` as TensorFlow's graph has it inside ``tf.function``: the outputs of one op (a
    While loop) that reads every float tensor of ``inputs`` (its loop variables, elements,
    initializer). gradkit runs the loop in Python there, so an output that does not use an input
    (a body that replaces a loop variable, a ``map_fn`` whose function ignores its row) would
    give a gradient of None where TensorFlow's is zeros. Eagerly, as there, ``result`` as it is."""
    if executing_eagerly():
        return result
    return _join(result, _float_leaves(inputs))


def _join(result, ins):
    """``result`` with each float tensor depending on the float tensors ``ins`` (see ``_joined``)."""
    outputs = _float_leaves(result)
    if not outputs or not ins:
        return result
    # A Variable among them is read (a branch returning one gives its value, as TensorFlow's op).
    outputs, ins = ([x.read_value() if isinstance(x, Variable) else x for x in xs] for xs in (outputs, ins))
    joined = iter(call(_joined, outputs, ins))
    return jax.tree_util.tree_map(lambda x: next(joined) if _is_float(x) else x, result, is_leaf=_is_value)


@jax.custom_jvp
def _joined(outputs, inputs):
    """``outputs``, whose derivative with respect to ``inputs`` is zero but present (``_one_op``)."""
    return outputs


@_joined.defjvp
def _joined_jvp(primals, tangents):
    return _joined(*primals), tangents[0]


def executing_eagerly() -> bool:
    """False while ``tf.function`` traces its function, True otherwise."""
    # The graph's scopes say so even where jax evaluates constants at once inside the trace
    # (jax.ensure_compile_time_eval, under which a tape may trace a call it records); a tracer
    # says so inside another jax trace (gk.jit).
    return not _name_scope.in_graph() and not isinstance(jnp.zeros(()), jax.core.Tracer)


_STDERR_AT_IMPORT = sys.stderr


def print(*inputs, output_stream=_STDERR_AT_IMPORT, sep=" ", end="\n", summarize=None, name=None):  # noqa: A001
    """``tf.print``: the values of ``inputs`` (inside ``tf.function``, when the program runs)."""
    if _untaken.quiet():  # a branch not taken, traced for what it reads: it never runs
        return None
    values = nest.map_structure(lambda x: _value(x) if isinstance(x, TENSOR_LIKE) else x, list(inputs))
    leaves = nest.flatten(values)
    traced = [i for i, v in enumerate(leaves) if isinstance(v, jax.core.Tracer)]
    # The host values, with the traced ones filled in when the program runs.
    template = [
        None if i in traced else (np.asarray(v) if isinstance(v, jax.Array) else v) for i, v in enumerate(leaves)
    ]

    def emit(*arrays):
        host = list(template)
        for i, array in zip(traced, arrays):
            host[i] = np.asarray(array)
        shown = nest.pack_sequence_as(values, host)
        # The default stream is stderr as it is when the line is written (redirected, say), as
        # Python's print finds it.
        stream = sys.stderr if output_stream is _STDERR_AT_IMPORT else output_stream
        _print_format.write(sep.join(_print_format.text(v, summarize) for v in shown) + end, stream)

    if traced or not executing_eagerly():
        # Inside tf.function a line of constants is printed at every call too, as TensorFlow's
        # PrintV2 op runs whenever its program does. Ordered: lines come out in program order,
        # as TensorFlow's automatic control dependencies order its stateful ops.
        jax.debug.callback(emit, *[leaves[i] for i in traced], ordered=True)
    else:
        emit()
    return None


def is_tensor(x) -> bool:
    """Whether ``x`` is a tensor or a Variable (TensorFlow counts a Variable as tensor-like)."""
    return isinstance(x, TENSOR_LIKE)
