"""Decompressing a gzip log step by step, in bounded memory, keeping what a cut stream held."""

from __future__ import annotations

import zlib
from typing import BinaryIO

GZIP_OUT = 1 << 20
"""Decompressed bytes produced per step: a gzip bomb never expands more than this at once."""


class _Gunzip:
    """A gzip stream decompressed step by step: several members (``cat a.gz b.gz``) are read on,
    a stream cut short keeps every byte it decompressed (``GzipFile`` loses the last block), and
    no step expands more than :data:`GZIP_OUT` bytes (a gzip bomb stays in bounded memory)."""

    def __init__(self, raw: BinaryIO, head: bytes = b"") -> None:
        self.raw = raw
        self.pending = head
        self.d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.in_member = False
        self.truncated = False
        self.consumed = 0
        """Compressed bytes read so far (for progress)."""

    def _input(self) -> bytes:
        if self.pending:
            data, self.pending = self.pending, b""
            return data
        data = self.raw.read(1 << 16)
        self.consumed += len(data)
        return data

    def read(self, n: int) -> bytes:
        while True:
            if self.truncated:
                raise EOFError("compressed file ended before the end-of-stream marker was reached")
            data = self.d.unconsumed_tail or self._input()
            if not self.in_member:
                data = data.lstrip(b"\x00")  # padding between or after members
                if not data:
                    if self.pending or self.d.unconsumed_tail:
                        continue
                    peek = self._input()
                    if not peek:
                        return b""
                    self.pending = peek
                    continue
            if not data:
                self.truncated = True
                tail = self.d.flush()
                if tail:
                    return tail
                continue
            self.in_member = True
            out = self.d.decompress(data, max(1, min(n, GZIP_OUT)))
            if self.d.eof:
                self.pending = self.d.unused_data + self.pending
                self.d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                self.in_member = False
            if out:
                return out

    def close(self) -> None:
        self.raw.close()
