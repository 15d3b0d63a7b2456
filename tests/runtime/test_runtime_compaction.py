"""Compaction triggers and their effects (spec/codex-runtime.md §8; codex-worldstate.md §4.4, §10).

Every test runs a real Session over a ScriptedModel whose responses report token usage, so the
auto-compaction limit (90 % of a 10,000-token window: 9,000) is crossed exactly where the script
says. The summarizer is the next scripted response after the crossing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from runtime_harness import Run, SleepTool, describe_rollout, layout, open_session

from mini_codex.config import Config
from mini_codex.context.compaction import SUMMARY_PREFIX, summary_text
from mini_codex.models.base import Prompt, TokenUsage
from mini_codex.models.errors import ContextWindowExceeded, InvalidRequest, Timeout
from mini_codex.protocol import Message, ResponseItem, TokenCount, TurnContextItem, user_message
from mini_codex.protocol.items import FunctionCallOutput
from mini_codex.protocol.session_events import (
    ContextCompacted,
    ErrorEvent,
    SessionEvent,
    WarningEvent,
)
from mini_codex.rollout.replay.verify import check_rollout
from mini_codex.rollout.resume import load_resume_state, replay_file
from mini_codex.runtime.compaction import LONG_THREADS_WARNING
from mini_codex.testing import ScriptedFailure, ScriptedResponse, assistant, function_call

pytestmark = pytest.mark.anyio

CONFIG = Config(model_context_window=10_000)
DEV = "message/developer[2]: | [01] <permissions instructions> | [02] <tool_namespaces>"
CTX = "message/user[2]: | [01] <environment_context> | [02] <workspace_files>"
SUMMARY = "message/user:" + SUMMARY_PREFIX[:60]
COMPACT_PROMPT = "message/user:Your context window is about to be reset. Write a handoff su"


def usage(total: int) -> TokenUsage:
    return TokenUsage(input_tokens=total - 10, output_tokens=10, total_tokens=total)


def said(text: str, total: int = 100) -> ScriptedResponse:
    return ScriptedResponse([assistant(text)], usage=usage(total))


def tool_call(total: int, call_id: str = "call_1") -> ScriptedResponse:
    return ScriptedResponse([function_call("sleep", {}, call_id)], usage=usage(total))


def compactions(events: list[object]) -> list[tuple[str, int]]:
    return [(e.trigger, e.window_number) for e in events if isinstance(e, ContextCompacted)]


@dataclass
class AfterCompaction:
    """What the session held when ``context_compacted`` was emitted (the result installed)."""

    runs: list[Run] = field(default_factory=list)
    seen: list[tuple[TurnContextItem | None, object, list[ResponseItem]]] = field(
        default_factory=list
    )

    def __call__(self, event: SessionEvent) -> None:
        if isinstance(event, ContextCompacted):
            session = self.runs[-1].session
            baseline = session.history.world_state_baseline
            self.seen.append(
                (session.state.reference_context, baseline, list(session.history.items))
            )


def initial_context(prompt: Prompt) -> list[ResponseItem]:
    """The full initial context a first request starts with (developer, then user bundle)."""
    items = list(prompt.input[:2])
    assert layout(items) == [DEV, CTX]
    return items


async def test_mid_turn_compaction_reinjects_context_before_the_last_user_message(
    tmp_path: Path,
) -> None:
    script = [
        said("ok"),
        tool_call(9_500),  # crosses the limit while the model still needs a follow-up
        said("the summary"),
        said("done", 300),
        said("next", 400),
    ]
    observed = AfterCompaction()
    async with open_session(
        tmp_path, script, config=CONFIG, tools=[SleepTool("sleep")], on_event=observed
    ) as run:
        observed.runs.append(run)
        await run.session.run_turn("first task")
        assert await run.session.run_turn("second task") == "done"
        compacted_history = list(run.session.history.items)
        await run.session.run_turn("third task")

    summarize, after = run.prompts[2], run.prompts[3]
    assert layout(summarize.input) == [
        DEV,
        CTX,
        "message/user:first task",
        "message/assistant:ok",
        "message/user:second task",
        "function_call/sleep",
        "function_call_output:sleep done",
        COMPACT_PROMPT,
    ]
    assert summarize.tools == ()
    assert layout(after.input) == [
        "message/user:first task",
        DEV,
        CTX,
        "message/user:second task",
        SUMMARY,
    ]
    assert after.input[-1] == user_message(summary_text("the summary"))
    # Nothing is injected again afterwards: the next turn only adds its input.
    assert layout(run.prompts[4].input) == [
        *layout(after.input),
        "message/assistant:done",
        "message/user:third task",
    ]
    lines = describe_rollout(run.rollout())
    start = lines.index("item message/assistant:the summary")
    assert lines[start : start + 5] == [
        "item message/assistant:the summary",
        "compacted",
        "world_state full",
        "turn_context",
        "event token_count",
    ]
    assert compactions(run.events) == [("mid_turn", 1)]
    # Mid-turn: the reference is this turn's context and the baseline the injected snapshot.
    ((reference, baseline, installed),) = observed.seen
    assert reference is not None
    (event,) = run.events_of(ContextCompacted)
    assert reference.turn_id == event.turn_id
    assert baseline is not None
    assert installed == list(after.input)
    infos = [e.info for e in run.events_of(TokenCount) if e.info is not None]
    assert [(i["context_tokens"], i["auto_compact_due"]) for i in infos[:2]] == [
        (100, False),
        (9_500, True),
    ]
    assert [e.message for e in run.events_of(WarningEvent)] == [LONG_THREADS_WARNING]
    assert check_rollout(run.rollout()).violations == []
    assert run.session.rollout_path is not None
    replayed = replay_file(run.session.rollout_path)
    assert list(replayed.history) == list(run.session.history.items)
    assert replayed.window == run.session.window
    assert run.session.window.number == 1
    # The replay of the compacted file is what the next request carried, minus its new items.
    assert compacted_history[:-1] == list(after.input)
    assert layout(compacted_history[-1:]) == ["message/assistant:done"]


async def test_pre_turn_compaction_leaves_no_reference_so_the_turn_start_reinjects_everything(
    tmp_path: Path,
) -> None:
    """Pre-turn compaction does not inject (codex-worldstate.md §4.4): the reference is cleared,
    so the turn start that follows records the full initial context once, right before the new
    input (spec/codex-runtime.md §8.4), with Codex 0.169's line order (§10)."""
    script = [said("ok", 9_200), said("the summary"), said("answer")]
    after = AfterCompaction()
    async with open_session(tmp_path, script, config=CONFIG, on_event=after) as run:
        after.runs.append(run)
        await run.session.run_turn("first task")
        await run.session.run_turn("second task")

    summary = user_message(summary_text("the summary"))
    assert after.seen == [(None, None, [user_message("first task"), summary])]
    summarize, request = run.prompts[1], run.prompts[2]
    assert layout(summarize.input) == [
        DEV,
        CTX,
        "message/user:first task",
        "message/assistant:ok",
        COMPACT_PROMPT,
    ]
    initial = initial_context(run.prompts[0])
    assert list(request.input) == [
        user_message("first task"),
        summary,
        *initial,
        user_message("second task"),
    ]
    lines = describe_rollout(run.rollout())
    second = lines.index("event task_started", lines.index("event task_started") + 1)
    assert lines[second:] == [
        "event task_started",
        "item message/assistant:the summary",
        "compacted",
        "item " + DEV,
        "item " + CTX,
        "world_state full",
        "turn_context",
        "item message/user:second task",
        "event user_message",
        "event token_count",
        "item message/assistant:answer",
        "event token_count",
        "event task_complete",
    ]
    assert compactions(run.events) == [("pre_turn", 1)]
    assert check_rollout(run.rollout()).violations == []
    assert run.session.rollout_path is not None
    # Replay == the request input plus what the turn added after it (the answer).
    assert list(replay_file(run.session.rollout_path).history) == [
        *request.input,
        *run.session.history.items[len(request.input) :],
    ]
    assert layout(run.session.history.items[len(request.input) :]) == ["message/assistant:answer"]
    resumed = load_resume_state(run.session.rollout_path)
    assert resumed.reference_context == run.session.state.reference_context
    assert resumed.reference_context is not None


