"""Fixtures for the OpenTelemetry edge: a real provider with the guard installed."""

from __future__ import annotations

import pytest
from otel_rig import make_rig


@pytest.fixture(name="rig")
def fixture_rig():
    """A TracerProvider with CycleGuardSpanProcessor, a signal annotator and a memory exporter."""
    rig = make_rig()
    yield rig
    rig.provider.shutdown()
