"""Keras 3's augmentation layers that act on each pixel's neighbourhood:
``RandomElasticTransform`` (each image resampled along a smooth random displacement field) and
``ContrastLimitedAdaptiveHistogramEqualization`` (CLAHE: histogram equalization per tile of the
image, blended between neighbouring tiles).

Each follows Keras 3 on TensorFlow: its arguments, defaults and ``get_config``, its random
parameters and its arithmetic (``transform_images``: Keras' ``ops.image.elastic_transform`` and
``map_coordinates`` for the one, its tile histograms, clipping and bilinear blending for the
other); see ``augmentation_base`` for the call, ``training`` and the draws. Where Keras 3.15 on
TensorFlow goes wrong, they do what Keras means (each place is said below and in the layers'
docstrings).

``RandomElasticTransform``'s transformation carries its displacement noise: Keras draws it
inside its backend op from a ``"seed"`` entry, gradkit.tf's transformation holds the two
standard-normal fields themselves (``"noise"``), so one transformation can be applied to
several batches, or written by hand. Keras 3.15 draws the x and the y field from the same seed,
so its displacements all point along the diagonal; gradkit.tf draws two independent fields, as
an elastic deformation means (a transformation whose two fields are equal gives Keras' images).

>>> import gradkit.tf as tf
>>> images = tf.reshape(tf.range(4.0), [1, 1, 4, 1])
>>> layer = tf.keras.layers.RandomElasticTransform(fill_mode="wrap")
>>> # alpha = 0.1 * 4 = 0.4, sigma = 0.05 * 1 = 0.05: x noise of -50 moves by -50 * 0.05 * 0.4 = -1 column
>>> shift = {"apply_transform": [True], "distortion_factor": 1.0, "noise": [[[[-50.0] * 4]], [[[0.0] * 4]]]}
>>> layer.transform_images(images, shift)[0, 0, :, 0].numpy().tolist()  # each pixel takes its left neighbour
[3.0, 0.0, 1.0, 2.0]
"""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .._convert import call, convert, known_value, wrap
from . import layer_config
from .augmentation_base import BaseImageAugmentation, Draws, check_choice, set_factor, tensor
from .augmentation_filter_layers import _depthwise_same
from .augmentation_pixels import per_image_jax, rescale_jax


def _divide(numerator, denominator):
    """``numerator / denominator`` rounded once per element, as TensorFlow divides. Compiled, XLA
    turns a division by a broadcast value into a multiplication by its reciprocal (two roundings,
    up to an ulp off); the barrier keeps the divisor a full array."""
    numerator, denominator = jax.lax.optimization_barrier(
        (numerator, jnp.broadcast_to(denominator, jnp.broadcast_shapes(numerator.shape, denominator.shape)))
    )
    return numerator / denominator


# -- sampling at real coordinates (Keras' map_coordinates, orders 0 and 1) ---------------------


def _fixed_indices(index, size: int, fill_mode: str):
    """Integer sample positions ``index`` (any shape) moved inside ``[0, size)`` as ``fill_mode``
    extends the image, and whether each falls inside it (only ``"constant"`` has outside)."""
    if fill_mode == "constant":
        return jnp.clip(index, 0, size - 1), (index >= 0) & (index < size)
    inside = jnp.ones(index.shape, bool)
    if fill_mode == "nearest":
        return jnp.clip(index, 0, size - 1), inside
    if fill_mode == "wrap":
        return jnp.mod(index, size), inside
    if fill_mode == "reflect":  # (d c b a | a b c d | d c b a): period 2 * size
        # Keras 3.15 on TensorFlow takes |index| first, which turns -1 into 1 (its mirror) where
        # its own documentation, and its JAX backend, give 0: the reflection is taken on both sides.
        folded = jnp.mod(index, 2 * size)
        return jnp.where(folded < size, folded, 2 * size - 1 - folded), inside
    # "mirror", (d c b | a b c d | c b a): period 2 * (size - 1), as Keras' JAX backend (SciPy's);
    # Keras 3.15 on TensorFlow refuses it here.
    if size == 1:
        return jnp.zeros_like(index), inside
    folded = jnp.mod(jnp.abs(index), 2 * size - 2)
    return jnp.where(folded < size, folded, 2 * size - 2 - folded), inside


