"""The rest of ``keras.ops.numpy``: ``get_item``, ``i0``, ``nextafter``, ``vectorize`` and ``view``.

Two depart from Keras' TensorFlow backend, which gets them wrong: ``vectorize`` there raises
ValueError for every call (its vmap takes no per-argument axes), while gradkit vectorizes as NumPy
and JAX do; ``nextafter`` there steps in float64 and rounds back, so float32 inputs come back
unchanged, while gradkit steps in the result's dtype, as NumPy and Keras' JAX backend do.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> ops.vectorize(lambda a, b: a + b)(tf.constant([1.0, 2.0]), 10.0).numpy().tolist()
[11.0, 12.0]
>>> ops.view(tf.constant([1.0]), "int32").numpy().tolist()
[1065353216]
"""

from __future__ import annotations

import functools
import re

import numpy as np

from gradkit import _errors

from ... import _arithmetic, _array, _bitcast, _custom, _indexing, _special
from ..._convert import wrap
from .dispatch import apply, cast, keras_op, tensor
from .dtype_rules import FLOATX, dtype_name, result_type, standardize_dtype

NAMES = "get_item i0 nextafter vectorize view"


@keras_op
def get_item(x, key):
    """``keras.ops.get_item(x, key)``: ``x[key]`` (a list key is read as a tuple, as Keras'
    ``GetItem`` does)."""
    return tensor(x)[tuple(key) if isinstance(key, list) else key]


@keras_op
def i0(x):
    """``keras.ops.i0(x)``: the modified Bessel function of the first kind, order 0 (float16 and
    bfloat16 kept, int64 and float64 in float64 with 64-bit types on, other inputs in floatx;
    ``tf.math.bessel_i0``, whose gradient is ``i1``)."""
    x = tensor(x)
    name = dtype_name(x.dtype)
    dtype = (
        name if name in ("bfloat16", "float16", "float32") else "float64" if name in ("int64", "float64") else FLOATX
    )
    return _special.bessel_i0(cast(x, dtype))


@keras_op
def nextafter(x1, x2):
    """``keras.ops.nextafter(x1, x2)``: the next number after ``x1`` towards ``x2``, in the result
    dtype of both and float (NumPy's; see the module docstring). Gradient: 1 for ``x1``, 0 for ``x2``."""
    x1, x2 = tensor(x1), tensor(x2)
    dtype = result_type(x1.dtype, x2.dtype, float)
    return apply(_arithmetic._nextafter, cast(x1, dtype), cast(x2, dtype))


_SIXTY_FOUR = ("int64", "uint64", "float64", "complex128")


