"""CycleGuardSpanProcessor on a real TracerProvider: sessions, sub-agents, late attributes."""

from __future__ import annotations

from opentelemetry import baggage, context
from opentelemetry.trace import StatusCode, format_trace_id
from otel_rig import agent_attrs, genai_tool, make_rig

from otel_cycleguard import Level


def repeat_tool(rig, times=5):
    for _ in range(times):
        with rig.tracer.start_as_current_span("execute_tool grep", attributes=genai_tool()):
            pass


class TestSessionKey:
    """Which session a tool span counts towards."""

    def test_from_the_span_itself(self, rig):
        """A tool span naming its conversation goes to that session, even with no agent span."""
        for _ in range(5):
            attrs = {**genai_tool(), "gen_ai.conversation.id": "conv-7"}
            rig.tracer.start_span("execute_tool grep", attributes=attrs).end()
        assert rig.sessions() == {"conv-7"}
        assert [s.level for _, _, s in rig.recorder.fired] == [Level.WARN, Level.TERM]

    def test_from_the_span_when_set_at_the_end(self, rig):
        """A conversation id set on the tool span just before it ends still picks the session."""
        span = rig.tracer.start_span("execute_tool grep", attributes=genai_tool())
        span.set_attribute("gen_ai.conversation.id", "late-conv")
        span.end()
        assert rig.sessions() == {"late-conv"}

    def test_from_an_ancestor_agent_span(self, rig):
        """Tool spans nested under an agent span (through other spans) use the agent's session."""
        attrs = agent_attrs("coder", **{"gen_ai.conversation.id": "conv-A"})
        with (
            rig.tracer.start_as_current_span("invoke_agent coder", attributes=attrs),
            rig.tracer.start_as_current_span("step 1"),
        ):
            repeat_tool(rig)
        assert rig.sessions() == {"conv-A"}
        assert {key for key, _, _ in rig.recorder.fired} == {"conv-A"}

    def test_from_openinference_session_on_the_agent(self, rig):
        """OpenInference's `session.id` on the agent span names the session."""
        attrs = {"openinference.span.kind": "AGENT", "session.id": "oi-9"}
        with rig.tracer.start_as_current_span("Planner", attributes=attrs):
            repeat_tool(rig, times=2)
        assert rig.sessions() == {"oi-9"}

    def test_from_traceloop_association_properties(self, rig):
        """Traceloop association properties on the workflow span name the session."""
        attrs = {
            "traceloop.span.kind": "workflow",
            "traceloop.entity.name": "wf",
            "traceloop.association.properties.session_id": "tl-1",
        }
        with rig.tracer.start_as_current_span("wf.workflow", attributes=attrs):
            repeat_tool(rig, times=2)
        assert rig.sessions() == {"tl-1"}

    def test_from_conversation_baggage_on_an_agent_span(self, rig):
        """`gen_ai.conversation.id` baggage names the session of an agent span without a hint."""
        token = context.attach(baggage.set_baggage("gen_ai.conversation.id", "bag-conv"))
        try:
            with rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")):
                repeat_tool(rig, times=2)
        finally:
            context.detach(token)
        assert rig.sessions() == {"bag-conv"}

    def test_from_session_baggage_on_bare_tool_spans(self, rig):
        """`session.id` baggage names the session of tool spans that have no agent span."""
        token = context.attach(baggage.set_baggage("session.id", "bag-sess"))
        try:
            repeat_tool(rig, times=2)
        finally:
            context.detach(token)
        assert rig.sessions() == {"bag-sess"}

    def test_from_baggage_in_an_explicit_parent_context(self, rig):
        """Baggage in the context passed to `start_span(context=...)` is read too."""
        ctx = baggage.set_baggage("session.id", "explicit")
        rig.tracer.start_span("execute_tool grep", context=ctx, attributes=genai_tool()).end()
        assert rig.sessions() == {"explicit"}

    def test_else_the_trace_id(self, rig):
        """Without any hint the trace is the session."""
        with rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")) as a:
            repeat_tool(rig, times=2)
        assert rig.sessions() == {format_trace_id(a.get_span_context().trace_id)}

    def test_separate_traces_are_separate_sessions(self, rig):
        """Two runs without hints do not add up: each trace counts on its own."""
        for _ in range(2):
            with rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")):
                repeat_tool(rig, times=3)
        assert len(rig.sessions()) == 2
        assert [s.level for _, _, s in rig.recorder.fired] == [Level.WARN, Level.WARN]


