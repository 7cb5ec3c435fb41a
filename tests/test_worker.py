"""The one background worker shared by the span processor and the service's ingestor."""

from __future__ import annotations

import os
import threading
import time

import pytest

from otel_cycleguard import _errors
from otel_cycleguard.worker import Worker


def test_wake_runs_the_step_at_once_and_stop_runs_it_a_last_time() -> None:
    ran = threading.Event()
    calls: list[bool] = []
    worker: Worker

    def step() -> None:
        calls.append(worker.stopping)
        ran.set()

    worker = Worker("t-worker", step)  # no timeout: only wake-ups run the step
    worker.start()
    worker.wake()
    assert ran.wait(5.0)
    assert worker.stop(5.0)
    assert not worker.is_alive()
    assert calls[0] is False and calls[-1] is True  # the last step sees the stop


def test_the_timeout_runs_the_step_without_a_wake_up() -> None:
    count = 0
    done = threading.Event()

    def step() -> None:
        nonlocal count
        count += 1
        if count >= 3:
            done.set()

    worker = Worker("t-periodic", step, lambda: 0.01)
    worker.start()
    assert done.wait(5.0)
    assert worker.stop(5.0)


def test_a_failing_step_goes_through_the_guard_and_the_loop_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CYCLEGUARD_RAISE_INTERNAL_ERRORS", "0")
    before = _errors.internal_error_count()
    calls = 0
    second = threading.Event()

    def step() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("bug")
        second.set()

    worker = Worker("t-failing", step, lambda: 0.01)
    worker.start()
    assert second.wait(5.0)
    assert worker.stop(5.0)
    assert _errors.internal_error_count() > before


def test_a_stopped_worker_does_not_start_again_and_stop_without_start_is_fine() -> None:
    worker = Worker("t-idle", lambda: None)
    assert worker.stop(0.1)
    worker.start()
    assert not worker.is_alive()
    worker.after_fork()
    assert not worker.is_alive()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_after_fork_a_started_worker_runs_again_in_the_child() -> None:
    ran = threading.Event()
    worker = Worker("t-fork", ran.set)
    worker.start()
    pid = os.fork()
    if pid == 0:  # the child: the thread did not survive; after_fork starts a fresh one
        code = 1
        try:
            ran.clear()
            worker.after_fork()
            worker.wake()
            code = 0 if ran.wait(5.0) and worker.stop(5.0) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert worker.stop(5.0)
    time.sleep(0)
