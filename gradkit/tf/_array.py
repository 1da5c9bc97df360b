"""Creating and reshaping tensors: constant, zeros, eye, reshape, concat, pad, gather, ..."""

from __future__ import annotations

import builtins
import contextlib
import math

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core import dynamic_index, frames
from gradkit._core.custom import stop_gradient
from gradkit._core.variable import Variable, VariableSlice
from gradkit._tape import record
from gradkit._tape.tensor import Tensor

from . import _dtypes, _shape_args
from ._convert import axis_arg, call, check_python_value, convert, convert_like, known_value, static_ints, wrap
from ._indexing import check_indices


def constant(value, dtype=None, shape=None, name=None):
    """``tf.constant``: a concrete ``gk.Tensor`` (float32 / int32 by default).

    Integer and boolean values (Python numbers or lists of them, NumPy integer arrays) are known
    inside ``tf.function`` too, as a TensorFlow graph constant is: a loop counter
    ``i = tf.constant(0)`` makes a loop Python runs (see ``tf.while_loop``), and a shape
    ``tf.constant([1, 4, 4, 1])`` is one an op can read.
    """
    check_python_value(value, dtype, "tf.constant")
    if isinstance(value, Tensor) and shape is None:
        # TensorFlow's eager tf.constant of a tensor is that tensor: a tape keeps its path (and,
        # inside tf.function, the traced program has it too, so both agree).
        return wrap(convert(value, dtype))
    known = shape is None and _integers(value)
    with jax.ensure_compile_time_eval() if known else contextlib.nullcontext():
        x = convert(value, dtype)
        if isinstance(x, Tensor):
            x = x.__gradkit_value__()
        if shape is not None:
            x = jnp.broadcast_to(x, static_ints(shape)) if x.size == 1 else jnp.reshape(x, static_ints(shape))
    return Tensor.concrete(x)


def _integers(value) -> bool:
    """Whether ``value`` is integer or boolean data given in Python or NumPy (no tensors)."""
    if isinstance(value, (builtins.int, np.integer, np.bool_)):  # bool is an int
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biu"
    if isinstance(value, (list, tuple)) and value:
        return builtins.all(_integers(v) for v in value)
    return False


def _with_hint(value, hint):
    """``value`` (a Python value or NumPy array) converted to ``dtype_hint`` where it holds it as
    it is, as TensorFlow's preferred dtype; None where it does not (the default applies then)."""
    hint = np.dtype(hint)
    kind = np.asarray(value).dtype.kind if isinstance(value, (np.ndarray, np.generic)) else None
    if kind == "c" and hint.kind != "c":  # a NumPy array is cast (floats truncated), but not complex
        return None
    try:
        check_python_value(value, hint, "tf.convert_to_tensor")
        return convert(value, hint)
    except (TypeError, ValueError):
        return None


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """Like ``constant``, but a recorded tensor (or a Variable read under a tape) stays recorded.
    ``dtype_hint`` is the dtype a Python value or NumPy array takes where it can, as in TensorFlow
    (``convert_to_tensor([1, 2], dtype_hint=tf.float32)`` is float32; ``1.5`` stays float32 with
    an int32 hint)."""
    check_python_value(value, dtype, "tf.convert_to_tensor")
    if dtype is None and dtype_hint is not None and not isinstance(value, (Tensor, Variable, jax.Array)):
        hinted = _with_hint(value, dtype_hint)
        if hinted is not None:
            return wrap(hinted)
    out = wrap(convert(value, dtype))
    if isinstance(value, Variable) and record.is_recorded(out):
        # A read of its own, as TensorFlow's: a gradient with respect to the result counts only
        # the paths through it, not every use of the Variable.
        return identity(out)
    return out


def zeros(shape, dtype=_dtypes.float32, name=None, layout=None):
    _no_layout(layout, "tf.zeros")
    return Tensor.concrete(jnp.zeros(static_ints(shape), dtype))


def ones(shape, dtype=_dtypes.float32, name=None, layout=None):
    _no_layout(layout, "tf.ones")
    return Tensor.concrete(jnp.ones(static_ints(shape), dtype))


def _fill(value, shape):
    return jnp.broadcast_to(value, shape)


