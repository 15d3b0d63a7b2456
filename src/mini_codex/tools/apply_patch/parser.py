"""Parse the Codex patch envelope into a typed AST (pure).

Format (spec §5.6)::

    *** Begin Patch
    *** Add File: path          every following line is "+<text>"
    *** Delete File: path
    *** Update File: path
    *** Move to: new/path       optional
    @@ optional context line    one or more "@@" lines narrow down where the hunk goes
     context / -removed / +added lines
    *** End of File             optional: the hunk ends at the end of the file
    *** End Patch

Leniencies (the model's patches are not always tidy): whitespace around the markers, CRLF line
ends, blank lines between file operations, a heredoc wrapper (``<<'EOF'`` … ``EOF``), a first
update hunk without ``@@``, a unified-diff range header (``@@ -1,3 +1,4 @@ text``, where only
``text`` is kept as context) and a bare empty line inside a hunk (read as an empty context line).
An ``*** Add File`` with no lines creates an empty file; an empty envelope parses (applying it is
refused). Errors carry the 1-based line number in the text as given.
What does not belong here: matching hunks against file contents (``content.py``), the filesystem
(``apply.py``).
"""

from __future__ import annotations

import re
from typing import TypeAlias

import msgspec

from mini_codex.errors import MiniCodexError

__all__ = [
    "AddFile",
    "DeleteFile",
    "Hunk",
    "Patch",
    "PatchParseError",
    "UpdateChunk",
    "UpdateFile",
    "parse_patch",
]

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File:"
DELETE_FILE = "*** Delete File:"
UPDATE_FILE = "*** Update File:"
MOVE_TO = "*** Move to:"
END_OF_FILE = "*** End of File"
_HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')
_UNIFIED_RANGE = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$")


class PatchParseError(MiniCodexError):
    """The patch text does not follow the envelope format."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"invalid patch at line {line}: {message}")
        self.message = message
        self.line = line


class AddFile(msgspec.Struct, frozen=True):
    path: str
    contents: str
    line: int


class DeleteFile(msgspec.Struct, frozen=True):
    path: str
    line: int


class UpdateChunk(msgspec.Struct, frozen=True):
    """One ``@@`` hunk: ``old_lines`` (context and removed) become ``new_lines``."""

    contexts: tuple[str, ...]
    """``@@ <line>`` headers, each found in order before the hunk (empty for a bare ``@@``)."""
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]
    is_end_of_file: bool
    line: int


class UpdateFile(msgspec.Struct, frozen=True):
    path: str
    move_to: str | None
    chunks: tuple[UpdateChunk, ...]
    line: int


Hunk: TypeAlias = AddFile | DeleteFile | UpdateFile


class Patch(msgspec.Struct, frozen=True):
    hunks: tuple[Hunk, ...]


def parse_patch(text: str) -> Patch:
    """Parse ``text``; raise ``PatchParseError`` (with a line number) when it is malformed."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    start, end = _trim_blank(lines, 0, len(lines))
    if end - start >= 4 and lines[start].strip() in _HEREDOC_OPENERS:
        if lines[end - 1].strip().endswith("EOF"):
            start, end = _trim_blank(lines, start + 1, end - 1)
    if start == end or lines[start].strip() != BEGIN_PATCH:
        raise PatchParseError(
            "the first line of the patch must be '*** Begin Patch'", min(start, end - 1) + 1
        )
    if end - start < 2 or lines[end - 1].strip() != END_PATCH:
        raise PatchParseError("the last line of the patch must be '*** End Patch'", end)
    return Patch(hunks=tuple(_Parser(lines, start + 1, end - 1).hunks()))


def _trim_blank(lines: list[str], start: int, end: int) -> tuple[int, int]:
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return start, end


def _header_path(header: str, marker: str, line: int) -> str:
    path = header[len(marker) :].strip()
    if not path:
        raise PatchParseError(f"'{marker}' needs a path after it", line)
    return path