def _sample(images, row_shift, col_shift, *, order: int, fill_mode: str, fill_value: float):
    """``images`` (batch, height, width, channels) sampled for each pixel ``(i, j)`` at the real
    position ``(i + row_shift, j + col_shift)`` (shifts of shape (batch, height, width)): nearest
    (``order`` 0: the position rounded, halves to even, as ``tf.round``) or bilinear (``order``
    1), as Keras' ``map_coordinates`` on TensorFlow (the four corners weighted
    ``w_row * w_col``, added in its order; ``"constant"`` fills each corner outside the image
    with ``fill_value``)."""
    height, width = images.shape[1], images.shape[2]
    dtype = row_shift.dtype

    def nodes(shift, size, axis):
        base = jnp.expand_dims(jnp.arange(size, dtype=jnp.int32), (0, 3 - axis))
        if order == 0:
            return [(jnp.round(base.astype(dtype) + shift).astype(jnp.int32), None)]
        # The whole pixels of the shift and its fraction (Keras takes them of the position, the
        # same up to its rounding of the sum): one floor of a product. Of a sum, XLA may fuse
        # the product into a multiply-add in one fusion and not in another, and a position a
        # hair from a whole pixel would take one corner's index and the other's weight.
        low = jnp.floor(shift)
        up = shift - low
        index = base + low.astype(jnp.int32)
        return [(index, 1 - up), (index + 1, up)]

    batch = jnp.arange(images.shape[0])[:, None, None]
    fill = jnp.asarray(fill_value, images.dtype).astype(dtype)
    result = None
    for row, row_weight in nodes(row_shift, height, 1):
        row, row_inside = _fixed_indices(row, height, fill_mode)
        for col, col_weight in nodes(col_shift, width, 2):
            col, col_inside = _fixed_indices(col, width, fill_mode)
            gathered = images[batch, row, col].astype(dtype)  # (batch, height, width, channels)
            if fill_mode == "constant":
                gathered = jnp.where((row_inside & col_inside)[..., None], gathered, fill)
            if row_weight is not None:
                gathered = (row_weight * col_weight)[..., None] * gathered
            result = gathered if result is None else result + gathered
    return result


# -- RandomElasticTransform --------------------------------------------------------------------

_INTERPOLATIONS = ("nearest", "bilinear")
_FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _kernel_taps(height: int, width: int, factor_bound: float) -> int:
    """A static odd kernel size at least Keras' ``6 * int(sigma) | 1`` for every distortion
    factor up to ``factor_bound`` (Keras' size depends on the drawn factor; the taps past the
    drawn size get weight 0, so one compiled program serves every factor)."""
    sigma = min(height, width) * 0.05 * factor_bound
    return 6 * (math.floor(sigma) + 1) | 1


