"""The inspect timeline (grouping into turns and steps, world-state diffs) and its rich rendering,
compared as whole plain-text outputs of an injected ``Console(file=StringIO(), width=100)``.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console, RenderableType

from mini_codex.cli.inspect_preview import diff_lines
from mini_codex.cli.inspect_render import render_replay_summary, render_timeline
from mini_codex.cli.inspect_timeline import Row, Step, Timeline, TimelineTurn, build_timeline
from mini_codex.errors import RolloutError
from mini_codex.jsonmerge import JsonObject
from mini_codex.protocol import ROLLOUT_LINE_ADAPTER, RolloutLine
from mini_codex.rollout import ReadStats, read_rollout, reconstruct

WINDOW = "01900000-0000-7000-8000-00000000000a"


def render(renderable: RenderableType, width: int = 100) -> str:
    console = Console(file=io.StringIO(), width=width)
    console.print(renderable)
    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(output, str)
    return output


def typed(lines: list[dict[str, Any]]) -> list[RolloutLine]:
    return [ROLLOUT_LINE_ADAPTER.validate_python(line) for line in lines]


def line(kind: str, payload: Any) -> dict[str, Any]:
    return {"timestamp": "2026-09-01T10:00:00.000Z", "type": kind, "payload": payload}


def message(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    payload = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
    return line("response_item", payload)


def event(kind: str, **fields: Any) -> dict[str, Any]:
    return line("event_msg", {"type": kind, **fields})


def call(call_id: str, arguments: str = '{"command": ["ls", "-la"]}') -> dict[str, Any]:
    payload = {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call_id}
    return line("response_item", payload)


def output(call_id: str, text: str) -> dict[str, Any]:
    return line(
        "response_item", {"type": "function_call_output", "call_id": call_id, "output": text}
    )


def context(model: str = "gpt-test", turn_id: str = "t1") -> dict[str, Any]:
    return line(
        "turn_context",
        {
            "turn_id": turn_id,
            "cwd": "/repo",
            "approval_policy": "on-request",
            "sandbox_policy": {"type": "workspace-write", "network_access": False},
            "model": model,
            "summary": "auto",
        },
    )


def world_state(state: dict[str, Any], *, full: bool) -> dict[str, Any]:
    return line("world_state", {"full": full, "state": state})


META = line(
    "session_meta",
    {
        "id": "01900000-0000-7000-8000-0000000000f1",
        "timestamp": "2026-09-01T10:00:00.000Z",
        "cwd": "/repo",
        "originator": "mini_codex",
        "cli_version": "0.1.0",
        "mini_codex_schema": 1,
        "context_window": {"window_id": WINDOW},
    },
)

TWO_TURNS = [
    META,
    event("task_started", turn_id="t1"),
    message("user", "list the files\nplease"),
    event("user_message", message="list the files"),
    world_state({"env": {"cwd": "/repo", "shell": "bash"}, "workspace": {"a.py": 1}}, full=True),
    context(),
    line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
    call("c1"),
    event("token_count", info={"total_token_usage": {"total_tokens": 120}}),
    output("c1", "a.py\nb.py\nc.py"),
    world_state({"workspace": {"b.py": 1}}, full=False),
    message("assistant", "There are three files."),
    event("task_complete", turn_id="t1", last_agent_message="There are three files."),
    event("task_started", turn_id="t2"),
    message("user", "switch model"),
    world_state({"env": {"cwd": "/repo/src", "shell": None}, "workspace": None}, full=False),
    context(model="gpt-other", turn_id="t2"),
    message("assistant", "ok"),
    event("turn_aborted", turn_id="t2", reason="interrupted"),
    event("thread_rolled_back", num_turns=1),
    line("compacted", {"message": "Summary of work\nmore", "replacement_history": []}),
    world_state({"env": {"cwd": "/repo"}}, full=True),
    line("token_usage_record", {"total": 5}),
]


def timeline_of(lines: list[dict[str, Any]], *, show_events: bool = False) -> Timeline:
    decoded = typed(lines)
    numbers = list(range(1, len(decoded) + 1))
    stats = ReadStats(lines=len(decoded), unknown_items=1)
    return build_timeline(decoded, numbers, stats, show_events=show_events)


def test_inspect_timeline_renders_turns_steps_diffs_and_rollbacks() -> None:
    decoded = typed(TWO_TURNS)
    stats = ReadStats(lines=len(decoded), unknown_items=1)
    timeline = build_timeline(decoded, list(range(1, len(decoded) + 1)), stats)

    text = render(render_timeline(timeline, "r.jsonl", reconstruct(decoded, stats)), width=120)

    assert text == (
        "rollout  r.jsonl\n"
        "session  01900000-0000-7000-8000-0000000000f1 · cwd /repo · mini_codex 0.1.0 · created "
        "2026-09-01T10:00:00.000Z · mini-…\n"
        "lines    23 lines · 0 bad · 1 of unknown kinds · 2 turns\n"
        "\n"
        "▸ turn 1 · id t1 · task_started L2 · 2 steps\n"
        "      L3  user             list the files (+1 line)\n"
        "      L5  world_state      full snapshot: env, workspace\n"
        "      L6  turn_context     model gpt-test · cwd /repo · approval on-request · sandbox "
        "workspace-write\n"
        "  step 1 · L7\n"
        "      L7  reasoning        (encrypted)\n"
        '      L8  call shell       {"command":["ls","-la"]}  [c1]\n'
        "     L10  output           [c1] a.py (+2 lines)\n"
        "  step 2 · L11\n"
        "     L11  world_state      patch: workspace\n"
        '                           ~ workspace."b.py": (absent) → 1\n'
        "     L12  assistant        There are three files.\n"
        "     L13  task_complete    There are three files. · 2 events not shown\n"
        "▸ turn 2 · id t2 · task_started L14 · 1 step · rolled back at L20\n"
        "     L15  user             switch model\n"
        "     L16  world_state      patch: env, workspace\n"
        '                           ~ env.cwd: "/repo" → "/repo/src"\n'
        '                           ~ env.shell: "bash" → (absent)\n'
        "                           - workspace: removed\n"
        "     L17  turn_context     model gpt-test → gpt-other\n"
        "  step 1 · L18\n"
        "     L18  assistant        ok\n"
        "     L19  turn_aborted     interrupted\n"
        "   L20  thread_rolled_back 1 user turn(s) dropped: turn 2\n"
        "   L21  compacted        summary: Summary of work (+1 line) · replacement history "
        "0 items\n"
        "   L22  world_state      full snapshot: env\n"
        "   L23  token_usage_record not modelled; ignored by replay\n"
        "\n"
        "replay   history 0 items · world state: env · window 1 · previous model gpt-test\n"
    )


def test_inspect_timeline_groups_lines_into_turns_and_steps() -> None:
    timeline = timeline_of(TWO_TURNS[:14])

    first, second = timeline.turns
    assert first == TimelineTurn(
        number=1,
        line=2,
        turn_id="t1",
        opened_by="task_started",
        rows=[
            Row(3, "user", "user", "list the files (+1 line)"),
            Row(5, "world_state", "world_state", "full snapshot: env, workspace"),
            Row(
                6,
                "turn_context",
                "turn_context",
                "model gpt-test · cwd /repo · approval on-request · sandbox workspace-write",
            ),
        ],
        steps=[
            Step(
                1,
                7,
                [
                    Row(7, "reasoning", "reasoning", "(encrypted)"),
                    Row(8, "call", "call shell", '{"command":["ls","-la"]}  [c1]'),
                    Row(10, "output", "output", "[c1] a.py (+2 lines)"),
                ],
                has_output=True,
                after_tool_output=True,
            ),
            Step(
                2,
                11,
                [
                    Row(
                        11,
                        "world_state",
                        "world_state",
                        "patch: workspace",
                        ('~ workspace."b.py": (absent) → 1',),
                    ),
                    Row(12, "assistant", "assistant", "There are three files."),
                ],
                has_output=True,
            ),
        ],
        end=Row(13, "event", "task_complete", "There are three files."),
        status="complete",
        user_turn=True,
        hidden_events=2,
    )
    assert second == TimelineTurn(2, 14, "t2", "task_started")


def test_inspect_timeline_shows_events_on_request() -> None:
    timeline = timeline_of(TWO_TURNS[:14], show_events=True)

    rows = [row for step in timeline.turns[0].steps for row in step.rows]
    assert Row(9, "event", "token_count", "total tokens 120") in rows
    assert timeline.turns[0].rows[1] == Row(4, "event", "user_message", "list the files")
    assert timeline.turns[0].hidden_events == 0


def test_inspect_timeline_flags_a_patch_without_a_full_snapshot() -> None:
    lines = [
        META,
        event("task_started", turn_id="t1"),
        world_state({"env": {"cwd": "/b"}}, full=False),
        event("task_complete", turn_id="t1"),
    ]

    timeline = timeline_of(lines)

    assert timeline.warnings == [
        "line 3: world_state patch without a full snapshot (ignored on replay)"
    ]
    assert timeline.turns[0].rows == [
        Row(
            3,
            "world_state",
            "world_state",
            "patch: env",
            ("no baseline: replay ignores this patch",),
            flagged=True,
        )
    ]


def test_inspect_timeline_baseline_forgets_rolled_back_turns() -> None:
    lines = [
        META,
        event("task_started", turn_id="t1"),
        message("user", "one"),
        world_state({"env": {"cwd": "/a"}}, full=True),
        event("task_complete", turn_id="t1"),
        event("task_started", turn_id="t2"),
        message("user", "two"),
        world_state({"env": {"cwd": "/b"}}, full=False),
        event("task_complete", turn_id="t2"),
        event("thread_rolled_back", num_turns=1),
        event("task_started", turn_id="t3"),
        message("user", "three"),
        world_state({"env": {"cwd": "/c"}}, full=False),
    ]

    timeline = timeline_of(lines)

    assert timeline.turns[2].rows[1].details == ('~ env.cwd: "/a" → "/c"',)


def test_inspect_timeline_without_task_events_splits_turns_at_user_input() -> None:
    lines = [
        META,
        message("user", "<environment_context>\n<cwd>/repo</cwd>\n</environment_context>"),
        message("user", "first question"),
        event("user_message", message="first question"),
        context(),
        message("assistant", "first answer"),
        message("user", "second question"),
        call("c1"),
        output("c1", '{"output": "done\\n", "metadata": {"exit_code": 0}}'),
        message("assistant", "second answer"),
    ]

    text = render(render_timeline(timeline_of(lines), "r.jsonl"), width=120)

    assert text.splitlines()[2:] == [
        "lines    10 lines · 0 bad · 1 of unknown kinds · 2 turns (derived from user input: no "
        "task events)",
        "",
        "    L2  user context     <environment_context> (+2 lines)",
        "▸ turn 1 · user input L3 · 1 step · not closed",
        "      L3  user             first question",
        "      L5  turn_context     model gpt-test · cwd /repo · approval on-request · sandbox "
        "workspace-write",
        "  step 1 · L6",
        "      L6  assistant        first answer",
        "          1 event not shown",
        "▸ turn 2 · user input L7 · 2 steps · not closed",
        "      L7  user             second question",
        "  step 1 · L8",
        '      L8  call shell       {"command":["ls","-la"]}  [c1]',
        "      L9  output           [c1] exit 0: done",
        "  step 2 · L10",
        "     L10  assistant        second answer",
    ]


def test_inspect_render_cuts_long_lines_to_the_console_width() -> None:
    lines = [META, event("task_started", turn_id="t1"), message("user", "x" * 300)]

    text = render(render_timeline(timeline_of(lines), "r.jsonl"), width=60)

    assert all(len(row) <= 60 for row in text.splitlines())
    assert text.splitlines()[-1] == "      L3  user             " + "x" * 32 + "…"


def test_inspect_render_lists_warnings_last() -> None:
    timeline = timeline_of([META])
    timeline.warnings.append("line 2: not valid JSON, skipped")

    text = render(render_timeline(timeline, "r.jsonl"))

    assert text.splitlines()[-3:] == ["", "warnings (1)", "  line 2: not valid JSON, skipped"]


def test_world_state_diff_summarizes_large_section_changes() -> None:
    before: JsonObject = {"workspace": {f"f{i}": 1 for i in range(10)}, "env": {"cwd": "/a"}}
    patch: JsonObject = {"workspace": {f"f{i}": None for i in range(8)}, "model": "gpt"}
    after: JsonObject = {"workspace": {"f8": 1, "f9": 1}, "env": {"cwd": "/a"}, "model": "gpt"}

    assert diff_lines(before, patch, after) == [
        "~ workspace: 8 keys changed (workspace.f0, workspace.f1, workspace.f2, …)",
        '+ model: added "gpt"',
    ]


def test_replay_summary_shows_layout_world_state_and_window() -> None:
    decoded = typed(TWO_TURNS[:13])
    result = reconstruct(decoded)

    text = render(render_replay_summary(result, "r.jsonl"), width=120)

    assert text == (
        "rollout            r.jsonl\n"
        "session            01900000-0000-7000-8000-0000000000f1 · cwd /repo · mini_codex 0.1.0 "
        "· created 2026-09-01T10:00:00.00…\n"
        "stats              13 lines · 0 bad · 0 of unknown kinds\n"
        "history            5 items\n"
        "  00:message/user:list the files\n"
        "  01:reasoning\n"
        "  02:function_call/shell\n"
        "  03:function_call_output:a.py\n"
        "  04:message/assistant:There are three files.\n"
        "world state        2 sections\n"
        "  env (2 keys)\n"
        "  workspace (2 keys)\n"
        "reference context  model gpt-test · cwd /repo · turn t1\n"
        "previous model     gpt-test\n"
        "window             number 0\n"
        f"  first id {WINDOW}\n"
        f"  current id {WINDOW}\n"
        "warnings           none\n"
    )


CORPUS = sorted(
    (Path(__file__).parents[1] / "fixtures" / "rollouts").glob("*/*.jsonl"),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    index=st.integers(min_value=0),
    cut=st.floats(min_value=0.0, max_value=1.0),
    flips=st.lists(st.tuples(st.floats(0.0, 1.0), st.integers(0, 7)), max_size=8),
    junk=st.lists(st.sampled_from([b"{", b"[]", b"null", b'{"type":"world_state"}']), max_size=3),
)
def test_inspect_never_raises_on_damaged_rollouts(
    tmp_path: Path, index: int, cut: float, flips: list[tuple[float, int]], junk: list[bytes]
) -> None:
    data = bytearray(CORPUS[index % len(CORPUS)].read_bytes())
    for where, bit in flips:
        if data:
            data[int(where * (len(data) - 1))] ^= 1 << bit
    damaged = bytes(data[: int(cut * len(data))]) + b"\n".join(junk)
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(damaged)

    try:
        read = read_rollout(path)
    except RolloutError:
        return  # empty, or a (damaged) newer schema: a clear error, not a crash
    timeline = build_timeline(read.lines, read.line_numbers, read.stats, warnings=read.warnings)
    text = render(render_timeline(timeline, path, reconstruct(read.lines, read.stats)))

    assert text.startswith(f"rollout  {path}")
