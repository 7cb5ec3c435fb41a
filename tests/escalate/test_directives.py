"""Mailboxes: directives wait for the agent's enforcement point; pauses block; terminations raise."""

from __future__ import annotations

import threading
import time

import pytest

from otel_cycleguard.escalate.directives import CycleTerminated, Directive, Mailbox, Mailboxes


def terminated(session: str = "s") -> CycleTerminated:
    return CycleTerminated(session, "cycle_detected", "The agent stopped.", "ref.json")


def test_messages_are_taken_once_in_order() -> None:
    boxes = Mailboxes()
    boxes.post("s", Directive("system", "first", "identical_call"))
    boxes.post("s", Directive("user", "second"))
    assert boxes.take("s") == [
        Directive("system", "first", "identical_call"),
        Directive("user", "second"),
    ]
    assert boxes.take("s") == []


def test_sessions_do_not_share_messages() -> None:
    boxes = Mailboxes()
    boxes.post("a", Directive("system", "for a"))
    assert boxes.take("b") == []
    assert [d.content for d in boxes.take("a")] == ["for a"]


def test_take_marks_an_enforcement_point_even_for_unknown_sessions() -> None:
    boxes = Mailboxes()
    assert boxes.enforcement_seen is False
    assert boxes.take("never-seen") == []
    assert boxes.enforcement_seen is True
    assert len(boxes) == 0  # an unknown session gets no mailbox


def test_queued_messages_are_capped_keeping_the_newest() -> None:
    boxes = Mailboxes()
    for i in range(Mailbox.MAX_MESSAGES + 5):
        boxes.post("s", Directive("system", str(i)))
    taken = [d.content for d in boxes.take("s")]
    assert len(taken) == Mailbox.MAX_MESSAGES
    assert taken[-1] == str(Mailbox.MAX_MESSAGES + 4) and taken[0] == "5"


def test_sessions_are_bounded_lru() -> None:
    boxes = Mailboxes(max_sessions=2)
    boxes.post("a", Directive("system", "a"))
    boxes.post("b", Directive("system", "b"))
    boxes.get("a")  # a is now the most recent
    boxes.post("c", Directive("system", "c"))
    assert len(boxes) == 2
    assert boxes.get("b", create=False) is None
    assert boxes.get("a", create=False) is not None


def test_terminated_raises_at_every_take() -> None:
    boxes = Mailboxes()
    boxes.post("s", Directive("system", "too late"))
    boxes.terminate("s", terminated())
    assert boxes.is_terminated("s") and not boxes.is_terminated("other")
    for _ in range(2):
        with pytest.raises(CycleTerminated) as caught:
            boxes.take("s")
    assert caught.value.reason == "cycle_detected" and caught.value.progress_ref == "ref.json"
    assert "cycle_detected" in str(caught.value)


def test_a_pause_blocks_until_resumed_then_delivers() -> None:
    boxes = Mailboxes()
    boxes.pause("s", "req-1", time.time() + 10)

    def human() -> None:
        time.sleep(0.3)
        boxes.post("s", Directive("user", "use the cache"))
        boxes.resume("s")

    threading.Thread(target=human).start()
    started = time.monotonic()
    got = boxes.take("s")
    elapsed = time.monotonic() - started
    assert 0.2 < elapsed < 5
    assert got == [Directive("user", "use the cache")]


def test_a_pause_ends_in_termination_raises() -> None:
    boxes = Mailboxes()
    boxes.pause("s", "req-1", time.time() + 10)
    threading.Timer(0.2, boxes.terminate, args=("s", terminated())).start()
    started = time.monotonic()
    with pytest.raises(CycleTerminated):
        boxes.take("s")
    assert time.monotonic() - started < 5


def test_a_pause_is_waited_on_only_until_deadline_plus_grace() -> None:
    boxes = Mailboxes()
    boxes.pause("s", "req-1", time.time() + 0.2)
    started = time.monotonic()
    assert boxes.take("s", grace_s=0.2) == []
    assert 0.3 < time.monotonic() - started < 0.4 + 1.0


def test_take_without_wait_does_not_block_on_a_pause() -> None:
    boxes = Mailboxes()
    boxes.post("s", Directive("system", "hint"))
    boxes.pause("s", "req-1", time.time() + 30)
    started = time.monotonic()
    assert [d.content for d in boxes.take("s", wait=False)] == ["hint"]
    assert time.monotonic() - started < 0.5


def test_resume_of_unknown_session_is_harmless() -> None:
    boxes = Mailboxes()
    boxes.resume("nobody")
    assert len(boxes) == 0
