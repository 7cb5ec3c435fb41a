"""The compiled detector (rust/cycleguard-core, issue 18) beside the Python reference.

:class:`CompiledDetector` is a :class:`~otel_cycleguard.detect.session.Detector` whose sessions
are the Rust core's (``_core.Session``): one crossing from Python per tool call or model turn,
the same signals. While the port is proven (``benchmarks/parity.py --core compiled``), the
Python detector stays the reference.
"""

from __future__ import annotations

from otel_cycleguard import _core
from otel_cycleguard.detect.session import Detector
from otel_cycleguard.detect.settings import DetectorSettings, SupportsDetectorSettings

__all__ = ["CompiledDetector", "CompiledSessionDetector"]


class CompiledSessionDetector(_core.Session):
    """One session's loop state, in the compiled core."""

    __slots__ = ()


class CompiledDetector(Detector):
    """A detector whose sessions run in the compiled core."""

    def __init__(self, settings: DetectorSettings | SupportsDetectorSettings) -> None:
        super().__init__(settings)
        # the Python normalizer masks what the core leaves to Python's regular expressions
        # (non-ASCII text, custom mask patterns)
        self._core = _core.Detector(self.settings, self.normalizer)

    def session(  # type: ignore[override]
        self, key: str, *, agent: str | None = None, subagent: bool = False
    ) -> CompiledSessionDetector:
        name, profile = self.settings.profile_for(agent, subagent=subagent)
        return CompiledSessionDetector(self._core, self, name, profile, key, agent)