@keras_op
def view(x, dtype=None):
    """``keras.ops.view(x, dtype=None)``: ``x``'s bytes read as ``dtype``, the last axis scaled by the
    ratio of item sizes (``float32`` to ``int16`` doubles it); no gradient."""
    x = tensor(x)
    asked = getattr(dtype, "name", dtype)
    if isinstance(asked, str) and asked in _SIXTY_FOUR:
        raise _errors.GradkitTypeError(
            f"tf.keras.ops.view got dtype={asked!r}: gradkit computes without 64-bit types (JAX without x64), so "
            f"the {x.dtype} bytes cannot be read as one. View them as a 32-bit type such as "
            f"{asked.replace('64', '32').replace('complex32', 'complex64')!r}."
        )
    target = np.dtype(x.dtype) if dtype is None else standardize_dtype(dtype)
    old, new = np.dtype(x.dtype).itemsize, target.itemsize
    last = x.shape[-1] if x.ndim else None
    if (last is None and old != new) or (last is not None and (last * old) % new):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.view cannot read an array of shape {tuple(x.shape)} and dtype {x.dtype} as {target.name}: "
            "its last axis holds a number of bytes the new item size does not divide (Keras raises ValueError). "
            "Pad or slice the last axis first."
        )
    if old == new:
        return _bitcast.bitcast(x, target)
    if old > new:
        shape = [*x.shape[:-1], last * (old // new)]
        return _array.reshape(_bitcast.bitcast(_array.reshape(x, [-1]), target), shape)
    ratio = new // old
    return _bitcast.bitcast(_array.reshape(x, [*x.shape[:-1], last // ratio, ratio]), target)


_CORE = re.compile(r"\(([^()]*)\)")


def _parse(signature):
    try:
        ins, outs = signature.replace(" ", "").split("->")
        return [tuple(filter(None, g.split(","))) for g in _CORE.findall(ins)], [
            tuple(filter(None, g.split(","))) for g in _CORE.findall(outs)
        ]
    except (AttributeError, ValueError):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.vectorize got signature={signature!r}, which is not a gufunc signature. Write one as "
            "NumPy does: '(m,n),(n)->(m)'."
        ) from None


def _batch_shape(shapes):
    out = ()
    for shape in shapes:
        try:
            out = np.broadcast_shapes(out, shape)
        except ValueError:
            raise _errors.GradkitValueError(
                f"tf.keras.ops.vectorize got arguments whose loop shapes {list(shapes)} do not broadcast. Pass "
                "arguments whose shapes (less their core dimensions) broadcast together."
            ) from None
    return tuple(out)


def vectorize(pyfunc, *, excluded=None, signature=None):
    """``keras.ops.vectorize(pyfunc, *, excluded=None, signature=None)``: ``pyfunc`` (of scalars, or of
    the core shapes in a gufunc ``signature`` such as ``"(m,n),(n)->(m)"``) mapped over the broadcast
    leading axes of its arguments, vectorized as one recorded op (``tf.vectorized_map``);
    ``excluded`` positions or keywords are passed through unmapped. See the module docstring."""
    if not callable(pyfunc):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.vectorize takes a callable pyfunc, but got {pyfunc!r} (Keras raises ValueError)."
        )
    excluded = set(excluded or ())

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        fixed = {i: a for i, a in enumerate(args) if i in excluded or a is None}
        fixed_kwargs = {k: v for k, v in kwargs.items() if k in excluded}
        names = [k for k in kwargs if k not in excluded]
        mapped = [tensor(a) for i, a in enumerate(args) if i not in fixed] + [tensor(kwargs[k]) for k in names]
        if signature is None:
            cores, out_cores = [()] * len(mapped), None
        else:
            cores, out_cores = _parse(signature)
            if len(cores) != len(mapped):
                raise _errors.GradkitTypeError(
                    f"tf.keras.ops.vectorize: signature={signature!r} names {len(cores)} inputs, but the call "
                    f"passed {len(mapped)} mapped arguments. Pass one per input (or mark others excluded)."
                )
        sizes = {}
        for arg, core in zip(mapped, cores):
            if arg.ndim < len(core):
                raise _errors.GradkitValueError(
                    f"tf.keras.ops.vectorize: an argument of shape {tuple(arg.shape)} has fewer axes than its core "
                    f"dimensions {core} in signature={signature!r}. Pass one with at least {len(core)} axes."
                )
            for name, size in zip(core, arg.shape[arg.ndim - len(core) :]):
                if sizes.setdefault(name, size) != size:
                    raise _errors.GradkitValueError(
                        f"tf.keras.ops.vectorize: core dimension {name!r} has size {sizes[name]} in one argument and "
                        f"{size} in another. Pass arguments that agree on it."
                    )
        loop = _batch_shape([tuple(a.shape[: a.ndim - len(c)]) for a, c in zip(mapped, cores)])
        count = int(np.prod(loop, dtype=np.int64))
        flat = [
            _array.reshape(
                _indexing.broadcast_to(a, [*loop, *a.shape[a.ndim - len(c) :]]), [count, *a.shape[a.ndim - len(c) :]]
            )
            for a, c in zip(mapped, cores)
        ]

        def call(values):
            values = list(values)
            positional, keywords = [], dict(fixed_kwargs)
            for i in range(len(args)):
                positional.append(fixed[i] if i in fixed else values.pop(0))
            keywords.update(zip(names, values))
            return pyfunc(*positional, **keywords)

        if not loop:
            return call(mapped)
        out = _custom.vectorized_map(call, tuple(flat))
        many = isinstance(out, (tuple, list))
        outs = [wrap(o) for o in (out if many else [out])]
        if out_cores is not None and len(out_cores) != len(outs):
            raise _errors.GradkitTypeError(
                f"tf.keras.ops.vectorize: signature={signature!r} names {len(out_cores)} outputs, but pyfunc returned "
                f"{len(outs)}. Return one per output, as a tuple for several."
            )
        outs = [_array.reshape(o, [*loop, *o.shape[1:]]) for o in outs]
        return tuple(outs) if many else outs[0]

    return wrapped
