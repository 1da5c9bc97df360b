"""``tf.keras.backend``'s (and ``tf.keras.config``'s) settings: ``floatx``, ``epsilon``,
``image_data_format``, their setters, ``clear_session``, and Keras' dtype helpers.

gradkit's Keras computes in float32, with Keras' fuzz factor 1e-7 and channels_last images: the
setters take those values (Keras' defaults) and refuse others with a ``[gradkit]`` error, rather
than change some results and not others. ``clear_session`` starts Keras' default layer names
again (the next Dense is ``dense``) and leaves any ``custom_object_scope``, as Keras' does.

>>> import gradkit.tf as tf
>>> tf.keras.backend.floatx(), tf.keras.backend.epsilon(), tf.keras.backend.image_data_format()
('float32', 1e-07, 'channels_last')
"""

from __future__ import annotations

import gc

from gradkit import _errors
from gradkit.nn.layer import reset_unique_names

from . import serialization_registry
from .ops import dtype_rules


def floatx():
    """The default float dtype's name: ``'float32'``."""
    return dtype_rules.FLOATX


def set_floatx(value):
    """Keras' ``set_floatx``: gradkit's Keras computes in float32, so only ``'float32'`` is taken."""
    if value not in ("bfloat16", "float16", "float32", "float64"):
        raise _errors.GradkitValueError(
            f"tf.keras.backend.set_floatx got {value!r}, which is not a float dtype Keras knows (it takes "
            "'bfloat16', 'float16', 'float32' or 'float64'; ValueError)."
        )
    if value != dtype_rules.FLOATX:
        raise _errors.GradkitValueError(
            f"tf.keras.backend.set_floatx({value!r}): gradkit's Keras layers, losses and ops compute in float32 "
            "only, so the default float type stays 'float32'. Cast inputs or results where you need another "
            "precision (tf.keras.ops.cast(x, 'float16')), or pass dtype= to the op that creates a tensor."
        )


def epsilon():
    """Keras' fuzz factor: ``1e-07``."""
    return dtype_rules.EPSILON


def set_epsilon(value):
    """Keras' ``set_epsilon``: gradkit's losses and metrics use Keras' 1e-7, so only that is taken."""
    if float(value) != dtype_rules.EPSILON:
        raise _errors.GradkitValueError(
            f"tf.keras.backend.set_epsilon({value!r}): gradkit's Keras losses, metrics and constraints use Keras' "
            "fuzz factor 1e-7 as a fixed constant, so it stays 1e-7. Pass epsilon= to the op or layer that takes "
            "one (tf.keras.ops.normalize(x, epsilon=...), BatchNormalization(epsilon=...))."
        )


def image_data_format():
    """The default image layout: ``'channels_last'``."""
    return "channels_last"


def set_image_data_format(data_format):
    """Keras' ``set_image_data_format``: the default stays ``'channels_last'``; layers and ops take
    ``data_format="channels_first"`` one by one."""
    data_format = str(data_format).lower()
    if data_format not in ("channels_first", "channels_last"):
        raise _errors.GradkitValueError(
            f"tf.keras.backend.set_image_data_format got {data_format!r}; Keras takes 'channels_first' or "
            "'channels_last' (ValueError)."
        )
    if data_format != "channels_last":
        raise _errors.GradkitValueError(
            "tf.keras.backend.set_image_data_format('channels_first'): gradkit's Keras keeps 'channels_last' as "
            "the default. Pass data_format='channels_first' to each layer or op instead."
        )


def clear_session(free_memory=True):
    """Keras' ``clear_session``: default layer names count from the start again (the next Dense is
    ``dense``), and no custom object scope is in force; with ``free_memory``, Python's garbage collector runs."""
    reset_unique_names()
    serialization_registry.clear_scope()
    if free_memory:
        gc.collect()


def standardize_dtype(dtype):
    """Keras' ``standardize_dtype``: the dtype's name (64-bit types as gradkit stores them: 32-bit)."""
    return dtype_rules.dtype_name(dtype)


def result_type(*dtypes):
    """Keras' ``result_type``: the dtype's name its ops promote ``dtypes`` to."""
    return dtype_rules.result_type(*dtypes).name


def is_float_dtype(dtype):
    """Whether ``dtype`` is a float dtype (bfloat16 too)."""
    return dtype_rules.dtype_name(dtype).startswith(("float", "bfloat"))


def is_int_dtype(dtype):
    """Whether ``dtype`` is a signed or unsigned integer dtype."""
    return dtype_rules.dtype_name(dtype).startswith(("int", "uint"))


def backend() -> str:
    """``keras.config.backend()``: the backend Keras runs on; gradkit.tf answers as Keras on
    TensorFlow does, whose programs it runs."""
    return "tensorflow"


CONFIG_NAMES = "floatx set_floatx epsilon set_epsilon image_data_format set_image_data_format backend"
NAMES = (
    "floatx set_floatx epsilon set_epsilon image_data_format set_image_data_format clear_session "
    "standardize_dtype result_type is_float_dtype is_int_dtype"
)
