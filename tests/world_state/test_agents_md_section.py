"""The ``agents_md`` section: AGENTS.md instructions, replacement and removal notices."""

from __future__ import annotations

import pytest

from mini_codex.jsonmerge import Json, strip_null_fields
from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.section import ABSENT, UNKNOWN, Known, SnapshotDecodeError
from mini_codex.world_state.sections.agents_md import (
    AgentsMdSection,
    AgentsMdSnapshot,
    user_instructions_fragment,
)

REPLACE = "These AGENTS.md instructions replace all previously provided AGENTS.md instructions."
REMOVED = "The previously provided AGENTS.md instructions no longer apply."


def user_instructions(text: str, directory: str | None = None) -> Fragment:
    header = f" for {directory}" if directory is not None else ""
    return Fragment(
        role="user",
        start_marker="# AGENTS.md instructions",
        end_marker="</INSTRUCTIONS>",
        body=f"{header}\n\n<INSTRUCTIONS>\n{text}\n",
    )


def persisted(section: AgentsMdSection) -> Json:
    return strip_null_fields(section.encode_snapshot(section.snapshot()))


def test_user_instructions_text_is_exact() -> None:
    assert user_instructions_fragment("Run tests.", "/repo").text == (
        "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nRun tests.\n</INSTRUCTIONS>"
    )
    assert user_instructions_fragment("Run tests.").text == (
        "# AGENTS.md instructions\n\n<INSTRUCTIONS>\nRun tests.\n</INSTRUCTIONS>"
    )


def test_absent_renders_the_plain_instructions() -> None:
    section = AgentsMdSection("Run tests.", "/repo")

    assert section.render_diff(ABSENT) == user_instructions("Run tests.", "/repo")


def test_absent_without_instructions_renders_nothing() -> None:
    assert AgentsMdSection(None).render_diff(ABSENT) is None


def test_unknown_renders_the_replacement_notice_before_the_text() -> None:
    section = AgentsMdSection("Run tests.", "/repo")

    assert section.render_diff(UNKNOWN) == user_instructions(f"{REPLACE}\n\nRun tests.", "/repo")


def test_unknown_without_instructions_renders_the_removal_notice() -> None:
    assert AgentsMdSection(None).render_diff(UNKNOWN) == user_instructions(REMOVED)


def test_known_equal_renders_nothing() -> None:
    section = AgentsMdSection("Run tests.", "/repo")

    assert (
        section.render_diff(Known(AgentsMdSnapshot(directory="/repo", text="Run tests."))) is None
    )
    assert section.render_diff(Known(section.snapshot())) is None
    assert AgentsMdSection(None).render_diff(Known(AgentsMdSnapshot())) is None


def test_known_changed_text_is_replaced_with_a_notice() -> None:
    section = AgentsMdSection("Run all tests.", "/repo")

    assert section.render_diff(
        Known(AgentsMdSnapshot(directory="/repo", text="Run tests."))
    ) == user_instructions(f"{REPLACE}\n\nRun all tests.", "/repo")


def test_known_changed_directory_is_replaced_with_a_notice() -> None:
    section = AgentsMdSection("Run tests.", "/work")

    assert section.render_diff(
        Known(AgentsMdSnapshot(directory="/repo", text="Run tests."))
    ) == user_instructions(f"{REPLACE}\n\nRun tests.", "/work")


def test_known_removed_instructions_render_the_removal_notice() -> None:
    section = AgentsMdSection(None)

    assert section.render_diff(
        Known(AgentsMdSnapshot(directory="/repo", text="Run tests."))
    ) == user_instructions(REMOVED)


def test_known_without_text_renders_new_instructions_plainly() -> None:
    section = AgentsMdSection("Run tests.")

    assert section.render_diff(Known(AgentsMdSnapshot())) == user_instructions("Run tests.")


@pytest.mark.parametrize("text", [None, ""], ids=["none", "empty"])
def test_no_instructions_persist_as_an_empty_object(text: str | None) -> None:
    section = AgentsMdSection(text, "/repo")

    assert persisted(section) == {}
    assert section.render_diff(ABSENT) is None


def test_snapshot_json_shape() -> None:
    assert persisted(AgentsMdSection("Run tests.", "/repo")) == {
        "directory": "/repo",
        "text": "Run tests.",
    }
    assert persisted(AgentsMdSection("Run tests.")) == {"text": "Run tests."}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({}, AgentsMdSnapshot()),
        ({"text": "t"}, AgentsMdSnapshot(text="t")),
        ({"directory": "/d", "text": "t"}, AgentsMdSnapshot(directory="/d", text="t")),
        ({"text": "t", "future_field": 1}, AgentsMdSnapshot(text="t")),
    ],
)
def test_snapshot_decodes_with_missing_optional_fields(
    raw: Json, expected: AgentsMdSnapshot
) -> None:
    assert AgentsMdSection.decode_snapshot(raw) == expected


@pytest.mark.parametrize("raw", [None, "text", {"text": 5}, []])
def test_mismatched_snapshot_does_not_decode(raw: Json) -> None:
    with pytest.raises(SnapshotDecodeError):
        AgentsMdSection.decode_snapshot(raw)


@pytest.mark.parametrize(
    "section",
    [AgentsMdSection("Run tests.", "/repo"), AgentsMdSection("Run tests."), AgentsMdSection(None)],
    ids=["text-and-directory", "text", "none"],
)
def test_round_tripped_current_snapshot_renders_nothing(section: AgentsMdSection) -> None:
    restored = AgentsMdSection.decode_snapshot(persisted(section))

    assert restored == section.snapshot()
    assert section.render_diff(Known(restored)) is None


def test_legacy_matcher_recognises_user_agents_md_messages_only() -> None:
    text = user_instructions_fragment("legacy", "/repo").text

    assert AgentsMdSection.matches_legacy_fragment("user", text)
    assert AgentsMdSection.matches_legacy_fragment(
        "user", "\n# agents.md INSTRUCTIONS x</instructions>  "
    )
    assert not AgentsMdSection.matches_legacy_fragment("developer", text)
    assert not AgentsMdSection.matches_legacy_fragment("user", "# AGENTS.md instructions only")
    assert not AgentsMdSection.has_retained_fragment_matcher()
