"""The ``workspace`` section: bounded encoding, rendering rules, matchers, container use."""

from __future__ import annotations

import orjson
import pytest

from mini_codex.jsonmerge import apply_merge_patch, create_merge_patch
from mini_codex.world_state import ABSENT, UNKNOWN, Known, SnapshotDecodeError, WorldState
from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.sections.workspace import WorkspaceSection
from mini_codex.world_state.workspace_files import PersistedWorkspace, WorkspaceFiles

ROOT = "/repo"


def files(*paths: str, root: str = ROOT) -> WorkspaceFiles:
    return WorkspaceFiles(root, paths)


def text(fragment: Fragment | None) -> str | None:
    return None if fragment is None else fragment.text


FIVE = files("src/b.py", "src/a.py", "README.md", "tests/test_a.py", "pyproject.toml")


# --- encoding ---------------------------------------------------------------------------------


def test_encoding_is_an_object_keyed_by_the_first_sorted_paths() -> None:
    section = WorkspaceSection(FIVE, persist_cap=3)
    assert section.encode_snapshot(FIVE) == {
        "root": ROOT,
        "count": 5,
        "digest": FIVE.digest,
        "files": {"README.md": 1, "pyproject.toml": 1, "src/a.py": 1},
    }


def test_encoding_is_cached_per_value_object() -> None:
    first = WorkspaceSection(FIVE).encode_snapshot(FIVE)
    assert WorkspaceSection(FIVE).encode_snapshot(FIVE) is first
    assert WorkspaceSection(FIVE, persist_cap=2).encode_snapshot(FIVE) is not first


def test_decode_round_trip_and_completeness() -> None:
    complete = WorkspaceSection.decode_snapshot(WorkspaceSection(FIVE).encode_snapshot(FIVE))
    assert complete == PersistedWorkspace(
        ROOT,
        5,
        FIVE.digest,
        ("README.md", "pyproject.toml", "src/a.py", "src/b.py", "tests/test_a.py"),
    )
    assert complete.complete
    capped = WorkspaceSection.decode_snapshot(
        WorkspaceSection(FIVE, persist_cap=2).encode_snapshot(FIVE)
    )
    assert capped == PersistedWorkspace(ROOT, 5, FIVE.digest, ("README.md", "pyproject.toml"))
    assert not capped.complete
    assert WorkspaceSection(FIVE, persist_cap=2).encode_snapshot(capped) == {
        "root": ROOT,
        "count": 5,
        "digest": FIVE.digest,
        "files": {"README.md": 1, "pyproject.toml": 1},
    }


@pytest.mark.parametrize(
    "raw",
    [
        ["not", "an", "object"],
        {"count": 1, "digest": "0" * 16, "files": {}},
        {"root": "/r", "count": -1, "digest": "0" * 16, "files": {}},
        {"root": "/r", "count": True, "digest": "0" * 16, "files": {}},
        {"root": "/r", "count": 1, "digest": "0" * 16, "files": ["a"]},
        {"root": "/r", "count": 0, "digest": "0" * 16, "files": {"a": 1}},
        {"root": "/r", "count": 1, "digest": "nothex", "files": {"a": 1}},
    ],
)
def test_bad_entries_do_not_decode(raw: object) -> None:
    with pytest.raises(SnapshotDecodeError, match="workspace"):
        WorkspaceSection.decode_snapshot(raw)  # type: ignore[arg-type]


def test_one_added_file_is_a_tiny_patch() -> None:
    many = WorkspaceFiles(ROOT, [f"pkg{i // 50}/mod{i}.py" for i in range(10_000)])
    grown = many.with_changes(added=["pkg0/aaa_new.py"])
    before = WorkspaceSection(many).encode_snapshot(many)
    after = WorkspaceSection(grown).encode_snapshot(grown)
    patch = create_merge_patch(before, after)
    pushed_out = many.sorted_paths()[1999]  # the listed range keeps its size (2000 paths)
    assert patch == {
        "count": 10_001,
        "digest": grown.digest,
        "files": {pushed_out: None, "pkg0/aaa_new.py": 1},
    }
    assert len(orjson.dumps(patch)) < 120
    assert len(orjson.dumps(after)) > 40_000  # the persisted cap bounds the entry (2000 paths)
    assert apply_merge_patch(before, patch) == after


