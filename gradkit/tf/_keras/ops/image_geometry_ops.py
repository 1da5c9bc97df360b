"""``keras.ops.image``'s resampling ops: ``affine_transform``, ``perspective_transform``,
``map_coordinates``, ``elastic_transform`` and ``scale_and_translate``, as Keras 3 has them on
TensorFlow (arguments, defaults, interpolation and fill modes, dtypes).

``affine_transform`` and ``perspective_transform`` sample as TensorFlow's
``ImageProjectiveTransformV3`` (gradkit's ``affine_transform``, shared with the random rotation,
zoom, translation, shear and perspective layers); integer images are sampled in float32 and
truncated back, as TensorFlow's kernel does. ``map_coordinates`` and ``elastic_transform`` sample
as ``RandomElasticTransform`` does, and where Keras 3.15 on TensorFlow goes wrong they do what
Keras documents (and its JAX backend does): ``fill_mode="reflect"`` reflects below index 0 too
(``d c b a | a b c d``; Keras on TensorFlow reads one pixel further in), ``"mirror"`` is
``d c b | a b c d | c b a`` (Keras on TensorFlow reads off the image), and ``elastic_transform``
draws its x and y displacement fields independently (Keras draws both from one seed, so they are
equal). Its fields come from ``tf.keras.random``'s seeds (an int repeats, a ``SeedGenerator``
moves on), not TensorFlow's generator. Gradients reach the images (and ``scale_and_translate``'s
``scale`` and ``translation``); the transforms and coordinates get none through the sampling.

>>> import gradkit.tf as tf
>>> image = tf.reshape(tf.range(4.0), [1, 4])
>>> tf.keras.ops.image.map_coordinates(image, [[0.0, 0.0], [0.5, 3.0]], order=1).numpy().tolist()
[0.5, 3.0]
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ... import _array
from ..._convert import call
from .. import keras_random
from ..affine_transform import FILL_MODES as _AFFINE_FILL_MODES
from ..affine_transform import affine_transform as _affine
from ..augmentation_filter_layers import _depthwise_same, _gaussian_1d
from ..augmentation_local import _fixed_indices, _sample
from ..augmentation_shear_perspective import _homography
from ..spatial_args import standardize_data_format
from .dispatch import cast, keras_op, tensor, value_of
from .dtype_rules import is_float, result_type

NAMES = "affine_transform perspective_transform map_coordinates elastic_transform scale_and_translate"

_INTERPOLATIONS = ("nearest", "bilinear")
_MAP_FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")
_METHODS = ("linear", "bilinear", "trilinear", "cubic", "bicubic", "tricubic", "lanczos3", "lanczos5")


def _where(name):
    return f"tf.keras.ops.image.{name}"


def _choice(name, arg, value, allowed):
    if value not in allowed:
        raise _errors.GradkitValueError(
            f"{_where(name)} got {arg}={value!r}; Keras on TensorFlow takes one of {allowed} (ValueError otherwise)."
        )


def _images(name, images, ranks=(3, 4)):
    images = tensor(images)
    if images.ndim not in ranks:
        raise _errors.GradkitValueError(
            f"{_where(name)} got images of shape {list(images.shape)}: it takes rank 3 (one image) or rank 4 "
            "(a batch), as Keras does. Add or remove the batch axis (tf.expand_dims / tf.squeeze)."
        )
    return images


def _sampled(images, sample):
    """``sample(images)`` for float images; integer images sampled in float32 and truncated back,
    as TensorFlow's projective-transform kernel casts its float32 result."""
    if is_float(images.dtype):
        return sample(images)
    return cast(sample(cast(images, "float32")), images.dtype)


@keras_op
def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant", fill_value=0, data_format=None):
    """``keras.ops.image.affine_transform(images, transform, interpolation='bilinear',
    fill_mode='constant', fill_value=0, data_format=None)``: each output pixel ``(x, y)`` reads
    the input at ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)``, ``k = c0 x + c1 y + 1``,
    for ``transform = [a0, a1, a2, b0, b1, b2, c0, c1]`` (or one such row per image).
    ``interpolation``: ``'nearest'`` or ``'bilinear'``; ``fill_mode``: ``'constant'``,
    ``'nearest'``, ``'wrap'`` or ``'reflect'``."""
    _choice("affine_transform", "interpolation", interpolation, _INTERPOLATIONS)
    _choice("affine_transform", "fill_mode", fill_mode, _AFFINE_FILL_MODES)
    fmt = standardize_data_format(data_format, _where("affine_transform"))
    images = _images("affine_transform", images)
    transform = cast(transform, "float32")
    if transform.ndim not in (1, 2):
        raise _errors.GradkitValueError(
            f"{_where('affine_transform')} got a transform of shape {list(transform.shape)}: it takes rank 1 (8 "
            "numbers) or rank 2 (a row of 8 per image), as Keras does."
        )
    return _sampled(
        images,
        lambda x: _affine(x, transform, interpolation, fill_mode, float(fill_value), fmt),
    )


