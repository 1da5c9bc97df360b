"""gradkit's exceptions and the long messages they carry.

Every message starts with ``[gradkit]`` and says what came in, why it is wrong,
and what to call instead. The classes also derive from the builtin exception a
Python or JAX user would expect (``TypeError``, ``ValueError``), so existing
``except`` clauses keep working; those for inputs TensorFlow rejects with
``InvalidArgumentError`` when it runs an op eagerly also derive from that class
(``_op_errors.py``, which ``gradkit.tf.errors`` exports).
"""

from __future__ import annotations

import jax

from ._op_errors import (
    DataLossError,
    InvalidArgumentError,
    NotFoundError,
    OperatorNotAllowedInGraphError,
    OutOfRangeError,
)

PREFIX = "[gradkit] "


class GradkitWarning(UserWarning):
    """A result gradkit computed as TensorFlow does, though it is likely not what was meant (a
    ``batch_jacobian`` whose examples interact)."""


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


class GradkitAttributeError(GradkitError, AttributeError):
    """An attribute an object refuses to give or take, where Keras raises AttributeError (a
    MultiOptimizer's learning rate)."""


class GradkitKeyError(GradkitError, KeyError):
    """A dict without a key it must have, where TensorFlow or Keras raises KeyError."""


class GradkitNotImplementedError(GradkitError, NotImplementedError):
    """What gradkit refuses with NotImplementedError: what TensorFlow refuses the same way (a
    gradient it does not define, ...), or what it accepts but gradkit does not compute, rather
    than compute it differently."""


class GradkitInvalidArgumentError(GradkitError, InvalidArgumentError):
    """What TensorFlow raises as ``tf.errors.InvalidArgumentError`` and nothing else: a failed
    ``tf.debugging`` assertion, a non-finite value under ``check_numerics``."""

    def __init__(self, message: str):
        if not message.startswith(PREFIX):
            message = PREFIX + message
        InvalidArgumentError.__init__(self, None, None, message)


class GradkitOutOfRangeError(GradkitError, OutOfRangeError):
    """What TensorFlow raises as ``tf.errors.OutOfRangeError``: an index past the end of what it
    indexes (``crop_and_resize``'s box indices)."""

    def __init__(self, message: str):
        if not message.startswith(PREFIX):
            message = PREFIX + message
        OutOfRangeError.__init__(self, None, None, message)


class OutOfRangeValueError(GradkitOutOfRangeError, ValueError):
    """An index outside what it indexes, which TensorFlow's eager op refuses with
    ``OutOfRangeError`` (a ValueError too, for ``except ValueError`` around indexing)."""


class GradkitDataLossError(GradkitError, DataLossError):
    """What TensorFlow raises as ``tf.errors.DataLossError``: data that cannot be kept whole (an
    element padded to a smaller size than its own)."""

    def __init__(self, message: str):
        if not message.startswith(PREFIX):
            message = PREFIX + message
        DataLossError.__init__(self, None, None, message)


class GradkitNotFoundError(GradkitError, NotFoundError, FileNotFoundError):
    """A file that is not there: TensorFlow's ``tf.errors.NotFoundError``, as ``tf.train`` raises for
    a checkpoint, and Python's FileNotFoundError, as Keras raises for a weights file."""

    def __init__(self, message: str):
        if not message.startswith(PREFIX):
            message = PREFIX + message
        NotFoundError.__init__(self, None, None, message)


class CheckpointFormatError(GradkitError, ValueError, DataLossError):
    """A file that is not a checkpoint gradkit wrote (TensorFlow's own tensor bundle, a damaged
    file): a ValueError, and TensorFlow's ``DataLossError``, an OpError as TensorFlow raises for a
    file it cannot read as a checkpoint."""

    def __init__(self, message: str):
        if not message.startswith(PREFIX):
            message = PREFIX + message
        DataLossError.__init__(self, None, None, message)


class GradkitFileExistsError(GradkitError, FileExistsError):
    """A file gradkit was asked not to overwrite (``save_weights(overwrite=False)``)."""


class GradkitImportError(GradkitError, ImportError):
    """An optional package a feature needs is not installed (h5py for Keras weights files)."""


