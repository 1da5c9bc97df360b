"""The sampling weights of TensorFlow's resize kernels, one axis at a time.

Every resize method is linear in the image and separable, so one axis of it is a matrix
``[out, in]``; these build that matrix in NumPy, with TensorFlow's float32 arithmetic, from
the sizes alone (known while a program is traced). Applying the matrices is then an
ordinary differentiable contraction, so the gradient is the exact adjoint, which is also
what TensorFlow's resize gradient kernels compute.

The kernels are those of TensorFlow's C++ ops: ``ResizeBilinear`` and ``ResizeBicubic``
with half-pixel centres (bicubic through TensorFlow's 1024-entry coefficient table, edges
renormalised), ``ResizeArea`` (the exact overlap of each output cell with the input cells)
and ``ScaleAndTranslate`` (the antialiased and the lanczos, gaussian and mitchellcubic
methods: the kernel stretched by the downsampling factor, weights renormalised to sum 1).
"""

from __future__ import annotations

import functools
import math

import numpy as np

f32 = np.float32
_BICUBIC_TABLE_SIZE = 1024


def _lanczos(radius):
    def kernel(x):
        x = abs(x)
        if x > radius:
            return f32(0)
        if x <= 1e-3:
            return f32(1)
        return f32(radius * math.sin(math.pi * x) * math.sin(math.pi * x / radius) / (math.pi**2 * x * x))

    return kernel, f32(radius)


def _gaussian(x):
    radius, sigma = 1.5, 1.5 / 3.0
    x = abs(x)
    return f32(0) if x >= radius else f32(math.exp(-x * x / (2.0 * sigma * sigma)))


def _triangle(x):
    x = abs(x)
    return f32(1 - x) if x < 1 else f32(0)


def _keys_cubic(x):
    x = abs(x)
    if x >= 2:
        return f32(0)
    if x >= 1:
        return f32(((-0.5 * x + 2.5) * x - 4.0) * x + 2.0)
    return f32(((1.5 * x - 2.5) * x) * x + 1.0)


def _mitchell_cubic(x):
    x = abs(x)
    if x >= 2:
        return f32(0)
    if x >= 1:
        return f32((((-7.0 / 18.0) * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0)
    return f32((((7.0 / 6.0) * x - 2.0) * x) * x + 8.0 / 9.0)


KERNELS = {
    "lanczos3": _lanczos(3),
    "lanczos5": _lanczos(5),
    "gaussian": (_gaussian, f32(1.5)),
    "triangle": (_triangle, f32(1)),
    "keyscubic": (_keys_cubic, f32(2)),
    "mitchellcubic": (_mitchell_cubic, f32(2)),
}


def _renormalised(weights):
    total = f32(sum(weights, f32(0)))
    if abs(total) >= 1000.0 * np.finfo(np.float32).tiny:
        return [f32(w * (f32(1) / total)) for w in weights]
    return [f32(0)] * len(weights)


@functools.lru_cache(maxsize=32)
def scale_and_translate(in_size: int, out_size: int, kernel_name: str, antialias: bool) -> np.ndarray:
    """TensorFlow's ``ScaleAndTranslate`` weights (no translation), for a scale of ``out / in``."""
    kernel, radius = KERNELS[kernel_name]
    scale = f32(out_size) / f32(in_size)
    inv_scale = f32(1.0 / scale)
    kernel_scale = max(inv_scale, f32(1)) if antialias else f32(1)
    matrix = np.zeros((out_size, in_size), np.float32)
    for x in range(out_size):
        sample = f32(f32(x + 0.5) * inv_scale)
        if sample < 0 or sample > in_size:
            continue
        start = math.ceil(sample - radius * kernel_scale - f32(0.5))
        end = math.floor(sample + radius * kernel_scale - f32(0.5))
        start, end = min(max(start, 0), in_size - 1), min(max(end, 0), in_size - 1) + 1
        weights = [kernel(f32(f32(source + f32(0.5)) - sample) / kernel_scale) for source in range(start, end)]
        matrix[x, start:end] = _renormalised(weights)
    return matrix


def _half_pixel(x: int, scale) -> np.float32:
    return f32(f32(f32(x) + f32(0.5)) * scale - f32(0.5))


@functools.lru_cache(maxsize=32)
def bilinear(in_size: int, out_size: int) -> np.ndarray:
    """``ResizeBilinear`` with half-pixel centres: two neighbours, indices clamped to the image."""
    scale = f32(in_size) / f32(out_size)
    matrix = np.zeros((out_size, in_size), np.float32)
    for x in range(out_size):
        position = _half_pixel(x, scale)
        below = math.floor(position)
        lerp = f32(position - f32(below))
        lower, upper = max(below, 0), min(math.ceil(position), in_size - 1)
        matrix[x, lower] += f32(1) - lerp
        matrix[x, upper] += lerp
    return matrix


@functools.lru_cache(maxsize=1)
def _bicubic_table() -> np.ndarray:
    a = -0.5
    table = np.zeros((_BICUBIC_TABLE_SIZE + 1, 2), np.float32)
    for i in range(_BICUBIC_TABLE_SIZE + 1):
        x = i * 1.0 / _BICUBIC_TABLE_SIZE
        table[i, 0] = ((a + 2) * x - (a + 3)) * x * x + 1
        x += 1.0
        table[i, 1] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return table


@functools.lru_cache(maxsize=32)
def bicubic(in_size: int, out_size: int) -> np.ndarray:
    """``ResizeBicubic`` with half-pixel centres: Keys' cubic (a = -0.5) read from TensorFlow's
    table of 1024 offsets, the samples outside the image left out and the rest renormalised."""
    table = _bicubic_table()
    scale = f32(in_size) / f32(out_size)
    matrix = np.zeros((out_size, in_size), np.float32)
    for x in range(out_size):
        position = _half_pixel(x, scale)
        base = math.floor(position)
        offset = int(np.rint(f32(position - f32(base)) * _BICUBIC_TABLE_SIZE))
        taps = (table[offset, 1], table[offset, 0], table[_BICUBIC_TABLE_SIZE - offset, 0])
        taps += (table[_BICUBIC_TABLE_SIZE - offset, 1],)
        indices = [base - 1 + k for k in range(4)]
        weights = [w if 0 <= i < in_size else f32(0) for i, w in zip(indices, taps)]
        weights = _renormalised(weights)
        for i, w in zip(indices, weights):
            matrix[x, min(max(i, 0), in_size - 1)] += w
    return matrix


@functools.lru_cache(maxsize=32)
def area(in_size: int, out_size: int) -> np.ndarray:
    """``ResizeArea``: each output cell the average of the input it covers, by overlap."""
    scale = f32(in_size) / f32(out_size)
    matrix = np.zeros((out_size, in_size), np.float32)
    for y in range(out_size):
        low, high = f32(y * scale), f32((y + 1) * scale)
        for i in range(math.floor(low), math.ceil(high)):
            if i < low:
                overlap = scale if i + 1 > high else f32(i + 1 - low)
            else:
                overlap = f32(high - i) if i + 1 > high else f32(1)
            matrix[y, min(i, in_size - 1)] += f32(overlap / scale)
    return matrix


@functools.lru_cache(maxsize=32)
def nearest(in_size: int, out_size: int) -> np.ndarray:
    """``ResizeNearestNeighbor`` with half-pixel centres: the input index each output reads."""
    scale = f32(in_size) / f32(out_size)
    positions = (np.arange(out_size, dtype=np.float32) + f32(0.5)) * scale
    return np.minimum(np.floor(positions).astype(np.int32), in_size - 1)
