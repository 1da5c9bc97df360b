"""``tf.extract_volume_patches``: every 3-D window of a batch of volumes, flattened.

The 3-D form of ``tf.image.extract_patches`` (``_image_geometry._patches`` computes both): one
strided slice per offset inside the window, concatenated, so its gradient moves the upstream
gradient back into the volume (summed where windows overlap).

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(8.0), [1, 2, 2, 2, 1])
>>> tf.extract_volume_patches(x, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID").numpy().ravel().tolist()
[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from ._convert import call, convert, static_ints
from ._image_geometry import _patches


def _window(value, what: str) -> tuple[int, int, int]:
    values = static_ints(value)
    if len(values) != 5 or values[0] != 1 or values[4] != 1 or min(values) < 1:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.extract_volume_patches got {what}={list(values)}: it takes [1, planes, rows, cols, 1] "
            "with positive sizes (windows and strides across space only), as TensorFlow does."
        )
    return values[1:4]


def extract_volume_patches(input, ksizes, strides, padding, name=None):  # noqa: A002 - TensorFlow's name
    """``tf.extract_volume_patches``: ``[batch, out_planes, out_rows, out_cols, planes*rows*cols*depth]``,
    each window flattened in plane, row, column, depth order."""
    volumes = convert(input)
    if volumes.ndim != 5:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.extract_volume_patches got an input of shape {list(volumes.shape)}: it must be "
            "5-dimensional [batch, planes, rows, cols, depth], as in TensorFlow."
        )
    if np.dtype(volumes.dtype).kind not in "iuf" and str(volumes.dtype) != "bfloat16":
        raise _errors.InvalidArgumentTypeError(
            f"[gradkit] tf.extract_volume_patches got a {volumes.dtype} input; TensorFlow takes integers and "
            "floats. Cast it first (tf.cast(x, tf.float32))."
        )
    if padding not in ("SAME", "VALID"):
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.extract_volume_patches got padding={padding!r}: TensorFlow takes 'SAME' or 'VALID'."
        )
    sizes, steps = _window(ksizes, "ksizes"), _window(strides, "strides")
    if padding == "VALID":
        for n, k, s in zip(volumes.shape[1:4], sizes, steps):
            if n - k + s < 0 and int((n - k + s) / s) < 0:  # C's division, as TensorFlow's shape check
                raise _errors.InvalidArgumentValueError(
                    f"[gradkit] tf.extract_volume_patches got a window of {list(sizes)} for a volume of "
                    f"{list(volumes.shape[1:4])} with strides {list(steps)} and VALID padding: the computed "
                    "output size would be negative, as TensorFlow refuses. Use a smaller window or SAME padding."
                )
    return call(_patches, volumes, sizes=sizes, strides=steps, rates=(1, 1, 1), padding=padding)