async def test_manual_compaction_clears_the_reference_so_the_next_turn_reinjects_everything(
    tmp_path: Path,
) -> None:
    script = [said("ok"), said("the summary"), said("answer")]
    after = AfterCompaction()
    summary = user_message(summary_text("the summary"))
    async with open_session(tmp_path, script, config=CONFIG, on_event=after) as run:
        after.runs.append(run)
        await run.session.run_turn("first task")
        assert await run.session.compact() == summary_text("the summary")
        assert run.session.state.reference_context is None
        assert run.session.history.world_state_baseline is None
        assert list(run.session.history.items) == [user_message("first task"), summary]
        await run.session.run_turn("second task")

    assert after.seen == [(None, None, [user_message("first task"), summary])]
    assert list(run.prompts[2].input) == [
        user_message("first task"),
        summary,
        *initial_context(run.prompts[0]),
        user_message("second task"),
    ]
    lines = describe_rollout(run.rollout())
    second = lines.index("event task_started", lines.index("event task_started") + 1)
    assert lines[second : second + 6] == [
        "event task_started",
        "item message/assistant:the summary",
        "compacted",
        "event token_count",
        "event task_complete",
        "event task_started",
    ]
    assert lines[second + 6 : second + 10] == [
        "item " + DEV,
        "item " + CTX,
        "world_state full",
        "turn_context",
    ]
    assert compactions(run.events) == [("manual", 1)]
    assert check_rollout(run.rollout()).violations == []