class InvalidArgumentTypeError(GradkitTypeError, InvalidArgumentError):
    """A dtype an op refuses, as TensorFlow's eager op does with InvalidArgumentError (and its
    graph builder, where it traces, with TypeError)."""


class InvalidArgumentValueError(GradkitValueError, InvalidArgumentError):
    """A shape or value an op refuses, as TensorFlow's eager op does with InvalidArgumentError
    (and its graph builder, where it traces, with ValueError)."""


class TracedValueNeededError(GradkitTypeError, OperatorNotAllowedInGraphError):
    """A traced tensor's value needed while a ``tf.function`` is traced (Python control flow on
    it): TensorFlow's OperatorNotAllowedInGraphError, which its graph raises without autograph."""


class TracedTensorNumpyError(AttributeError, TracedValueNeededError):
    """``x.numpy`` of a tensor traced inside a compiled function: absent there, as on TensorFlow's
    symbolic tensors (``hasattr(x, "numpy")`` is False), with gradkit's explanation."""


class VariableValueNeededError(GradkitTypeError, jax.errors.ConcretizationTypeError):
    """A Variable's value needed while ``gk.jit`` traces (a slice bound ``x[k:]``, a Python ``if``):
    gk.jit passes the Variables a function reads as traced arguments. Still a
    ``jax.errors.ConcretizationTypeError``, so code that catches jax's error keeps catching it."""

    def __init__(self, message: str):
        TypeError.__init__(self, message)


_TRACED_VALUE_CLASSES: dict = {}


def traced_value_needed(error: Exception, message: str) -> Exception:
    """``message`` as an error of gradkit's and of ``error``'s own jax class (a
    ``TracerBoolConversionError`` stays one), for code that catches jax's error."""
    jax_class = type(error)
    cls = _TRACED_VALUE_CLASSES.get(jax_class)
    if cls is None:
        cls = _TRACED_VALUE_CLASSES[jax_class] = type(
            jax_class.__name__,
            (GradkitTypeError, jax_class),
            {"__init__": lambda self, text: TypeError.__init__(self, text), "__module__": __name__},
        )
    return cls(message)


class VariableKeptByCachedProgramError(GradkitTypeError, jax.errors.UnexpectedTracerError):
    """A traced value of a Variable kept by a function jax traces once and reuses, met by a later
    call. Still a ``jax.errors.UnexpectedTracerError``, as jax raises it, for code that catches that."""

    def __init__(self, message: str):
        TypeError.__init__(self, PREFIX + message)


class OpInputError(GradkitError, ValueError, TypeError, InvalidArgumentError):
    """Inputs an op cannot take, as JAX found them (JAX's own message is in the text and in
    ``__cause__``). Both a ValueError, as TensorFlow raises for shapes that do not fit when it
    traces, and a TypeError, as JAX raises for some of them, so either ``except`` catches it;
    and TensorFlow's InvalidArgumentError, as its eager ops raise."""


class OpInputIndexError(OpInputError, IndexError):
    """An axis or index out of range, as JAX found it: also an IndexError, as NumPy's AxisError."""


class GradkitIndexError(GradkitError, IndexError, ValueError, InvalidArgumentError):
    """An index out of range: an IndexError, as in NumPy, a ValueError, as TensorFlow raises
    where it traces, and TensorFlow's InvalidArgumentError, as its eager ops raise."""


class AssignmentError(GradkitError, ValueError):
    """An assignment that would change a Variable's shape or dtype, or that has nowhere to go."""


class SliceAssignmentError(AssignmentError, InvalidArgumentError):
    """A value that does not broadcast to the slice it is assigned to: also TensorFlow's
    ``InvalidArgumentError``, which its eager strided-slice assignment raises."""


class TapeNotRecordingError(GradkitError, ValueError, RuntimeError):
    """A call that needs a recording tape (``stop_recording``) on one that is not: TensorFlow's
    ValueError, and a RuntimeError."""


class RecordingError(GradkitError, TypeError):
    """A recorded tensor reached code that would silently drop its gradient."""


class DtypeKindError(GradkitTypeError, AttributeError):
    """A dtype of the wrong kind (neither float nor integer) for ``tf.image.convert_image_dtype``:
    also an AttributeError, the class TensorFlow raises there."""


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

