"""The protocol-buffer messages of an event file, encoded by hand.

Only what TensorFlow's summary ops write: ``Event`` (wall time, step, file version, summary,
source metadata), ``Summary.Value`` (tag, ``TensorProto``, ``SummaryMetadata``) and the
``TensorProto`` of a NumPy array. Fields come in field-number order and proto3's defaults
(a zero step, empty bytes) are left out, as TensorFlow's C++ serializer does, so an encoded
event is byte for byte the one TensorFlow writes.

>>> tensor_proto(np.float32(0.5)).hex()
'0801120022040000003f'
>>> summary_metadata("scalars").hex()
'0a090a077363616c617273'
"""

from __future__ import annotations

import struct

import numpy as np

from gradkit import _errors

# TensorFlow's DataType numbers (types.proto) for the dtypes a summary tensor can have.
_DATA_TYPES = {
    np.dtype(np.float32): 1,
    np.dtype(np.float64): 2,
    np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4,
    np.dtype(np.int16): 5,
    np.dtype(np.int8): 6,
    np.dtype(np.complex64): 8,
    np.dtype(np.int64): 9,
    np.dtype(np.bool_): 10,
    np.dtype(np.uint16): 17,
    np.dtype(np.complex128): 18,
    np.dtype(np.float16): 19,
    np.dtype(np.uint32): 22,
    np.dtype(np.uint64): 23,
}
DT_STRING = 7
_BFLOAT16 = 14

FILE_VERSION = b"brain.Event:2"
# What TensorFlow's EventsWriter records as the file's writer (Event.source_metadata.writer).
SOURCE_WRITER = b"tensorflow.core.util.events_writer"


def varint(n: int) -> bytes:
    """Base-128 varint; a negative int64 as its two's complement (ten bytes)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return varint(field << 3 | wire)


def bytes_field(field: int, data: bytes) -> bytes:
    """A length-delimited field (a string, bytes or a nested message)."""
    return _key(field, 2) + varint(len(data)) + data


def varint_field(field: int, n: int) -> bytes:
    return _key(field, 0) + varint(n)


def double_field(field: int, x: float) -> bytes:
    return _key(field, 1) + struct.pack("<d", x)


def data_type(dtype: np.dtype) -> int:
    """TensorFlow's DataType number for a NumPy dtype."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return _BFLOAT16
    if dtype.kind in "SUO":
        return DT_STRING
    try:
        return _DATA_TYPES[dtype]
    except KeyError:
        raise _errors.GradkitTypeError(
            f"tf.summary cannot write a tensor of dtype {dtype}: TensorFlow's summaries hold numbers, booleans "
            "and strings. Cast it first (tf.cast(x, tf.float32))."
        ) from None


def _shape(shape) -> bytes:
    # TensorShapeProto: dim = 2 (repeated Dim{size = 1}); a size of 0 is left out, as proto3 does.
    return b"".join(bytes_field(2, varint_field(1, size) if size else b"") for size in shape)


def _string(item) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode("utf-8")
    raise _errors.GradkitTypeError(
        f"tf.summary got {item!r} ({type(item).__name__}) among strings: a string tensor holds str or bytes "
        "only. Convert each element with str() first."
    )


def tensor_proto(array) -> bytes:
    """The TensorProto of ``array``: numbers as ``tensor_content`` (little-endian, C order),
    strings as ``string_val`` (UTF-8), as TensorFlow's summary writer encodes them."""
    array = np.asarray(array)
    code = data_type(array.dtype)
    out = varint_field(1, code) + bytes_field(2, _shape(array.shape))
    if code == DT_STRING:
        return out + b"".join(bytes_field(8, _string(item)) for item in array.reshape(-1).tolist())
    content = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return out + (bytes_field(4, content) if content else b"")


def summary_metadata(plugin_name: str, content: bytes = b"", display_name=None, description=None) -> bytes:
    """A SummaryMetadata: ``plugin_data {plugin_name, content}``, display name, description."""
    plugin = bytes_field(1, plugin_name.encode("utf-8")) + (bytes_field(2, content) if content else b"")
    out = bytes_field(1, plugin)
    if display_name:
        out += bytes_field(2, display_name.encode("utf-8"))
    if description:
        out += bytes_field(3, description.encode("utf-8"))
    return out


def summary_value(tag: str, tensor: bytes, metadata: bytes = b"") -> bytes:
    """A ``Summary`` holding one ``Summary.Value``: tag = 1, tensor = 8, metadata = 9."""
    value = bytes_field(1, tag.encode("utf-8")) + bytes_field(8, tensor)
    if metadata:
        value += bytes_field(9, metadata)
    return bytes_field(1, value)


def event(wall_time: float, step: int = 0, summary: bytes | None = None) -> bytes:
    """An ``Event``: wall_time = 1, step = 2, summary = 5 (the serialized ``Summary``)."""
    out = double_field(1, wall_time)
    if step:
        out += varint_field(2, step)
    if summary is not None:
        out += bytes_field(5, summary)
    return out


def file_version_event(wall_time: float) -> bytes:
    """The first event of every file: its format version and the writer that made it."""
    return double_field(1, wall_time) + bytes_field(3, FILE_VERSION) + bytes_field(10, bytes_field(1, SOURCE_WRITER))
