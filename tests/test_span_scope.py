"""The session rule shared by the live processor and the offline replay (pure function)."""

from __future__ import annotations

from otel_cycleguard.conventions import SpanRole
from otel_cycleguard.span_scope import SpanScope, child_scope

NO_DELEGATING: frozenset[str] = frozenset()
AGENT_ATTRS = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder"}


def scope(
    role, parent=None, hint=None, name="span", attrs=None, span_id=0xABC, delegating=NO_DELEGATING
):
    return child_scope(role, name, attrs or {}, parent, hint, span_id, delegating)


def test_a_root_agent_without_a_session_id_is_left_for_the_caller_to_key():
    root = scope(SpanRole.AGENT, attrs=AGENT_ATTRS)
    assert root is not None and root.session is None and root.session_root
    assert root.agent == "coder" and not root.subagent


def test_a_plain_root_span_passes_nothing_on():
    assert scope(SpanRole.OTHER) is None
    assert (
        scope(SpanRole.TOOL, name="execute_tool grep", attrs={"gen_ai.tool.name": "grep"}) is None
    )


def test_a_configured_delegating_tool_outside_an_agent_is_tracked():
    attrs = {"gen_ai.tool.name": "delegate_task"}
    tool = scope(
        SpanRole.TOOL,
        name="execute_tool delegate_task",
        attrs=attrs,
        delegating=frozenset({"delegate_task"}),
    )
    assert tool is not None and tool.delegating


def test_an_agent_under_a_tool_of_an_agent_is_a_sub_agent_with_its_own_session():
    lead = SpanScope("conv-1", "lead", True, False, False)
    tool = scope(SpanRole.TOOL, parent=lead)
    child = scope(SpanRole.AGENT, parent=tool, attrs={"gen_ai.agent.name": "worker"}, span_id=0x1F)
    assert child is not None and child.subagent and child.session_root
    assert child.session == "conv-1/sub:000000000000001f" and child.outer == "conv-1"
    # the child's spans repeating the parent's conversation id stay in the child's session
    assert scope(SpanRole.TOOL, parent=child, hint="conv-1").session == child.session


def test_an_agent_inside_an_agent_or_its_plain_spans_continues_the_run():
    lead = SpanScope("conv-1", "lead", True, False, False)
    wrapper_child = scope(SpanRole.AGENT, parent=lead, attrs={"gen_ai.agent.name": "inner"})
    step = scope(SpanRole.OTHER, parent=lead)
    under_step = scope(SpanRole.AGENT, parent=step)
    for child in (wrapper_child, under_step):
        assert child is not None and child.session == "conv-1"
        assert not child.subagent and not child.session_root
    assert under_step.agent == "lead"  # no name of its own: the outer agent's


def test_a_session_id_of_its_own_names_the_session():
    lead = SpanScope("conv-1", "lead", True, False, False)
    tool = scope(SpanRole.TOOL, parent=lead)
    child = scope(SpanRole.AGENT, parent=tool, hint="conv-2")
    assert child.session == "conv-2" and child.subagent and child.session_root
    assert scope(SpanRole.OTHER, parent=lead, hint="conv-3").session == "conv-3"


def test_plain_spans_under_a_session_root_share_one_scope_that_is_not_a_root():
    root = scope(SpanRole.AGENT, attrs=AGENT_ATTRS)
    root.session = "trace-1"  # what the caller does for a root agent without a session id
    first, second = scope(SpanRole.OTHER, parent=root), scope(SpanRole.MODEL, parent=root)
    assert first is second and first is not root
    assert first.session == "trace-1" and first.agent == "coder" and not first.session_root
    assert scope(SpanRole.OTHER, parent=first) is first  # deeper plain spans: the same object
    tool = scope(SpanRole.TOOL, parent=root)
    assert tool is not first and tool.delegating and not first.delegating


def test_a_scope_says_what_it_holds_and_its_session_can_be_named_later():
    root = scope(SpanRole.AGENT, attrs=AGENT_ATTRS)
    root.session = "trace-1"  # the caller keys a root agent span without a session id
    assert root.session == "trace-1" and "trace-1" in repr(root)
    child = scope(SpanRole.OTHER, parent=root)
    assert child is root.for_descendants() and child.session == "trace-1"
    assert SpanScope("s", None, False, False, False).outer is None
