"""Refusing, as TensorFlow does, a tensor of a dtype that an op's kernel does not take.

TensorFlow registers each op's kernel for a list of dtypes (most special functions only for
float32 and float64) and raises for any other; jax would compute in that dtype, or promote it.
gradkit.tf raises too, with a ``[gradkit]`` TypeError that names the dtypes the op takes.
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors


def check_dtype(x, allowed, fn):
    """Raise unless ``x``'s dtype is one of ``allowed`` (names such as ``"float32"``)."""
    name = np.dtype(x.dtype).name
    if name not in allowed:
        raise _errors.GradkitTypeError(
            f"{fn} takes a tensor of dtype {' or '.join(allowed)}, as in TensorFlow, but got dtype {name}. "
            f"Cast it first: {fn}(tf.cast(x, tf.float32))."
        )
