"""Fixtures for the framework tests (helpers live in ``_frameworks_support``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _frameworks_support import Guarded, install_guard
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@pytest.fixture
def guarded() -> Iterator[Guarded]:
    """A fresh SDK provider (never the global one) -> InMemorySpanExporter, guard installed."""
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield install_guard(provider, exporter)
    provider.shutdown()
