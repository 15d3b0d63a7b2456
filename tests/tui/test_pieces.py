"""The UI's pure pieces: fuzzy matching, the prompt history file, and how cells read."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mini_codex.tui import cells
from mini_codex.tui.fuzzy import best_matches, score
from mini_codex.tui.history import PromptHistory


@given(st.text(max_size=8), st.text(max_size=30))
def test_a_match_is_a_subsequence(query: str, path: str) -> None:
    result = score(query, path)
    lowered = iter(path.lower())
    is_subsequence = all(char in lowered for char in query.lower())
    assert (result is not None) is is_subsequence


def test_best_matches_prefer_the_file_name_and_tight_matches() -> None:
    paths = ["docs/readme_old.txt", "src/app/main.py", "README.md", "src/readme.py"]
    assert best_matches("readme", paths) == ["README.md", "src/readme.py", "docs/readme_old.txt"]
    assert best_matches("amain", paths) == ["src/app/main.py"]


def test_history_skips_repeats_and_bad_lines_and_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    history = PromptHistory(path)
    for text in ["one", "one", "two", "  "]:
        history.add(text)
    with path.open("a") as handle:
        handle.write("not json\n" + json.dumps({"ts": 1}) + "\n")
    again = PromptHistory(path)
    assert again.entries == ["one", "two"]
    assert [again.previous(), again.previous(), again.previous()] == ["two", "one", None]
    assert [again.next(), again.next(), again.next()] == ["two", "", None]


def test_an_unwritable_history_keeps_entries_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    history = PromptHistory(blocker / "history.jsonl")
    history.add("kept")
    assert history.previous() == "kept"


def test_mcp_and_other_tool_titles() -> None:
    title = cells.tool_title("mcp__time__get_current_time", '{"timezone": "UTC"}')
    assert title.plain == '⚙ mcp time.get_current_time {"timezone": "UTC"}'
    assert (
        cells.tool_title("view_image", '{"path": "a.png"}').plain
        == '⚙ view_image {"path": "a.png"}'
    )


def test_a_failed_shell_command_shows_its_exit_code_in_red() -> None:
    output = "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nno such file\n"
    text = cells.tool_result("shell", output, success=False, duration_s=0.12, details=None)
    assert text.plain == "no such file\n✗ exit 2 · 0.1s"
    assert [str(span.style) for span in text.spans] == ["dim", "red"]


def test_long_output_keeps_the_tail() -> None:
    body = "\n".join(f"l{i}" for i in range(20))
    assert cells.tail(body, 3) == "… 17 earlier lines\nl17\nl18\nl19"


def test_token_status_shows_usage_and_context_left() -> None:
    info = {
        "total_token_usage": {"total_tokens": 12345},
        "last_token_usage": {"total_tokens": 50000},
        "model_context_window": 200000,
    }
    assert cells.token_status(info) == "12,345 tokens · 75% context left"
    assert cells.token_status(None) == ""


def test_workspace_note_is_one_line() -> None:
    note = cells.workspace_note(["a.py", "b.py"], ["old.txt"])
    assert note is not None
    assert note.plain == "workspace: +a.py +b.py -old.txt"
    many = cells.workspace_note([f"f{i}" for i in range(9)], [])
    assert many is not None
    assert many.plain == "workspace: +f0 +f1 +f2 +f3 +f4 +f5 (+3 more)"