def _blur_kernel(sigma, taps: int):
    """Keras' Gaussian for the displacement noise: ``6 * int(sigma) | 1`` taps (int truncates)
    of ``exp(-x^2 / (2 sigma^2))``, normalized, as a 2-D outer product, within ``taps`` static
    taps. A zero sigma (a zero distortion factor) gives the one-tap kernel: Keras 3.15 divides 0
    by 0 there, and its images become NaN."""
    x = jnp.arange(taps, dtype=sigma.dtype) - (taps - 1) / 2
    used = 6 * jnp.abs(sigma).astype(jnp.int32) | 1
    inside = jnp.abs(x) <= ((used - 1) // 2).astype(sigma.dtype)
    safe = jnp.where(sigma == 0, jnp.ones_like(sigma), sigma)
    profile = jnp.where(inside, jnp.exp(-0.5 * jnp.where(x == 0, 0, _divide(x, safe)) ** 2), 0)
    profile = _divide(profile, jnp.sum(profile))
    return jnp.outer(profile, profile)


def _elastic_program(images, apply, factor, noise, *, order, fill_mode, fill_value, value_range, data_format, taps):
    single = images.ndim == 3
    batch = images[None] if single else images
    if data_format == "channels_first":
        batch = jnp.moveaxis(batch, 1, -1)
    height, width = batch.shape[1], batch.shape[2]
    dtype = batch.dtype
    factor = jnp.reshape(factor, ()).astype(dtype)
    # Keras' get_elastic_transform_params, in its order of operations.
    alpha = max(height, width) * (0.1 * factor)
    sigma = min(height, width) * (0.05 * factor)
    kernel = _blur_kernel(sigma, taps)
    noise = jnp.reshape(noise.astype(dtype), (2, batch.shape[0], height, width, 1)) * sigma
    dx = _depthwise_same(noise[0], kernel, data_format="channels_last")[..., 0]
    dy = _depthwise_same(noise[1], kernel, data_format="channels_last")[..., 0]
    # Keras samples at (row + alpha * dy, column + alpha * dx).
    moved = _sample(batch, alpha * dy, alpha * dx, order=order, fill_mode=fill_mode, fill_value=fill_value)
    moved = moved.astype(dtype)
    out = jnp.where(per_image_jax(apply, 4), moved, batch)
    out = jnp.clip(out, value_range[0], value_range[1])
    if data_format == "channels_first":
        out = jnp.moveaxis(out, -1, 1)
    return out[0] if single else out


# One compiled program per shape and arguments (run op by op, its many small ops would each compile).
_elastic = jax.jit(
    _elastic_program, static_argnames=("order", "fill_mode", "fill_value", "value_range", "data_format", "taps")
)


class RandomElasticTransform(BaseImageAugmentation):
    """``RandomElasticTransform(factor=1.0, scale=1.0, interpolation='bilinear',
    fill_mode='reflect', fill_value=0.0, value_range=(0, 255), seed=None, data_format=None)``:
    in training, each image, with a probability drawn per image from ``factor`` (a number ``f``
    in [0, 1]: from ``[0, f]``), resampled along a random displacement field: two
    standard-normal fields (x and y) times ``sigma``, blurred by a Gaussian of standard deviation
    ``sigma`` and ``6 * int(sigma) | 1`` taps, times ``alpha``, where ``alpha = 0.1 * s *
    max(height, width)`` and ``sigma = 0.05 * s * min(height, width)``, ``s`` drawn once per call
    from ``scale`` (a number in [0, 1]: from ``[0, s]``). Then clipped to ``value_range``.

    ``interpolation`` is ``'bilinear'`` or ``'nearest'`` (halves to even); ``fill_mode`` is
    ``'reflect'`` (``d c b a | a b c d | d c b a``), ``'mirror'`` (``d c b | a b c d | c b a``),
    ``'wrap'``, ``'nearest'`` or ``'constant'`` (``fill_value``).

    Where Keras 3.15 on TensorFlow goes wrong, gradkit.tf does what Keras documents (and its JAX
    backend does): ``'reflect'`` reflects above and left of the image too (Keras there takes the
    pixel one further in); ``'mirror'`` works (Keras raises ValueError when called); the x and y
    noise are independent draws (Keras draws both from one seed: equal fields, displacements
    along the diagonal only); a zero distortion leaves the images (Keras gives NaN).

    Outputs are in the layer's dtype (integer images come out as floats, as in Keras). The
    images' gradient is the adjoint of the sampling (the field does not depend on them)."""

    def __init__(
        self,
        factor=1.0,
        scale=1.0,
        interpolation="bilinear",
        fill_mode="reflect",
        fill_value=0.0,
        value_range=(0, 255),
        seed=None,
        data_format=None,
        **kwargs,
    ):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = set_factor(factor, (0, 1), "RandomElasticTransform")
        self.scale = set_factor(scale, (0, 1), "RandomElasticTransform (its `scale` argument)")
        check_choice(interpolation, _INTERPOLATIONS, "interpolation", "RandomElasticTransform")
        check_choice(fill_mode, _FILL_MODES, "fill_mode", "RandomElasticTransform")
        self.interpolation = interpolation
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.value_range = value_range
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'apply_transform': bool (batch,), 'distortion_factor': () in the layer's dtype,
        'noise': (2, batch, height, width) in the layer's dtype}`` (unbatched: a batch of one), or
        None when not training or when ``factor`` or ``scale`` is 0. ``noise`` holds the x and the
        y standard-normal fields (Keras' transformation holds a ``'seed'`` for them instead)."""
        if not training or self.scale[1] == 0 or self.factor[1] == 0:
            return None
        shape = tuple(self._images(data).shape)
        batch = self._batch(shape)
        height, width = self._height_width(shape)
        dtype = self.compute_dtype
        draws = Draws(self, seed)
        with jax.ensure_compile_time_eval():
            apply = draws.chosen(batch, self.factor)
            factor = draws.uniform((), self.scale[0], self.scale[1], dtype)
            noise = draws.normal((2, batch, height, width), dtype)
        return {"apply_transform": tensor(apply), "distortion_factor": tensor(factor), "noise": tensor(noise)}

    def _resample(self, images, transformation, interpolation, what):
        images = self._as_compute_dtype(images)
        if images.ndim not in (3, 4):
            raise _errors.GradkitValueError(
                f"{self._what()}.{what} got values of shape {list(images.shape)}: it takes rank 3 (one image) or "
                "rank 4 (a batch), as Keras does."
            )
        if "noise" not in transformation:
            raise _errors.GradkitKeyError(
                f"{self._what()}.{what} got a transformation with keys {sorted(transformation)} and no 'noise': "
                "gradkit.tf's transformation holds the displacement noise itself, (2, batch, height, width) standard "
                "normals for x and y (Keras' holds a 'seed' its op draws them from). Draw one with "
                "get_random_transformation, or add 'noise'."
            )
        noise = convert(transformation["noise"])
        height, width = self._height_width(images.shape)
        batch = self._batch(images.shape)
        if tuple(noise.shape) != (2, batch, height, width):
            raise _errors.GradkitValueError(
                f"{self._what()}.{what} got noise of shape {list(noise.shape)} for values of shape "
                f"{list(images.shape)} ({self.data_format}): it takes (2, batch, height, width) = "
                f"{[2, batch, height, width]}, the transformation drawn for values of this shape."
            )
        factor = convert(transformation["distortion_factor"])
        known = known_value(factor)
        bound = max(1.0, *(abs(float(s)) for s in self.scale))
        if known is not None:
            bound = max(bound, float(np.max(np.abs(known))))
        return call(
            _elastic,
            images,
            convert(transformation["apply_transform"]),
            factor,
            noise,
            order=_INTERPOLATIONS.index(interpolation),
            fill_mode=self.fill_mode,
            fill_value=float(self.fill_value),
            value_range=(float(self.value_range[0]), float(self.value_range[1])),
            data_format=self.data_format,
            taps=_kernel_taps(height, width, bound),
        )

    def transform_images(self, images, transformation=None, training=True):
        """``images`` resampled along the transformation's field (in the layer's dtype). Inside a
        compiled function, where the distortion factor has no value when traced, the blur holds
        the taps of factors up to ``max(1, scale)`` (all the layer draws)."""
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            return images
        return self._resample(images, transformation, self.interpolation, "transform_images")

    def transform_labels(self, labels, transformation, training=True):
        """The labels, unchanged (an elastic deformation keeps the class), as in Keras."""
        return wrap(convert(labels))

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        """Masks moved along the images' field with nearest sampling (so class values stay whole),
        as Keras does, in the layer's dtype (Keras 3.15 on TensorFlow fails on integer masks);
        unchanged when not training. Keras draws a new field for the masks when its seed is a
        generator (the call's); here the masks take the transformation's own field, the images'."""
        if not training or transformation is None:
            return wrap(convert(segmentation_masks))
        return self._resample(segmentation_masks, transformation, "nearest", "transform_segmentation_masks")

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Not implemented: gradkit.tf's augmentation layers take no bounding boxes."""
        raise _errors.GradkitNotImplementedError(
            f"{self._what()}.transform_bounding_boxes: gradkit.tf's augmentation layers transform no bounding boxes "
            "(they take no bounding_box_format). Transform the images (or segmentation masks)."
        )


# -- ContrastLimitedAdaptiveHistogramEqualization ----------------------------------------------


def _tile_area(height: int, width: int, grid: tuple) -> int:
    """The pixels of one tile: Keras' tiles are the image's sides divided by the grid, rounded up."""
    return -(-height // grid[0]) * -(-width // grid[1])


def _clahe_tiles(images, limit, *, grid: tuple):
    """Keras' ``_clahe`` on images (batch, height, width, channels) on a 0-255 scale: a
    256-level histogram per tile and channel (values truncated to whole levels, clipped to
    [0, 255]; the image padded at its bottom and right, symmetrically, to whole tiles), each
    clipped to ``limit`` counts (float32; negative: not clipped) and the excess spread over all levels,
    turned into a lookup by its cumulative sum, then each pixel's lookups in its four nearest
    tile centres blended bilinearly (float32)."""
    batch, height, width, channels = images.shape
    grid_h, grid_w = grid
    tile_h, tile_w = -(-height // grid_h), -(-width // grid_w)
    pad_h, pad_w = tile_h * grid_h - height, tile_w * grid_w - width
    if pad_h or pad_w:
        # NumPy's symmetric padding (Keras 3.15 on TensorFlow fails where a pad exceeds the image,
        # a grid finer than the image; its other backends pad as here).
        images = jnp.pad(images, ((0, 0), (0, pad_h), (0, pad_w), (0, 0)), mode="symmetric")
    tiles = jnp.reshape(images, (batch, grid_h, tile_h, grid_w, tile_w, channels))
    tiles = jnp.reshape(jnp.transpose(tiles, (0, 1, 3, 5, 2, 4)), (-1, tile_h * tile_w))
    levels = jnp.clip(tiles.astype(jnp.int32), 0, 255)
    # Counting by bincount, not Keras' sum of one-hot rows (the same counts, without a
    # 256-times-larger array).
    offsets = jnp.arange(levels.shape[0], dtype=jnp.int32)[:, None] * 256
    counts = jnp.bincount(jnp.reshape(levels + offsets, (-1,)), length=levels.shape[0] * 256)
    hists = jnp.reshape(counts.astype(jnp.float32), (batch, grid_h, grid_w, channels, 256))
    area = tile_h * tile_w
    # The limit is a value, not part of the program, so that every clip limit runs one program.
    clipped = jnp.clip(hists, 0, limit)
    excess = jnp.sum(hists - clipped, axis=-1, keepdims=True)
    hists = jnp.where(limit >= 0, clipped + excess / 256.0, hists)
    cdf = jnp.cumsum(hists, axis=-1)
    cdf_min = jnp.min(cdf, axis=-1, keepdims=True)
    numerator = (cdf - cdf_min) * 255.0
    denominator = jnp.float32(area) - cdf_min
    denominator = jnp.where(denominator == 0, jnp.ones_like(denominator), denominator)
    lookup = jnp.clip(_divide(numerator, denominator), 0, 255)
    # The tiles' lookups with a border of copies, so every pixel has four neighbouring centres.
    lookup = jnp.pad(lookup, ((0, 0), (1, 1), (1, 1), (0, 0), (0, 0)), mode="edge")

    def centres(length: int, tile: int, grid_size: int):
        # Each pixel's position in tile-centre units, Keras' float32 arithmetic (NumPy's is the
        # same IEEE rounding, done once here since it depends on the shape only).
        position = (np.arange(length, dtype=np.float32) - np.float32(tile / 2.0)) / np.float32(tile) + np.float32(1)
        low = np.floor(position)
        weight = position - low
        last = grid_size + 1
        return np.clip(low, 0, last).astype(np.int32), np.clip(low + 1, 0, last).astype(np.int32), weight

    row0, row1, row_weight = centres(tile_h * grid_h, tile_h, grid_h)
    col0, col1, col_weight = centres(tile_w * grid_w, tile_w, grid_w)
    pixels = jnp.clip(images, 0, 255).astype(jnp.int32)
    b = jnp.arange(batch)[:, None, None, None]
    c = jnp.arange(channels)[None, None, None, :]
    row0, row1 = jnp.asarray(row0)[None, :, None, None], jnp.asarray(row1)[None, :, None, None]
    col0, col1 = jnp.asarray(col0)[None, None, :, None], jnp.asarray(col1)[None, None, :, None]
    wy = jnp.asarray(row_weight)[None, :, None, None]
    wx = jnp.asarray(col_weight)[None, None, :, None]
    top = lookup[b, row0, col0, c, pixels] * (1.0 - wx) + lookup[b, row0, col1, c, pixels] * wx
    bottom = lookup[b, row1, col0, c, pixels] * (1.0 - wx) + lookup[b, row1, col1, c, pixels] * wx
    return (top * (1.0 - wy) + bottom * wy)[:, :height, :width, :]


def _clahe_program(images, limit, *, value_range, grid, data_format):
    single = images.ndim == 3
    batch = images[None] if single else images
    if data_format == "channels_first":
        batch = jnp.transpose(batch, (0, 2, 3, 1))
    scaled = rescale_jax(batch, value_range, (0, 255), "float32")
    out = _clahe_tiles(scaled, limit, grid=grid)
    out = rescale_jax(out, (0, 255), value_range, "float32").astype(images.dtype)
    if data_format == "channels_first":
        out = jnp.transpose(out, (0, 3, 1, 2))
    return out[0] if single else out


_clahe = jax.jit(_clahe_program, static_argnames=("value_range", "grid", "data_format"))


def _clahe_arguments(value_range, clip_limit, tile_grid_size) -> None:
    """Refuse what Keras 3.15 accepts and then fails on when called (with a TypeError, a
    ZeroDivisionError or a TensorFlow error) or turns into NaN (a range of one value)."""
    what = "ContrastLimitedAdaptiveHistogramEqualization"
    if not isinstance(tile_grid_size, (tuple, list)):
        raise _errors.GradkitTypeError(
            f"{what} got tile_grid_size={tile_grid_size!r}: it takes the number of tiles down and across, two ints "
            "such as (8, 8)."
        )
    if len(tile_grid_size) != 2 or not all(
        isinstance(n, numbers.Integral) and not isinstance(n, bool) and n >= 1 for n in tile_grid_size
    ):
        raise _errors.GradkitValueError(
            f"{what} got tile_grid_size={tile_grid_size!r}: it takes two ints >= 1 (tiles down and across), such as "
            "(8, 8)."
        )
    if not isinstance(clip_limit, numbers.Real) or isinstance(clip_limit, bool):
        raise _errors.GradkitTypeError(
            f"{what} got clip_limit={clip_limit!r}: it takes a number (the histogram clip, in multiples of a tile's "
            "mean count per level; 0 or less: no clipping), such as 4.0."
        )
    if (
        not isinstance(value_range, (tuple, list))
        or len(value_range) != 2
        or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value_range)
        or value_range[0] == value_range[1]
    ):
        raise _errors.GradkitValueError(
            f"{what} got value_range={value_range!r}: it takes two different numbers, the images' lowest and "
            "highest values, such as (0, 255) or (0, 1)."
        )


class ContrastLimitedAdaptiveHistogramEqualization(BaseImageAugmentation):
    """``ContrastLimitedAdaptiveHistogramEqualization(value_range=(0, 255), clip_limit=4.0,
    tile_grid_size=(8, 8), data_format=None)``: CLAHE. Each image (rescaled from ``value_range``
    to 0-255) is cut into ``tile_grid_size`` tiles (padded symmetrically at the bottom and right
    to whole tiles); each tile's per-channel histogram of whole levels is clipped at
    ``clip_limit`` times its mean count per level (the excess spread over all 256 levels; 0 or
    less: no clipping) and equalized, and each pixel takes its level's lookups in the four
    nearest tile centres blended bilinearly. Nothing is random, and it applies in inference too,
    as in Keras. The output is in the input's dtype (truncated for integer images).

    Keras 3.15 accepts any ``tile_grid_size``, ``clip_limit`` and ``value_range`` and fails on
    a bad one when called; gradkit.tf refuses it when the layer is made (TypeError or
    ValueError). A grid finer than the image works here (Keras 3.15 on TensorFlow fails there).
    The output takes values from the tiles' lookups, which do not depend on the pixel values
    continuously: its gradient with respect to the images is zero (TensorFlow gives none)."""

    def __init__(self, value_range=(0, 255), clip_limit=4.0, tile_grid_size=(8, 8), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        _clahe_arguments(value_range, clip_limit, tile_grid_size)
        self.value_range = value_range
        self.clip_limit = clip_limit
        self.tile_grid_size = tile_grid_size

    def get_random_transformation(self, data, training=True, seed=None):
        """None: CLAHE draws nothing."""
        return None

    def transform_images(self, images, transformation=None, training=True):
        """The images equalized tile by tile, in training or not (in their dtype)."""
        images = convert(images)
        if images.ndim not in (3, 4):
            raise _errors.GradkitValueError(
                f"{self._what()} got images of shape {list(images.shape)}: it takes rank 3 (one image) or rank 4 "
                "(a batch), as Keras does."
            )
        grid = (int(self.tile_grid_size[0]), int(self.tile_grid_size[1]))
        height, width = self._height_width(images.shape)
        # Keras' limit: Python's float product, then float32 (a clip_limit of 0 or less: no clipping).
        clip = float(self.clip_limit)
        limit = np.float32(clip * _tile_area(height, width, grid) / 256.0) if clip > 0 else np.float32(-1)
        return call(
            _clahe,
            images,
            limit,
            value_range=(float(self.value_range[0]), float(self.value_range[1])),
            grid=grid,
            data_format=self.data_format,
        )


layer_config.BUILTIN.update(
    {
        "RandomElasticTransform": (
            "data_format",
            "factor",
            "scale",
            "interpolation",
            "fill_mode",
            "fill_value",
            "value_range",
            "seed",
        ),
        "ContrastLimitedAdaptiveHistogramEqualization": ("data_format", "value_range", "clip_limit", "tile_grid_size"),
    }
)