def fill(dims, value, name=None, layout=None):
    """``tf.fill``: a tensor of shape ``dims`` whose every element is the scalar ``value``; a
    recorded ``value`` (or a Variable) gets the sum of the result's gradient, as in TensorFlow."""
    _no_layout(layout, "tf.fill")
    x = convert(value)
    if x.ndim != 0:
        raise _errors.GradkitValueError(
            f"tf.fill takes a scalar value, as TensorFlow does, but got one of shape {tuple(x.shape)}. "
            "To repeat a tensor use tf.broadcast_to(value, shape) or tf.tile."
        )
    return call(_fill, x, shape=static_ints(dims))


def _no_layout(layout, what: str) -> None:
    if layout is not None:
        raise _errors.GradkitValueError(
            f"{what} got layout={layout!r}: a DTensor layout places a tensor across devices, which gradkit.tf "
            "does not do (JAX shards arrays with jax.sharding). Leave layout=None."
        )


def _filled_like(input, dtype, value):
    # A constant of the input's shape, not an op over it: TensorFlow's ZerosLike and OnesLike
    # have no gradient, so a source reached only through them gets None, not zeros.
    x = convert(input)
    return wrap(jnp.full(tuple(x.shape), value, dtype=x.dtype if dtype is None else dtype))


def zeros_like(input, dtype=None, name=None, layout=None):  # noqa: A002  (TensorFlow's argument name)
    _no_layout(layout, "tf.zeros_like")
    return _filled_like(input, dtype, 0)


def ones_like(input, dtype=None, name=None, layout=None):  # noqa: A002
    _no_layout(layout, "tf.ones_like")
    return _filled_like(input, dtype, 1)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dtypes.float32, name=None):
    m = jnp.eye(int(num_rows), None if num_columns is None else int(num_columns), dtype=dtype)
    if batch_shape is not None:
        batch = static_ints(batch_shape)
        m = jnp.broadcast_to(m, batch + m.shape)
    return Tensor.concrete(m)


# TensorFlow's tf.range takes the widest of its arguments' dtypes, in this order.
_RANGE_DTYPES = ("int32", "int64", "float16", "bfloat16", "float32", "float64")


def _range_dtype(value) -> np.dtype:
    """The dtype TensorFlow converts a tf.range argument to: a Python int int32, a float
    float32; a tensor or NumPy value keeps its own."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    if isinstance(value, (Tensor, Variable, VariableSlice, jax.Array)):
        return np.dtype(convert(value).dtype)
    return np.dtype(np.float32 if isinstance(value, builtins.float) else np.int32)


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001
    """``tf.range``: its dtype, unless given, is the widest of its arguments' (int32 < int64 <
    float32 < float64): ``tf.range(n)`` of an int64 ``n`` is int64, where 64-bit types are on."""
    if limit is None:
        start, limit = 0, start
    args = (start, limit, delta)
    vals = [np.asarray(convert(v).__array__() if isinstance(v, (Tensor, Variable, VariableSlice)) else v) for v in args]
    if dtype is None:
        names = [_range_dtype(v).name for v in args]
        known = [n for n in names if n in _RANGE_DTYPES]
        dtype = max(known, key=_RANGE_DTYPES.index) if known else "int32"
        dtype = jax.dtypes.canonicalize_dtype(np.dtype(dtype))
    _shape_args.check_range(*(v.item() for v in vals))
    with jax.ensure_compile_time_eval():  # known inside tf.function too: `for t in tf.range(n)` unrolls
        if not jnp.issubdtype(dtype, jnp.floating):
            return Tensor.concrete(jnp.arange(*[v.item() for v in vals], dtype=dtype))
        # TensorFlow's kernel: the arguments in the result's dtype, the length ceil(|(limit - start) /
        # delta|) computed in it too, and the i-th value start + i * delta. (In float64, 0.3 / 0.1 is
        # 2.9999999999999996 and tf.range(0., .3, .1) would lose its last value.)
        first, limit, step = (np.asarray(v.item()).astype(dtype) for v in vals)
        size = max(int(np.ceil(np.abs((limit - first) / step))), 0)
        return Tensor.concrete(jnp.asarray(first, dtype) + jnp.arange(size, dtype=dtype) * jnp.asarray(step, dtype))


def _linspace(start, stop, num, axis):
    return jnp.linspace(start, stop, num, axis=axis)


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop``; for vector ends, along ``axis``.
    Integer ends give float64, as in TensorFlow (float32 where JAX's 64-bit types are off)."""
    ends = convert_like(start, stop, what="tf.linspace")
    if not jnp.issubdtype(ends[0].dtype, jnp.inexact):
        ends = [convert(e, jax.dtypes.canonicalize_dtype(np.float64)) for e in ends]
    return call(_linspace, *ends, num=int(num), axis=int(axis))


