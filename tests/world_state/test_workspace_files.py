"""WorkspaceFiles / PersistedWorkspace: the pure file-set values and their laws."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_codex.world_state.workspace_files import (
    PersistedWorkspace,
    WorkspaceFiles,
    digest_of_paths,
    path_hash,
)

path_names = st.from_regex(r"[a-c]{1,2}(/[a-c]{1,2}){0,2}", fullmatch=True)
path_sets = st.frozensets(path_names, max_size=12)


def test_basic_views() -> None:
    files = WorkspaceFiles("/ws", ["b.txt", "a/x.py", "a/y.py"])
    assert (files.root, files.count, len(files)) == ("/ws", 3, 3)
    assert files.paths == frozenset({"b.txt", "a/x.py", "a/y.py"})
    assert files.sorted_paths() == ("a/x.py", "a/y.py", "b.txt")
    assert (
        files.digest
        == f"{(path_hash('b.txt') + path_hash('a/x.py') + path_hash('a/y.py')) % 2**64:016x}"
    )
    assert "a/x.py" in files
    assert "a" not in files


@pytest.mark.parametrize(
    "bad", ["", "/abs", "trailing/", "a//b", "./a", "a/../b", "..", "nul\0", "bad\udcff"]
)
def test_paths_must_be_normalized_relative_posix(bad: str) -> None:
    with pytest.raises(ValueError, match="workspace path"):
        WorkspaceFiles("/ws", [bad])


def test_equality_is_by_root_and_paths() -> None:
    a = WorkspaceFiles("/ws", ["x", "y"])
    assert a == WorkspaceFiles("/ws", ["y", "x"])
    assert hash(a) == hash(WorkspaceFiles("/ws", ["y", "x"]))
    assert a != WorkspaceFiles("/other", ["x", "y"])
    assert a != WorkspaceFiles("/ws", ["x"])
    assert a.with_changes(added=["z"]) == WorkspaceFiles("/ws", ["x", "y", "z"])


def test_with_changes_without_effect_returns_self() -> None:
    files = WorkspaceFiles("/ws", ["x"])
    assert files.with_changes(added=["x"], removed=["nope"]) is files


def test_a_path_cannot_be_added_and_removed_at_once() -> None:
    with pytest.raises(ValueError, match="both added and removed"):
        WorkspaceFiles("/ws", ["x"]).with_changes(added=["y"], removed=["y"])


def test_changes_since_is_recorded_not_recomputed() -> None:
    base = WorkspaceFiles("/ws", [f"f{i}" for i in range(1000)])
    base.sorted_paths()
    step = base.with_changes(added=["new"], removed=["f1"])
    assert step.changes_since(base) == (frozenset({"new"}), frozenset({"f1"}))
    assert step._set is None  # answered from the recorded delta: no full set was built
    assert step.sorted_paths() == tuple(sorted((base.paths - {"f1"}) | {"new"}))


@settings(max_examples=60, deadline=None)
@given(path_sets, st.lists(st.tuples(path_sets, path_sets), max_size=5), st.booleans())
def test_derivation_laws(
    start: frozenset[str], steps: list[tuple[frozenset[str], frozenset[str]]], sort_first: bool
) -> None:
    """Digest, sorted order and changes_since agree with a from-scratch computation."""
    base = WorkspaceFiles("/ws", start)
    if sort_first:
        base.sorted_paths()
    current = base
    expected = set(start)
    chain = [base]
    for added, removed in steps:
        added = added - removed
        current = current.with_changes(added, removed)
        expected = (expected - removed) | added
        chain.append(current)
        assert current == WorkspaceFiles("/ws", expected)
        assert current.digest_value == digest_of_paths(expected)
        assert current.sorted_paths() == tuple(sorted(expected))
    for earlier in chain:
        assert current.changes_since(earlier) == (
            frozenset(expected - earlier.paths),
            frozenset(earlier.paths - expected),
        )


def test_persisted_workspace_validation_and_views() -> None:
    persisted = PersistedWorkspace("/ws", 3, "00000000000000ff", ("a", "b"))
    assert (persisted.complete, persisted.last_listed, persisted.digest_value) == (
        False,
        "b",
        255,
    )
    assert PersistedWorkspace("/ws", 0, "0" * 16, ()).last_listed is None
    with pytest.raises(ValueError, match="count"):
        PersistedWorkspace("/ws", 1, "0" * 16, ("a", "b"))
    with pytest.raises(ValueError, match="digest"):
        PersistedWorkspace("/ws", 2, "XYZ", ("a", "b"))
    with pytest.raises(ValueError, match="sorted"):
        PersistedWorkspace("/ws", 2, "0" * 16, ("b", "a"))
