"""TensorFlow's dtype names, as NumPy dtypes (``tensor.dtype == tf.float32`` holds).

Without ``jax_enable_x64`` JAX stores float64/int64 as float32/int32.
"""

import jax.numpy as jnp
import numpy as np

float16 = np.dtype("float16")
bfloat16 = np.dtype(jnp.bfloat16)
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
bool = np.dtype("bool")  # noqa: A001  (TensorFlow's name)
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")
string = np.dtype("object")


def as_dtype(dtype):
    return np.dtype(dtype)


def __getattr__(name):
    from ._namespace import missing

    raise AttributeError(missing("gradkit.tf.dtypes", name))


__all__ = [
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
    "complex64",
    "complex128",
    "as_dtype",
]
