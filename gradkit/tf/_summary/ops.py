"""``tf.summary``'s summary ops: ``scalar``, ``histogram``, ``image``, ``text``, ``write``,
``experimental.write_raw_pb`` and ``experimental.summary_scope``; ``audio`` and the graph and
profiler traces are refused with what to use instead.

Each writes what TensorFlow 2.21 (with TensorBoard's summary ops) writes: the same tag (the
name under the current ``tf.name_scope``), plugin metadata and tensor, so TensorBoard shows the
files as it shows TensorFlow's. Each returns a bool tensor: True when written, False without a
default writer or outside ``record_if``.

>>> import tempfile, gradkit.tf as tf
>>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
>>> with writer.as_default():
...     bool(tf.summary.scalar("loss", 0.25, step=1))
True
>>> bool(tf.summary.scalar("loss", 0.25, step=2))  # no default writer
False
"""

from __future__ import annotations

import contextlib
import re

import jax
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from .. import _name_scope
from . import histogram as _histogram
from . import png, protos
from .emit import check_step, emit, read

_INVALID_SCOPE_CHARACTERS = re.compile(r"[^-_/.A-Za-z0-9]")


@contextlib.contextmanager
def summary_scope(name, default_name="summary", values=None):
    """``tf.summary.experimental.summary_scope``: yields ``(tag, scope)``, the tag being ``name``
    under the current name scope (any characters kept), the scope a ``tf.name_scope`` entered
    for it (characters a scope name cannot hold removed)."""
    del values
    if name is not None and not isinstance(name, str):
        raise _errors.GradkitTypeError(
            f"tf.summary got the name {name!r} ({type(name).__name__}): a summary's name is a str (its tag, under "
            "the current tf.name_scope). Pass a string such as 'loss'."
        )
    name = name or default_name
    current = _name_scope.current().rstrip("/")
    tag = f"{current}/{name}" if current else name
    with _name_scope.name_scope(_INVALID_SCOPE_CHARACTERS.sub("", name) or default_name) as scope:
        yield tag, scope


def _description(description, what: str):
    if description is not None and not isinstance(description, str):
        raise _errors.GradkitTypeError(
            f"{what} got description={description!r} ({type(description).__name__}): it takes a str (Markdown)."
        )
    return description


def _numbers(data, what: str):
    """``data`` as TensorFlow converts it: a tensor's or Variable's value as it is (a tracer inside
    ``tf.function``), a NumPy array as it is, Python numbers as float32/int32 (int64 when too large)."""
    value = read(data)
    if isinstance(value, jax.Array):
        return value
    try:
        array = np.asarray(value)
    except ValueError as error:
        raise _errors.GradkitValueError(
            f"{what} got {_errors.describe_value(data)}, which is not one array ({error}). Pass a tensor, "
            "a NumPy array or a (rectangular) nested list of numbers."
        ) from None
    if array.dtype.kind not in "biufc":
        raise _errors.GradkitTypeError(
            f"{what} got {_errors.describe_value(data)} ({array.dtype}): it summarizes numbers, and TensorFlow "
            "cannot cast this to a number either. Pass numbers (tf.summary.text writes strings)."
        )
    if not isinstance(value, (np.ndarray, np.generic)):  # Python values: TensorFlow's default dtypes
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif array.dtype == np.int64 and (array.size == 0 or np.abs(array).max() < 2**31):
            array = array.astype(np.int32)
    return array


def _real(array: np.ndarray) -> np.ndarray:
    return array.real if array.dtype.kind == "c" else array


def scalar(name, data, step=None, description=None):
    """``tf.summary.scalar``: ``data`` (a real scalar) as a float32 scalar, TensorBoard's "scalars"."""
    what = "tf.summary.scalar"
    check_step(step, what)
    metadata = protos.summary_metadata("scalars", description=_description(description, what))
    with summary_scope(name, "scalar_summary") as (tag, _):
        value = _numbers(data, what)
        if np.ndim(value) != 0:
            raise _errors.GradkitValueError(
                f"{what} got data of shape {tuple(np.shape(value))}: a scalar summary holds one number "
                "(TensorFlow's 'Expected scalar shape'). Reduce it first (tf.reduce_mean), or log a "
                "histogram with tf.summary.histogram."
            )

        def make(value):
            return protos.summary_value(tag, protos.tensor_proto(_real(value).astype(np.float32)), metadata)

        return emit(what, step, lambda: [value], make)


