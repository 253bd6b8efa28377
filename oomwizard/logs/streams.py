"""One input as a stream of bytes, whatever it is: plain, gzip (sniffed by its magic bytes,
whatever the name), or UTF-16 as PowerShell's ``>`` writes it (decoded and read on in UTF-8). A
read error or a damaged gzip stops the stream and is recorded, not raised: what was read counts."""

from __future__ import annotations

import codecs
import zlib
from typing import TYPE_CHECKING, BinaryIO

from ..i18n import Text
from .gunzip import _Gunzip

if TYPE_CHECKING:
    from .reader import ReadStats


class _Reader:
    """``readinto`` for any input: plain streams directly, UTF-16 ones through a decoder."""

    def __init__(self, stream: BinaryIO, stats: ReadStats) -> None:
        self.stream = stream
        self.stats = stats
        self.decoder: codecs.IncrementalDecoder | None = None
        self.pending = b""
        self.first = True
        self.eof = False

    def _read(self, n: int) -> bytes:
        try:
            return self.stream.read(n)
        except (EOFError, zlib.error, OSError) as e:
            self._damaged(e)
            return b""

    def _damaged(self, e: BaseException) -> None:
        reason = getattr(e, "reason", None)  # an error that explains itself (a writer that stopped)
        self.stats.damaged = reason if isinstance(reason, (str, Text)) else f"{type(e).__name__}: {e}" if str(e) else type(e).__name__

    def position(self) -> int:
        """Bytes of the input consumed so far (compressed bytes for gzip)."""
        if isinstance(self.stream, _Gunzip):
            return self.stream.consumed
        return self.stats.bytes_read

    def readinto(self, view: memoryview) -> int:
        if self.eof:
            return 0
        if self.first:
            self.first = False
            head = self._read(len(view))
            if head[:2] == b"\x1f\x8b":
                # gzip, whatever the name (``zcat`` forgotten, a rotated ``.1.gz``, stdin).
                self.stream = _Gunzip(self.stream, head)  # type: ignore[assignment]
                self.stream.consumed = len(head)  # type: ignore[attr-defined]
                head = self._read(len(view))
            if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
                # PowerShell's `>` writes UTF-16: read it as text and go on in UTF-8.
                self.decoder = codecs.getincrementaldecoder("utf-16")("replace")
            self.stats.bytes_read += len(head)
            if self.decoder is None:
                view[: len(head)] = head
                if not head:
                    self.eof = True
                return len(head)
            self.pending = self.decoder.decode(head).encode("utf-8")
        if self.decoder is None:
            try:
                if isinstance(self.stream, _Gunzip):
                    data = self.stream.read(len(view))
                    view[: len(data)] = data
                    n = len(data)
                else:
                    n = self.stream.readinto(view)  # type: ignore[attr-defined]
            except (EOFError, zlib.error, OSError) as e:
                self._damaged(e)
                n = 0
            n = n or 0
            self.stats.bytes_read += n
            if n == 0:
                self.eof = True
            return n
        while len(self.pending) < len(view) // 2:
            raw = self._read(len(view) // 2)
            self.stats.bytes_read += len(raw)
            if not raw:
                self.pending += self.decoder.decode(b"", final=True).encode("utf-8")
                break
            self.pending += self.decoder.decode(raw).encode("utf-8")
        out, self.pending = self.pending[: len(view)], self.pending[len(view):]
        view[: len(out)] = out
        if not out:
            self.eof = True
        return len(out)
