"""Stream :class:`SpanData` out of exported trace files, whatever their format.

The format is recognised per file (see :mod:`otel_cycleguard.analyze.formats` for examples):

- a file whose first JSON line is a complete trace document is read as **JSON lines**, one
  document at a time, so memory stays bounded by the longest line (the Collector file exporter
  and the development corpus write one run per line);
- any other file starting with ``{`` is read as **one JSON document**, parsed whole: Jaeger and
  Tempo downloads and pretty-printed OTLP JSON are single documents, and JSON cannot be parsed
  incrementally without a streaming parser.

Bad input is skipped and reported to ``on_skip`` (default: a logged warning) as an
:class:`InputProblem`: invalid JSON lines (with their 1-based line number), spans without ids
or names, the unreadable tail of a truncated gzip file, empty files, files that cannot be read. A file in no known format raises
:class:`UnknownFormatError` when it was named explicitly, and is reported and skipped when it
was met while walking a directory.
"""

from __future__ import annotations

import gzip
import logging
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO

from otel_cycleguard.analyze.formats import (
    OTLP_JSON,
    DocumentSpans,
    describe_shape,
    document_spans,
)
from otel_cycleguard.analyze.problems import (
    InputError,
    InputProblem,
    ProblemKind,
    UnknownFormatError,
)
from otel_cycleguard.analyze.sources import Source, expand_sources, open_source
from otel_cycleguard.spans import SpanData
from otel_cycleguard.wire._json import loads
from otel_cycleguard.wire.otlp_json import spans_from_json

__all__ = ["OnSkip", "TraceReader", "read_spans"]

OnSkip = Callable[[InputProblem], None]

_log = logging.getLogger("otel_cycleguard.analyze")
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20
#: The most :func:`_lines` asks the source for at a time.
_LINE_BLOCK = 1 << 16
_GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)
_INVALID = object()


def read_spans(paths: Sequence[str], *, on_skip: OnSkip | None = None) -> Iterator[SpanData]:
    """Yield the spans of every trace file in ``paths`` (files, directories, ``-`` for stdin).

    Paths are checked now (:class:`InputError` for a missing one); files are read lazily.
    Use :class:`TraceReader` directly to get the counts afterwards.
    """
    return iter(TraceReader(paths, on_skip=on_skip))


def _log_problem(problem: InputProblem) -> None:
    """Default ``on_skip``: a warning, so skipped input is never silent."""
    _log.warning("skipped input: %s", problem)