def _points(name, points):
    points = cast(points, "float32")
    if points.ndim not in (2, 3) or tuple(points.shape[-2:]) != (4, 2):
        raise _errors.GradkitValueError(
            f"{_where('perspective_transform')} got {name} of shape {list(points.shape)}: it takes (4, 2), four "
            "(x, y) corners for every image, or (N, 4, 2), four per image, as Keras does."
        )
    return points if points.ndim == 3 else _array.expand_dims(points, 0)


@keras_op
def perspective_transform(images, start_points, end_points, interpolation="bilinear", fill_value=0, data_format=None):
    """``keras.ops.image.perspective_transform(images, start_points, end_points,
    interpolation='bilinear', fill_value=0, data_format=None)``: the projective warp taking each
    of the 4 ``start_points`` ``(x, y)`` to its ``end_point`` (shapes ``(4, 2)`` or
    ``(N, 4, 2)``); pixels from off the image take ``fill_value``."""
    _choice("perspective_transform", "interpolation", interpolation, _INTERPOLATIONS)
    fmt = standardize_data_format(data_format, _where("perspective_transform"))
    images = _images("perspective_transform", images)
    start, end = _points("start_points", start_points), _points("end_points", end_points)
    if tuple(start.shape) != tuple(end.shape):
        raise _errors.GradkitValueError(
            f"{_where('perspective_transform')} got start_points of shape {list(start.shape)} and end_points of "
            f"shape {list(end.shape)}: they must have the same shape, as Keras requires."
        )
    transform = call(_homography, start, end)
    return _sampled(images, lambda x: _affine(x, transform, interpolation, "constant", float(fill_value), fmt))


# -- map_coordinates ---------------------------------------------------------------------------


def _nodes(coordinate, order):
    if order == 0:
        index = coordinate if jnp.issubdtype(coordinate.dtype, jnp.integer) else jnp.round(coordinate)
        return [(index.astype(jnp.int32), jnp.ones((), coordinate.dtype))]
    lower = jnp.floor(coordinate)
    upper = coordinate - lower
    index = lower.astype(jnp.int32)
    return [(index, 1 - upper), (index + 1, upper)]


def _map_coordinates(inputs, coordinates, *, order, fill_mode, fill_value):
    # Keras' TensorFlow backend, term for term: each corner's weights multiplied, then the corners added
    # (the weights carry the gradient with respect to the coordinates, the floor none).
    per_axis = []
    for axis, size in enumerate(inputs.shape):
        per_axis.append([(*_fixed_indices(i, size, fill_mode), w) for i, w in _nodes(coordinates[axis], order)])
    dtype = per_axis[0][0][2].dtype
    fill = jnp.asarray(fill_value, inputs.dtype).astype(dtype)
    result = None
    for corner in itertools.product(*per_axis):
        indices, inside, weights = zip(*corner)
        gathered = inputs[tuple(indices)].astype(dtype)
        if fill_mode == "constant":
            gathered = jnp.where(jnp.all(jnp.stack(inside), axis=0), gathered, fill)
        weight = weights[0]
        for w in weights[1:]:
            weight = weight * w
        term = weight * gathered
        result = term if result is None else result + term
    if jnp.issubdtype(inputs.dtype, jnp.integer):
        result = jnp.round(result)
    return result.astype(inputs.dtype)