def _reshape(x, shape):
    return jnp.reshape(x, shape)


def reshape(tensor, shape, name=None):
    x, shape = convert(tensor), static_ints(shape)
    _shape_args.check_reshape(shape, int(np.prod(x.shape)))
    return call(_reshape, x, shape=shape)


def _transpose(x, perm, conj):
    y = jnp.transpose(x, perm)
    return jnp.conj(y) if conj else y


def transpose(a, perm=None, conjugate=False, name="transpose"):
    return call(_transpose, convert(a), perm=None if perm is None else static_ints(perm), conj=bool(conjugate))


def _concat(values, axis):
    return jnp.concatenate(values, axis=axis)


def concat(values, axis, name="concat"):
    """``tf.concat``; a single tensor, not in a list, is returned unchanged, as in TensorFlow."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    return call(_concat, list(convert_like(*values, what="tf.concat")), axis=int(axis))


def _stack(values, axis):
    return jnp.stack(values, axis=axis)


def stack(values, axis=0, name="stack"):
    return call(_stack, list(convert_like(*values, what="tf.stack")), axis=int(axis))


def unstack(value, num=None, axis=0, name="unstack"):
    x = convert(value)
    if not -x.ndim <= int(axis) < x.ndim:
        raise _errors.GradkitValueError(
            f"tf.unstack: axis {int(axis)} is out of range for a tensor of shape {tuple(x.shape)} (rank {x.ndim}); "
            f"TensorFlow takes an axis in [{-x.ndim}, {x.ndim})."
        )
    n = x.shape[axis]
    _shape_args.check_unstack_num(num, n, int(axis))
    return [call(_take, x, index=i, axis=int(axis)) for i in builtins.range(n)]


def _take(x, index, axis):
    return jnp.take(x, index, axis=axis)


def _pad(x, pad_width, mode, constant_values):
    if mode == "constant":
        return jnp.pad(x, pad_width, mode="constant", constant_values=constant_values)
    return jnp.pad(x, pad_width, mode=mode)


def _pad_with(x, constant_values, pad_width):
    return jnp.pad(x, pad_width, mode="constant", constant_values=constant_values)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """``tf.pad``: modes 'CONSTANT', 'REFLECT', 'SYMMETRIC' (any case, as TensorFlow upper-cases it).

    ``constant_values`` is a scalar of the tensor's dtype: a Python number that type cannot hold
    as written is refused (as TensorFlow does), and a tensor of another dtype too. A tensor
    ``constant_values`` gets no gradient, as in TensorFlow (PadV2's gradient is None for it).
    """
    widths = tuple(
        tuple(int(p) for p in row) for row in np.asarray(paddings.numpy() if isinstance(paddings, Tensor) else paddings)
    )
    x = convert(tensor)
    kind = str(mode).lower()
    if kind not in ("constant", "reflect", "symmetric"):
        raise _errors.GradkitValueError(
            f"tf.pad got mode={mode!r}; TensorFlow takes 'CONSTANT', 'REFLECT' or 'SYMMETRIC' (jnp.pad's other "
            "modes, such as 'wrap' or 'edge', are not TensorFlow's)."
        )
    _shape_args.check_paddings(widths, tuple(x.shape), kind)
    if np.ndim(constant_values) != 0:
        raise _errors.GradkitValueError(
            f"tf.pad: constant_values must be a scalar, as TensorFlow requires, but got shape "
            f"{tuple(np.shape(constant_values))}."
        )
    if kind != "constant":
        return call(_pad, x, pad_width=widths, mode=kind, constant_values=0)  # constant_values unused
    if isinstance(constant_values, (Tensor, Variable, VariableSlice, jax.Array)):
        value = convert(constant_values)
        if value.dtype != x.dtype:
            raise _errors.GradkitTypeError(
                f"tf.pad: constant_values of dtype {np.dtype(value.dtype).name} for a tensor of dtype "
                f"{np.dtype(x.dtype).name}; TensorFlow requires the tensor's dtype. Cast it: "
                f"tf.cast(constant_values, tf.{np.dtype(x.dtype).name})."
            )
        # PadV2 has no gradient for constant_values in TensorFlow: None, not zeros.
        return call(_pad_with, x, stop_gradient(value), pad_width=widths)
    if np.ndim(constant_values) == 0 and constant_values == 0:
        # TensorFlow pads with zeros of any dtype here (its Pad op): False for a bool tensor.
        return call(_pad, x, pad_width=widths, mode="constant", constant_values=0)
    check_python_value(constant_values, x.dtype, "tf.pad's constant_values")
    # An input of the program, as TensorFlow takes every number as a tensor: a changing fill value
    # compiles nothing new.
    return call(_pad_with, x, convert(np.asarray(constant_values).item(), x.dtype), pad_width=widths)


def _cast_to(x, dtype):
    if np.issubdtype(np.dtype(x.dtype), np.complexfloating) and not np.issubdtype(dtype, np.complexfloating):
        x = jnp.real(x)
    target = np.dtype(dtype)
    if jnp.issubdtype(x.dtype, jnp.floating) and target.kind in "iu":
        # TensorFlow's kernel truncates toward zero and then wraps into the type (-1.0 is 255 as
        # uint8, 200.0 is -56 as int8), where XLA's cast saturates; into 32-bit and wider signed
        # types the result past the limits is the platform's, and XLA's saturation is kept.
        if target.itemsize < 4:
            # Through int32 as that kernel goes, where a value past int32's range or NaN is
            # INT_MIN (x86's conversion), whose low bits are 0.
            inside = (x >= -(2.0**31)) & (x < 2.0**31)
            return jnp.where(inside, x, -(2.0**31)).astype(jnp.int32).astype(target)
        if target.kind == "u":
            signed = jnp.int32 if target.itemsize == 4 else jnp.int64
            return jnp.where(x < 0, x.astype(signed).astype(target), x.astype(target))
    return x.astype(target)


def cast(x, dtype, name=None):
    target = np.dtype(dtype)
    if isinstance(x, Tensor) and np.dtype(x.dtype) == target:
        return x  # TensorFlow's cast to a tensor's own dtype is that tensor: no op of its own
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "iu" and target.kind in "fc":
        x = np.asarray(x).astype(target)  # 64-bit integers reach a float without a 64-bit JAX type
    elif _integers(x) and not isinstance(x, (np.ndarray, np.generic)) and target.kind in "iuf":
        # Python integers the target holds (3000000000 as a uint32) go there directly, not
        # through the int32 they would not fit.
        with contextlib.suppress(TypeError, ValueError):
            return (
                wrap(convert(x, target)) if _holds(np.asarray(x), target) else call(_cast_to, convert(x), dtype=target)
            )
    return call(_cast_to, convert(x), dtype=target)


def _holds(values: np.ndarray, target: np.dtype) -> bool:
    if target.kind == "f":
        return True
    info = np.iinfo(target)
    return values.size == 0 or (int(values.min()) >= info.min and int(values.max()) <= info.max)


def _where3(c, x, y):
    return jnp.where(c, x, y)


def _where1(c):
    return jnp.stack(jnp.nonzero(c), axis=-1)


def where(condition, x=None, y=None, name=None):
    """``tf.where``: with ``x`` and ``y``, elements of either as the boolean ``condition``
    says (broadcasting the three); without, the coordinates of ``condition``'s true (or, for a
    numeric condition, nonzero) entries."""
    if (x is None) != (y is None):
        raise _errors.GradkitValueError(
            "tf.where got only one of x and y: TensorFlow takes both (to choose between them) or neither (for "
            "the coordinates of the true entries)."
        )
    c = convert(condition)
    if c.dtype != np.bool_ and x is not None:
        raise _errors.InvalidArgumentTypeError(
            f"tf.where(condition, x, y) takes a bool condition, as TensorFlow does, but got {np.dtype(c.dtype).name}. "
            "Compare first (tf.where(c != 0, x, y)) or cast it (tf.cast(c, tf.bool))."
        )
    if x is None:  # the coordinates of the true (for numbers: nonzero) entries
        if c.ndim == 0:
            raise _errors.InvalidArgumentValueError(
                "tf.where(condition) takes a condition of rank 1 or more, as TensorFlow does, but got a scalar. "
                "Write tf.where(tf.reshape(condition, [1]))."
            )
        known = np.asarray(c.__array__() if isinstance(c, Tensor) else c)
        with jax.ensure_compile_time_eval():  # a constant condition inside tf.function: known there too
            return Tensor.concrete(_where1(known))
    return call(_where3, c, *convert_like(x, y, what="tf.where"))


def _gather(params, indices, axis, batch_dims):
    if batch_dims:
        fn = lambda p, i: _gather(p, i, axis - 1, batch_dims - 1)  # noqa: E731
        return jax.vmap(fn)(params, indices)
    return jnp.take(params, indices, axis=axis)


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """``tf.gather``: slices of ``params`` along ``axis`` at ``indices``, the first ``batch_dims``
    dimensions of both taken as batch dimensions (negative values count from the end, as in
    TensorFlow: ``batch_dims`` from the rank of ``indices``, ``axis`` from that of ``params``)."""
    params, indices = convert(params), convert(indices)
    batch_dims = int(batch_dims)
    # As in TensorFlow, a missing axis is batch_dims as given: batch_dims=-1 gathers along
    # params' last axis.
    axis = batch_dims if axis is None else int(axis)
    if batch_dims < 0:
        batch_dims += indices.ndim
    if axis < 0:
        axis += params.ndim
    if not 0 <= batch_dims <= min(indices.ndim, axis) or not axis < params.ndim:
        raise _errors.InvalidArgumentValueError(
            f"tf.gather: batch_dims={batch_dims} and axis={axis} do not fit params of shape {tuple(params.shape)} "
            f"and indices of shape {tuple(indices.shape)}: TensorFlow needs 0 <= batch_dims <= rank(indices), "
            "batch_dims <= axis < rank(params)."
        )
    if params.shape[:batch_dims] != indices.shape[:batch_dims]:
        raise _errors.GradkitValueError(
            f"tf.gather: the first batch_dims={batch_dims} dimensions of params {tuple(params.shape)} and indices "
            f"{tuple(indices.shape)} must be equal, as in TensorFlow."
        )
    check_indices(indices, params.shape[axis], "tf.gather")
    return call(_gather, params, indices, axis=axis, batch_dims=batch_dims)


def _one_hot(indices, on_value, off_value, depth, axis):
    return jnp.where(jax.nn.one_hot(indices, depth, axis=axis, dtype=bool), on_value, off_value)


# TensorFlow's OneHot has no gradient, not even for a tensor on_value / off_value.
record.cut_by_design(_one_hot, "tf.one_hot (it has no gradient in TensorFlow)")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """``tf.one_hot``: its dtype is ``dtype``, else on_value's, else off_value's, else float32
    (TensorFlow's rule: ``on_value=5`` gives int32, ``on_value=True`` bool)."""
    given = on_value if on_value is not None else off_value
    if dtype is None and given is not None:
        dtype = given.dtype if hasattr(given, "dtype") else convert(given).dtype
    dtype = np.dtype(dtype or _dtypes.float32)
    if dtype == np.bool_ and on_value is None and off_value is None:
        raise _errors.GradkitTypeError(
            "tf.one_hot(dtype=tf.bool) needs on_value=True and off_value=False, as TensorFlow says (its default "
            "values 1 and 0 are not bool). Pass them, or one-hot to a number type and compare with 1."
        )
    indices = convert(indices)
    if not jnp.issubdtype(indices.dtype, jnp.integer):
        raise _errors.InvalidArgumentValueError(
            f"tf.one_hot takes integer indices, as TensorFlow's kernel does, but got dtype {np.dtype(indices.dtype).name}. "
            "Cast them first: tf.one_hot(tf.cast(indices, tf.int32), depth)."
        )
    on = convert(1 if on_value is None else on_value, dtype)
    off = convert(0 if off_value is None else off_value, dtype)
    return call(_one_hot, indices, on, off, depth=int(depth), axis=-1 if axis is None else int(axis))


def _split(x, sections, axis):
    return tuple(jnp.split(x, sections, axis=axis))


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    x = convert(value)
    if isinstance(num_or_size_splits, (builtins.int, np.integer)):
        sections = int(num_or_size_splits)
        if -x.ndim <= int(axis) < x.ndim:  # an axis out of range is refused by the split itself
            _shape_args.check_split_count(sections, x.shape[axis], int(axis))
    else:
        sizes = list(static_ints(num_or_size_splits))
        _shape_args.check_split_sizes(sizes, x.shape[axis], int(axis), num)
        if -1 in sizes:
            sizes[sizes.index(-1)] = x.shape[axis] - (sum(sizes) + 1)
        sections = tuple(int(s) for s in np.cumsum(sizes)[:-1])
    return list(call(_split, x, sections=sections, axis=int(axis)))


def _squeeze(x, axis):
    return jnp.squeeze(x, axis)


def squeeze(input, axis=None, name=None):  # noqa: A002
    """``tf.squeeze``: the size-1 axes ``axis`` names, or every size-1 axis when it names none
    (None or an empty list, TensorFlow's default ``[]``)."""
    axis = axis_arg(axis)
    return call(_squeeze, convert(input), axis=None if axis == () else axis)


def _expand_dims(x, axis):
    return jnp.expand_dims(x, axis)


def expand_dims(input, axis, name=None):  # noqa: A002
    """``tf.expand_dims``: a size-1 axis inserted at ``axis`` (an int, or one given as a list, tuple
    or tensor of one element, as TensorFlow takes it)."""
    given = np.asarray(convert(axis).__array__() if isinstance(axis, (Tensor, Variable, VariableSlice)) else axis)
    if given.size != 1 or not np.issubdtype(given.dtype, np.integer):
        raise _errors.GradkitValueError(
            f"tf.expand_dims got axis={axis!r}; it takes one integer axis (or a list or tensor of one), as "
            "TensorFlow does ('axis must be a 0-D or 1-D tensor of one element'). Call expand_dims once per axis."
        )
    return call(_expand_dims, convert(input), axis=int(given.reshape(())))


def _tile(x, reps):
    return jnp.tile(x, reps)


def tile(input, multiples, name=None):  # noqa: A002
    x, reps = convert(input), static_ints(multiples)
    _shape_args.check_multiples(reps, tuple(x.shape))
    return call(_tile, x, reps=reps)


def _shape_dtype(out_type, what: str):
    """``out_type`` of ``tf.shape``/``tf.size``: int32 (also for None) or int64, which is int32
    unless jax's x64 mode is on, as everywhere in gradkit.tf."""
    dtype = np.dtype(_dtypes.int32 if out_type is None else out_type)
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise _errors.GradkitTypeError(
            f"{what} got out_type={dtype.name}; TensorFlow takes tf.int32 or tf.int64. Cast the result instead: "
            f"tf.cast({what}(x), tf.{dtype.name})."
        )
    return jax.dtypes.canonicalize_dtype(dtype)


def _value_shape(input) -> tuple:
    """The shape of the value ``input`` holds now (a Variable declared with a None size reports
    that None as its ``shape``; ``tf.shape`` gives the size it has)."""
    if isinstance(input, Variable):
        return tuple(jnp.shape(input.value))
    shape = getattr(input, "shape", None)
    if shape is not None:
        if any(d is None for d in shape):
            # A size unknown until a value comes (a KerasTensor): converting it raises its own error.
            convert(input)
        return shape
    if isinstance(input, (list, tuple)):
        return convert(input).shape  # a list of tensors packed, as TensorFlow converts it (traced ones too)
    return np.shape(input)


def shape(input, out_type=None, name=None):  # noqa: A002
    """``tf.shape``: the shape as an int32 (default) or int64 vector.

    Shapes are static in gradkit: the value is known inside tf.function too, so shape
    arithmetic (``x[:, :tf.shape(y)[1]]``) keeps working where a traced value could not.
    """
    dtype = _shape_dtype(out_type, "tf.shape")
    dims = _value_shape(input)
    if not _all_known(dims):
        return Tensor.concrete(jnp.asarray(tuple(dims), dtype=dtype))
    with jax.ensure_compile_time_eval():
        return Tensor.concrete(jnp.asarray(dims, dtype=dtype))


def size(input, out_type=None, name=None):  # noqa: A002
    # TensorFlow makes a known size a constant of any integer out_type (its Size op, of int32 or
    # int64, runs only for a size unknown until the op runs, which gradkit's never is).
    known_int = out_type is not None and np.dtype(out_type).kind in "iu"
    dtype = jax.dtypes.canonicalize_dtype(np.dtype(out_type)) if known_int else _shape_dtype(out_type, "tf.size")
    dims = _value_shape(input)
    if not _all_known(dims):
        return Tensor.concrete(jnp.asarray(math.prod(dims), dtype=dtype))
    with jax.ensure_compile_time_eval():
        return Tensor.concrete(jnp.asarray(int(np.prod(dims)), dtype=dtype))


def _all_known(dims) -> bool:
    """Whether every size is a number; not so for a SavedModel export's ``None`` sizes, which are
    symbolic there: the shape is then computed in the exported program, for every size it takes."""
    return all(isinstance(d, int | np.integer) for d in dims)


def rank(input, name=None):  # noqa: A002
    return Tensor.concrete(jnp.asarray(len(_value_shape(input)), dtype=_dtypes.int32))


def _identity(x):
    return jnp.asarray(x)


def identity(input, name=None):  # noqa: A002
    return call(_identity, convert(input))


def _repeat(x, repeats, axis):
    if np.ndim(repeats):
        return jnp.repeat(x, np.asarray(repeats), axis=axis, total_repeat_length=int(np.sum(repeats)))
    return jnp.repeat(x, repeats, axis=axis)


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """``tf.repeat``: each element repeated ``repeats`` times (an int, or one per element along ``axis``)."""
    x = convert(input)
    if axis is None:
        x, axis = reshape(x, [-1]), 0
    counts = static_ints(repeats) if np.ndim(repeats) else int(repeats)
    if isinstance(counts, int) and counts < 0:
        raise _errors.InvalidArgumentValueError(
            f"tf.repeat got repeats={counts}: a count for every element must be >= 0, as TensorFlow requires."
        )
    # A negative count among several repeats its element no times, as TensorFlow takes it.
    counts = tuple(max(c, 0) for c in counts) if isinstance(counts, tuple) else counts
    if isinstance(counts, tuple) and len(counts) == 1:
        counts = counts[0]  # one count for every element, as TensorFlow broadcasts it
    return call(_repeat, x, repeats=counts, axis=int(axis))


def _roll(x, shift, axis):
    if isinstance(shift, (int, tuple)):
        return jnp.roll(x, shift, axis=axis)
    # A shift given as an array (traced, or a device array of known shifts passed eagerly so that
    # a new shift compiles nothing): jnp.roll would read a concrete one as static ints.
    shifts = jnp.reshape(shift, (-1,))
    for k, ax in enumerate(axis if isinstance(axis, tuple) else (axis,)):
        ax %= x.ndim
        n = x.shape[ax]
        if n:
            start = n - jnp.mod(shifts[k if shifts.shape[0] > 1 else 0], n)
            x = jax.lax.dynamic_slice_in_dim(jnp.concatenate([x, x], ax), start, n, ax)
    return x


def roll(input, shift, axis, name=None):  # noqa: A002
    """``tf.roll``: elements shifted along ``axis`` (ints, or lists of them), wrapping around.
    ``shift`` may be a traced tensor inside ``tf.function`` (a random shift, say)."""
    x = convert(input)
    shifts = shift if isinstance(shift, (list, tuple)) and not any(isinstance(s, Tensor) for s in shift) else None
    if shifts is None:
        shift = convert(shift)  # a list holding tensors (traced ones too) packed, as TensorFlow packs it
    shift_shape = np.shape(shifts) if shifts is not None else tuple(shift.shape)
    axis_shape = np.shape(axis) if isinstance(axis, (list, tuple, np.ndarray)) else tuple(convert(axis).shape)
    if shift_shape != axis_shape or len(shift_shape) > 1:
        raise _errors.InvalidArgumentValueError(
            f"tf.roll: shift of shape {shift_shape} and axis of shape {axis_shape} must be one scalar each or two "
            "vectors of one length (a shift per axis), as TensorFlow requires."
        )
    if shifts is not None or known_value(shift) is not None:
        if frames.under_jax_trace():
            return call(_roll, x, shift=_ints(shift), axis=_ints(axis))
        # Eagerly the shift is an input of the program: a loop's tf.roll(x, i) compiles once
        # (see gradkit._core.dynamic_index); taken modulo its axis' length, it fits in int32.
        shifts, axes = _ints(shift), _ints(axis)
        if isinstance(shifts, tuple):
            shifts = tuple(s % (x.shape[a] or 1) for s, a in zip(shifts, axes))
        else:
            shifts = shifts % (x.shape[axes] or 1)
        return call(_roll, x, dynamic_index.starts_array(shifts), axis=axes)
    return call(_roll, x, convert(shift), axis=_ints(axis))


def _ints(x):
    if isinstance(x, (list, tuple, np.ndarray)):
        return static_ints(x)
    value = None if isinstance(x, (int, np.integer)) else known_value(x)
    if value is not None and np.ndim(value) > 0:  # a tensor of shifts or axes
        return tuple(int(v) for v in np.asarray(value).reshape(-1))
    return int(x)
