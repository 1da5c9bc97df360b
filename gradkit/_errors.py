"""gradkit's exceptions and the long messages they carry.

Every message starts with ``[gradkit]`` and says what came in, why it is wrong,
and what to call instead. The classes also derive from the builtin exception a
Python or JAX user would expect (``TypeError``, ``ValueError``), so existing
``except`` clauses keep working.
"""

from __future__ import annotations

PREFIX = "[gradkit] "


class GradkitError(Exception):
    """Base class of every error gradkit raises itself."""

    def __init__(self, message: str):
        if not message.startswith(PREFIX):
            message = PREFIX + message
        super().__init__(message)


class GradkitTypeError(GradkitError, TypeError):
    """A value of the wrong kind: a non-Variable ``wrt``, an integer source, ..."""


class GradkitValueError(GradkitError, ValueError):
    """A value of the right kind but the wrong shape or content."""


class GradkitRuntimeError(GradkitError, RuntimeError):
    """A call at the wrong time: a second gradient of a non-persistent tape, ..."""


class AssignmentError(GradkitError, ValueError):
    """An assignment that would change a Variable's shape or dtype, or that has nowhere to go."""


class RecordingError(GradkitError, TypeError):
    """A recorded tensor reached code that would silently drop its gradient."""


MSG_NOT_A_VARIABLE = (
    "wrt= takes Variables (or a list/tuple/dict of them), but got {what}. "
    "To differentiate with respect to an array argument, pass it positionally and use argnums=; "
    "to differentiate with respect to a Variable, pass the Variable itself, e.g. wrt=[layer.kernel]."
)

MSG_INTEGER_WRT = (
    "cannot differentiate with respect to {what} of dtype {dtype}: integer and boolean values are "
    "not differentiable. Make it a float (gk.Variable(x, dtype=jnp.float32)) or leave it out of wrt=."
)

MSG_NON_SCALAR = (
    "{transform} needs a function that returns a scalar, but it returned shape {shape}. "
    "Reduce it first (jnp.sum(out) or jnp.mean(out)), or call gk.jacrev / gk.jacfwd for the full "
    "Jacobian, or gk.vjp for a vector-Jacobian product."
)

MSG_SHAPE_CHANGE = (
    "cannot assign a value of shape {got} to Variable {name} of shape {want}: a Variable's shape is "
    "fixed when it is created. Assign a value of shape {want}, or create a new Variable."
)

MSG_DTYPE_CHANGE = (
    "cannot assign a value of dtype {got} to Variable {name} of dtype {want}: that cast would lose "
    "information. Cast explicitly with .astype({want}) if that is what you mean, or create a new Variable."
)

MSG_STRICT_ASSIGN = (
    "the function assigned Variable {name}, which the State passed to this functionalized function "
    "does not hold, so the new value would have nowhere to go. Include it: "
    "gk.State.of([..., {name_plain}])."
)

MSG_NOT_IN_STATE = (
    "Variable {name} is not in this State (it holds {held}). Build a State that includes it, "
    "e.g. gk.State.of([...]), or merge two States with state | other."
)

MSG_VMAP_ASSIGN = (
    "gk.vmap cannot vectorise a function that assigns Variable {name}: each example would write its "
    "own value into one Variable. Use gk.functionalize(fn) and jax.vmap the pure function over a State "
    "instead, so the batched state comes back as an output."
)

MSG_TRANSFORM_UNDER_TAPE = (
    "{transform} was called while a GradientTape records Variable {name}. The functional transforms "
    "differentiate a pure function of the Variables' values and cannot see the tape's recorded history, so "
    "an outer tape would lose this derivative. Inside a tape, take derivatives with tapes (tape.gradient, "
    "nested tapes for higher order, gk.ForwardAccumulator); or call {transform} outside the 'with tape:' block."
)