class TestOwnSpans:
    """The plugin's own `cycleguard.*` spans are never fed back into detection."""

    def test_signal_spans_are_not_observed(self, rig):
        """Signal spans reach the exporter but never count as tool calls or leave state."""
        with rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")):
            repeat_tool(rig, times=6)
        assert len(rig.finished("cycleguard.signal")) == 2
        assert len(rig.recorder.calls) == 6
        assert rig.processor.open_spans() == 0

    def test_a_span_named_like_ours_is_skipped_at_start(self, rig):
        """A `cycleguard.*` span is not tracked even inside an agent."""
        with (
            rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")),
            rig.tracer.start_as_current_span("cycleguard.custom"),
        ):
            assert rig.processor.open_spans() == 1  # only the agent span


class TestSubagents:
    """A child agent run under a delegating tool span is a sub-agent with its own session."""

    def run_delegation(self, rig, child_attrs):
        parent_attrs = agent_attrs("lead", **{"gen_ai.conversation.id": "conv-lead"})
        delegate = genai_tool("delegate_task", "{}", "ok")
        with (
            rig.tracer.start_as_current_span("invoke_agent lead", attributes=parent_attrs),
            rig.tracer.start_as_current_span("execute_tool delegate_task", attributes=delegate),
            rig.tracer.start_as_current_span("invoke_agent helper", attributes=child_attrs),
        ):
            repeat_tool(rig, times=5)

    def test_child_gets_the_subagent_profile_and_its_own_session(self, rig):
        """Signals of the child carry profile `subagent` and a session key of its own."""
        self.run_delegation(rig, agent_attrs("helper"))
        fired = rig.recorder.fired
        assert [s.level for _, _, s in fired] == [Level.WARN, Level.TERM]
        assert {s.profile for _, _, s in fired} == {"subagent"}
        assert {profile for _, profile, _ in fired} == {"subagent"}
        (child_key,) = {key for key, _, _ in fired}
        assert child_key != "conv-lead"
        assert child_key.startswith("conv-lead/sub:")
        assert {s.agent for _, _, s in fired} == {"helper"}
        # the delegating call itself counts towards the parent, in its own profile
        assert ("conv-lead", "delegate_task") in rig.recorder.calls
        assert rig.processor.guard.get("conv-lead").detector.profile_name == "general"

    def test_child_sharing_the_parents_conversation_id_still_gets_its_own_session(self, rig):
        """A child agent span that repeats the parent's conversation id is still a sub-agent."""
        self.run_delegation(rig, agent_attrs("helper", **{"gen_ai.conversation.id": "conv-lead"}))
        fired = rig.recorder.fired
        assert {s.profile for _, _, s in fired} == {"subagent"}
        assert {key for key, _, _ in fired} != {"conv-lead"}

    def test_child_tool_spans_repeating_the_parents_session_stay_in_the_child(self, rig):
        """OpenInference puts `session.id` on every span; the child's calls still stay apart."""
        parent_attrs = agent_attrs("lead", **{"session.id": "s-lead"})
        delegate = genai_tool("delegate_task", "{}", "ok")
        child = agent_attrs("helper", **{"session.id": "s-lead"})
        with (
            rig.tracer.start_as_current_span("invoke_agent lead", attributes=parent_attrs),
            rig.tracer.start_as_current_span("execute_tool delegate_task", attributes=delegate),
            rig.tracer.start_as_current_span("invoke_agent helper", attributes=child),
        ):
            for _ in range(5):
                attrs = {**genai_tool(), "session.id": "s-lead"}
                rig.tracer.start_span("execute_tool grep", attributes=attrs).end()
        assert {(key.startswith("s-lead/sub:"), p) for key, p, _ in rig.recorder.fired} == {
            (True, "subagent")
        }

    def test_agent_with_its_own_conversation_id_is_that_session(self, rig):
        """A delegated child naming a different conversation uses that key, as a sub-agent."""
        self.run_delegation(rig, agent_attrs("helper", **{"gen_ai.conversation.id": "conv-c"}))
        assert {(key, profile) for key, profile, _ in rig.recorder.fired} == {
            ("conv-c", "subagent")
        }

    def test_a_plain_tool_does_not_make_a_subagent(self, rig):
        """An agent span under an ordinary (non-delegating) tool span in a fresh trace is not."""
        with rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")):
            repeat_tool(rig)
        assert {profile for _, profile, _ in rig.recorder.fired} == {"general"}