MSG_VMAP_ASSIGN_KEPT = (
    "gk.vmap cannot vectorise a function that creates and assigns Variable {name} and keeps it after the call "
    "(stored in a list, a dict or an attribute, as a layer built on its first call is): each example would "
    "give it its own value, but one Variable outlives the call. Create it outside the mapped function (build "
    "the layer once, unmapped), or keep it local to the call."
)

MSG_VMAP_ASSIGN = (
    "gk.vmap cannot vectorise a function that assigns Variable {name}, which existed before the call: each "
    "example would write its own value into that one Variable, which outlives the call. The Variable is "
    "unchanged. Variables created inside the mapped function may be assigned (they are local to each "
    "example). To get per-example new values of {name}, vectorise the pure function over a State instead: "
    "jax.vmap(gk.functionalize(fn), in_axes=(None, 0))(gk.State.of([{name_plain}]), xs) returns "
    "(outputs, per-example States)."
)

MSG_TRACED_INITIAL_VALUE = (
    "a Variable's initial value must be concrete here, but it got a traced value inside a jax transform "
    "(jnp.zeros(...) inside jax.jit is traced too). Inside gk.jit, gk.vmap, gk.grad and the other gk "
    "transforms a Variable the function creates and does not keep may start from a traced value; elsewhere "
    "(directly under jax.jit, jax.grad, a tape, or in a Variable that outlives the call), create it from a "
    "Python or NumPy value (gk.Variable(0.0), gk.Variable(np.zeros(shape, np.float32))), create it outside "
    "the transform, or keep the value in a gk.State."
)

MSG_TRACED_INITIAL_VALUE_KEPT = (
    "Variable {name} was created from a traced value during a traced call (gk.jit, gk.vmap, a gk transform) "
    "and is kept after it (stored in a list, a dict or an attribute), but a traced value has no meaning "
    "outside the call. Create a Variable that must outlive the call from a concrete value: a Python or "
    "NumPy value, or create it outside the function."
)

MSG_CREATED_BY_FAILED_CALL = (
    "Variable {name} was created during a call of a compiled function (gk.jit, tf.function) that raised "
    "an error, and is kept after it (stored in a list, a dict or an attribute: a layer built on its first "
    "call). Its initial value was traced by that call and is computed only when the call succeeds, so it "
    "has no value. Assign it one (v.assign(...)), or drop it and create it again (for a layer built on its "
    "first call: a new layer) before calling the function again; TensorFlow leaves such a Variable "
    "uninitialized too."
)

MSG_INITIAL_VALUE_READS_ARGUMENTS = (
    "Variable {name} was created from a traced value during the first call of {fn} (gk.jit, tf.function) and "
    "is kept after it (a layer built on its first call), and that value depends on the arguments of the call. "
    "A Variable kept after the call needs a value of its own, computed once outside the call, as TensorFlow's "
    "init_scope lifts an initializer out of a tf.function: one computed from constants, shapes and other "
    "Variables is (tf.ones((3, 2)), tf.random.normal(...), tf.zeros_like(v), an initializer), but one computed "
    "from an argument is the call's input, not a value of its own. TensorFlow refuses it too when it compiles "
    "the function with XLA ('We failed to lift variable creations out of this tf.function'), as gradkit "
    "always does. Start the Variable from a value that does not depend on the arguments (their shapes may: "
    "tf.zeros((x.shape[-1], 2))) and assign the argument-dependent value to it in the function "
    "(self.w.assign(...)), or create it outside the function."
)

MSG_INITIAL_VALUE_READS_TRACED = (
    "Variable {name} was created from a traced value during the first call of {fn} (gk.jit, tf.function) and "
    "is kept after it (a layer built on its first call), and that value reads a Variable that a transform "
    "around the call traces (gk.grad, gk.jacfwd, ... differentiating it, or gk.vmap batching it). A Variable "
    "kept after the call needs a value of its own, computed once outside the call as TensorFlow's init_scope "
    "computes it, from concrete values, and a traced one has none. Make the first call, which builds the "
    "layer, outside the transform (e.g. once on a sample batch), or create the Variable before the transform "
    "from a value that is not traced."
)

