from __future__ import annotations

import io

from mini_codex.cli.render import render_event
from mini_codex.cli.run import _Output
from mini_codex.protocol import assistant_message
from mini_codex.protocol.approvals import SafetyDecision
from mini_codex.protocol.session_events import (
    AgentMessageDelta,
    ItemCompleted,
    StepStarted,
    WarningEvent,
)


def test_assistant_text_streams_delta_by_delta_and_is_not_printed_twice() -> None:
    out = io.StringIO()
    output = _Output(False, out, None)
    output.console.no_color = True
    output.event(StepStarted(turn_id="t", step_id="abcdef0123", sequence=1))
    output.event(AgentMessageDelta(delta="Hel"))
    assert out.getvalue().endswith("Hel")  # shown before the message is complete
    output.event(AgentMessageDelta(delta="lo"))
    output.event(ItemCompleted(turn_id="t", item=assistant_message("Hello").to_json()))
    output.event(WarningEvent(message="careful"))
    assert out.getvalue() == "── step 1 (abcdef01)\nHello\nwarning: careful\n"


def test_json_mode_prints_every_event_as_one_line() -> None:
    out = io.StringIO()
    output = _Output(True, out, None)
    output.event(AgentMessageDelta(delta="x"))
    output.event(WarningEvent(message="w"))
    assert out.getvalue() == (
        '{"type":"agent_message_delta","delta":"x"}\n{"type":"warning","message":"w"}\n'
    )


def test_refused_and_denied_commands_are_one_line_what_ran_is_silent() -> None:
    rejected = SafetyDecision(
        call_id="c",
        tool="shell",
        source="rule",
        decision="reject",
        reason="forbidden by rule `git push`",
        command=["git", "push"],
    )
    text = render_event(rejected)
    assert text is not None
    assert text.plain == "rule reject: git push (forbidden by rule `git push`)"
    ran = SafetyDecision(call_id="c", tool="shell", source="policy", decision="run")
    assert render_event(ran) is None