class TestLateAttributes:
    """Several instrumentations set tool attributes only at span end; those are read."""

    def test_tool_attributes_set_at_end_are_read(self, rig):
        """A span started bare and given its GenAI tool attributes just before end is a tool call."""
        with rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")):
            for _ in range(5):
                span = rig.tracer.start_span("execute_tool")
                span.set_attributes(genai_tool("search", '{"q": "same"}', "[]"))
                span.end()
        assert rig.recorder.calls[-1][1] == "search"
        assert [(s.level, s.tool) for _, _, s in rig.recorder.fired] == [
            (Level.WARN, "search"),
            (Level.TERM, "search"),
        ]

    def test_error_status_set_at_end_counts(self, rig):
        """An ERROR status set before end makes the calls an error streak."""
        with rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")):
            for i in range(5):
                attrs = genai_tool("run", str(i))
                span = rig.tracer.start_span("execute_tool run", attributes=attrs)
                span.set_status(StatusCode.ERROR, "boom")
                span.end()
        dims = {(s.dimension.value, s.level) for _, _, s in rig.recorder.fired}
        assert ("error_streak", Level.WARN) in dims


class TestModelTurns:
    """Model spans feed the text-loop dimension."""

    def test_repeated_model_text_fires_text_loop(self, rig):
        """The same assistant text five times is a reasoning loop, reported on the model span."""
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.completion.0.content": "I should check the config file again to be sure.",
        }
        with rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")):
            for _ in range(5):
                rig.tracer.start_span("chat m", attributes=attrs).end()
        fired = [s for _, _, s in rig.recorder.fired]
        assert ("text_loop", Level.TERM) in {(s.dimension.value, s.level) for s in fired}
        assert all(s.step is None and s.model_turn_index is not None for s in fired)


class TestDisabled:
    """`enabled: false` turns the processor into a no-op."""

    def test_disabled_config_observes_nothing(self):
        """No calls, no signals, no open-span state."""
        rig = make_rig(enabled=False)
        with rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")):
            repeat_tool(rig)
            assert rig.processor.open_spans() == 0
        assert rig.recorder.calls == [] and rig.finished("cycleguard.signal") == []


class TestOpenSpanBookkeeping:
    """Open-span state is released on end and bounded."""

    def test_state_is_released_when_spans_end(self, rig):
        """After a run every tracked span has been popped."""
        with rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")):
            repeat_tool(rig, times=3)
            assert rig.processor.open_spans() == 1
        assert rig.processor.open_spans() == 0

    def test_plain_spans_under_an_agent_are_released_when_they_end(self, rig):
        """Plain spans are tracked for their descendants and popped by the fast non-tool path."""
        with rig.tracer.start_as_current_span("invoke_agent a", attributes=agent_attrs("a")):
            with rig.tracer.start_as_current_span("http get", attributes={"http.method": "GET"}):
                with rig.tracer.start_as_current_span("db query"):
                    assert rig.processor.open_spans() == 3
                assert rig.processor.open_spans() == 2
            assert rig.processor.open_spans() == 1
        assert rig.processor.open_spans() == 0

    def test_open_spans_are_bounded(self):
        """Past `max_open_spans` new spans are not tracked, and they are counted as dropped."""
        rig = make_rig()
        from otel_cycleguard import CycleGuardSpanProcessor

        processor = CycleGuardSpanProcessor(rig.processor.guard, max_open_spans=3)
        rig.provider.add_span_processor(processor)
        spans = [
            rig.tracer.start_span("invoke_agent a", attributes=agent_attrs("a")) for _ in range(5)
        ]
        assert processor.open_spans() == 3 and processor.dropped_open_spans == 2
        for span in spans:
            span.end()
        assert processor.open_spans() == 0
