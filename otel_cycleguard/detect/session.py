"""Per-session detection: the compiled core's sessions (rust/cycleguard-core, issue 18).

:class:`Detector` holds what is shared (the settings, the normaliser, and in the core per
profile the settings its sessions read); :class:`SessionDetector` is one session's
constant-size state, a struct of the dimensions and rules in the core, fed one tool call or
model turn per crossing. Raw arguments, results and texts are hashed on arrival and dropped.
docs/detection.md says what each dimension and rule counts; docs/architecture.md how the core
is laid out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_cycleguard import _core
from otel_cycleguard.detect.normalize import Normalizer
from otel_cycleguard.detect.settings import (
    DetectorSettings,
    ProfileSettings,
    SupportsDetectorSettings,
)

__all__ = ["Detector", "SessionDetector"]


class SessionDetector(_core.Session):
    """One session's loop state. Not thread-safe: callers serialise access per session.

    Methods (in the core): ``observe_tool_call(call)`` and ``observe_model_turn(turn)`` return
    the signals an observation fired (at most one per dimension, in the escalation order);
    ``reset(dimension)`` is a self-heal; ``counters()`` the current count of every dimension;
    ``to_state()`` / ``restore_state(state)`` the service's restart state (the format of the
    pure-Python detector, version 2). Properties: ``key``, ``agent``, ``tool_calls``,
    ``model_turns``, ``profile_name``, ``profile``, ``detector``.
    """

    __slots__ = ()

    if TYPE_CHECKING:  # what the core provides, for readers and type checkers
        detector: Detector
        profile: ProfileSettings


class Detector:
    """Shared parts of detection for one configuration; makes sessions."""

    def __init__(self, settings: DetectorSettings | SupportsDetectorSettings) -> None:
        if not isinstance(settings, DetectorSettings):
            settings = settings.detector_settings()
        self.settings = settings
        # Masks what the core leaves to Python's regular expressions (non-ASCII text, custom
        # mask patterns) and hashes values the core cannot read (see normalize.py).
        self.normalizer = Normalizer(
            settings.mask_patterns,
            mask_defaults=settings.mask_defaults,
            result_fields=settings.result_fields,
        )
        self._core = _core.Detector(settings, self.normalizer)

    def session(
        self, key: str, *, agent: str | None = None, subagent: bool = False
    ) -> SessionDetector:
        """A fresh detector for one session, with the profile its agent name calls for."""
        name, profile = self.settings.profile_for(agent, subagent=subagent)
        return SessionDetector(self._core, self, name, profile, key, agent)

    def text_digest(self, text: str, shingle_size: int) -> tuple[int, list[int]] | None:
        """``text_loop``'s view of a model turn's text: (hash of its normalised words, the
        bottom-k sketch of their shingles), or None when it has no word."""
        return self._core.text_digest(text, shingle_size)