@keras_op
def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0):
    """``keras.ops.image.map_coordinates(inputs, coordinates, order, fill_mode='constant',
    fill_value=0)``: ``inputs`` read at ``coordinates`` (shape ``(inputs.ndim, ...)``, one
    coordinate array per axis), nearest (``order=0``, halves to even) or linear (``order=1``).
    ``fill_mode``: ``'constant'`` (``fill_value``), ``'nearest'``, ``'wrap'``, ``'mirror'``
    (``d c b | a b c d | c b a``) or ``'reflect'`` (``d c b a | a b c d | d c b a``).
    Integer inputs are rounded back to their dtype."""
    inputs, coordinates = tensor(inputs), tensor(coordinates)
    if coordinates.ndim < 2 or coordinates.shape[0] != inputs.ndim:
        raise _errors.GradkitValueError(
            f"{_where('map_coordinates')} got inputs of shape {list(inputs.shape)} and coordinates of shape "
            f"{list(coordinates.shape)}: coordinates must have rank >= 2 and one leading entry per axis of inputs "
            f"(shape ({inputs.ndim}, ...)), as Keras requires."
        )
    _choice("map_coordinates", "fill_mode", fill_mode, _MAP_FILL_MODES)
    if order not in (0, 1):
        raise _errors.GradkitNotImplementedError(
            f"{_where('map_coordinates')} got order={order!r}: Keras implements order 0 (nearest) and 1 (linear) "
            "only (NotImplementedError otherwise). Pass order=0 or order=1."
        )
    if order == 1 and not is_float(coordinates.dtype):
        coordinates = cast(coordinates, "float32")
    return call(_map_coordinates, inputs, coordinates, order=int(order), fill_mode=fill_mode, fill_value=fill_value)


# -- elastic_transform -------------------------------------------------------------------------


def _elastic(images, noise, alpha, *, sigma, taps, order, fill_mode, fill_value):
    dtype = images.dtype
    scale = jnp.asarray(sigma, dtype)
    if sigma == 0:  # Keras divides 0 by 0 here (NaN images); no blur of a zero field leaves them.
        kernel = jnp.ones((1, 1), dtype)
    else:
        profile = _gaussian_1d(taps, scale)
        kernel = jnp.outer(profile, profile)
    fields = noise.astype(dtype) * scale
    dx = _depthwise_same(fields[0][..., None], kernel, data_format="channels_last")[..., 0]
    dy = _depthwise_same(fields[1][..., None], kernel, data_format="channels_last")[..., 0]
    alpha = alpha.astype(dtype)
    return _sample(images, alpha * dy, alpha * dx, order=order, fill_mode=fill_mode, fill_value=fill_value).astype(
        dtype
    )


@keras_op
def elastic_transform(
    images,
    alpha=20.0,
    sigma=5.0,
    interpolation="bilinear",
    fill_mode="reflect",
    fill_value=0.0,
    seed=None,
    data_format=None,
):
    """``keras.ops.image.elastic_transform(images, alpha=20.0, sigma=5.0, interpolation='bilinear',
    fill_mode='reflect', fill_value=0.0, seed=None, data_format=None)``: each pixel ``(i, j)``
    read at ``(i + alpha * dy, j + alpha * dx)``, ``dx`` and ``dy`` standard-normal fields times
    ``sigma`` blurred by a Gaussian of standard deviation ``sigma`` and ``6 * int(sigma) | 1``
    taps. ``seed``: an int (the same field every call), a ``tf.keras.random.SeedGenerator`` or
    None. Float images; ``sigma`` a number (it sets the kernel's size)."""
    _choice("elastic_transform", "interpolation", interpolation, _INTERPOLATIONS)
    _choice("elastic_transform", "fill_mode", fill_mode, _AFFINE_FILL_MODES)
    fmt = standardize_data_format(data_format, _where("elastic_transform"))
    images = _images("elastic_transform", images)
    if not is_float(images.dtype):
        raise _errors.GradkitTypeError(
            f"{_where('elastic_transform')} got {np.dtype(images.dtype).name} images: it samples between pixels, "
            "so it takes floats (Keras on TensorFlow fails on integers). Cast them first: tf.cast(images, tf.float32)."
        )
    sigma = float(value_of(sigma, "elastic_transform's sigma"))
    single = images.ndim == 3
    batch = _array.expand_dims(images, 0) if single else images
    if fmt == "channels_first":
        batch = _array.transpose(batch, (0, 2, 3, 1))
    n, height, width = (int(d) for d in batch.shape[:3])
    noise = keras_random.normal((2, n, height, width), dtype=images.dtype, seed=seed)
    out = call(
        _elastic,
        batch,
        noise,
        tensor(alpha, images.dtype),
        sigma=sigma,
        taps=6 * int(sigma) | 1,
        order=_INTERPOLATIONS.index(interpolation),
        fill_mode=fill_mode,
        fill_value=float(fill_value),
    )
    if fmt == "channels_first":
        out = _array.transpose(out, (0, 3, 1, 2))
    return _array.squeeze(out, 0) if single else out


