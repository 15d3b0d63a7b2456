"""The patch envelope parser: every form, leniencies, and errors with line numbers."""

from __future__ import annotations

import pytest

from mini_codex.tools.apply_patch.parser import (
    AddFile,
    DeleteFile,
    Patch,
    PatchParseError,
    UpdateChunk,
    UpdateFile,
    parse_patch,
)


def patch(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def test_every_operation_form_parses_to_the_typed_ast() -> None:
    text = patch(
        "*** Begin Patch",
        "*** Add File: path/add.py",
        "+abc",
        "+",
        "+def",
        "*** Delete File: path/delete.py",
        "*** Update File: path/update.py",
        "*** Move to: path/update2.py",
        "@@ def f():",
        "-    pass",
        "+    return 123",
        "@@",
        " keep",
        "-old",
        "+new",
        "*** End of File",
        "*** End Patch",
    )
    assert parse_patch(text) == Patch(
        hunks=(
            AddFile(path="path/add.py", contents="abc\n\ndef\n", line=2),
            DeleteFile(path="path/delete.py", line=6),
            UpdateFile(
                path="path/update.py",
                move_to="path/update2.py",
                chunks=(
                    UpdateChunk(
                        contexts=("def f():",),
                        old_lines=("    pass",),
                        new_lines=("    return 123",),
                        is_end_of_file=False,
                        line=9,
                    ),
                    UpdateChunk(
                        contexts=(),
                        old_lines=("keep", "old"),
                        new_lines=("keep", "new"),
                        is_end_of_file=True,
                        line=12,
                    ),
                ),
                line=7,
            ),
        )
    )


def test_several_context_headers_narrow_down_one_hunk() -> None:
    text = patch(
        "*** Begin Patch",
        "*** Update File: a.py",
        "@@ class A:",
        "@@     def f(self):",
        "-        return 1",
        "+        return 2",
        "*** End Patch",
    )
    (update,) = parse_patch(text).hunks
    assert update == UpdateFile(
        path="a.py",
        move_to=None,
        chunks=(
            UpdateChunk(
                contexts=("class A:", "    def f(self):"),
                old_lines=("        return 1",),
                new_lines=("        return 2",),
                is_end_of_file=False,
                line=3,
            ),
        ),
        line=2,
    )


def test_first_hunk_may_omit_the_at_at_header_and_blank_lines_are_empty_context() -> None:
    text = patch(
        "*** Begin Patch", "*** Update File: f", " import foo", "", "+bar", "*** End Patch"
    )
    (update,) = parse_patch(text).hunks
    assert isinstance(update, UpdateFile)
    assert update.chunks == (
        UpdateChunk(
            contexts=(),
            old_lines=("import foo", ""),
            new_lines=("import foo", "", "bar"),
            is_end_of_file=False,
            line=3,
        ),
    )


def test_unified_diff_range_headers_keep_only_their_trailing_text() -> None:
    text = patch(
        "*** Begin Patch",
        "*** Update File: f",
        "@@ -1,3 +1,4 @@ def main():",
        "-a",
        "+b",
        "@@ -10 +11 @@",
        "-c",
        "+d",
        "*** End Patch",
    )
    (update,) = parse_patch(text).hunks
    assert isinstance(update, UpdateFile)
    assert [chunk.contexts for chunk in update.chunks] == [("def main():",), ()]


def test_markers_tolerate_padding_crlf_heredoc_and_blank_lines_between_operations() -> None:
    text = (
        "<<'EOF'\r\n  *** Begin Patch  \r\n*** Add File: a\r\n+x\r\n\r\n"
        "*** Delete File: b\r\n  *** End Patch\r\nEOF\r\n"
    )
    assert parse_patch(text) == Patch(
        hunks=(AddFile(path="a", contents="x\n", line=3), DeleteFile(path="b", line=6))
    )


def test_an_add_file_without_lines_creates_an_empty_file_and_an_empty_envelope_parses() -> None:
    text = patch("*** Begin Patch", "*** Add File: empty.txt", "*** End Patch")
    assert parse_patch(text) == Patch(hunks=(AddFile(path="empty.txt", contents="", line=2),))
    assert parse_patch("*** Begin Patch\n*** End Patch") == Patch(hunks=())


def test_context_lines_that_look_like_markers_stay_content() -> None:
    text = patch(
        "*** Begin Patch",
        "*** Update File: notes.md",
        "@@",
        " *** End Patch",
        "-*** Add File: x",
        "+@@ not a header",
        "*** End Patch",
    )
    (update,) = parse_patch(text).hunks
    assert isinstance(update, UpdateFile)
    assert update.chunks[0].old_lines == ("*** End Patch", "*** Add File: x")
    assert update.chunks[0].new_lines == ("*** End Patch", "@@ not a header")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", 1, "the first line of the patch must be '*** Begin Patch'"),
        ("bad\n*** End Patch", 1, "the first line of the patch must be '*** Begin Patch'"),
        ("\n\n*** Begin Patch\n*** Add File: a\n+x\n", 5, "the last line of the patch must be"),
        ("*** Begin Patch", 1, "the last line of the patch must be '*** End Patch'"),
        (
            "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch",
            2,
            "'*** Frobnicate File: a' is not a valid file operation header",
        ),
        ("*** Begin Patch\n*** Add File: \n+x\n*** End Patch", 2, "needs a path"),
        ("*** Begin Patch\n*** Delete File:\n*** End Patch", 2, "needs a path"),
        ("*** Begin Patch\n*** Update File: a\n*** End Patch", 2, "has no hunks"),
        (
            "*** Begin Patch\n*** Update File: a\n*** Move to:\n@@\n-x\n*** End Patch",
            3,
            "needs a path",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n@@\nbad line\n*** End Patch",
            4,
            "unexpected line in hunk: 'bad line'",
        ),
        ("*** Begin Patch\n*** Update File: a\n@@ ctx\n*** End Patch", 3, "hunk has no lines"),
        (
            "*** Begin Patch\n*** Update File: a\n@@\n*** End of File\n*** End Patch",
            3,
            "hunk has no lines before '*** End of File'",
        ),
        (
            "*** Begin Patch\n*** Add File: a\n+one\n\n+three\n*** End Patch",
            4,
            "every line of an added file must start with '+'",
        ),
        (
            "*** Begin Patch\n*** Add File: a\n+one\ntwo\n*** End Patch",
            4,
            "'two' is not a valid file operation header",
        ),
    ],
)
def test_malformed_patches_report_the_line_and_the_problem(
    text: str, line: int, message: str
) -> None:
    with pytest.raises(PatchParseError) as caught:
        parse_patch(text)
    assert caught.value.line == line
    assert message in caught.value.message
    assert str(caught.value).startswith(f"invalid patch at line {line}: ")