async def test_a_resume_over_the_limit_compacts_before_the_first_turn_and_keeps_totals(
    tmp_path: Path,
) -> None:
    async with open_session(tmp_path, [said("ok", 9_100)], config=CONFIG) as first:
        await first.session.run_turn("first task")
    path = first.session.rollout_path
    assert path is not None
    totals = first.session.state.session_tokens

    script = [said("the summary"), said("answer", 700)]
    after = AfterCompaction()
    async with open_session(
        tmp_path, script, config=CONFIG, resume_path=path, on_event=after
    ) as run:
        after.runs.append(run)
        assert run.session.state.session_tokens == totals
        assert run.session.context_tokens == 9_100
        assert run.session.state.reference_context is not None  # restored: nothing changed
        await run.session.run_turn("second task")
        assert run.session.state.session_tokens.total_tokens == 9_100 + 100 + 700

    assert compactions(run.events) == [("pre_turn", 1)]
    summary = user_message(summary_text("the summary"))
    assert after.seen == [(None, None, [user_message("first task"), summary])]
    assert list(run.prompts[1].input) == [
        user_message("first task"),
        summary,
        *initial_context(first.prompts[0]),
        user_message("second task"),
    ]
    counts = [e.info for e in run.events_of(TokenCount) if e.info is not None]
    assert counts[-1]["total_token_usage"]["total_tokens"] == 9_900
    assert counts[-1]["context_tokens"] == 700
    assert check_rollout(run.rollout()).violations == []
    # Resume after the compaction starts from the replacement history.
    resumed = load_resume_state(path)
    assert list(resumed.history) == list(run.session.history.items)


