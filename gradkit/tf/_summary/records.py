"""TFRecord framing and its checksum, CRC-32C (Castagnoli), in pure Python.

An event file is a sequence of records, each written as TensorFlow's ``RecordWriter`` writes
it: the data's length as a little-endian uint64, the masked CRC-32C of those 8 bytes, the data,
and the masked CRC-32C of the data. TensorFlow's and TensorBoard's readers check both sums.

>>> hex(crc32c(b"123456789"))
'0xe3069283'
>>> len(frame(b"abc"))
19
"""

from __future__ import annotations

import struct

_POLY = 0x82F63B78  # CRC-32C, reflected


def _tables() -> tuple[tuple[int, ...], ...]:
    first = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY if crc & 1 else crc >> 1
        first.append(crc)
    tables = [first]
    for _ in range(7):
        previous = tables[-1]
        tables.append([(c >> 8) ^ first[c & 0xFF] for c in previous])
    return tuple(tuple(t) for t in tables)


# Slicing-by-8: eight bytes per step of the loop, one table lookup each.
_T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7 = _tables()
_PAIRS = struct.Struct("<II")


def crc32c(data: bytes, crc: int = 0) -> int:
    """The CRC-32C of ``data`` (continuing from ``crc``, the sum of the bytes before it)."""
    crc ^= 0xFFFFFFFF
    whole = len(data) & ~7
    t0, t1, t2, t3, t4, t5, t6, t7 = _T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7
    for low, high in _PAIRS.iter_unpack(memoryview(data)[:whole]):
        low ^= crc
        crc = (
            t7[low & 0xFF]
            ^ t6[(low >> 8) & 0xFF]
            ^ t5[(low >> 16) & 0xFF]
            ^ t4[low >> 24]
            ^ t3[high & 0xFF]
            ^ t2[(high >> 8) & 0xFF]
            ^ t1[(high >> 16) & 0xFF]
            ^ t0[high >> 24]
        )
    for byte in memoryview(data)[whole:]:
        crc = t0[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TensorFlow's masked CRC-32C: the sum rotated right by 15 bits plus a constant, so a record
    holding its own checksum does not checksum to a fixed value."""
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """One TFRecord: length, masked CRC of the length, data, masked CRC of the data."""
    length = struct.pack("<Q", len(data))
    return b"".join((length, struct.pack("<I", masked_crc32c(length)), data, struct.pack("<I", masked_crc32c(data))))
