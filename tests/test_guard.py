"""CycleGuard: a bounded session table (LRU + idle TTL) that tells observers what it saw."""

from __future__ import annotations

import pytest

from otel_cycleguard import CycleGuard, Dimension, Level, ToolCall, load_config
from otel_cycleguard.guard import Observer


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Events(Observer):
    def __init__(self) -> None:
        self.log: list[tuple] = []

    def session_started(self, entry):
        self.log.append(("started", entry.key))

    def session_evicted(self, entry, cause):
        self.log.append(("evicted", entry.key, cause))

    def signals(self, entry, signals, span_ref):
        self.log.extend(("signal", entry.key, s.level, span_ref) for s in signals)


def grep(q="x"):
    return ToolCall("grep", {"q": q}, "none")


@pytest.fixture(name="clock")
def fixture_clock():
    return FakeClock()


def make_guard(clock, observers=(), **config):
    return CycleGuard(load_config(environ={}, **config), observers=observers, clock=clock)


class TestLruEviction:
    """A full table drops the least recently used session, counted under `lru`."""

    def test_oldest_session_is_evicted_and_counted(self, clock):
        """The fourth session pushes out the least recently used of three."""
        events = Events()
        guard = make_guard(clock, [events], max_sessions=3)
        for key in ("a", "b", "c"):
            guard.observe_tool_call(key, grep())
        guard.observe_tool_call("a", grep())  # touch a: b is now the oldest
        guard.observe_tool_call("d", grep())
        assert len(guard) == 3
        assert guard.get("b") is None and guard.get("a") is not None
        assert guard.evicted == {"lru": 1, "idle": 0}
        assert ("evicted", "b", "lru") in events.log

    def test_an_evicted_session_starts_afresh(self, clock):
        """A session coming back after eviction has lost its streak."""
        guard = make_guard(clock, max_sessions=1)
        guard.observe_tool_call("a", grep())
        guard.observe_tool_call("a", grep())
        guard.observe_tool_call("b", grep())
        assert guard.observe_tool_call("a", grep()) == []
        assert guard.counters("a")["identical_call"] == 1


class TestIdleTtl:
    """Sessions idle past `session_idle_ttl_s` are dropped, counted under `idle`."""

    def test_idle_sessions_expire_lazily_on_the_next_new_session(self, clock):
        """Creating a session sweeps out the ones idle past the TTL."""
        events = Events()
        guard = make_guard(clock, [events], session_idle_ttl_s=60)
        guard.observe_tool_call("old", grep())
        clock.now += 30
        guard.observe_tool_call("recent", grep())
        clock.now += 31
        guard.observe_tool_call("new", grep())
        assert guard.get("old") is None and guard.get("recent") is not None
        assert guard.evicted == {"lru": 0, "idle": 1}
        assert ("evicted", "old", "idle") in events.log

    def test_expire_idle_sweeps_explicitly(self, clock):
        """expire_idle drops every idle session and returns how many."""
        guard = make_guard(clock, session_idle_ttl_s=10)
        for key in "abc":
            guard.observe_tool_call(key, grep())
        clock.now += 11
        assert guard.expire_idle() == 3
        assert len(guard) == 0 and guard.evicted["idle"] == 3

    def test_activity_keeps_a_session_alive(self, clock):
        """A session seen within the TTL is not dropped, however old it is."""
        guard = make_guard(clock, session_idle_ttl_s=10)
        for _ in range(5):
            guard.observe_tool_call("busy", grep())
            clock.now += 9
        assert guard.expire_idle() == 0
        assert guard.counters("busy")["identical_call"] == 5