async def test_switching_to_a_smaller_window_compacts_with_the_previous_model(
    tmp_path: Path,
) -> None:
    big = Config(model="gpt-4o")  # 128,000 tokens
    async with open_session(tmp_path, [said("ok", 20_000)], config=big) as first:
        await first.session.run_turn("first task")
    path = first.session.rollout_path
    assert path is not None

    small = Config(model="gpt-4")  # 8,192 tokens
    script = [said("the summary"), said("answer")]
    after = AfterCompaction()
    async with open_session(
        tmp_path, script, config=small, resume_path=path, on_event=after
    ) as run:
        after.runs.append(run)
        await run.session.run_turn("second task")

    assert [prompt.model for prompt in run.prompts] == ["gpt-4o", "gpt-4"]
    assert compactions(run.events) == [("model_downshift", 1)]
    summary = user_message(summary_text("the summary"))
    assert after.seen == [(None, None, [user_message("first task"), summary])]
    request = list(run.prompts[1].input)
    # The full initial context of the new model, once, right before the new input.
    assert layout(request) == [
        "message/user:first task",
        SUMMARY,
        "message/developer[3]: | [01] <model_switch> | [02] <permissions instructions> | [03] "
        "<tool_namespaces>",
        CTX,
        "message/user:second task",
    ]
    developer, context = initial_context(first.prompts[0])
    assert isinstance(developer, Message)
    switch = request[2]
    assert isinstance(switch, Message)
    # The developer bundle of the first turn, with the model switch first.
    assert request == [
        user_message("first task"),
        summary,
        developer.model_copy(update={"content": [switch.content[0], *developer.content]}),
        context,
        user_message("second task"),
    ]
    assert check_rollout(run.rollout()).violations == []
    assert run.session.rollout_path is not None
    assert list(replay_file(run.session.rollout_path).history) == [
        *request,
        *run.session.history.items[len(request) :],
    ]


async def test_a_context_window_error_trims_the_oldest_items_of_the_summarization_request(
    tmp_path: Path,
) -> None:
    too_long = ContextWindowExceeded()
    script = [
        said("ok"),
        said("fine", 9_300),
        ScriptedFailure(too_long),
        ScriptedFailure(too_long),
        said("the summary"),
        said("answer"),
    ]
    async with open_session(tmp_path, script, config=CONFIG) as run:
        await run.session.run_turn("first task")
        await run.session.run_turn("second task")
        await run.session.run_turn("third task")

    attempts = [layout(prompt.input) for prompt in run.prompts[2:5]]
    full = [
        DEV,
        CTX,
        "message/user:first task",
        "message/assistant:ok",
        "message/user:second task",
        "message/assistant:fine",
        COMPACT_PROMPT,
    ]
    assert attempts == [full, full[1:], full[2:]]
    assert [e.message for e in run.events_of(WarningEvent)] == [
        "Trimmed 2 older thread item(s) before compacting so the prompt fits the model context "
        "window.",
        LONG_THREADS_WARNING,
    ]
    # Trimming only shortens the request: every real user message is kept.
    assert [line for line in layout(run.prompts[5].input) if "task" in line] == [
        "message/user:first task",
        "message/user:second task",
        "message/user:third task",
    ]


async def test_retryable_errors_are_retried_and_other_errors_fail_the_compaction(
    tmp_path: Path,
) -> None:
    script = [
        said("ok", 9_300),
        ScriptedFailure(Timeout()),
        said("the summary"),
        said("answer"),
    ]
    async with open_session(tmp_path, script, config=CONFIG) as run:
        await run.session.run_turn("first task")
        assert await run.session.run_turn("second task") == "answer"
    assert run.prompts[1] == run.prompts[2]
    assert compactions(run.events) == [("pre_turn", 1)]

    failing = [said("ok", 9_300), ScriptedFailure(InvalidRequest("bad request"))]
    (tmp_path / "b").mkdir()
    async with open_session(tmp_path / "b", failing, config=CONFIG) as run:
        await run.session.run_turn("first task")
        before = list(run.session.history.items)
        assert await run.session.run_turn("second task") is None
        # History is untouched except that the turn's input is still recorded.
        assert list(run.session.history.items) == [*before, user_message("second task")]
    assert [e.message for e in run.events_of(ErrorEvent)] == ["compaction failed: bad request"]
    assert compactions(run.events) == []
    assert check_rollout(run.rollout()).violations == []


