"""Apply the hunks of one ``*** Update File`` to a file's text (pure).

Each hunk is located after the previous one: first its ``@@`` context lines (each searched after
the previous), then its old lines. A search tries, in order: exact lines, lines with trailing
whitespace ignored, lines with surrounding whitespace ignored, and finally lines with common
Unicode punctuation (dashes, quotes, non-breaking spaces) folded to ASCII. A hunk marked
``*** End of File`` prefers a match that ends at the last line. If the old lines end with empty
lines that cannot be found, they are retried without them (a patch often carries stray blank
lines at the end of a hunk). A hunk with no old lines is inserted right after its ``@@`` context,
or appended at the end of the file when it has none.

Line ends: a file containing ``\\r\\n`` is edited as lines and written back with ``\\r\\n``; the
result always ends with a newline (as Codex does).
What does not belong here: parsing (``parser.py``), paths and the filesystem (``apply.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mini_codex.errors import MiniCodexError
from mini_codex.tools.apply_patch.parser import UpdateChunk

__all__ = ["HunkMismatchError", "apply_chunks", "seek_sequence"]

_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f", " "),
    }
)


class HunkMismatchError(MiniCodexError):
    """A hunk's context or old lines are not in the file; the message is meant for the model."""


def _exact(line: str) -> str:
    return line


def _rstrip(line: str) -> str:
    return line.rstrip()


def _strip(line: str) -> str:
    return line.strip()


def _fold(line: str) -> str:
    return line.strip().translate(_PUNCTUATION)


_PASSES: tuple[Callable[[str], str], ...] = (_exact, _rstrip, _strip, _fold)


def seek_sequence(
    lines: Sequence[str], pattern: Sequence[str], start: int, *, eof: bool = False
) -> int | None:
    """Index of the first occurrence of ``pattern`` in ``lines`` at or after ``start``.

    With ``eof``, a match ending at the last line wins over any earlier one.
    """
    if not pattern:
        return start
    last = len(lines) - len(pattern)
    if last < start:
        return None
    if eof:
        for norm in _PASSES:
            if all(norm(a) == norm(b) for a, b in zip(lines[last:], pattern, strict=True)):
                return last
    for norm in _PASSES:
        wanted = [norm(line) for line in pattern]
        for index in range(start, last + 1):
            if all(norm(lines[index + k]) == wanted[k] for k in range(len(wanted))):
                return index
    return None


def _where(path: str, number: int, chunk: UpdateChunk) -> str:
    return f"{path} (hunk {number}, patch line {chunk.line})"


def _replacements(
    lines: list[str], chunks: Sequence[UpdateChunk], path: str
) -> list[tuple[int, int, list[str]]]:
    out: list[tuple[int, int, list[str]]] = []
    cursor = 0
    for number, chunk in enumerate(chunks, start=1):
        for context in chunk.contexts:
            found = seek_sequence(lines, [context], cursor)
            if found is None:
                raise HunkMismatchError(
                    f"Failed to find context line '{context}' in {_where(path, number, chunk)}"
                )
            cursor = found + 1
        old, new = list(chunk.old_lines), list(chunk.new_lines)
        if not old:
            at = cursor if chunk.contexts else len(lines)
            out.append((at, 0, new))
            continue
        found = seek_sequence(lines, old, cursor, eof=chunk.is_end_of_file)
        while found is None and len(old) > 1 and old[-1] == "" and new and new[-1] == "":
            old, new = old[:-1], new[:-1]
            found = seek_sequence(lines, old, cursor, eof=chunk.is_end_of_file)
        if found is None:
            expected = "\n".join(chunk.old_lines)
            raise HunkMismatchError(
                f"Failed to find the expected lines in {_where(path, number, chunk)}; "
                f"these lines (context and removed) are not in the file:\n{expected}"
            )
        out.append((found, len(old), new))
        cursor = found + len(old)
    return out


def apply_chunks(original: str, chunks: Sequence[UpdateChunk], *, path: str) -> str:
    """The new text of a file after ``chunks``; ``HunkMismatchError`` if one does not fit."""
    crlf = "\r\n" in original
    text = original.replace("\r\n", "\n") if crlf else original
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    replacements = _replacements(lines, chunks, path)
    # Back to front; at equal starts the later hunk first, so an insertion stays before it.
    order = sorted(range(len(replacements)), key=lambda k: (replacements[k][0], k), reverse=True)
    for k in order:
        start, length, new = replacements[k]
        lines[start : start + length] = new
    result = "\n".join([*lines, ""])
    return result.replace("\n", "\r\n") if crlf else result