# -- scale_and_translate -----------------------------------------------------------------------


def _kernel(method, x):
    if method == "linear":
        return jnp.maximum(0, 1 - jnp.abs(x))
    if method == "cubic":
        out = ((1.5 * x - 2.5) * x) * x + 1.0
        out = jnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
        return jnp.where(x >= 2.0, 0.0, out)
    radius = 3.0 if method == "lanczos3" else 5.0
    y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    out = jnp.where(x > 1e-3, y / jnp.where(x != 0, np.pi**2 * x**2, 1), 1)
    return jnp.where(x > radius, 0.0, out)


def _weights(in_size, out_size, scale, translation, method, antialias):
    # Keras' _compute_weight_mat (JAX's), in the dtype of scale and translation.
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample = (jnp.arange(out_size, dtype=scale.dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    x = jnp.abs(sample[None, :] - jnp.arange(in_size, dtype=scale.dtype)[:, None]) / kernel_scale
    weights = _kernel(method, x)
    total = jnp.sum(weights, axis=0, keepdims=True)
    eps = 1000.0 * float(np.finfo(np.float32).eps)
    weights = jnp.where(jnp.abs(total) > eps, weights / jnp.where(total != 0, total, 1), 0)
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return jnp.where(inside[None, :], weights, 0)


def _scale_translate(images, scale, translation, *, output_shape, spatial_dims, method, antialias):
    integer = jnp.issubdtype(images.dtype, jnp.integer)
    out = images.astype(jnp.float32) if integer else images
    for i, d in enumerate(spatial_dims):
        w = _weights(images.shape[d], output_shape[d], scale[i], translation[i], method, antialias).astype(out.dtype)
        out = jnp.moveaxis(jnp.tensordot(out, w, axes=(d, 0), precision=jax.lax.Precision.HIGHEST), -1, d)
    if integer:
        out = jnp.clip(jnp.round(out), jnp.min(images), jnp.max(images)).astype(images.dtype)
    return out


@keras_op
def scale_and_translate(images, output_shape, scale, translation, spatial_dims, method, antialias=True):
    """``keras.ops.image.scale_and_translate(images, output_shape, scale, translation,
    spatial_dims, method, antialias=True)``: ``images`` resampled to ``output_shape`` along
    ``spatial_dims``, an input location ``x`` on each going to ``x * scale + translation``
    (JAX's ``jax.image.scale_and_translate``). ``method``: ``'linear'``/``'bilinear'``/
    ``'trilinear'``, ``'cubic'``/``'bicubic'``/``'tricubic'``, ``'lanczos3'`` or ``'lanczos5'``;
    integer images are rounded and clipped to their own range."""
    _choice("scale_and_translate", "method", method, _METHODS)
    kind = "linear" if "linear" in method else "cubic" if "cubic" in method else method
    images = tensor(images)
    output_shape = tuple(int(d) for d in value_of(output_shape, "scale_and_translate's output_shape"))
    spatial_dims = tuple(int(d) % max(images.ndim, 1) for d in np.atleast_1d(value_of(spatial_dims, "spatial_dims")))
    scale, translation = tensor(scale), tensor(translation)
    dtype = result_type(scale.dtype, translation.dtype)
    scale, translation = cast(scale, dtype), cast(translation, dtype)
    if len(output_shape) != images.ndim or scale.ndim != 1 or translation.ndim != 1:
        raise _errors.GradkitValueError(
            f"{_where('scale_and_translate')} got images of shape {list(images.shape)}, output_shape "
            f"{list(output_shape)}, scale of shape {list(scale.shape)} and translation of shape "
            f"{list(translation.shape)}: output_shape needs one entry per axis of images, and scale and translation "
            "one number per spatial dim."
        )
    if scale.shape[0] != len(spatial_dims) or translation.shape[0] != len(spatial_dims):
        raise _errors.GradkitValueError(
            f"{_where('scale_and_translate')} got {len(spatial_dims)} spatial_dims {list(spatial_dims)} but "
            f"{scale.shape[0]} scales and {translation.shape[0]} translations: give one of each per spatial dim."
        )
    return call(
        _scale_translate,
        images,
        scale,
        translation,
        output_shape=output_shape,
        spatial_dims=spatial_dims,
        method=kind,
        antialias=bool(antialias),
    )