def test_one_added_file_beyond_the_cap_changes_only_count_and_digest() -> None:
    many = WorkspaceFiles(ROOT, [f"pkg{i // 50}/mod{i}.py" for i in range(10_000)])
    grown = many.with_changes(added=["zzz.py"])
    patch = create_merge_patch(
        WorkspaceSection(many).encode_snapshot(many), WorkspaceSection(grown).encode_snapshot(grown)
    )
    assert patch == {"count": 10_001, "digest": grown.digest}


# --- rendering --------------------------------------------------------------------------------

FULL_FIVE = (
    "<workspace_files>\n"
    "Workspace root: /repo\n"
    "Files: 5\n"
    "README.md\n"
    "pyproject.toml\n"
    "src/a.py\n"
    "src/b.py\n"
    "tests/test_a.py\n"
    "</workspace_files>"
)


def test_absent_renders_the_full_listing() -> None:
    fragment = WorkspaceSection(FIVE).render_diff(ABSENT)
    assert fragment is not None
    assert (fragment.role, fragment.text) == ("user", FULL_FIVE)


def test_full_listing_is_capped() -> None:
    assert text(WorkspaceSection(FIVE, render_cap=2).render_diff(ABSENT)) == (
        "<workspace_files>\n"
        "Workspace root: /repo\n"
        "Files: 5\n"
        "README.md\n"
        "pyproject.toml\n"
        "... and 3 more files\n"
        "</workspace_files>"
    )
    assert text(WorkspaceSection(FIVE, render_cap=4).render_diff(ABSENT)) == (
        FULL_FIVE.replace("tests/test_a.py\n", "... and 1 more file\n")
    )


def test_empty_workspace_listing() -> None:
    assert text(WorkspaceSection(files()).render_diff(ABSENT)) == (
        "<workspace_files>\nWorkspace root: /repo\nFiles: 0\n</workspace_files>"
    )


def test_unknown_renders_the_listing_with_a_replacement_notice() -> None:
    assert text(WorkspaceSection(FIVE).render_diff(UNKNOWN)) == FULL_FIVE.replace(
        "<workspace_files>\n",
        "<workspace_files>\nThis listing replaces any previous workspace file listing.\n",
    )


def test_known_current_renders_nothing() -> None:
    section = WorkspaceSection(FIVE)
    assert section.render_diff(Known(FIVE)) is None
    assert section.render_diff(Known(files(*FIVE.paths))) is None
    decoded = WorkspaceSection.decode_snapshot(section.encode_snapshot(FIVE))
    assert section.render_diff(Known(decoded)) is None
    capped = WorkspaceSection(FIVE, persist_cap=2)
    assert capped.render_diff(Known(capped.decode_snapshot(capped.encode_snapshot(FIVE)))) is None


def test_known_renders_added_and_removed_files() -> None:
    after = FIVE.with_changes(added=["src/c.py", "docs/index.md"], removed=["README.md"])
    assert text(WorkspaceSection(after).render_diff(Known(FIVE))) == (
        "<workspace_files>\n"
        "Added files:\n"
        "docs/index.md\n"
        "src/c.py\n"
        "Removed files:\n"
        "README.md\n"
        "</workspace_files>"
    )
    assert text(WorkspaceSection(FIVE).render_diff(Known(after))) == (
        "<workspace_files>\n"
        "Added files:\n"
        "README.md\n"
        "Removed files:\n"
        "docs/index.md\n"
        "src/c.py\n"
        "</workspace_files>"
    )


def test_known_diff_lists_are_capped() -> None:
    after = FIVE.with_changes(added=[f"new{i}.py" for i in range(5)])
    assert text(WorkspaceSection(after, render_cap=2).render_diff(Known(FIVE))) == (
        "<workspace_files>\nAdded files:\nnew0.py\nnew1.py\n... and 3 more\n</workspace_files>"
    )


def test_root_change_renders_a_replacing_full_listing() -> None:
    moved = files(*FIVE.paths, root="/elsewhere")
    assert text(WorkspaceSection(moved).render_diff(Known(FIVE))) == FULL_FIVE.replace(
        "<workspace_files>\nWorkspace root: /repo\n",
        "<workspace_files>\n"
        "This listing replaces any previous workspace file listing.\n"
        "Workspace root: /elsewhere\n",
    )


def test_known_complete_persisted_previous_gives_the_exact_diff() -> None:
    before = WorkspaceSection.decode_snapshot(WorkspaceSection(FIVE).encode_snapshot(FIVE))
    after = files("README.md", "pyproject.toml", "src/a.py", "src/b.py", "zeta.txt")
    assert text(WorkspaceSection(after).render_diff(Known(before))) == (
        "<workspace_files>\n"
        "Added files:\n"
        "zeta.txt\n"
        "Removed files:\n"
        "tests/test_a.py\n"
        "</workspace_files>"
    )


