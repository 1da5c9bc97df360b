"""``tf.keras.layers.AdaptiveAveragePooling1D/2D/3D`` and ``AdaptiveMaxPooling1D/2D/3D``: Keras 3's
adaptive pooling layers, ``keras.ops.adaptive_average_pool``/``adaptive_max_pool`` to a fixed
``output_size`` whatever the input's spatial size.

>>> import gradkit.tf as tf
>>> tf.keras.layers.AdaptiveAveragePooling2D(2)(tf.ones([1, 5, 7, 3])).shape
(1, 2, 2, 3)
"""

from __future__ import annotations

from gradkit import _errors

from . import layer_config
from .base_layer import Layer
from .layer_names import KerasNamedLayer
from .ops.nn_pool_fold import adaptive_average_pool, adaptive_max_pool
from .spatial_args import standardize_data_format


class _AdaptivePooling(KerasNamedLayer, Layer):
    _n = 1
    _pool = None

    def __init__(self, output_size, data_format=None, **kwargs):
        super().__init__(**kwargs)
        what = type(self).__name__
        if isinstance(output_size, int) and not isinstance(output_size, bool):
            sizes = (output_size,) * self._n
        elif isinstance(output_size, (tuple, list)) and len(output_size) == self._n:
            sizes = tuple(output_size)
        else:
            shape = "an integer" if self._n == 1 else f"an integer or a tuple of {self._n} integers"
            raise _errors.GradkitTypeError(
                f"{what}: `output_size` must be {shape}, as Keras requires. Received: {output_size!r} of type "
                f"{type(output_size)}."
            )
        self.output_size = sizes
        self.data_format = standardize_data_format(data_format, what)

    def call(self, inputs):
        return type(self)._pool(inputs, output_size=self.output_size, data_format=self.data_format)

    def compute_output_shape(self, input_shape):
        batch = input_shape[0]
        if self.data_format == "channels_last":
            return (batch, *self.output_size, input_shape[-1])
        return (batch, input_shape[1], *self.output_size)


def _layer(name: str, n: int, pool):
    cls = type(name, (_AdaptivePooling,), {"_n": n, "_pool": staticmethod(pool), "__module__": __name__})
    kind = "average" if pool is adaptive_average_pool else "maximum"
    cls.__doc__ = (
        f"``tf.keras.layers.{name}(output_size, data_format=None)``: the {kind} over adaptive windows that "
        f"pool each of the {n} spatial axes to ``output_size``."
    )
    return cls


AdaptiveAveragePooling1D = _layer("AdaptiveAveragePooling1D", 1, adaptive_average_pool)
AdaptiveAveragePooling2D = _layer("AdaptiveAveragePooling2D", 2, adaptive_average_pool)
AdaptiveAveragePooling3D = _layer("AdaptiveAveragePooling3D", 3, adaptive_average_pool)
AdaptiveMaxPooling1D = _layer("AdaptiveMaxPooling1D", 1, adaptive_max_pool)
AdaptiveMaxPooling2D = _layer("AdaptiveMaxPooling2D", 2, adaptive_max_pool)
AdaptiveMaxPooling3D = _layer("AdaptiveMaxPooling3D", 3, adaptive_max_pool)

NAMES = (
    "AdaptiveAveragePooling1D AdaptiveAveragePooling2D AdaptiveAveragePooling3D "
    "AdaptiveMaxPooling1D AdaptiveMaxPooling2D AdaptiveMaxPooling3D"
)

layer_config.BUILTIN.update({name: ("output_size", "data_format") for name in NAMES.split()})
