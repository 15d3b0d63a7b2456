"""The turn's diff (``turn/diff/updated``) and each file change's own diff, read from the files.

Codex keeps a ``TurnDiffTracker``: the content of every file a patch touches is remembered the
first time the turn touches it, and the turn diff is the unified diff of those baselines against
what is on disk now. We do the same around each ``apply_patch`` call: ``before`` reads the touched
files before the patch runs, ``after`` reads them again and returns each file's diff. Files over
``MAX_BYTES`` or not UTF-8 are shown as a one-line note instead of their content.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

__all__ = ["MAX_BYTES", "TurnDiffs"]

MAX_BYTES = 1 << 20


def _read(path: Path) -> str | None:
    """The text of ``path`` (None when it does not exist)."""
    try:
        data = path.read_bytes()[: MAX_BYTES + 1]
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"<unreadable: {exc.strerror or exc}>\n"
    if len(data) > MAX_BYTES:
        return f"<larger than {MAX_BYTES} bytes>\n"
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "<binary file>\n"


def _unified(path: str, old: str | None, new: str | None) -> str:
    if old == new:
        return ""
    old_name = f"a/{path.lstrip('/')}" if old is not None else "/dev/null"
    new_name = f"b/{path.lstrip('/')}" if new is not None else "/dev/null"
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        (new or "").splitlines(keepends=True),
        old_name,
        new_name,
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return f"diff --git a/{path.lstrip('/')} b/{path.lstrip('/')}\n{text}"


class TurnDiffs:
    """Per turn: the first-seen content of every touched file."""

    def __init__(self) -> None:
        self._baseline: dict[str, str | None] = {}
        self._pending: dict[str, str | None] = {}

    def reset(self) -> None:
        self._baseline.clear()
        self._pending.clear()

    def before(self, paths: Iterable[str]) -> None:
        for path in paths:
            content = _read(Path(path))
            self._pending[path] = content
            self._baseline.setdefault(path, content)

    def after(self, paths: Iterable[str]) -> dict[str, str]:
        """Each path's diff against its content before this change."""
        diffs: dict[str, str] = {}
        for path in paths:
            diffs[path] = _unified(path, self._pending.pop(path, None), _read(Path(path)))
        return diffs

    def turn_diff(self) -> str:
        """The unified diff of everything the turn changed so far."""
        return "".join(
            _unified(path, old, _read(Path(path))) for path, old in sorted(self._baseline.items())
        )
