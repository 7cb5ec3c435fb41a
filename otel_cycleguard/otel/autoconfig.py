"""Drop-in installation: ``otel_cycleguard.install()`` and the ``opentelemetry-instrument`` hook.

The SDK has no setting that loads span processors, but the contrib loader runs every
``opentelemetry_post_instrument`` entry point after the global provider exists; ours installs
the processor when ``CYCLEGUARD_ENABLED`` is true, so an unchanged agent run with
``opentelemetry-instrument python agent.py`` is guarded.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider

from otel_cycleguard import installation
from otel_cycleguard.compose import CatchUp, assemble, default_escalator
from otel_cycleguard.config import ConfigError, CycleGuardConfig, load_config
from otel_cycleguard.escalate.hitl import Escalator
from otel_cycleguard.escalate.progress import ProgressStore
from otel_cycleguard.guard import Observer
from otel_cycleguard.metrics import CycleGuardMetrics
from otel_cycleguard.otel.annotate import SignalAnnotator
from otel_cycleguard.otel.processor import CycleGuardSpanProcessor

__all__ = ["install", "installed_on", "post_instrument", "uninstall"]

logger = logging.getLogger("otel_cycleguard")
_lock = threading.Lock()
_TRUE = ("1", "true", "yes", "on")
_hook_failed = False  # the hook runs twice (pre and post instrument): report a failure once


# The processor installed on each provider (install() is idempotent per provider); weak, so a
# provider that is dropped takes its entry with it. Nothing is set on the provider itself.
_installed: weakref.WeakKeyDictionary[SdkTracerProvider, CycleGuardSpanProcessor] = (
    weakref.WeakKeyDictionary()
)


def installed_on(provider: SdkTracerProvider) -> CycleGuardSpanProcessor | None:
    """The processor :func:`install` added to ``provider``, if any."""
    return _installed.get(provider)


def uninstall(provider: SdkTracerProvider) -> None:
    """Shut down the processor installed on ``provider`` and forget it, so that a later
    :func:`install` adds a fresh one (SDK providers cannot remove a processor: the old one
    stays registered, inert)."""
    processor = _installed.pop(provider, None)
    if processor is not None:
        processor.shutdown()
        if installation.current().processor is processor:
            installation.set_current(None)


def install(
    config: CycleGuardConfig | None = None,
    *,
    tracer_provider: Any = None,
    observers: list[Observer] | None = None,
    annotate: bool = True,
    escalator: Escalator | None = None,
    progress_store: ProgressStore | None = None,
    metrics: CycleGuardMetrics | None = None,
    metrics_port: int | None = None,
    background: bool = True,
) -> CycleGuardSpanProcessor | None:
    """Add a :class:`CycleGuardSpanProcessor` to the SDK tracer provider (global by default).

    Wires the whole guard: trace annotation, Prometheus metrics (``metrics=`` your own
    :class:`CycleGuardMetrics`, or ``metrics_port=`` to serve the default registry), and the
    escalation protocol (``escalator=``: webhook, callable or console; by default a webhook
    when ``escalation.webhook_url`` is configured). The engine is reachable as
    ``processor.escalation`` and is the default for :func:`otel_cycleguard.check`.
    ``background`` (the default) detects on a worker thread instead of inside ``on_end``, so
    the agent's thread only pays a queue append (see :class:`CycleGuardSpanProcessor`);
    enforcement points and ``force_flush()`` drain the queue first, so what the agent is told
    does not change. ``background=False`` detects inline (observers see signals at once).

    Idempotent: a second call returns the processor already installed. Returns ``None`` (and
    logs why) when the provider is not opentelemetry-sdk's, since only that one accepts span
    processors. Configuration defaults to :func:`load_config` (file + ``CYCLEGUARD_*``).
    """
    provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
    if not isinstance(provider, SdkTracerProvider):
        logger.warning(
            "otel-cycleguard not installed: the tracer provider is %s, not opentelemetry-sdk's "
            "TracerProvider; set one up first (trace.set_tracer_provider(TracerProvider())) or "
            "pass tracer_provider=",
            type(provider).__name__,
        )
        return None
    with _lock:
        existing = installed_on(provider)
        if existing is not None:
            logger.debug("otel-cycleguard already installed on this tracer provider")
            return existing
        config = config if config is not None else load_config()
        if metrics is None and metrics_port is not None:
            metrics = CycleGuardMetrics()
        if metrics is not None and metrics_port is not None:
            metrics.start_http_server(metrics_port)
        catch_up = CatchUp()  # background mode: enforcement points drain the queue first
        assembly = assemble(
            config,
            observers=[*(observers or ()), *([SignalAnnotator(provider)] if annotate else [])],
            metrics=metrics,
            escalator=escalator if escalator is not None else default_escalator(config),
            progress_store=progress_store,
            before_take=catch_up if background else None,
        )
        processor = CycleGuardSpanProcessor(
            assembly.guard, background=background, escalation=assembly.engine, metrics=metrics
        )
        if background:
            catch_up.bind(processor.drain)
            # atexit runs last-registered first: this drain runs before the SDK's own
            # provider shutdown, so late signals still reach the exporters.
            atexit.register(_drain_at_exit, weakref.ref(processor))
        provider.add_span_processor(processor)
        _installed[provider] = processor
        installation.set_current(installation.Installation(assembly.engine, processor))
    logger.info(
        "otel-cycleguard installed (profile %s); loops will be marked on traces as "
        "cycleguard.signal spans",
        config.profile,
    )
    return processor


def _drain_at_exit(ref: weakref.ref[CycleGuardSpanProcessor]) -> None:
    processor = ref()
    if processor is not None:
        processor.drain()


def post_instrument(*args: Any, **kwargs: Any) -> None:
    """Entry point for ``opentelemetry-instrument``: install when ``CYCLEGUARD_ENABLED`` is set.

    Registered as both the pre- and the post-instrument hook (see pyproject.toml), so a failure
    is reported once, in one line: the agent must start, and its operator must see that it runs
    without the guard and why.
    """
    global _hook_failed
    if os.environ.get("CYCLEGUARD_ENABLED", "").strip().lower() not in _TRUE or _hook_failed:
        return
    try:
        install()
    except ConfigError as exc:  # a bad config must not stop the agent from starting
        _hook_failed = True
        logger.error(
            "otel-cycleguard is OFF, this agent runs unguarded: bad configuration: %s", exc
        )
    except Exception as exc:
        _hook_failed = True
        logger.error(
            "otel-cycleguard is OFF, this agent runs unguarded: could not install (%s: %s)",
            type(exc).__name__,
            exc,
        )
        logger.debug("otel-cycleguard install failure", exc_info=exc)