MSG_INITIALIZER_ASSIGNMENT_SHARED = (
    "{fn} created Variable {name} on its first call from a value whose computation assigned Variable {other} "
    "(a tf.random.Generator's draw advances the generator's state, a Variable), and {fn} also assigns {other} "
    "before that on every call. gradkit computes the initial value once, outside the call, as TensorFlow's "
    "init_scope does, and applies once the assignments computing it made; but the value {other} had when {name} "
    "was created holds the call's own assignments too, which the call makes again, so it cannot be applied as "
    "the initializer's alone. TensorFlow cannot lift this initializer either when it compiles the function with "
    "XLA, as gradkit always does. Create {name} before the function's own uses of {other} (build the layer "
    "first), draw its initial value from another generator or from tf.random (a seed of its own), or create it "
    "outside the function. No Variable was assigned by this call."
)

MSG_INITIALIZER_ASSIGNMENT_READS_ARGUMENTS = (
    "{fn} created Variable {name} on its first call, and computing its initial value assigned Variable {other} "
    "a value that depends on the arguments of the call. gradkit computes the initial value once, outside the "
    "call, as TensorFlow's init_scope does, with the assignments computing it made, and an argument is the "
    "call's input, not a value of its own. Assign {other} from the arguments after creating {name}, or create "
    "{name} outside the function. No Variable was assigned by this call."
)

MSG_JIT_CREATES_EACH_TRACE = (
    "gk.jit: {fn} creates a new Variable ({name}) each time it is traced and keeps it after the call "
    "(stores it in a list, a dict or an attribute that is reassigned), so there is no fixed set of "
    "Variables to compile it for. Create the Variable once, outside the function or on its first call "
    "only (if self.v is None: self.v = gk.Variable(...)), as tf.function requires; a Variable the "
    "function creates and does not keep (an accumulator) is fine."
)

MSG_STATE_AS_AXES = (
    "gk.vmap: {what} holds a gk.State of values, but an axes spec holds an int or None for each entry. A "
    "State built with gk.State({{v: 0}}) holds the value 0 for v, not an axis. Build the spec from the "
    "State you map over: state.axes(0) (every entry along axis 0), or state.axes({{v: 0}}, default=None)."
)

MSG_STATE_AXIS_VALUE = (
    "gk.State({{...}}) got {what} for Variable {name}, but a State holds values of its Variables (shape "
    "{shape}, dtype {dtype}). If this is meant as an in_axes/out_axes spec for jax.vmap, build it from the "
    "State you map over: state.axes({{v: 0}}, default=None), or jax.tree.map(lambda _: 0, state)."
)

MSG_TRANSFORM_UNDER_TAPE = (
    "{transform} was called inside a pure call (a gk.functionalize'd function) made while a GradientTape "
    "records, and Variable {name} is not in that call's State, so its value is the tape's recorded tensor, "
    "which the transform cannot differentiate as an array. Put {name} in the State the call is given, or call "
    "{transform} directly under the tape, where it runs as one recorded op that outer tapes differentiate."
)

MSG_VARIABLE_READ_AS_CONSTANT = (
    "Variable {name} was read inside jax.jit (or a lax loop's body) with no gradkit transform around the read: "
    "jax takes its current value as a constant of the compiled program and reuses that program at later calls, "
    "so they see neither later assignments of the Variable nor a gradient with respect to it (gk.grad, a tape). "
    "Compile with gk.jit instead of jax.jit (it passes the Variables a function reads as arguments), or pass "
    "the value in as an argument (fn(x, w.value))."
)

MSG_VARIABLE_READ_BY_CACHED_PROGRAM = (
    "{fn} reads Variable {name} inside a function that jax compiles once and reuses (a jax.jit-decorated "
    "helper, or a lax loop or cond body defined outside {fn}): jax kept the value that function read the first "
    "time it was traced as a constant, so {fn} would see neither later assignments of {name} nor a gradient "
    "with respect to it. Pass the value in as an argument of that function (helper(x, w.value)), decorate "
    "the helper with gk.jit instead of jax.jit, or define the body inside {fn}."
)

