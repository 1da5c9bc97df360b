"""``tf.keras.layers``: the Keras base ``Layer``, Dense and BatchNormalization on gradkit.nn, and
the layers without weights, with TF's names."""

from __future__ import annotations

import numbers

import gradkit.numpy as gnp
from gradkit import _errors, nn
from gradkit._core.custom import stop_gradient

from . import activations as _activations
from . import functional, layer_regularization
from . import initializers as _initializers
from .base_layer import Layer as Layer
from .core_layers import Activation as Activation
from .core_layers import Dropout as Dropout
from .core_layers import Flatten as Flatten
from .core_layers import Reshape as Reshape
from .input_spec import InputSpec
from .layer_args import check_initializers, refuse_unimplemented


def _keras_initializer(init, what: str):
    """An initializer as ``init(key, shape, dtype)``, from a Keras name, a Keras initializer or a
    Keras-style callable ``init(shape, dtype=None)``."""
    return _initializers.as_nn_initializer(init, what)


class _KerasLayer(Layer):
    """A gradkit.nn layer under Keras' base class (``class Dense(_KerasLayer, nn.Dense)``):
    TF-named Variables ('dense/kernel:0'), Keras' variables lists, ``trainable=`` and
    ``training=``, eager tensors out."""


KerasVariableLists = Layer  # the name earlier gradkit.tf code imported


class Dense(_KerasLayer, nn.Dense):
    """``tf.keras.layers.Dense(units, activation=None, use_bias=True, kernel_initializer='glorot_uniform')``.

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.Dense(2, activation="relu", name="dense")
    >>> layer(tf.ones([3, 4])).shape, layer.kernel.name
    ((3, 2), 'dense/kernel:0')
    """

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        lora_rank=None,
        lora_alpha=None,
        quantization_config=None,
        **kwargs,
    ):
        what = "tf.keras.layers.Dense"
        refuse_unimplemented(
            what,
            "units, activation, use_bias, the initializers, regularizers and constraints, name and trainable",
            lora_rank=lora_rank,
            lora_alpha=lora_alpha,
            quantization_config=quantization_config,
        )
        # Keras' test, as it is: a Python int (True too), not a NumPy integer.
        if not isinstance(units, int) or units <= 0:
            raise _errors.GradkitValueError(
                f"{what}: units={units!r} ({type(units).__name__}); Keras takes a positive Python int here. "
                "Pass e.g. units=int(n)."
            )
        check_initializers(what, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer)
        kwargs["activity_regularizer"] = activity_regularizer
        activation = _activations.for_layer(activation)
        super().__init__(units, activation, use_bias, kernel_initializer, bias_initializer, **kwargs)
        self.input_spec = InputSpec(min_ndim=2)  # Keras' Dense: a batch axis and a feature axis
        layer_regularization.keep_options(
            self,
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint,
        )

    def build(self, input_shape):
        super().build(input_shape)
        layer_regularization.attach_to_weights(self, "kernel", "bias")

    def compute_output_shape(self, input_shape):
        return (*tuple(input_shape)[:-1], self.units)


def tf_moments(x, axes):
    """Keras' moments on TensorFlow (``tf.nn.moments``): the variance treats the mean as a
    constant. The values and first derivatives are the usual ones; second derivatives (a Hessian
    through a normalization layer) are TensorFlow's."""
    mean = gnp.mean(x, axis=axes, keepdims=True)
    return mean, gnp.mean(gnp.square(gnp.subtract(x, stop_gradient(mean))), axis=axes, keepdims=True)


_BATCH_NORM_WEIGHT_OPTIONS = ("beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint")


