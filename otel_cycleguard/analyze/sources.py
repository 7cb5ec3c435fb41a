"""Where trace bytes come from: files, directories, stdin; gzip recognised by its magic bytes.

Paths are resolved up front, so a typo fails before any output rather than after minutes of
reading. Opening happens lazily, one file at a time.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from otel_cycleguard.analyze.problems import InputError

__all__ = ["STDIN", "Source", "expand_sources", "open_source"]

STDIN = "-"
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class Source:
    """One input stream: a file (``path``) or stdin (``path`` None).

    ``found_in_directory`` marks files met while walking a directory: those may be anything
    (a README next to the traces), so an unknown format there is skipped, not an error.
    ``error`` is set for a part of a directory that could not be listed: the reader reports
    it as skipped and goes on with the rest.
    """

    name: str
    path: Path | None
    found_in_directory: bool = False
    error: str | None = None


def expand_sources(paths: Sequence[str]) -> list[Source]:
    """Turn command-line paths into sources; directories are walked recursively, sorted.

    Hidden files and directories (name starting with a dot) are left out of directory walks.
    Raises :class:`InputError` for a path that does not exist or is not a file or directory.
    """
    if isinstance(paths, (str, bytes)):
        raise TypeError("paths must be a sequence of path strings, not a single string")
    sources: list[Source] = []
    for raw in paths:
        if raw == STDIN:
            sources.append(Source("<stdin>", None))
            continue
        path = Path(raw)
        if path.is_dir():
            sources.extend(_walk(path))
        elif path.is_file():
            sources.append(Source(raw, path))
        elif path.exists():
            raise InputError(raw, "not a regular file or directory")
        else:
            raise InputError(raw, "no such file or directory")
    return sources


def _walk(directory: Path) -> list[Source]:
    """All non-hidden regular files under ``directory``, sorted by path; an unlistable
    subdirectory becomes a source carrying its error, so the rest is still read."""
    failed: list[Source] = []

    def fail(error: OSError) -> None:
        name = str(error.filename or directory)
        failed.append(Source(name, None, True, error=error.strerror or str(error)))

    found: list[Path] = []
    for root, dirs, files in os.walk(directory, onerror=fail):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        for name in files:
            path = Path(root, name)
            if not name.startswith(".") and path.is_file():
                found.append(path)
    sources = [Source(str(path), path, True) for path in found] + failed
    return sorted(sources, key=lambda source: Path(source.name))  # by path parts, as before


@contextlib.contextmanager
def open_source(source: Source) -> Iterator[BinaryIO]:
    """Open a source for binary reading, decompressing gzip when its first bytes say so.

    The suffix is not trusted: ``.gz`` files that are plain text and gzip data without the
    suffix both read correctly. Stdin is not closed afterwards.
    """
    try:
        with _open_raw(source) as raw:
            if raw.peek(2)[:2] == _GZIP_MAGIC:
                with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
                    yield unzipped  # type: ignore[misc]
            else:
                yield raw
    except InputError:
        raise
    except (EOFError, gzip.BadGzipFile):
        raise  # truncated or corrupt gzip data: the reader reports it and keeps what it read
    except OSError as exc:
        raise InputError(source.name, exc.strerror or str(exc)) from exc


@contextlib.contextmanager
def _open_raw(source: Source) -> Iterator[io.BufferedReader]:
    """A peekable binary stream for the source."""
    if source.path is not None:
        with open(source.path, "rb") as handle:
            yield handle
        return
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise InputError(source.name, "stdin is not a byte stream")
    yield stream if hasattr(stream, "peek") else io.BufferedReader(stream)
