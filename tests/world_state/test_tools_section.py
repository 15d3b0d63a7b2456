"""The ``tools`` section: tool namespaces, their first description lines, and the 4 KiB cap."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_codex.jsonmerge import Json
from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.section import ABSENT, UNKNOWN, Known, Previous, SnapshotDecodeError
from mini_codex.world_state.sections.tools import (
    MAX_DESCRIPTION_CHARS,
    MAX_RENDERED_BYTES,
    ToolsSection,
    first_description_line,
)


def tool_namespaces(body: str) -> Fragment:
    return Fragment(
        role="developer",
        start_marker="<tool_namespaces>",
        end_marker="</tool_namespaces>",
        body=body,
    )


def text_of(section: ToolsSection, previous: Previous[dict[str, str]]) -> str:
    fragment = section.render_diff(previous)
    assert fragment is not None
    return fragment.text


def test_renders_first_line_of_namespace_descriptions() -> None:
    section = ToolsSection(
        {
            "shell": "  run shell commands in the workspace  \nMore details here.",
            "github": "access GitHub issues & pull requests",
            "scratch": "",
        }
    )

    assert section.render_diff(ABSENT) == tool_namespaces(
        "\nTool namespaces available:\n"
        "- github: access GitHub issues &amp; pull requests\n"
        "- scratch\n"
        "- shell: run shell commands in the workspace\n"
    )


def test_unknown_renders_the_full_list_like_absent() -> None:
    section = ToolsSection({"shell": "run commands"})

    assert section.render_diff(UNKNOWN) == section.render_diff(ABSENT)


@pytest.mark.parametrize("previous", [ABSENT, UNKNOWN], ids=["absent", "unknown"])
def test_no_namespaces_render_nothing_and_are_not_persisted(
    previous: Previous[dict[str, str]],
) -> None:
    section = ToolsSection({})

    assert section.render_diff(previous) is None
    assert not section.should_persist()


def test_renders_added_removed_and_updated_namespace_descriptions() -> None:
    section = ToolsSection({"shell": "run commands", "github": "access GitHub"})
    previous = {"github": "old GitHub description", "time": "tell the time"}

    assert section.render_diff(Known(previous)) == tool_namespaces(
        "\nAdded tool namespaces:\n"
        "- github: access GitHub\n"
        "- shell: run commands\n"
        "Removed tool namespaces:\n"
        "- time: tell the time\n"
    )


def test_only_removals_render_only_the_removed_list() -> None:
    section = ToolsSection({"shell": "run commands"})

    assert text_of(section, Known({"shell": "run commands", "time": "tell the time"})) == (
        "<tool_namespaces>\nRemoved tool namespaces:\n- time: tell the time\n</tool_namespaces>"
    )


def test_removing_every_namespace_says_none_remain() -> None:
    section = ToolsSection({})

    assert section.render_diff(Known({"shell": "run commands"})) == tool_namespaces(
        "\nRemoved tool namespaces:\n- shell: run commands\nNo tool namespaces remain.\n"
    )


def test_known_equal_renders_nothing() -> None:
    section = ToolsSection({"shell": "run commands\nsecond line", "github": "access GitHub"})

    assert section.render_diff(Known({"github": "access GitHub", "shell": "run commands"})) is None
    assert section.render_diff(Known(section.snapshot())) is None


def test_snapshot_maps_namespaces_to_first_lines() -> None:
    section = ToolsSection({"shell": "\n  run commands \n more", "github": "access GitHub"})

    assert section.should_persist()
    assert section.encode_snapshot(section.snapshot()) == {
        "github": "access GitHub",
        "shell": "run commands",
    }


def test_caps_namespace_descriptions_by_character_count() -> None:
    section = ToolsSection({"app": "🦀" * (MAX_DESCRIPTION_CHARS + 1)})

    assert section.snapshot() == {"app": "🦀" * MAX_DESCRIPTION_CHARS}


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("one\ntwo", "one"),
        ("  padded  ", "padded"),
        ("\n\n  later line\nnext", "later line"),
        ("crlf line\r\nnext", "crlf line"),
        ("", ""),
        ("   \n  ", ""),
    ],
)
def test_first_description_line(description: str, expected: str) -> None:
    assert first_description_line(description) == expected


def test_caps_rendered_tools_fragment_after_xml_escaping() -> None:
    section = ToolsSection(
        {f"namespace_{index:03}": "&" * MAX_DESCRIPTION_CHARS for index in range(100)}
    )

    text = text_of(section, ABSENT)

    # Unescaped, one entry is ~270 bytes (15 fit); escaped it is ~1270 bytes, so only 3 fit.
    assert len(text.encode()) <= MAX_RENDERED_BYTES
    assert text == (
        "<tool_namespaces>\nTool namespaces available:\n"
        + "".join(f"- namespace_{i:03}: {'&amp;' * MAX_DESCRIPTION_CHARS}\n" for i in range(3))
        + "... 97 additional namespaces omitted.\n</tool_namespaces>"
    )


def test_oversized_entries_are_skipped_and_smaller_later_ones_kept() -> None:
    section = ToolsSection({"a" * 4000: "huge", "b": "small", "c" * 100: "medium"})

    assert text_of(section, ABSENT) == (
        "<tool_namespaces>\nTool namespaces available:\n"
        "- b: small\n"
        f"- {'c' * 100}: medium\n"
        "... 1 additional namespaces omitted.\n</tool_namespaces>"
    )


def test_each_list_counts_its_own_omissions() -> None:
    section = ToolsSection({"a" * 3800: "big new", "d": "new"})
    previous = {"y" * 100: "gone", "z": "gone too"}

    text = text_of(section, Known(previous))

    assert len(text.encode()) <= MAX_RENDERED_BYTES
    assert text == (
        "<tool_namespaces>\nAdded tool namespaces:\n"
        f"- {'a' * 3800}: big new\n"
        "- d: new\n"
        "Removed tool namespaces:\n"
        "- z: gone too\n"
        "... 1 additional namespaces omitted.\n</tool_namespaces>"
    )


def test_the_none_remain_notice_is_reserved_when_everything_is_removed() -> None:
    previous = {f"ns_{index:04}": "x" * 200 for index in range(50)}

    text = text_of(ToolsSection({}), Known(previous))

    assert len(text.encode()) <= MAX_RENDERED_BYTES
    assert text.endswith(
        " additional namespaces omitted.\nNo tool namespaces remain.\n</tool_namespaces>"
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [({"a": "b"}, {"a": "b"}), ({}, {})],
)
def test_snapshot_decodes(raw: Json, expected: dict[str, str]) -> None:
    assert ToolsSection.decode_snapshot(raw) == expected


@pytest.mark.parametrize("raw", [None, "shell", ["shell"], {"shell": 1}, {"shell": None}])
def test_mismatched_snapshots_do_not_decode(raw: Json) -> None:
    with pytest.raises(SnapshotDecodeError):
        ToolsSection.decode_snapshot(raw)


def test_has_no_matchers() -> None:
    text = text_of(ToolsSection({"shell": "run"}), ABSENT)

    assert not ToolsSection.matches_legacy_fragment("developer", text)
    assert not ToolsSection.has_retained_fragment_matcher()


namespace_maps = st.dictionaries(
    st.text(alphabet="ab&<\"'é🦀 ", min_size=1, max_size=40),
    st.text(alphabet="xy&<\n 🦀", max_size=300),
    max_size=60,
)


@given(current=namespace_maps, previous=namespace_maps)
def test_rendered_text_never_exceeds_the_cap(
    current: dict[str, str], previous: dict[str, str]
) -> None:
    section = ToolsSection(current)
    for state in (ABSENT, Known(ToolsSection(previous).snapshot())):
        fragment = section.render_diff(state)
        if fragment is not None:
            assert len(fragment.text.encode()) <= MAX_RENDERED_BYTES


@given(current=namespace_maps)
def test_round_tripped_current_snapshot_renders_nothing(current: dict[str, str]) -> None:
    section = ToolsSection(current)
    restored = ToolsSection.decode_snapshot(section.encode_snapshot(section.snapshot()))

    assert restored == section.snapshot()
    assert section.render_diff(Known(restored)) is None
