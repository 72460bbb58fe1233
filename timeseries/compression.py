"""The status text as stored (RawStatus.text_zlib, spooled and journaled polls): zstd, level 3.

On the corpus's 10-30 KB statuses zstd takes a fifth of the CPU of zlib's level 6 (40 against
212 µs) and is a little smaller; the status text is compressed once a poll, so this is a share of
every poll's cost. Rows and spooled polls written with zlib before are still read: the two are
told apart by the zstd frame's magic number (a zlib stream starts with 0x78).
"""

from __future__ import annotations

import threading
import zlib

import zstandard

ZSTD_LEVEL = 3
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# What a damaged stored text raises when decompressed.
DecompressError = (zlib.error, zstandard.ZstdError)

# zstd (de)compressors are not safe to share between threads; a worker polls in threads.
_local = threading.local()


def compress_text(text: str) -> bytes:
    compressor = getattr(_local, "compressor", None)
    if compressor is None:
        compressor = _local.compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    return compressor.compress(text.encode())


def decompress_text(blob: bytes | memoryview) -> str:
    data = bytes(blob)
    if data[:4] == _ZSTD_MAGIC:
        decompressor = getattr(_local, "decompressor", None)
        if decompressor is None:
            decompressor = _local.decompressor = zstandard.ZstdDecompressor()
        raw = decompressor.decompress(data)
    else:
        raw = zlib.decompress(data)
    return raw.decode("utf-8", errors="replace")