async def test_huge_tool_outputs_keep_head_and_tail_in_history(tmp_path: Path) -> None:
    class Loud(SleepTool):
        async def call(self, payload: str, ctx: object) -> object:  # type: ignore[override]
            from mini_codex.tools.base import ToolOutput

            return ToolOutput(text="".join(f"row {i}\n" for i in range(20_000)), success=True)

    config = Config(tool_output_token_limit=500)
    script = [
        ScriptedResponse([function_call("loud", {}, "call_1")]),
        ScriptedResponse([assistant("seen")]),
    ]
    async with open_session(tmp_path, script, config=config, tools=[Loud("loud")]) as run:
        await run.session.run_turn("print a lot")
    (output,) = [i for i in run.prompts[1].input if isinstance(i, FunctionCallOutput)]
    assert isinstance(output.output, str)
    assert output.output.startswith("row 0\nrow 1\n")
    assert output.output.endswith("row 19999\n")
    assert "tokens truncated" in output.output
    assert len(output.output) < 4_000
    assert run.session.rollout_path is not None
    assert output in list(replay_file(run.session.rollout_path).history)


async def test_the_compact_prompt_comes_from_the_config(tmp_path: Path) -> None:
    prompt_file = tmp_path / "compact.md"
    prompt_file.write_text("Summarize from the file.\n")
    cases = [
        (Config(compact_prompt="Summarize inline."), "Summarize inline."),
        (Config(experimental_compact_prompt_file=prompt_file), "Summarize from the file.\n"),
        (
            Config(compact_prompt="Inline wins.", experimental_compact_prompt_file=prompt_file),
            "Inline wins.",
        ),
    ]
    for index, (config, expected) in enumerate(cases):
        root = tmp_path / str(index)
        root.mkdir()
        async with open_session(root, [said("ok"), said("s")], config=config) as run:
            await run.session.run_turn("task")
            assert await run.session.compact() == summary_text("s")
        assert run.prompts[1].input[-1] == user_message(expected)

    missing = Config(experimental_compact_prompt_file=tmp_path / "missing.md")
    (tmp_path / "m").mkdir()
    async with open_session(tmp_path / "m", [said("ok")], config=missing) as run:
        await run.session.run_turn("task")
        before = list(run.session.history.items)
        assert await run.session.compact() is None
        assert list(run.session.history.items) == before
    (error,) = run.events_of(ErrorEvent)
    assert error.message.startswith(
        "compaction failed: cannot read experimental_compact_prompt_file"
    )


async def test_a_turn_interrupted_right_after_its_pre_turn_compaction_saves_the_new_size(
    tmp_path: Path,
) -> None:
    """The pre-turn compaction's ``token_count`` is written after the turn's input (the turn
    also writes it when it ends early there); interrupted right after the compaction, the file
    still says the new size, so a resume does not compact the compacted session again."""
    runs: list[Run] = []

    def interrupt(event: SessionEvent) -> None:
        if isinstance(event, ContextCompacted):
            runs[-1].session.interrupt()

    script = [said("ok", 9_200), said("the summary")]
    async with open_session(tmp_path, script, config=CONFIG, on_event=interrupt) as run:
        runs.append(run)
        await run.session.run_turn("first task")
        assert await run.session.run_turn("second task") is None
        compacted_tokens = run.session.context_tokens
    assert compactions(run.events) == [("pre_turn", 1)]
    assert compacted_tokens < 9_000
    path = run.session.rollout_path
    assert path is not None
    assert check_rollout(run.rollout()).violations == []

    async with open_session(tmp_path, [said("answer")], config=CONFIG, resume_path=path) as again:
        assert again.session.context_tokens == compacted_tokens
        assert await again.session.run_turn("third task") == "answer"
    assert compactions(again.events) == []
