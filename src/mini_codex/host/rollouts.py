"""Rollout lookup and the recorded-cwd rules, for every front end that resumes a session.

- :func:`find_rollout`: a path, or a thread id (or prefix) in our home, then in a Codex home;
- :func:`latest_rollout`: ``--last`` (the newest session of this directory, else any);
- :func:`import_codex_rollout`: a Codex CLI rollout is copied into our home before it is resumed
  (the Codex file is never written);
- :func:`read_recorded` and :func:`resume_cwd`: where a resumed session runs — the cwd given,
  else the one it was recorded in (refused for the home directory and ``/``: that would silently
  make it the sandbox's writable root; refused when it is not a directory any more), else (none
  recorded) the process's.

Index notices ("rebuilt a corrupt index") go to ``notify``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

import msgspec

from mini_codex.errors import MiniCodexError, ResumeRefusedError, RolloutError

__all__ = [
    "RecordedSession",
    "ResumeRefusedError",
    "find_rollout",
    "import_codex_rollout",
    "latest_rollout",
    "read_recorded",
    "resume_cwd",
]

Notify = Callable[[str], None]


class RecordedSession(msgspec.Struct, frozen=True):
    """What a resume needs to know of a rollout before it is opened."""

    path: Path
    thread_id: str | None
    cwd: Path | None
    """The cwd recorded in its ``session_meta`` (None when it records none)."""


def read_recorded(path: Path, *, strict: bool = True) -> RecordedSession:
    """The thread id and cwd a rollout records: ``RolloutError`` for a file that is no rollout,
    or (``strict=False``) nothing known, so the session's open reports it."""
    from mini_codex.rollout.resume import read_session_meta

    try:
        meta = read_session_meta(path)
    except MiniCodexError:
        if strict:
            raise
        return RecordedSession(path, None, None)
    cwd = Path(meta.cwd) if meta is not None and meta.cwd else None
    return RecordedSession(path, meta.thread_id if meta is not None else None, cwd)


def resume_cwd(
    given: Path | None,
    recorded: Path | None,
    *,
    process_cwd: Path,
    user_home: Path,
    option: str = "--cd",
) -> Path:
    """The directory a resumed session runs in (see the module docstring); ``option`` names how
    the caller chooses one (``--cd``, the SDK's ``working_directory=``). A recorded cwd that is
    gone is refused: resuming in the process's directory instead would run the session somewhere
    it was never recorded."""
    if given is not None:
        return given
    if recorded is None:
        return process_cwd
    from mini_codex.rollout.resume import missing_cwd_refusal

    refusal = missing_cwd_refusal(str(recorded), recorded.is_dir(), option)
    if refusal is not None:
        raise ResumeRefusedError(refusal)
    if recorded.resolve() in (user_home.resolve(), Path("/")):
        raise ResumeRefusedError(
            f"the session was recorded in {recorded}; resuming there would make it the "
            f"sandbox's writable root. Pass {option} DIR ({option} {recorded} to confirm)."
        )
    return recorded


def _print_notices(notices: Sequence[str], notify: Notify | None) -> None:
    for notice in notices:
        if notify is not None:
            notify(f"notice: {notice}")


def latest_rollout(home: Path, cwd: Path, *, notify: Notify | None = None) -> Path:
    """The newest session recorded in ``cwd``, else the newest of all (``--last``)."""
    from mini_codex.rollout.index import SessionIndex

    with SessionIndex(home) as index:
        index.refresh()
        found = index.latest(cwd=str(cwd.resolve())) or index.latest()
    _print_notices(index.notices, notify)
    if found is None:
        raise RolloutError(f"no recorded sessions under {home}")
    return Path(found.path)


def find_rollout(
    target: str,
    homes: Sequence[Path],
    *,
    notify: Notify | None = None,
    what: str = "session",
) -> Path:
    """A rollout path, or the one session of the first home whose ids start with ``target``."""
    path = Path(target).expanduser()
    if path.exists():  # a FIFO or a directory is refused, by name, when it is read
        return path
    from mini_codex.rollout.index import SessionIndex

    for home in homes:
        if home != homes[0] and not (home / "sessions").is_dir():
            continue
        with SessionIndex(home) as index:
            index.refresh()
            found = index.find(target)
        _print_notices(index.notices, notify)
        if len(found) > 1:
            ids = ", ".join(info.id for info in found[:5])
            raise RolloutError(f"{target!r} matches several {what}s ({ids}); give more of the id")
        if found:
            return Path(found[0].path)
    raise RolloutError(f"no {what} or rollout file matches {target!r}")


def import_codex_rollout(source: Path, home: Path, *, today: datetime | None = None) -> Path:
    """``source`` itself when it is under ``home``; else a copy in today's sessions folder."""
    if source.resolve().is_relative_to(home.resolve()):
        return source
    day = today or datetime.now().astimezone()
    folder = home / "sessions" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
    target = folder / source.name
    if not target.exists():
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return target