def _bucket_count(buckets, what: str):
    if buckets is None:
        return _histogram.DEFAULT_BUCKET_COUNT
    value = read(buckets)
    dtype = np.int32 if isinstance(value, int) and not isinstance(value, bool) else getattr(value, "dtype", None)
    if dtype is None or np.dtype(dtype) != np.int32 or np.ndim(value) != 0:
        raise _errors.GradkitTypeError(
            f"{what} got buckets={buckets!r}: the bucket count is a scalar int32 (TensorFlow's 'tensor must be "
            "of type tf.int32' refuses this too). Pass a Python int."
        )
    return value


def histogram(name, data, step=None, buckets=None, description=None):
    """``tf.summary.histogram``: TensorBoard's ``[buckets, 3]`` float64 histogram of ``data``
    (``buckets`` defaults to 30), its "histograms" plugin."""
    what = "tf.summary.histogram"
    check_step(step, what)
    metadata = protos.summary_metadata("histograms", description=_description(description, what))
    with summary_scope(name, "histogram_summary") as (tag, _):

        def make(values, count):
            return protos.summary_value(tag, protos.tensor_proto(_histogram.buckets(_real(values), count)), metadata)

        return emit(what, step, lambda: [_numbers(data, what), _bucket_count(buckets, what)], make)


def _images(data, max_outputs, what: str):
    images = _numbers(data, what)
    if np.ndim(images) != 4:
        raise _errors.GradkitValueError(
            f"{what} got data of shape {tuple(np.shape(images))}: images are a rank-4 tensor [k, height, width, "
            "channels] (TensorFlow requires rank 4 too). Add the batch axis (data[None]) for one image."
        )
    dtype = np.dtype(images.dtype)
    if dtype.kind not in "iuf" and dtype.name != "bfloat16":
        raise _errors.DtypeKindError(
            f"{what} got images of dtype {dtype}: image dtype must be either floating point or integer, as "
            "TensorFlow requires. Cast them (tf.cast(images, tf.uint8) or tf.float32 in [0, 1])."
        )
    channels = images.shape[3]
    if channels not in (1, 2, 3, 4):
        raise _errors.GradkitInvalidArgumentError(
            f"{what} got images with {channels} channels: a PNG image must have 1, 2, 3, or 4 channels (TensorFlow's "
            "encode_png refuses this too). Select the channels to show (images[..., :3])."
        )
    count = read(max_outputs)
    if isinstance(count, jax.core.Tracer):
        raise _errors.GradkitTypeError(
            f"{what} got a max_outputs computed inside tf.function: gradkit slices the images when the function is "
            "traced, so the count must be known then. Pass a Python int."
        )
    count = int(np.asarray(count))
    if count < 0:
        raise _errors.GradkitInvalidArgumentError(
            f"{what} got max_outputs={count}: the count of images to keep must be >= 0 (TensorFlow's assertion "
            "fails too). Pass 0 or more."
        )
    return images[:count], images.shape


def image(name, data, step=None, max_outputs=3, description=None):
    """``tf.summary.image``: the first ``max_outputs`` images of ``data`` ([k, h, w, c], c in 1-4)
    as PNG, converted to uint8 as ``tf.image.convert_image_dtype`` converts (floats in [0, 1]);
    TensorBoard's "images" plugin (a string tensor [width, height, png, ...])."""
    what = "tf.summary.image"
    check_step(step, what)
    metadata = protos.summary_metadata("images", description=_description(description, what))
    with summary_scope(name, "image_summary") as (tag, _):
        shape = []

        def data_now():
            kept, full_shape = _images(data, max_outputs, what)
            shape.append(full_shape)
            return [kept]

        def make(kept):
            height, width = shape[0][1], shape[0][2]
            pixels = png.to_uint8(kept)
            strings = [str(width).encode(), str(height).encode(), *(png.encode(im) for im in pixels)]
            return protos.summary_value(tag, protos.tensor_proto(np.array(strings, dtype=object)), metadata)

        return emit(what, step, data_now, make)


def _strings(data, what: str) -> np.ndarray:
    if isinstance(data, (Tensor, Variable, jax.Array)):
        raise _errors.GradkitTypeError(
            f"{what} got a tensor of dtype {np.dtype(read(data).dtype)}: tensor must be of type tf.string, and "
            "gradkit.tf has no string tensors (JAX arrays hold numbers only). Pass the text as a Python str "
            "(or a list of them), e.g. f'{value:.3f}'."
        )
    try:
        array = np.array(data, dtype=object)
    except ValueError as error:
        raise _errors.GradkitValueError(
            f"{what} got {_errors.describe_value(data)}, which is not one array of strings ({error}). Pass a str "
            "or a rectangular nested list of str."
        ) from None
    for item in array.reshape(-1).tolist():
        if not isinstance(item, (str, bytes)):
            raise _errors.GradkitTypeError(
                f"{what} got {item!r} ({type(item).__name__}) among its data: tensor must be of type tf.string, "
                "as TensorFlow requires. Pass str or bytes (str(value) for a number)."
            )
    return array


