"""PNG encoding (zlib and struct only) and the pixel conversion ``tf.summary.image`` applies.

``to_uint8`` is ``tf.image.convert_image_dtype(images, tf.uint8, saturate=True)``: floats
scaled by 255.5 in their own dtype then clamped to [0, 255] and truncated, wider integers
divided down (``//``) and clamped, narrower ones clamped and scaled up. ``encode`` writes one
8-bit image of 1-4 channels (gray, gray and alpha, RGB, RGBA) as TensorFlow's ``encode_png``
lays it out; the compressed bytes differ, the pixels a reader decodes do not.

>>> import numpy as np
>>> encode(np.zeros((2, 3, 1), np.uint8))[:8]
b'\\x89PNG\\r\\n\\x1a\\n'
>>> to_uint8(np.array([0.0, 0.5, 1.0, 2.0], np.float32)).tolist()
[0, 127, 255, 255]
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG color type


def to_uint8(images: np.ndarray) -> np.ndarray:
    """TensorFlow's ``convert_image_dtype(images, tf.uint8, saturate=True)``, in NumPy."""
    dtype = images.dtype
    if dtype == np.uint8:
        return images
    if dtype.kind == "f" or dtype.name == "bfloat16":
        scaled = images * np.asarray(255.5, dtype)
        with np.errstate(invalid="ignore"):
            return np.clip(scaled, 0, 255).astype(np.uint8)
    info = np.iinfo(dtype)
    if info.max > 255:
        scaled = images // ((int(info.max) + 1) // 256)
        return np.clip(scaled, 0, 255).astype(np.uint8)
    return np.clip(images, 0, 255).astype(np.uint8) * np.uint8(256 // (int(info.max) + 1))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode(image: np.ndarray) -> bytes:
    """One ``[height, width, channels]`` uint8 image as PNG bytes."""
    height, width, channels = image.shape
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[channels], 0, 0, 0)
    rows = np.zeros((height, 1 + width * channels), np.uint8)  # filter byte 0 (None) before each row
    rows[:, 1:] = np.ascontiguousarray(image, np.uint8).reshape(height, width * channels)
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)),
            _chunk(b"IEND", b""),
        )
    )
