"""Plain-text tables for the terminal report: standard library only, no column ever dropped.

Columns are as wide as their widest cell. When a width limit is given (``COLUMNS`` or the
terminal's) and the table is wider, the wrappable columns are folded onto more lines, widest
first, down to a floor; if that is still too wide, lines run long rather than lose a column.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

__all__ = ["Table", "report_width"]

_GAP = "  "
_MIN_FOLD = 12
_RESET = "\x1b[0m"


def report_width(stream: TextIO, width: int | None = None) -> int | None:
    """The width to fit: ``width``, else ``$COLUMNS``, else a terminal's; None (no limit)."""
    if width is not None:
        return width
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        pass
    return None


@dataclass
class Table:
    """Rows of text under optional headers; ``right`` aligns numbers, ``fold`` may wrap."""

    headers: Sequence[str] | None
    right: frozenset[int] = frozenset()
    fold: frozenset[int] = frozenset()
    rows: list[tuple[list[str], list[str | None]]] = field(default_factory=list)

    def add_row(self, *cells: str, styles: Sequence[str | None] = ()) -> None:
        """One row; ``styles`` are ANSI codes per cell, shown only when colour is on."""
        padded = list(styles) + [None] * (len(cells) - len(styles))
        self.rows.append((list(cells), padded))

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def _widths(self, limit: int | None) -> list[int]:
        count = len(self.headers) if self.headers else len(self.rows[0][0])
        widths = [0] * count
        for cells in ([list(self.headers)] if self.headers else []) + [r[0] for r in self.rows]:
            for index, cell in enumerate(cells):
                widths[index] = max(widths[index], len(cell))
        if limit is None:
            return widths
        floors = [
            max(_MIN_FOLD, len(self.headers[i]) if self.headers else 0) if i in self.fold else w
            for i, w in enumerate(widths)
        ]
        while sum(widths) + len(_GAP) * (count - 1) > limit:
            foldable = [i for i in self.fold if widths[i] > floors[i]]
            if not foldable:
                break
            widest = max(foldable, key=lambda i: widths[i])
            widths[widest] -= 1
        return widths

    def render(self, title: str | None = None, *, width: int | None, color: bool) -> list[str]:
        """The table's lines (title, headers and a rule, then rows), fitted to ``width``."""
        if not self.rows:
            return []
        widths = self._widths(width)
        lines = [title] if title else []
        if self.headers:
            lines += self._lines(list(self.headers), [None] * len(widths), widths, False)
            lines.append(_GAP.join("-" * w for w in widths).rstrip())
        for cells, styles in self.rows:
            lines += self._lines(cells, styles, widths, color)
        return lines

    def _lines(
        self, cells: list[str], styles: list[str | None], widths: list[int], color: bool
    ) -> list[str]:
        pieces = [
            _fold(cell, widths[i]) if i in self.fold else [cell] for i, cell in enumerate(cells)
        ]
        height = max(len(p) for p in pieces)
        out = []
        for row in range(height):
            parts = []
            for i, piece in enumerate(pieces):
                text = piece[row] if row < len(piece) else ""
                text = text.rjust(widths[i]) if i in self.right else text.ljust(widths[i])
                if color and styles[i] and text.strip():
                    text = f"{styles[i]}{text}{_RESET}"
                parts.append(text)
            out.append(_GAP.join(parts).rstrip())
        return out


def _fold(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width``: at spaces where it can, anywhere where not."""
    if len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]
