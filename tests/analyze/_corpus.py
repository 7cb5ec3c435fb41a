"""Where the development corpus is: ``../shared/corpus`` beside the repository, else where this
workplace keeps it (tests that need it skip when it is in neither place)."""

from __future__ import annotations

from pathlib import Path

_CANDIDATES = (
    Path(__file__).resolve().parents[3] / "shared" / "corpus",
    Path("/work/shared/corpus"),
)
CORPUS = next((path for path in _CANDIDATES if path.is_dir()), _CANDIDATES[-1])