MSG_VARIABLE_TRACER_KEPT_BY_CACHED_PROGRAM = (
    "jax met a value traced by an earlier call. Variable {name} was read inside a jax trace opened by the function "
    "being transformed: where that is a function jax traces once and reuses (a jax.jit-decorated helper, a "
    "jax.checkpoint function, or a lax loop or cond body defined outside the transformed function), jax kept the "
    "traced value that read gave at the first call. Pass the value in as an argument of that function "
    "(helper(x, w.value)), decorate the helper with gk.jit instead of jax.jit, or define the body inside the "
    "function being transformed. (jax's own message is this error's __cause__.)"
)

MSG_VARIABLE_READ_IN_LIFT = (
    "gk.lift({fn}): the function read Variable {name}, which is not one of its arguments. A lifted function "
    "is compiled once as one recorded op, so the Variable's value would be a constant of it: later calls would "
    "see neither its assignments nor a gradient with respect to it. Pass the Variable in as an argument "
    "(gk.lift(lambda x, w: ...)(x, w)), or call the function without gk.lift (its gk.numpy / gradkit.tf ops "
    "are recorded one by one)."
)

MSG_VARIABLE_READ_AS_CONSTANT_IN_TRANSFORM = (
    "Variable {name} was read inside jax.jit (or a lax loop's body) by a gradkit transform that does not take "
    "it (gk.grad or gk.jacrev without it in wrt=, gk.vmap, a functionalized function whose State lacks it): jax "
    "takes its current value as a constant of the compiled program and reuses that program at later calls, so "
    "they do not see later assignments of the Variable. Compile with gk.jit instead of jax.jit (it passes the "
    "Variables a function reads as arguments), put the Variable in the State or wrt=, or pass its value in as "
    "an argument."
)

MSG_TRACER_INTO_LIVE_VARIABLE = (
    "Variable {name} was assigned a traced value inside a jax transform (jax.jit, jax.vmap, "
    "lax.fori_loop/scan/while_loop/cond, ...) that no gradkit transform wraps: the live Variable would keep "
    "a tracer, which is invalid once that transform returns. The Variable is unchanged. Use gk.jit instead of "
    "jax.jit (it passes the Variables in and writes the assignments back after each call), or return the new "
    "value from the traced function and assign it outside, or thread the values through a gk.State "
    "(jax.jit(gk.functionalize(fn)) returns the new State; call .commit() on it). A gk.jit function called "
    "inside a plain jax.jit is traced by it too: call it outside jax.jit, or compile the outer function with "
    "gk.jit as well."
)

MSG_TRACER_FROM_INNER_TRANSFORM = (
    "Variable {name} was assigned inside a jax transform or control-flow body (lax.fori_loop, lax.scan, "
    "lax.while_loop, lax.cond, jax.vmap, jax.jit, jax.checkpoint, ...) nested in the gradkit transform that "
    "holds it: the value is traced by that inner transform and would leak out of it. Carry the value "
    "through the body instead (pass w.value in as the carry, return the new value, assign it after the "
    "loop), or make the body pure: gk.functionalize(body) and carry a gk.State."
)

MSG_INTEGER_ARGUMENT = (
    "{transform} cannot differentiate with respect to positional argument {i}, {what} of dtype {dtype}: "
    "integer and boolean values are not differentiable. Pass a float instead (1.0 rather than 1, or "
    "x.astype(jnp.float32)), or leave that argument out of argnums= (the default is argnums=0)."
)

MSG_TANGENT_SHAPE = (
    "gk.jvp: the tangent for Variable {name} has shape {got}, but the Variable has shape {want}. A tangent "
    "has its primal's shape: give wrt_tangents= the structure of wrt= with one tangent of shape {want} per "
    "Variable, e.g. jnp.ones({want})."
)

MSG_TANGENT_DTYPE = (
    "gk.jvp: the tangent for Variable {name} has dtype {got}, but the Variable has dtype {want}. A tangent "
    "has its primal's dtype, and jax.jvp refuses any other rather than cast it: pass t.astype(jnp.{want}), "
    "or a Python float (a float or complex for a complex Variable), which takes the Variable's dtype."
)