class BatchNormalization(_KerasLayer, nn.BatchNorm):
    """``tf.keras.layers.BatchNormalization(axis=-1, momentum=0.99, epsilon=0.001)``, called with ``training=``."""

    def _batch_moments(self, x, axes):
        return tf_moments(x, axes)

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
        shape_args = {k: kwargs.pop(k) for k in ("input_shape", "input_dim") if k in kwargs}
        weight_options = {k: kwargs.pop(k, None) for k in _BATCH_NORM_WEIGHT_OPTIONS}
        activity_regularizer = kwargs.pop("activity_regularizer", None)
        if not kwargs.get("renorm"):
            kwargs.pop("renorm_momentum", None)  # read only with renorm=True (refused below); Keras' default is 0.99
        # Keras options gradkit.tf does not implement raise an error rather than being ignored;
        # their defaults (None, False) are fine.
        unsupported = sorted(k for k, v in kwargs.items() if v is not None and v is not False)
        if unsupported:
            raise _errors.GradkitTypeError(
                f"tf.keras.layers.BatchNormalization got {', '.join(f'{k}={kwargs[k]!r}' for k in unsupported)}, "
                "which gradkit.tf does not implement (ignoring it would change the results). Leave it out; "
                "gradkit.tf implements axis, momentum, epsilon, center, scale, the initializers, regularizers "
                "and constraints, name and trainable."
            )
        if not isinstance(axis, numbers.Real):
            raise _errors.GradkitTypeError(
                f"tf.keras.layers.BatchNormalization takes one int axis, as Keras 3 does, but got axis={axis!r}. "
                "Pass a single int (axis=-1 for the last axis)."
            )
        axis = int(axis)  # as Keras reads it: 1.0 is axis 1
        self.__dict__["_keras_axis"] = axis  # the config's, also once built (self.axis is then >= 0)
        check_initializers(
            "tf.keras.layers.BatchNormalization",
            beta_initializer=beta_initializer,
            gamma_initializer=gamma_initializer,
            moving_mean_initializer=moving_mean_initializer,
            moving_variance_initializer=moving_variance_initializer,
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
            activity_regularizer=activity_regularizer,
            **shape_args,
        )
        layer_regularization.keep_options(self, **weight_options)

    def build(self, input_shape):
        super().build(input_shape)
        layer_regularization.attach_to_weights(self, "gamma", "beta")

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def _keras_config_values(self) -> dict:
        return {"axis": self.__dict__.get("_keras_axis", self.axis)}

    def call(self, inputs, training=None, mask=None):
        # A frozen BatchNormalization runs in inference mode, as in Keras: the moving
        # statistics normalise and are left alone. A mask (an Embedding's with mask_zero, say)
        # leaves the padding out of the batch statistics.
        training = bool(training) and self.trainable
        if not (training and functional.running_symbolically()):
            return nn.BatchNorm.call(self, inputs, training=training, mask=mask)
        # Run on zeros to build a functional model (a call recorded with training=True): Keras'
        # symbolic call leaves the moving statistics as they are.
        kept = self.moving_mean.value, self.moving_variance.value
        outputs = nn.BatchNorm.call(self, inputs, training=training, mask=mask)
        self.moving_mean.assign(kept[0])
        self.moving_variance.assign(kept[1])
        return outputs


# Re-exports of the layers in their own files (imported last: they build on _KerasLayer above).
from .activation_layers import LeakyReLU as LeakyReLU  # noqa: E402
from .activation_layers import ReLU as ReLU  # noqa: E402
from .activation_layers import Softmax as Softmax  # noqa: E402
from .attention_layers import MultiHeadAttention as MultiHeadAttention  # noqa: E402
from .conv_layers import Conv1D as Conv1D  # noqa: E402
from .conv_layers import Conv2D as Conv2D  # noqa: E402
from .conv_transpose_layers import Conv1DTranspose as Conv1DTranspose  # noqa: E402
from .conv_transpose_layers import Conv2DTranspose as Conv2DTranspose  # noqa: E402
from .embedding import Embedding as Embedding  # noqa: E402
from .input_layer import Input as Input  # noqa: E402
from .input_layer import InputLayer as InputLayer  # noqa: E402
from .normalization_layers import LayerNormalization as LayerNormalization  # noqa: E402
from .pooling_layers import AveragePooling2D as AveragePooling2D  # noqa: E402
from .pooling_layers import AvgPool2D as AvgPool2D  # noqa: E402
from .pooling_layers import GlobalAveragePooling2D as GlobalAveragePooling2D  # noqa: E402
from .pooling_layers import MaxPool2D as MaxPool2D  # noqa: E402
from .pooling_layers import MaxPooling2D as MaxPooling2D  # noqa: E402
from .recurrent_layers import GRU as GRU  # noqa: E402
from .recurrent_layers import LSTM as LSTM  # noqa: E402
from .recurrent_layers import SimpleRNN as SimpleRNN  # noqa: E402


def __getattr__(name):
    from .._namespace import missing

    raise AttributeError(missing("gradkit.tf.keras.layers", name))