def test_incomplete_previous_diffs_the_listed_range_exactly() -> None:
    # Listed: README.md, pyproject.toml (cap 2); the rest is known only by count and digest.
    before = WorkspaceSection.decode_snapshot(
        WorkspaceSection(FIVE, persist_cap=2).encode_snapshot(FIVE)
    )
    inside_only = FIVE.with_changes(added=["LICENSE"], removed=["README.md"])
    assert text(WorkspaceSection(inside_only).render_diff(Known(before))) == (
        "<workspace_files>\nAdded files:\nLICENSE\nRemoved files:\nREADME.md\n</workspace_files>"
    )


def test_incomplete_previous_reports_changes_beyond_the_listed_range() -> None:
    before = WorkspaceSection.decode_snapshot(
        WorkspaceSection(FIVE, persist_cap=2).encode_snapshot(FIVE)
    )
    outside_only = FIVE.with_changes(added=["src/c.py"])
    assert text(WorkspaceSection(outside_only).render_diff(Known(before))) == (
        "<workspace_files>\n"
        "Other changes outside the listed range: now 6 files.\n"
        "</workspace_files>"
    )
    # Same count, different path beyond the range: caught by the digest.
    renamed = FIVE.with_changes(added=["src/z.py"], removed=["src/b.py"])
    both = renamed.with_changes(added=["Makefile"])
    assert text(WorkspaceSection(both).render_diff(Known(before))) == (
        "<workspace_files>\n"
        "Added files:\n"
        "Makefile\n"
        "Other changes outside the listed range: now 6 files.\n"
        "</workspace_files>"
    )


def test_incomplete_previous_with_nothing_listed() -> None:
    before = WorkspaceSection.decode_snapshot(
        WorkspaceSection(FIVE, persist_cap=0).encode_snapshot(FIVE)
    )
    assert WorkspaceSection(FIVE).render_diff(Known(before)) is None
    grown = FIVE.with_changes(added=["a"])
    assert text(WorkspaceSection(grown).render_diff(Known(before))) == (
        "<workspace_files>\n"
        "Other changes outside the listed range: now 6 files.\n"
        "</workspace_files>"
    )


def test_unprintable_paths_are_quoted() -> None:
    odd = files("line\nbreak.txt", "tab\there")
    assert text(WorkspaceSection(odd).render_diff(ABSENT)) == (
        "<workspace_files>\n"
        "Workspace root: /repo\n"
        "Files: 2\n"
        '"line\\nbreak.txt"\n'
        '"tab\\there"\n'
        "</workspace_files>"
    )


# --- matchers ---------------------------------------------------------------------------------


def test_matchers_recognise_the_markers_for_role_user() -> None:
    rendered = FULL_FIVE
    assert WorkspaceSection.matches_legacy_fragment("user", rendered)
    assert WorkspaceSection.matches_legacy_fragment(
        "user", "  <WORKSPACE_FILES>x</workspace_files>\n"
    )
    assert not WorkspaceSection.matches_legacy_fragment("developer", rendered)
    assert not WorkspaceSection.matches_legacy_fragment("user", "<workspace_files> unterminated")
    assert WorkspaceSection.has_retained_fragment_matcher()
    assert WorkspaceSection.matches_retained_fragment("user", rendered)
    assert not WorkspaceSection.matches_retained_fragment("developer", rendered)


# --- in the WorldState container --------------------------------------------------------------


def test_world_state_diff_and_patch_between_steps() -> None:
    step1 = WorldState([WorkspaceSection(FIVE)])
    grown = FIVE.with_changes(added=["new.py"])
    step2 = WorldState([WorkspaceSection(grown)])
    assert [f.text for f in step2.render_diff(step1)] == [
        "<workspace_files>\nAdded files:\nnew.py\n</workspace_files>"
    ]
    assert step2.snapshot().merge_patch_from(step1.snapshot()) == {
        "workspace": {"count": 6, "digest": grown.digest, "files": {"new.py": 1}}
    }
    same = WorldState([WorkspaceSection(grown)])
    assert same.render_diff(step2) == []
    assert same.snapshot().merge_patch_from(step2.snapshot()) is None
    # Against the persisted snapshot (e.g. after resume) the diff is the same.
    assert [f.text for f in step2.render_diff(step1.snapshot())] == [
        "<workspace_files>\nAdded files:\nnew.py\n</workspace_files>"
    ]
