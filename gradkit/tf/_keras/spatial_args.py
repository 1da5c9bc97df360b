"""Keras 3's readings of the spatial layers' arguments, with its checks: ``standardize_tuple``,
``standardize_data_format`` and the per-axis ``(before, after)`` pairs of the cropping and
zero-padding layers. Values keep the form they were given in, as Keras keeps them in its
configs."""

from __future__ import annotations

from gradkit import _errors


def standardize_tuple(value, n: int, name: str, what: str, allow_zero: bool = False) -> tuple:
    """An int, or ``n`` ints, each > 0 (>= 0 with ``allow_zero``), as a tuple of ``n``."""
    if isinstance(value, int):
        items = (value,) * n
    else:
        try:
            items = tuple(value)
        except TypeError:
            items = None
        if items is not None and len(items) == n:
            try:
                [int(v) for v in items]
            except (TypeError, ValueError):
                items = None
        else:
            items = None
    least = 0 if allow_zero else 1
    if items is None or any(v < least for v in items):
        raise _errors.GradkitValueError(
            f"{what}: {name}={value!r}; Keras takes an int or a tuple of {n} ints, each "
            f"{'>= 0' if allow_zero else '> 0'}, here. Pass e.g. {name}={(1,) * n if n > 1 else 1}."
        )
    return items


def standardize_data_format(data_format, what: str) -> str:
    """``'channels_last'`` (also for None, Keras' default image data format) or ``'channels_first'``."""
    if data_format is None:
        return "channels_last"
    value = str(data_format).lower()
    if value not in ("channels_last", "channels_first"):
        raise _errors.GradkitValueError(
            f"{what}: data_format={data_format!r}; Keras takes 'channels_last' or 'channels_first'. Leave it out for "
            "channels_last."
        )
    return value


_ORDINALS = ("1st", "2nd", "3rd")


def axis_pairs(value, n: int, name: str, what: str) -> tuple:
    """Keras' cropping/padding argument for ``n`` spatial axes: an int (the same on every side),
    ``n`` ints (symmetric per axis) or ``n`` pairs ``(before, after)``, all >= 0."""
    if isinstance(value, int):
        if value < 0:
            raise _errors.GradkitValueError(f"{what}: {name}={value!r} cannot be negative, as in Keras.")
        return ((value, value),) * n
    if not hasattr(value, "__len__") or len(value) != n:
        raise _errors.GradkitValueError(
            f"{what}: {name}={value!r}; Keras takes an int, a tuple of {n} ints (one per spatial axis) or a tuple "
            f"of {n} (before, after) pairs here."
        )
    return tuple(
        standardize_tuple(v, 2, f"{_ORDINALS[i]} entry of {name}", what, allow_zero=True) for i, v in enumerate(value)
    )


def spatial_axes(rank: int, data_format: str) -> tuple:
    """The spatial axes of a rank-``rank`` input: after the batch axis, and before the channels
    (channels_last) or after them (channels_first)."""
    return tuple(range(1, rank - 1)) if data_format == "channels_last" else tuple(range(2, rank))


def channels_axis(data_format: str) -> int:
    """Where the channels are: last (channels_last) or right after the batch axis."""
    return -1 if data_format == "channels_last" else 1


def tf_data_format(n: int, data_format: str) -> str:
    """TensorFlow's name of Keras' ``data_format`` for ``n`` spatial axes: ``'NHWC'``, ``'NCW'``, ..."""
    spatial = "DHW"[3 - n :]
    return f"N{spatial}C" if data_format == "channels_last" else f"NC{spatial}"


def layout(n: int, data_format: str, names: bool = False) -> str:
    """The input layout in words, for errors: ``(batch, height, width, channels)`` with ``names``,
    else ``(batch, spatial, spatial, channels)``; the channels after the batch for channels_first."""
    spatial = ", ".join(("depth", "height", "width")[3 - n :] if names else ["spatial"] * n)
    return f"(batch, {spatial}, channels)" if data_format == "channels_last" else f"(batch, channels, {spatial})"


def channels_last_shape(shape, data_format: str) -> tuple:
    """``shape`` with the channels moved last (as given for channels_last)."""
    shape = tuple(shape)
    return shape if data_format == "channels_last" else (shape[0], *shape[2:], shape[1])


def channels_placed(shape, data_format: str) -> tuple:
    """A channels-last ``shape`` with the channels moved where ``data_format`` puts them."""
    shape = tuple(shape)
    return shape if data_format == "channels_last" else (shape[0], shape[-1], *shape[1:-1])


def check_window_fits(what: str, shape, data_format: str, kernel_size, dilation_rate, padding: str) -> None:
    """Refuse a 'valid' convolution whose (dilated) window is larger than the input, as Keras does
    ("Computed output size would be zero or negative"): its output would be empty."""
    spatial = channels_last_shape(shape, data_format)[1:-1]
    span = [(k - 1) * d + 1 for k, d in zip(kernel_size, dilation_rate)]
    if padding == "valid" and any(size < k for size, k in zip(spatial, span)):
        raise _errors.GradkitValueError(
            f"{what}: the (dilated) kernel spans {tuple(span)}, more than the input's {tuple(spatial)}, so "
            "padding='valid' leaves no output (Keras: 'Computed output size would be zero or negative'). Use "
            "padding='same' or a larger input."
        )