class TraceReader:
    """Reads spans from trace files and counts what it read and skipped.

    Iterate it once to get the spans; afterwards ``spans_read``, ``problems`` (per kind) and
    ``formats`` (documents per format name; a JSON-lines file has one per line) describe the
    run, e.g. for a CLI summary line. ``documents`` counts the documents started so far: it
    changes before the first span of each document is yielded, so a consumer can tell where
    one document (one JSON line) ends and the next begins.
    """

    def __init__(self, paths: Sequence[str], *, on_skip: OnSkip | None = None) -> None:
        self._sources = expand_sources(paths)
        self._on_skip = on_skip or _log_problem
        self.spans_read = 0
        self.problems: Counter[ProblemKind] = Counter()
        self.formats: Counter[str] = Counter()
        self.documents = 0

    @property
    def problem_count(self) -> int:
        """How many pieces of input were skipped."""
        return sum(self.problems.values())

    def __iter__(self) -> Iterator[SpanData]:
        for source in self._sources:
            for found in self._read_source(source):
                yield from self._emit(found)

    def iter_documents(self) -> Iterator[list[SpanData]]:
        """The spans document by document, as lists: for consumers that work per document.

        Reads, converts and counts exactly as iterating the reader does, one document (one
        JSON line) at a time, without a generator step per span. A document whose spans were
        all skipped gives an empty list. A document's skipped spans are reported before its
        list is yielded.
        """
        for source in self._sources:
            for found in self._read_source(source):
                self.formats[found.format_name] += 1
                self.documents += 1
                spans = list(found.spans)
                self.spans_read += len(spans)
                yield spans

    def _skip(self, source: Source, line: int | None, kind: ProblemKind, reason: str) -> None:
        """Count a problem and hand it to ``on_skip``."""
        self.problems[kind] += 1
        self._on_skip(InputProblem(source.name, line, kind, reason))

    def _read_source(self, source: Source) -> Iterator[DocumentSpans]:
        """Read one file, reporting a truncated or corrupt gzip tail after what it could read.

        A file (or directory) that cannot be read is skipped and reported, so one unreadable
        file does not cost the report of the others.
        """
        if source.error is not None:
            self._skip(source, None, "unreadable", f"cannot read ({source.error})")
            return
        cursor = _Cursor()
        try:
            with open_source(source) as stream:
                try:
                    yield from self._read_stream(source, stream, cursor)
                except _GZIP_ERRORS as exc:
                    self._skip(
                        source,
                        None,
                        "truncated",
                        f"gzip data ends early or is corrupt after line {cursor.line} ({exc}); "
                        "kept what was read before",
                    )
        except UnknownFormatError:
            raise
        except InputError as exc:
            kept = f" after line {cursor.line}; kept what was read before" if cursor.line else ""
            self._skip(source, None, "unreadable", f"cannot read ({exc.reason}){kept}")

    def _read_stream(
        self, source: Source, stream: BinaryIO, cursor: _Cursor
    ) -> Iterator[DocumentSpans]:
        """Sniff the layout (JSON lines or one document) from the first lines, then read."""
        first = cursor.next_content(stream)
        if first is None:
            reason = "empty (0 bytes)" if cursor.line == 0 else "empty (only blank lines)"
            self._skip(source, None, "empty", reason)
            return
        first_line = first.removeprefix(_BOM).lstrip()
        if not first_line.startswith(b"{"):
            self._unknown(source, "does not start with a JSON object")
            return
        document = _parse(first_line)
        if document is not _INVALID:
            found = document_spans(document, self._reporter(source, cursor.line))
            if found is None:
                self._unknown(source, describe_shape(document))
                return
            yield found
            yield from self._read_lines(source, stream, cursor)
            return
        first_number = cursor.line
        second = cursor.next_content(stream)
        found = None
        if second is not None and (document := _parse(second)) is not _INVALID:
            found = document_spans(document, self._reporter(source, cursor.line))
        if found is not None:  # JSON lines whose first line is broken
            self._skip(source, first_number, "invalid_json", "invalid JSON line")
            yield found
            yield from self._read_lines(source, stream, cursor)
            return
        yield from self._read_document(source, first + (second or b""), stream)

    def _read_lines(
        self, source: Source, stream: BinaryIO, cursor: _Cursor
    ) -> Iterator[DocumentSpans]:
        """JSON lines: one document per line, bad lines skipped with their number."""
        for line in _lines(stream):
            cursor.line += 1
            if line.isspace():  # ``strip()`` would copy every line to test it
                continue
            spans = spans_from_json(line)  # the usual line, read by the core in one pass
            if spans is not None:
                yield DocumentSpans(OTLP_JSON, iter(spans))
                continue
            document = _parse(line)
            if document is _INVALID:
                self._skip(source, cursor.line, "invalid_json", "invalid JSON line")
                continue
            found = document_spans(document, self._reporter(source, cursor.line))
            if found is None:
                reason = f"not a trace document: {describe_shape(document)}"
                self._skip(source, cursor.line, "not_a_trace", reason)
                continue
            yield found

    def _read_document(
        self, source: Source, head: bytes, stream: BinaryIO
    ) -> Iterator[DocumentSpans]:
        """One JSON document, parsed whole; a truncated gzip tail still reports what it can."""
        chunks = [head]
        truncated: Exception | None = None
        try:
            while chunk := stream.read(_CHUNK):
                chunks.append(chunk)
        except _GZIP_ERRORS as exc:
            truncated = exc
        document = _parse(b"".join(chunks).lstrip().removeprefix(_BOM))
        del chunks
        if truncated is not None:
            self._skip(
                source, None, "truncated", f"gzip data ends early or is corrupt ({truncated})"
            )
        if document is _INVALID:
            if truncated is None:
                self._skip(source, None, "invalid_json", "invalid JSON document")
            return
        found = document_spans(document, self._reporter(source, None))
        if found is None:
            self._unknown(source, describe_shape(document))
            return
        yield found

    def _emit(self, found: DocumentSpans) -> Iterator[SpanData]:
        """Yield a document's spans, counting them and the format."""
        self.formats[found.format_name] += 1
        self.documents += 1
        for span in found.spans:
            self.spans_read += 1
            yield span

    def _unknown(self, source: Source, detail: str) -> None:
        """Raise for a file named explicitly; skip a file met in a directory walk."""
        if not source.found_in_directory:
            raise UnknownFormatError(source.name, detail)
        self._skip(source, None, "unknown_format", f"not a trace file ({detail})")

    def _reporter(self, source: Source, line: int | None) -> Callable[[str], None]:
        """A callback for span converters, reporting skipped spans at this file and line."""
        return lambda reason: self._skip(source, line, "invalid_span", reason)


def _lines(stream: BinaryIO) -> Iterator[bytes]:
    """The stream's lines, each with its newline, read in blocks of at most ``_LINE_BLOCK``.

    Why not ``for line in stream``: ``BufferedReader.readline`` looks for the newline a byte at
    a time and refills an 8 KiB buffer, which cost 3 % of ``analyze`` on lines of 40 KiB;
    ``bytes.find`` runs at ``memchr`` speed. ``read1`` returns what one read of the source
    gives, so a pipe (``tail -f ... | cycleguard analyze -``) is still read line by line as it
    comes. A line longer than a block is joined once, from its parts. Blank lines come out as
    they are (the caller skips them).
    """
    read = getattr(stream, "read1", stream.read)
    parts: list[bytes] = []
    while block := read(_LINE_BLOCK):
        start = 0
        while (end := block.find(b"\n", start)) >= 0:
            if parts:  # the first line of the block ends one begun in earlier blocks
                parts.append(block[start : end + 1])
                yield b"".join(parts)
                parts = []
            else:
                yield block[start : end + 1]
            start = end + 1
        if start < len(block):
            parts.append(block[start:])
    if parts:
        yield b"".join(parts)


class _Cursor:
    """The 1-based number of the last line read, shared with the truncation report."""

    def __init__(self) -> None:
        self.line = 0

    def next_content(self, stream: BinaryIO) -> bytes | None:
        """The next non-blank line, or None at the end."""
        while line := stream.readline():
            self.line += 1
            if line.strip():
                return line
        return None


def _parse(data: bytes) -> object:
    """Parsed JSON, or ``_INVALID``."""
    try:
        return loads(data)
    except (ValueError, RecursionError):
        return _INVALID
