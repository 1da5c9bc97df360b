"""``tf.keras.layers.Masking``: marks the padded timesteps of a sequence (see ``masking.py``)."""

from __future__ import annotations

import jax.numpy as jnp

from .._convert import call, convert
from .base_layer import Layer
from .masking import set_keras_mask


class Masking(Layer):
    """``tf.keras.layers.Masking(mask_value=0.0)``: a timestep whose features all equal
    ``mask_value`` is masked: its features become 0 and the output carries the mask (True at
    the other steps) to the layers after it."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def compute_mask(self, inputs, mask=None):
        return call(_keep_steps, convert(inputs), self.mask_value)

    def call(self, inputs):
        inputs = convert(inputs)
        keep = call(_keep_steps, inputs, self.mask_value)
        outputs = call(_masked_values, inputs, keep)
        set_keras_mask(outputs, keep)
        return outputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}


def _keep_steps(x, mask_value):
    return jnp.any(x != jnp.asarray(mask_value, x.dtype), axis=-1)


def _masked_values(x, keep):
    return x * keep[..., None].astype(x.dtype)
