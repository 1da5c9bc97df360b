"""``tf.keras.layers.InputSpec``: what a layer's ``input_spec`` says its inputs must be (rank, dtype,
shape, sizes of some axes), checked, as Keras checks it, at each call before the layer is built or
run, and at a functional call on the symbolic shapes (an unknown size fits any)."""

from __future__ import annotations

import jax
import jax.export  # is_symbolic_dim: a submodule jax < 0.8 does not import with jax itself

from gradkit import _errors

from . import backend_config


def _shape(shape) -> tuple:
    return tuple(_size(d) for d in shape)


def _size(d):
    """A dimension as an int, or None where it is unknown: a None, or a symbolic size (a function
    exported by ``tf.saved_model.save`` with a None dimension in its input signature)."""
    if d is None or jax.export.is_symbolic_dim(d):
        return None
    return int(d)


class InputSpec:
    """``InputSpec(dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None,
    allow_last_axis_squeeze=False, name=None, optional=False)``, Keras' arguments and checks.

    >>> import gradkit.tf as tf
    >>> class Pairs(tf.keras.layers.Layer):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.input_spec = tf.keras.layers.InputSpec(ndim=2, axes={-1: 2})
    ...     def call(self, x):
    ...         return x[:, 0] * x[:, 1]
    >>> Pairs()(tf.ones([3, 2])).shape
    (3,)
    """

    def __init__(
        self,
        dtype=None,
        shape=None,
        ndim=None,
        max_ndim=None,
        min_ndim=None,
        axes=None,
        allow_last_axis_squeeze=False,
        name=None,
        optional=False,
    ):
        self.dtype = None if dtype is None else backend_config.standardize_dtype(dtype)
        if shape is not None:
            self.shape, self.ndim = _shape(shape), len(shape)
        else:
            self.shape, self.ndim = None, ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.name, self.optional = name, optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = axes or {}
            self.axes = {int(k): axes[k] for k in axes}
        except (ValueError, TypeError):
            raise _errors.GradkitTypeError(
                f"Argument `axes` must be a dict with integer keys (Keras' error). Received: axes={axes}"
            ) from None
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim else self.max_ndim) - 1
            if max(self.axes) > max_dim:
                raise _errors.GradkitValueError(
                    f"Axis {max(self.axes)} is greater than the maximum allowed value: {max_dim} (Keras' error)."
                )

    def __repr__(self):
        spec = [
            f"dtype={self.dtype}" if self.dtype else "",
            f"shape={self.shape}" if self.shape else "",
            f"ndim={self.ndim}" if self.ndim else "",
            f"max_ndim={self.max_ndim}" if self.max_ndim else "",
            f"min_ndim={self.min_ndim}" if self.min_ndim else "",
            f"axes={self.axes}" if self.axes else "",
        ]
        return f"InputSpec({', '.join(x for x in spec if x)})"

    def get_config(self):
        return {
            "dtype": self.dtype,
            "shape": self.shape,
            "ndim": self.ndim,
            "max_ndim": self.max_ndim,
            "min_ndim": self.min_ndim,
            "axes": self.axes,
            "optional": self.optional,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _flat(tree) -> list:
    return jax.tree_util.tree_leaves(tree, is_leaf=lambda x: x is None or hasattr(x, "shape"))


def check(input_spec, inputs, layer_name: str) -> None:
    """Keras' ``assert_input_compatibility``: raise its ValueError where ``inputs`` do not fit."""
    if not input_spec:
        return
    specs = jax.tree_util.tree_leaves(input_spec, is_leaf=lambda s: isinstance(s, InputSpec) or s is None)
    if isinstance(inputs, dict) and all(getattr(s, "name", None) for s in specs):
        missing = [s.name for s in specs if s.name not in inputs]
        if missing:
            raise _errors.GradkitValueError(
                f'Missing data for input "{missing[0]}". You passed a data dictionary with keys {list(inputs)}. '
                f"Expected the following keys: {[s.name for s in specs]}"
            )
        inputs = [inputs[s.name] for s in specs]
    inputs = _flat(inputs)
    if len(inputs) != len(specs):
        raise _errors.GradkitValueError(
            f'Layer "{layer_name}" expects {len(specs)} input(s), but it received {len(inputs)} input tensors '
            "(Keras' input_spec check)."
        )
    for index, (x, spec) in enumerate(zip(inputs, specs)):
        if spec is None or (x is None and spec.optional):
            continue
        if not hasattr(x, "shape"):
            raise _errors.GradkitValueError(
                f"Inputs to a layer should be tensors. Got '{x}' (of type {type(x)}) as input for layer '{layer_name}'."
            )
        _check_one(index, x, spec, layer_name)


def _check_one(index, x, spec, layer_name) -> None:
    shape = _shape(x.shape)
    ndim = len(shape)
    where = f"Input {index} with name '{spec.name}' of layer '{layer_name}' is incompatible with the layer:"
    if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
        raise _errors.GradkitValueError(
            f"{where} expected ndim={spec.ndim}, found ndim={ndim}. Full shape received: {shape}"
        )
    if spec.max_ndim is not None and ndim > spec.max_ndim:
        raise _errors.GradkitValueError(f"{where} expected max_ndim={spec.max_ndim}, found ndim={ndim}")
    if spec.min_ndim is not None and ndim < spec.min_ndim:
        raise _errors.GradkitValueError(
            f"{where} expected min_ndim={spec.min_ndim}, found ndim={ndim}. Full shape received: {shape}"
        )
    if spec.dtype is not None:
        dtype = backend_config.standardize_dtype(x.dtype)
        if dtype != spec.dtype:
            raise _errors.GradkitValueError(f"{where} expected dtype={spec.dtype}, found dtype={dtype}")
    for axis, value in spec.axes.items():
        if value is not None and shape[axis] not in (value, None):
            raise _errors.GradkitValueError(
                f"{where} expected axis {axis} of input shape to have value {value}, but received input with "
                f"shape {shape}"
            )
    if spec.shape is not None:
        spec_shape = spec.shape
        if spec.allow_last_axis_squeeze:
            shape = shape[:-1] if shape and shape[-1] == 1 else shape
            spec_shape = spec_shape[:-1] if spec_shape and spec_shape[-1] == 1 else spec_shape
        for spec_dim, dim in zip(spec_shape, shape):
            if spec_dim is not None and dim is not None and spec_dim != dim:
                raise _errors.GradkitValueError(f"{where} expected shape={spec.shape}, found shape={shape}")