class TestHibernation:
    """Sessions quiet past `session_hibernate_after_s` are packed small and wake on their next
    call with their state intact; the LRU, the TTL and the restart state still see them."""

    def test_quiet_sessions_hibernate_when_a_session_is_created(self, clock):
        guard = make_guard(clock, session_hibernate_after_s=30)
        guard.observe_tool_call("quiet", grep())
        clock.now += 20
        guard.observe_tool_call("recent", grep())
        clock.now += 11
        guard.observe_tool_call("new", grep())
        assert guard.get("quiet").detector.hibernated
        assert not guard.get("recent").detector.hibernated
        assert guard.hibernated == 1 and len(guard) == 3

    def test_a_woken_session_goes_on_counting_where_it_stopped(self, clock):
        """Three identical calls, a quiet spell, two more: the TERM at the fifth as always."""
        events = Events()
        guard = make_guard(clock, [events], session_hibernate_after_s=30)
        for _ in range(3):
            guard.observe_tool_call("s", grep())
        clock.now += 31
        assert guard.expire_idle() == 0
        assert guard.get("s").detector.hibernated
        assert guard.counters("s")["identical_call"] == 3
        assert guard.get("s").detector.hibernated  # reading the counters did not wake it
        guard.observe_tool_call("s", grep())
        assert not guard.get("s").detector.hibernated and guard.hibernated == 0
        guard.observe_tool_call("s", grep())
        assert [e[2] for e in events.log if e[0] == "signal"] == [Level.WARN, Level.TERM]

    def test_the_lru_drops_sleeping_sessions_first(self, clock):
        guard = make_guard(clock, max_sessions=3, session_hibernate_after_s=30)
        guard.observe_tool_call("a", grep())
        guard.observe_tool_call("b", grep())
        clock.now += 31
        guard.observe_tool_call("a", grep())  # wakes a: b, still asleep, is the oldest
        guard.observe_tool_call("c", grep())
        guard.observe_tool_call("d", grep())
        assert guard.get("b") is None and guard.get("a") is not None
        assert len(guard) == 3 and guard.evicted == {"lru": 1, "idle": 0}

    def test_sleeping_sessions_still_expire_and_are_saved(self, clock):
        guard = make_guard(clock, session_idle_ttl_s=100, session_hibernate_after_s=10)
        for key in "ab":
            guard.observe_tool_call(key, grep())
        clock.now += 50
        guard.observe_tool_call("c", grep())
        assert guard.hibernated == 2
        assert [s["key"] for s in guard.export_sessions()] == ["a", "b", "c"]
        clock.now += 51
        assert guard.expire_idle() == 2
        assert guard.get("a") is None and guard.get("c") is not None

    def test_a_session_that_cannot_hibernate_stays_tracked_and_usable(self, clock):
        class Borrowed:  # a detector in use elsewhere: PyO3 refuses the exclusive borrow
            def __init__(self, real):
                self.real = real

            def hibernate(self):
                raise RuntimeError("Already borrowed")

            def __getattr__(self, name):
                return getattr(self.real, name)

        guard = make_guard(clock, session_hibernate_after_s=30)
        guard.observe_tool_call("a", grep())
        guard.get("a").detector = Borrowed(guard.get("a").detector)
        clock.now += 31
        guard.observe_tool_call("b", grep())  # the sweep meets the refusal and goes on
        assert len(guard) == 2
        guard.observe_tool_call("a", grep())
        assert guard.counters("a")["identical_call"] == 2

    def test_tables_stay_whole_when_most_sessions_go_to_sleep_at_once(self, clock):
        """Past 1,024 sessions put to sleep by one sweep the awake table is copied afresh
        (to give back its room): nothing is lost and the order still holds."""
        guard = make_guard(clock, session_hibernate_after_s=30)
        for i in range(1500):
            guard.observe_tool_call(f"s{i}", grep())
        clock.now += 20
        guard.observe_tool_call("late", grep())
        clock.now += 11
        guard.observe_tool_call("new", grep())
        assert guard.hibernated == 1500 and len(guard) == 1502
        guard.observe_tool_call("s7", grep())
        assert guard.counters("s7")["identical_call"] == 2
        assert [s["key"] for s in guard.export_sessions()][-3:] == ["late", "new", "s7"]

    def test_none_never_hibernates(self, clock):
        guard = make_guard(clock, session_hibernate_after_s=None)
        guard.observe_tool_call("a", grep())
        clock.now += 3000
        guard.observe_tool_call("b", grep())
        assert guard.hibernated == 0 and not guard.get("a").detector.hibernated