def text(name, data, step=None, description=None):
    """``tf.summary.text``: a string tensor (a str, bytes or nested list of them), TensorBoard's
    "text" plugin (Markdown)."""
    what = "tf.summary.text"
    check_step(step, what)
    metadata = protos.summary_metadata("text", description=_description(description, what))
    with summary_scope(name, "text_summary") as (tag, _):
        strings = _strings(data, what)

        def make(strings):
            return protos.summary_value(tag, protos.tensor_proto(strings), metadata)

        return emit(what, step, lambda: [strings], make)


def _metadata(metadata, what: str) -> bytes:
    if metadata is None:
        return b""
    if isinstance(metadata, (bytes, bytearray)):
        return bytes(metadata)
    if hasattr(metadata, "SerializeToString"):
        return metadata.SerializeToString()
    raise _errors.GradkitTypeError(
        f"{what} got metadata={metadata!r} ({type(metadata).__name__}): it takes a SummaryMetadata protocol buffer "
        "or its serialized bytes. Pass metadata.SerializeToString() of TensorBoard's SummaryMetadata, or None."
    )


def _tensor_data(tensor, what: str):
    value = read(tensor)
    if isinstance(value, (str, bytes)):
        return _strings(value, what)
    if isinstance(value, (list, tuple, np.ndarray)):
        try:
            kind = np.asarray(value).dtype.kind
        except ValueError:
            kind = None
        if kind in ("S", "U", "O"):
            return _strings(value, what)
    return _numbers(value, what)


def write(tag, tensor, step=None, metadata=None, name=None):
    """``tf.summary.write``: ``tensor`` (or what the callable ``tensor`` returns, called only when
    a summary is written) under ``tag``, with ``metadata`` (a SummaryMetadata or its bytes)."""
    what = "tf.summary.write"
    del name
    check_step(step, what)
    if not isinstance(tag, str):
        raise _errors.GradkitTypeError(f"{what} got tag={tag!r} ({type(tag).__name__}): the tag is a str.")
    serialized = _metadata(metadata, what)

    def data_now():
        value = tensor() if callable(tensor) and not isinstance(tensor, (Tensor, Variable)) else tensor
        return [_tensor_data(value, what)]

    def make(value):
        return protos.summary_value(tag, protos.tensor_proto(value), serialized)

    return emit(what, step, data_now, make)


def write_raw_pb(tensor, step=None, name=None):
    """``tf.summary.experimental.write_raw_pb``: serialized ``Summary`` protocol buffers (bytes, or
    a list of them, merged into one event) written as they are."""
    what = "tf.summary.experimental.write_raw_pb"
    del name
    check_step(step, what)
    items = [tensor] if isinstance(tensor, (bytes, str)) else list(np.asarray(tensor, dtype=object).reshape(-1))
    if not all(isinstance(item, bytes) for item in items):
        raise _errors.GradkitTypeError(
            f"{what} got {_errors.describe_value(tensor)}: it takes serialized Summary protocol buffers (bytes, or a "
            "list of bytes). Pass summary.SerializeToString()."
        )
    summary = b"".join(items)
    return emit(what, step, list, lambda: summary)


def _refused(what: str, instead: str):
    def refuse(*args, **kwargs):
        raise _errors.GradkitNotImplementedError(f"{what} is not implemented in gradkit.tf. {instead}")

    refuse.__name__ = what.rsplit(".", 1)[-1]
    refuse.__doc__ = f"``{what}``: refused; {instead}"
    return refuse


audio = _refused(
    "tf.summary.audio",
    "Write the clips as WAV files with Python's wave module, or log a spectrogram (tf.signal.stft) with "
    "tf.summary.image.",
)
_NO_GRAPH = (
    "gradkit compiles a tf.function with XLA and has no TensorFlow graph to export. For the program, print "
    "jax.jit(fn).lower(*args).as_text(); for a profile TensorBoard can show, wrap the steps in "
    "jax.profiler.trace(logdir)."
)
graph = _refused("tf.summary.graph", _NO_GRAPH)
trace_on = _refused("tf.summary.trace_on", _NO_GRAPH)
trace_export = _refused("tf.summary.trace_export", _NO_GRAPH)
trace_off = _refused("tf.summary.trace_off", _NO_GRAPH)