MSG_NOT_NUMERIC = (
    "cannot assign {what} to Variable {name}, which holds an array of shape {shape} and dtype {dtype}: "
    "it is not a number or an array of numbers ({why}). Assign a number, a nested list of numbers or an "
    "array, e.g. jnp.zeros({shape}, jnp.{dtype})."
)

MSG_DELTA_SHAPE = (
    "cannot {verb} a value of shape {got} {to} Variable {name} of shape {want}: the result would not have "
    "the Variable's fixed shape {want}. Pass a value of shape {want}, or one that broadcasts to it (a scalar)."
)

MSG_INT_OUT_OF_RANGE = (
    "cannot {verb} the Python int {value} {to} Variable {name} of dtype {dtype}: it does not fit in {dtype} "
    "(range {lo} to {hi}), and converting it would wrap it around to another number (TensorFlow silently "
    "does). Pass a value in that range, or create the Variable with a dtype that holds it (a float dtype)."
)

MSG_INT_TOO_LARGE_FOR_FLOAT = (
    "cannot {verb} the Python int {value} {to} Variable {name} of dtype {dtype}: it is beyond the range of "
    "every float dtype. Pass a smaller value (or float('inf') if infinity is what you mean)."
)

MSG_SLICE_SHAPE = (
    "cannot assign a value of shape {got} to the slice {index!r} of Variable {name}, which has shape "
    "{want}. Pass a value of shape {want} (or one that broadcasts to it)."
)


def describe_value(x) -> str:
    """``float32[2,3]`` for anything with a shape and dtype, the type's name for the rest."""
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{dtype}[{','.join(str(d) for d in shape)}]"
    if isinstance(x, (bool, int, float, complex)):
        return f"the Python {type(x).__name__} {x!r}"
    if isinstance(x, (list, tuple)) and len(x) <= 8:
        return f"a {type(x).__name__} [{', '.join(describe_value(v) for v in x)}]"
    return f"a {type(x).__name__}"


# JAX errors about tracing (a traced value used as a Python bool, ...) explain themselves and
# are caught by type in user code: they pass through unchanged.
_JAX_OWN_ERRORS = tuple(
    getattr(jax.errors, name)
    for name in (
        "ConcretizationTypeError",
        "TracerArrayConversionError",
        "TracerBoolConversionError",
        "TracerIntegerConversionError",
        "UnexpectedTracerError",
        "KeyReuseError",
    )
    if hasattr(jax.errors, name)
)


def bad_op_inputs(error: Exception, what: str, inputs) -> Exception:
    """``error``, raised by JAX for inputs ``what`` cannot take (shapes that do not broadcast or
    contract, a non-square matrix, an axis out of range), as a ``[gradkit]`` error of the same kind
    that names the op and its inputs; gradkit's own errors and JAX's tracing errors are returned
    unchanged."""
    if isinstance(error, (GradkitError, *_JAX_OWN_ERRORS)) or not isinstance(
        error, (TypeError, ValueError, IndexError)
    ):
        return error
    if "forward-mode autodiff" in str(error) and "custom_vjp" in str(error):
        # Not the inputs: the op carries TensorFlow's gradient as a reverse-mode rule, which
        # jax.jvp/jax.jacfwd cannot run. gradkit's own transforms go around it.
        return GradkitTypeError(
            f"{what} has TensorFlow's gradient as a reverse-mode rule (jax.custom_vjp), so a raw jax.jvp, "
            "jax.jacfwd or jax.hessian cannot differentiate it in forward mode. Use gk.jvp, gk.jacfwd or "
            "gk.hessian (they take reverse mode through such ops), or jax.jacrev / jax.grad."
        )
    kind = OpInputIndexError if isinstance(error, IndexError) else OpInputError
    shown = ", ".join(describe_value(x) for x in inputs)
    said = " ".join(str(error).split())
    if isinstance(error, IndexError) and said == "tuple index out of range":  # a shape indexed by the axis
        said = "an axis is out of range for the input's rank."
    if not said.endswith((".", "!", "?")):
        said += "."
    return kind(
        f"{what} cannot take {shown}: {said} Give it inputs whose shapes and dtypes fit (shapes that "
        "broadcast, matching inner dimensions for products, axes within the rank)."
    )