class TestObservers:
    """Observers hear about sessions and signals; a failing observer harms nobody."""

    def test_signals_carry_the_span_ref(self, clock):
        """The caller's span_ref is handed to the observer with each signal."""
        events = Events()
        guard = make_guard(clock, [events])
        for i in range(5):
            guard.observe_tool_call("s", grep(), span_ref=i)
        assert [e for e in events.log if e[0] == "signal"] == [
            ("signal", "s", Level.WARN, 2),
            ("signal", "s", Level.TERM, 4),
        ]
        assert guard.get("s").first_term_step == 4

    def test_a_failing_observer_is_logged_and_skipped(self, clock, caplog):
        """An observer that raises does not stop detection nor the observers after it."""

        class Broken(Observer):
            def tool_call(self, entry, call):
                raise RuntimeError("observer bug")

        events = Events()
        guard = make_guard(clock, [Broken(), events])
        guard.observe_tool_call("s", grep())
        assert ("started", "s") in events.log
        assert "observer bug" in caplog.text


class TestSessions:
    """Per-session state, profiles and resets."""

    def test_subagent_sessions_use_the_subagent_profile(self, clock):
        """`subagent=True` picks the configured sub-agent profile for a new session."""
        guard = make_guard(clock)
        guard.observe_tool_call("child", grep(), subagent=True)
        guard.observe_tool_call("main", grep())
        assert guard.get("child").detector.profile_name == "subagent"
        assert guard.get("main").detector.profile_name == "general"

    def test_reset_clears_one_dimension(self, clock):
        """After a reset the identical-call streak starts over."""
        guard = make_guard(clock)
        for _ in range(3):
            guard.observe_tool_call("s", grep())
        assert guard.reset("s", Dimension.IDENTICAL_CALL) is True
        assert guard.counters("s")["identical_call"] == 0
        assert guard.reset("unknown", Dimension.IDENTICAL_CALL) is False

    def test_agent_name_is_filled_in_later(self, clock):
        """A session first seen without an agent name takes it from a later call."""
        guard = make_guard(clock)
        guard.observe_tool_call("s", grep())
        guard.observe_tool_call("s", grep(), agent="coder")
        assert guard.get("s").agent == "coder"


class Calls(Observer):
    """Hears tool calls only (the other events stay the base no-ops)."""

    def __init__(self, name: str, heard: list) -> None:
        self.name = name
        self.heard = heard

    def tool_call(self, entry, call):
        self.heard.append((self.name, call.arguments["q"]))


def test_observers_added_or_replaced_after_the_first_span_are_told():
    heard: list = []
    guard = CycleGuard(load_config(environ={}), observers=[Calls("a", heard)])
    guard.observe_tool_call("s", grep("1"))
    guard.observers.append(Calls("b", heard))
    guard.observe_tool_call("s", grep("2"))
    guard.observers[0] = Calls("c", heard)
    guard.observe_tool_call("s", grep("3"))
    del guard.observers[0]
    guard.observe_tool_call("s", grep("4"))
    guard.observers = [Calls("d", heard)]
    guard.observe_tool_call("s", grep("5"))
    guard.observers += [Calls("e", heard)]
    guard.observe_tool_call("s", grep("6"))
    assert heard == [
        ("a", "1"),
        ("a", "2"), ("b", "2"),
        ("c", "3"), ("b", "3"),
        ("b", "4"),
        ("d", "5"),
        ("d", "6"), ("e", "6"),
    ]  # fmt: skip


def test_duck_typed_observers_and_instance_overrides_are_told():
    heard: list = []

    class Plain:  # not an Observer subclass: only what it has is called
        def tool_call(self, entry, call):
            heard.append(("plain", call.arguments["q"]))

    overridden = Observer()
    overridden.tool_call = lambda entry, call: heard.append(("instance", call.arguments["q"]))
    guard = CycleGuard(load_config(environ={}), observers=[Plain(), overridden, Observer()])
    guard.observe_tool_call("s", grep("1"))
    guard.end_session("s")  # Plain has no session_ended: skipped, no error
    assert heard == [("plain", "1"), ("instance", "1")]
