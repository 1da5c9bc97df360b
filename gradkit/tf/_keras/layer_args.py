"""Keras 3's layer arguments as gradkit.tf's layers take them: tuples of positive ints, padding
names, data_format, and a clear error for every option gradkit.tf does not implement."""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from . import initializers as _initializers


def refuse_unimplemented(what: str, implemented: str, **options) -> None:
    """Refuse Keras options gradkit.tf does not implement; their defaults (None, False) are fine.

    Ignoring one (a LoRA rank, a quantization config) would change the results without a word."""
    given = sorted(k for k, v in options.items() if v is not None and v is not False)
    if given:
        raise _errors.GradkitNotImplementedError(
            f"{what} got {', '.join(f'{k}={options[k]!r}' for k in given)}, which gradkit.tf does not "
            f"implement (ignoring it would change the results). Leave it out; gradkit.tf implements {implemented}."
        )


def base_options(what: str, kwargs: dict) -> dict:
    """The keyword arguments every Keras layer takes, beyond name and trainable: ``dtype`` (only
    float32, Keras' default) and ``input_shape``/``input_dim`` (returned, to pass on to
    ``Layer.__init__``), nothing else."""
    kwargs = dict(kwargs)
    passed_on = {k: kwargs.pop(k) for k in ("input_shape", "input_dim") if k in kwargs}
    dtype = kwargs.pop("dtype", None)
    if dtype is not None and _dtype_name(dtype) != "float32":
        raise _errors.GradkitTypeError(
            f"{what} got dtype={dtype!r}; gradkit.tf's Keras layers compute in float32 only. "
            "Leave dtype out (or pass 'float32'), and cast the output if you need another type."
        )
    if kwargs:
        raise _errors.GradkitValueError(
            f"{what} got the keyword arguments {sorted(kwargs)}, which gradkit.tf's layer does not take "
            "(nor does Keras 3's). Leave them out."
        )
    return passed_on


def _dtype_name(dtype) -> str:
    """The name of a layer's ``dtype=``: a dtype, its name, a ``tf.keras.DTypePolicy`` or its config."""
    if isinstance(dtype, dict):  # a policy's config, as Keras writes it
        dtype = (dtype.get("config") or {}).get("name")
    elif hasattr(dtype, "as_numpy_dtype"):  # a tf.DType
        dtype = dtype.as_numpy_dtype
    elif isinstance(getattr(dtype, "name", None), str):  # a DTypePolicy
        dtype = dtype.name
    try:
        return np.dtype(dtype).name
    except TypeError:  # a mixed-precision policy's name
        return str(dtype)


def check_initializers(what: str, **initializers) -> None:
    """Keras refuses an initializer it cannot interpret when the layer is made, not when it builds."""
    for arg, init in initializers.items():
        if not _initializers.known(init):
            raise _errors.GradkitValueError(
                f"{what}: {arg}={init!r} is not an initializer gradkit.tf knows (Keras refuses it too when the "
                f"layer is made); it knows {sorted(_initializers.NAMES)} (and their class names, e.g. "
                "'GlorotUniform'). Pass one of those, an instance such as tf.keras.initializers.RandomNormal("
                "stddev=0.1), or a callable init(shape, dtype=None)."
            )


def int_tuple(value, n: int, name: str, what: str) -> tuple:
    """Keras' ``standardize_tuple``: an int or ``n`` ints, each positive."""
    items = (value,) * n if isinstance(value, (int, np.integer)) else value
    try:
        items = tuple(items)
        ok = len(items) == n and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in items
        )
    except TypeError:
        ok = False
    if not ok:
        raise _errors.GradkitValueError(
            f"{what}: {name}={value!r}; Keras takes a positive int or a tuple of {n} positive ints here. "
            f"Pass e.g. {name}={(2,) * n if n > 1 else 2}."
        )
    return tuple(int(v) for v in items)


def padding_name(padding, what: str, allow_causal: bool = False) -> str:
    """``'valid'``, ``'same'`` (any case) or, for 1-D convolutions, ``'causal'``."""
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if isinstance(padding, str) and padding.lower() in allowed:
        return padding.lower()
    raise _errors.GradkitValueError(
        f"{what}: padding={padding!r} is not one gradkit.tf's Keras layers take; use one of {list(allowed)}. "
        "For explicit padding, pad first with tf.pad and use padding='valid'."
    )


def check_rank(shape, rank: int, layout: str, what: str) -> None:
    if len(shape) != rank:
        raise _errors.GradkitValueError(
            f"{what} takes rank-{rank} inputs ({layout}), as Keras does, but got shape {tuple(shape)}. "
            "Reshape it first, e.g. tf.reshape(x, [batch, ..., channels])."
        )


def float_input(x):
    """``x`` as Keras' float layers take it: an integer or bool input in float32, the dtype Keras'
    ops give it against the layer's float32 weights (a float input as it is)."""
    if np.issubdtype(np.dtype(x.dtype), np.floating):
        return x
    from .. import _array  # (here: gradkit.tf's ops import the Keras layers' helpers)

    return _array.cast(x, "float32")


def check_float(x, what: str) -> None:
    if not np.issubdtype(np.dtype(x.dtype), np.floating):
        raise _errors.GradkitTypeError(
            f"{what} takes floating-point inputs, but got dtype {np.dtype(x.dtype).name}. "
            "Cast it first: tf.cast(x, tf.float32)."
        )
