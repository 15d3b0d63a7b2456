"""Hunk matching and application on text (pure), plus the round-trip law with a test-side diff."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_codex.tools.apply_patch.content import HunkMismatchError, apply_chunks, seek_sequence
from mini_codex.tools.apply_patch.parser import UpdateChunk, UpdateFile, parse_patch


def chunk(
    old: tuple[str, ...],
    new: tuple[str, ...],
    *contexts: str,
    eof: bool = False,
) -> UpdateChunk:
    return UpdateChunk(contexts=contexts, old_lines=old, new_lines=new, is_end_of_file=eof, line=3)


def test_seek_prefers_exact_then_rstrip_then_strip_then_unicode_folding() -> None:
    lines = ["a ", " b", "c\u2014d", "a"]
    assert seek_sequence(lines, ["a"], 0) == 3
    assert seek_sequence(lines, ["a", "b"], 0) == 0
    assert seek_sequence(lines, ["c-d"], 0) == 2
    assert seek_sequence(lines, ["a"], 1) == 3
    assert seek_sequence(lines, ["zzz"], 0) is None
    assert seek_sequence(lines, [], 2) == 2


def test_end_of_file_hunks_prefer_the_match_at_the_end() -> None:
    lines = ["x", "y", "x"]
    assert seek_sequence(lines, ["x"], 0, eof=True) == 2
    assert apply_chunks("x\ny\nx\n", [chunk(("x",), ("z",), eof=True)], path="f") == "x\ny\nz\n"


def test_whitespace_tolerant_context_keeps_the_new_lines_verbatim() -> None:
    original = "def f():\n    return 1   \n"
    result = apply_chunks(original, [chunk(("    return 1",), ("    return 2",))], path="f")
    assert result == "def f():\n    return 2\n"
    result = apply_chunks(original, [chunk(("return 1",), ("  return 3",))], path="f")
    assert result == "def f():\n  return 3\n"


def test_context_headers_are_found_in_order_before_the_hunk() -> None:
    original = "class A:\n  def f():\n    x\nclass B:\n  def f():\n    x\n"
    result = apply_chunks(
        original, [chunk(("    x",), ("    y",), "class B:", "  def f():")], path="f"
    )
    assert result == "class A:\n  def f():\n    x\nclass B:\n  def f():\n    y\n"


def test_pure_additions_go_after_their_context_or_at_the_end() -> None:
    assert apply_chunks("a\nb\n", [chunk((), ("new",), "a")], path="f") == "a\nnew\nb\n"
    assert apply_chunks("a\nb", [chunk((), ("new",))], path="f") == "a\nb\nnew\n"
    assert apply_chunks("", [chunk((), ("only",))], path="f") == "only\n"


def test_an_insertion_before_a_replacement_at_the_same_line_keeps_its_order() -> None:
    chunks = [chunk((), ("inserted",), "a"), chunk(("b",), ("B",))]
    assert apply_chunks("a\nb\nc\n", chunks, path="f") == "a\ninserted\nB\nc\n"


def test_trailing_blank_context_lines_that_do_not_match_are_dropped() -> None:
    result = apply_chunks("a\nb\n", [chunk(("a", "", ""), ("A", "", ""))], path="f")
    assert result == "A\nb\n"


def test_crlf_files_stay_crlf_and_every_result_ends_with_a_newline() -> None:
    assert apply_chunks("a\r\nb\r\n", [chunk(("b",), ("c",))], path="f") == "a\r\nc\r\n"
    assert apply_chunks("a\nb", [chunk(("b",), ("c",))], path="f") == "a\nc\n"


def test_missing_lines_and_contexts_name_the_file_hunk_and_expected_lines() -> None:
    with pytest.raises(HunkMismatchError) as caught:
        apply_chunks("a\nb\n", [chunk(("a",), ("A",)), chunk(("zz", "yy"), ("q",))], path="src/x")
    assert str(caught.value) == (
        "Failed to find the expected lines in src/x (hunk 2, patch line 3); these lines "
        "(context and removed) are not in the file:\nzz\nyy"
    )
    with pytest.raises(HunkMismatchError) as caught:
        apply_chunks("a\n", [chunk(("a",), ("b",), "class Missing:")], path="src/x")
    assert str(caught.value) == (
        "Failed to find context line 'class Missing:' in src/x (hunk 1, patch line 3)"
    )


def test_hunks_are_searched_after_the_previous_one() -> None:
    with pytest.raises(HunkMismatchError):
        apply_chunks("a\nb\n", [chunk(("b",), ("B",)), chunk(("a",), ("A",))], path="f")


# --- the round-trip law: a patch generated from (old, new) applies old -> new ------------------


def make_update_patch(path: str, old: list[str], new: list[str]) -> str:
    """A small test-side generator: one ``@@`` hunk per difflib group (3 lines of context)."""
    out = ["*** Begin Patch", f"*** Update File: {path}"]
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(3):
        out.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + line for line in old[i1:i2])
            if tag in ("replace", "delete"):
                out.extend("-" + line for line in old[i1:i2])
            if tag in ("replace", "insert"):
                out.extend("+" + line for line in new[j1:j2])
    out.append("*** End Patch")
    return "\n".join(out) + "\n"


LINE = st.text(st.characters(exclude_characters="\r\n"), max_size=8)


@st.composite
def old_and_new(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    # Unique old lines: with repeated lines a hunk can legitimately match an earlier copy.
    old = draw(st.lists(LINE, max_size=25, unique=True))
    new = list(old)
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        if op == "insert" or not new:
            new.insert(draw(st.integers(0, len(new))), draw(LINE))
        elif op == "delete":
            del new[draw(st.integers(0, len(new) - 1))]
        else:
            new[draw(st.integers(0, len(new) - 1))] = draw(LINE)
    return old, new


@settings(max_examples=300, deadline=None)
@given(old_and_new())
def test_a_patch_generated_from_old_and_new_applies_old_to_new(
    pair: tuple[list[str], list[str]],
) -> None:
    old, new = pair
    if old == new:
        return
    (update,) = parse_patch(make_update_patch("f.txt", old, new)).hunks
    assert isinstance(update, UpdateFile)
    original = "".join(line + "\n" for line in old)
    assert apply_chunks(original, update.chunks, path="f.txt") == "".join(
        line + "\n" for line in new
    )
