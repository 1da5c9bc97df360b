"""``tf.keras.layers``: Dense and BatchNormalization on gradkit.nn, with TF's names."""

from __future__ import annotations

import functools

import jax
import numpy as np

from gradkit import _errors, nn
from gradkit.nn import initializers as _init

from .._convert import convert, wrap
from .._variables import Variable

# Keras' initializers by name, with Keras' defaults: 'random_normal' has stddev 0.05 and
# 'random_uniform' the range [-0.05, 0.05] (gradkit.nn's own take 1 and [0, 1)).
_KERAS_INITIALIZERS = {
    "zeros": _init.zeros,
    "ones": _init.ones,
    "glorot_uniform": _init.glorot_uniform,
    "random_normal": functools.partial(_init.random_normal, mean=0.0, stddev=0.05),
    "random_uniform": functools.partial(_init.random_uniform, minval=-0.05, maxval=0.05),
}


def _keras_initializer(init, what: str):
    """An initializer as ``init(key, shape, dtype)``, from a Keras name or a Keras-style callable
    ``init(shape, dtype=None)`` (gradkit.nn's own initializers are taken as they are)."""
    if isinstance(init, str):
        try:
            return _KERAS_INITIALIZERS[init]
        except KeyError:
            raise _errors.GradkitValueError(
                f"{what}={init!r} is not an initializer gradkit.tf knows; it knows {sorted(_KERAS_INITIALIZERS)}. "
                "Pass one of those, or a callable init(shape, dtype=None) returning the initial value, as in Keras."
            ) from None
    if not callable(init):
        raise _errors.GradkitTypeError(
            f"{what} must be an initializer name or a callable init(shape, dtype=None), but got "
            f"{type(init).__name__} {init!r}. Pass e.g. 'zeros' or lambda shape, dtype=None: tf.zeros(shape)."
        )
    if getattr(init, "__module__", None) == _init.__name__:
        return init

    def keras_style(key, shape, dtype):
        with jax.ensure_compile_time_eval():
            value = convert(init(shape, dtype=dtype))
            value = value.__gradkit_value__() if hasattr(value, "__gradkit_value__") else value
            return np.asarray(value).astype(dtype) if not isinstance(value, jax.Array) else value.astype(dtype)

    return keras_style


class KerasVariableLists:
    """Mixin: the variables properties as lists, as Keras returns them (``[x] +
    layer.trainable_variables`` must work); tf.Module's stay tuples."""

    @property
    def variables(self):
        return list(super().variables)

    @property
    def trainable(self) -> bool:
        """Keras' layer flag. ``False`` lists every variable of the layer and of its sublayers
        as non-trainable (``apply_gradients(zip(grads, layer.trainable_variables))`` skips
        them); a tape still watches them, as in Keras."""
        return self.__dict__.get("_keras_trainable", True)

    @trainable.setter
    def trainable(self, value) -> None:
        self.__dict__["_keras_trainable"] = bool(value)
        for sub in self._collect()[1]:  # Keras sets it on every sublayer too
            if isinstance(sub, KerasVariableLists):
                sub.__dict__["_keras_trainable"] = bool(value)

    def _frozen(self) -> set:
        """ids of the variables of this layer or of a sublayer whose ``trainable`` is False."""
        layers = [self, *self._collect()[1]]
        return {
            id(v)
            for layer in layers
            if isinstance(layer, KerasVariableLists) and not layer.trainable
            for v in layer.variables
        }

    @property
    def trainable_variables(self):
        frozen = self._frozen()
        return [v for v in super().trainable_variables if id(v) not in frozen]

    @property
    def non_trainable_variables(self):
        frozen = self._frozen()
        return [v for v in self.variables if not v.trainable or id(v) in frozen]

    weights = variables
    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables

    def get_weights(self):
        return [v.numpy() for v in self.variables]


class _KerasLayer(KerasVariableLists):
    """Mixin: TF-named Variables ('dense/kernel:0'), eager tensors out, Keras' ``trainable=``."""

    def __init__(self, *args, trainable=True, **kwargs):
        super().__init__(*args, **kwargs)
        if not trainable:
            self.trainable = False

    def _make_variable(self, value, name, trainable):
        return Variable(value, name=f"{self.name}/{name}", trainable=trainable)

    def add_weight(self, name, shape, initializer="zeros", trainable=True, dtype="float32"):
        init = _keras_initializer(initializer, f"{type(self).__name__} '{self.name}' {name} initializer")
        return super().add_weight(name, shape, init, trainable=trainable, dtype=dtype)

    def __call__(self, inputs, *args, **kwargs):
        return wrap(super().__call__(convert(inputs), *args, **kwargs))


class Dense(_KerasLayer, nn.Dense):
    """``tf.keras.layers.Dense(units, activation=None, use_bias=True, kernel_initializer='glorot_uniform')``.

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.Dense(2, activation="relu", name="dense")
    >>> layer(tf.ones([3, 4])).shape, layer.kernel.name
    ((3, 2), 'dense/kernel:0')
    """


class BatchNormalization(_KerasLayer, nn.BatchNorm):
    """``tf.keras.layers.BatchNormalization(axis=-1, momentum=0.99, epsilon=0.001)``, called with ``training=``."""

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=0.001,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        name=None,
        trainable=True,
        **kwargs,
    ):
        # Keras options gradkit.tf does not implement raise an error rather than being ignored;
        # their defaults (None, False) are fine.
        unsupported = sorted(k for k, v in kwargs.items() if v is not None and v is not False)
        if unsupported:
            raise _errors.GradkitTypeError(
                f"tf.keras.layers.BatchNormalization got {', '.join(f'{k}={kwargs[k]!r}' for k in unsupported)}, "
                "which gradkit.tf does not implement (ignoring it would change the results). Leave it out; "
                "gradkit.tf implements axis, momentum, epsilon, center, scale, the four initializers, name "
                "and trainable."
            )
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise _errors.GradkitTypeError(
                f"tf.keras.layers.BatchNormalization takes one int axis, as Keras 3 does, but got axis={axis!r}. "
                "Pass a single int (axis=-1 for the last axis)."
            )
        super().__init__(
            momentum=momentum,
            epsilon=epsilon,
            name=name,
            trainable=trainable,
            axis=axis,
            center=center,
            scale=scale,
            beta_initializer=beta_initializer,
            gamma_initializer=gamma_initializer,
            moving_mean_initializer=moving_mean_initializer,
            moving_variance_initializer=moving_variance_initializer,
        )

    def __call__(self, inputs, training=None, **kwargs):
        # A frozen BatchNormalization runs in inference mode, as in Keras: the moving
        # statistics normalise and are left alone.
        return super().__call__(inputs, training=bool(training) and self.trainable)


# Re-exports of the layers in their own files (imported last: they build on _KerasLayer above).
from .conv_layers import Conv1D as Conv1D  # noqa: E402
from .conv_layers import Conv2D as Conv2D  # noqa: E402
from .embedding import Embedding as Embedding  # noqa: E402
from .normalization_layers import LayerNormalization as LayerNormalization  # noqa: E402
from .pooling_layers import AveragePooling2D as AveragePooling2D  # noqa: E402
from .pooling_layers import AvgPool2D as AvgPool2D  # noqa: E402
from .pooling_layers import GlobalAveragePooling2D as GlobalAveragePooling2D  # noqa: E402
from .pooling_layers import MaxPool2D as MaxPool2D  # noqa: E402
from .pooling_layers import MaxPooling2D as MaxPooling2D  # noqa: E402


def __getattr__(name):
    from .._namespace import missing

    raise AttributeError(missing("gradkit.tf.keras.layers", name))
