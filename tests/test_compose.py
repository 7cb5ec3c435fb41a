"""One composition root: ``install()`` and ``cycleguard serve`` assemble the same collaborators.

Both build the guard, metrics, escalation engine and progress store through
``otel_cycleguard.compose.assemble``; each collaborator is handed to the next through its
constructor. What differs is what each needs: trace annotation in-process, recent signals and
an escalation journal in the service.
"""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from prometheus_client import CollectorRegistry

from otel_cycleguard import install
from otel_cycleguard.config import CycleGuardConfig
from otel_cycleguard.escalate.engine import EscalationEngine
from otel_cycleguard.metrics import CycleGuardMetrics
from otel_cycleguard.metrics_observer import MetricsObserver
from otel_cycleguard.otel import SignalAnnotator, autoconfig


def _kinds(observers) -> list[type]:
    return [type(observer) for observer in observers]


def test_install_assembles_annotation_metrics_then_the_engine(tmp_path):
    provider = TracerProvider()
    metrics = CycleGuardMetrics(CollectorRegistry())
    config = CycleGuardConfig.model_validate({"escalation": {"progress_dir": str(tmp_path)}})
    processor = install(config, tracer_provider=provider, metrics=metrics, background=True)
    try:
        assert processor is not None
        guard = processor.guard
        assert _kinds(guard.observers) == [SignalAnnotator, MetricsObserver, EscalationEngine]
        engine = guard.observers[-1]
        assert processor.escalation is engine and processor.metrics is metrics
        assert engine.guard is guard and engine.metrics is metrics
        # Background mode: enforcement points let detection catch up first, through the
        # mailboxes they read, wired at construction.
        assert engine.mailboxes.before_take is not None
        assert autoconfig.installed_on(provider) is processor
        assert install(config, tracer_provider=provider) is processor  # idempotent
        assert not hasattr(provider, "_cycleguard_processor")  # nothing set on the provider
    finally:
        autoconfig.uninstall(provider)
    assert autoconfig.installed_on(provider) is None


def test_the_service_assembles_recent_signals_metrics_then_the_engine(tmp_path):
    pytest.importorskip("otel_cycleguard.service.app")
    from otel_cycleguard.service.app import CycleGuardService, RecentSignals, ServiceSettings

    config = CycleGuardConfig.model_validate({"escalation": {"progress_dir": str(tmp_path)}})
    service = CycleGuardService(
        config, ServiceSettings(http_port=0, grpc_port=None, state_file=None)
    )
    guard = service.guard
    assert _kinds(guard.observers) == [RecentSignals, MetricsObserver, EscalationEngine]
    engine = guard.observers[-1]
    assert engine is service.engine and engine.journal is service.escalations
    assert engine.metrics is service.metrics
    assert engine.mailboxes.before_take is None  # the service has no agent to catch up with