class _Parser:
    """Cursor over the body lines (between Begin and End); ``self.i`` indexes ``lines``."""

    def __init__(self, lines: list[str], start: int, end: int) -> None:
        self.lines = lines
        self.i = start
        self.end = end

    def hunks(self) -> list[Hunk]:
        hunks: list[Hunk] = []
        while self.i < self.end:
            header = self.lines[self.i].strip()
            if not header:
                self.i += 1
            elif header.startswith(ADD_FILE):
                hunks.append(self._add_file(header))
            elif header.startswith(DELETE_FILE):
                hunks.append(DeleteFile(_header_path(header, DELETE_FILE, self.i + 1), self.i + 1))
                self.i += 1
            elif header.startswith(UPDATE_FILE):
                hunks.append(self._update_file(header))
            else:
                raise PatchParseError(
                    f"'{header}' is not a valid file operation header. Valid headers: "
                    "'*** Add File: {path}', '*** Delete File: {path}', "
                    "'*** Update File: {path}'",
                    self.i + 1,
                )
        return hunks

    def _add_file(self, header: str) -> AddFile:
        line = self.i + 1
        path = _header_path(header, ADD_FILE, line)
        self.i += 1
        contents: list[str] = []
        while self.i < self.end:
            raw = self.lines[self.i]
            if raw.startswith("+"):
                contents.append(raw[1:] + "\n")
                self.i += 1
            elif not raw.strip() and self._blank_run_then_plus():
                raise PatchParseError(
                    "every line of an added file must start with '+' "
                    "(write a lone '+' for an empty line)",
                    self.i + 1,
                )
            else:
                break
        return AddFile(path=path, contents="".join(contents), line=line)

    def _blank_run_then_plus(self) -> bool:
        j = self.i
        while j < self.end and not self.lines[j].strip():
            j += 1
        return j < self.end and self.lines[j].startswith("+")

    def _update_file(self, header: str) -> UpdateFile:
        line = self.i + 1
        path = _header_path(header, UPDATE_FILE, line)
        self.i += 1
        move_to: str | None = None
        if self.i < self.end and self.lines[self.i].strip().startswith(MOVE_TO):
            move_to = _header_path(self.lines[self.i].strip(), MOVE_TO, self.i + 1)
            self.i += 1
        chunks: list[UpdateChunk] = []
        while self.i < self.end:
            raw = self.lines[self.i]
            if not raw.strip():
                self.i += 1  # only reachable before the first hunk or after '*** End of File'
                continue
            if raw.lstrip().startswith("***"):
                break
            chunks.append(self._chunk(first=not chunks))
        if not chunks:
            raise PatchParseError(f"'*** Update File: {path}' has no hunks", line)
        return UpdateFile(path=path, move_to=move_to, chunks=tuple(chunks), line=line)

    def _chunk(self, *, first: bool) -> UpdateChunk:
        line = self.i + 1
        contexts: list[str] = []
        saw_header = False
        while self.i < self.end and self.lines[self.i].startswith("@@"):
            saw_header = True
            context = self._context_of(self.lines[self.i])
            if context is not None:
                contexts.append(context)
            self.i += 1
        if not saw_header and not first:
            raise PatchParseError(
                f"expected a hunk starting with '@@', got '{self.lines[self.i]}'", self.i + 1
            )
        old: list[str] = []
        new: list[str] = []
        body = 0
        end_of_file = False
        while self.i < self.end:
            raw = self.lines[self.i]
            if raw.rstrip() == END_OF_FILE:
                if body == 0:
                    raise PatchParseError("hunk has no lines before '*** End of File'", line)
                end_of_file = True
                self.i += 1
                break
            marker, rest = raw[:1], raw[1:]
            if marker == "":
                old.append("")
                new.append("")
            elif marker == " ":
                old.append(rest)
                new.append(rest)
            elif marker == "-":
                old.append(rest)
            elif marker == "+":
                new.append(rest)
            elif body == 0:
                raise PatchParseError(
                    f"unexpected line in hunk: '{raw}'. Every hunk line starts with ' ' "
                    "(context), '-' (removed) or '+' (added)",
                    self.i + 1,
                )
            else:
                break  # the next hunk or file operation
            body += 1
            self.i += 1
        if body == 0:
            raise PatchParseError("hunk has no lines", line)
        return UpdateChunk(
            contexts=tuple(contexts),
            old_lines=tuple(old),
            new_lines=tuple(new),
            is_end_of_file=end_of_file,
            line=line,
        )

    @staticmethod
    def _context_of(header: str) -> str | None:
        """The context line of an ``@@`` header, or None for a bare ``@@``."""
        ranged = _UNIFIED_RANGE.match(header.rstrip())
        text = ranged.group(1) if ranged else header[2:].removeprefix(" ")
        return text if text.strip() else None
