"""Batch destinations and remote rollouts for the reading commands (``sessions list --home``,
``ui --home``, ``rollout verify``): fsspec URLs (``s3://…``, ``file://…``) with credentials from
the environment.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from mini_codex.config import parse_override
from mini_codex.errors import MiniCodexError

__all__ = [
    "HomeNotFound",
    "ReadHome",
    "local_copy",
    "mirror_home",
    "read_home",
    "storage_options_for",
]


class HomeNotFound(MiniCodexError):
    """The home (or batch destination) to read is not a directory."""


def storage_options_for(dest: str, given: list[str] | None = None) -> dict[str, Any]:
    """fsspec options for ``dest``: ``-S key=value`` pairs, plus for ``s3://`` the standard
    ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_ENDPOINT_URL(_S3)`` variables, read
    here once so Ray workers on other machines get the same credentials."""
    options: dict[str, Any] = {}
    if dest.startswith(("s3://", "s3a://")):
        env = {
            "key": os.environ.get("AWS_ACCESS_KEY_ID"),
            "secret": os.environ.get("AWS_SECRET_ACCESS_KEY"),
            "endpoint_url": os.environ.get("AWS_ENDPOINT_URL_S3")
            or os.environ.get("AWS_ENDPOINT_URL"),
        }
        options.update({key: value for key, value in env.items() if value})
    for assignment in given or []:
        path, value = parse_override(assignment)
        options[".".join(path)] = value
    return options


def _local_path(target: str) -> Path | None:
    if target.startswith("file://"):
        return Path(target.removeprefix("file://"))
    if "://" not in target:
        return Path(target).expanduser()
    return None


@contextmanager
def local_copy(target: str) -> Iterator[Path]:
    """A local path for ``target``: itself, or a temporary copy of a remote file."""
    local = _local_path(target)
    if local is not None:
        yield local
        return
    from mini_codex.batch.store import ResultStore

    parent, _, name = target.rstrip("/").rpartition("/")
    data = ResultStore(parent, storage_options_for(target)).fetch(name)
    with tempfile.TemporaryDirectory(prefix="mini-codex-remote-") as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        yield path


def mirror_home(target: str, own_home: Path) -> tuple[Path, str, dict[str, str]]:
    """Where to index ``target`` from: (local home, rollout folder, local path -> URL).

    A local home with ``sessions/`` is used as it is; a batch destination (``rollouts/``) is
    indexed in place; a remote destination is mirrored under ``own_home/remote/<hash>/`` first.
    """
    local = _local_path(target)
    if local is not None:
        if (local / "sessions").is_dir() or not (local / "rollouts").is_dir():
            return local, "sessions", {}
        return local, "rollouts", {}
    from mini_codex.batch.store import ResultStore

    digest = hashlib.sha256(target.rstrip("/").encode()).hexdigest()[:16]
    cache = own_home / "remote" / digest
    store = ResultStore(target, storage_options_for(target))
    return cache, "rollouts", store.mirror_rollouts(cache)


class ReadHome(NamedTuple):
    """What a reading command indexes: ``home / subdir``; ``urls`` maps mirrored paths to URLs."""

    home: Path
    subdir: str
    urls: dict[str, str]


def read_home(given: str | None, own_home: Path) -> ReadHome:
    """The home ``sessions list --home`` and ``ui --home`` read: ``own_home`` when none is given,
    else a home or a batch destination (local, or remote mirrored by :func:`mirror_home`).

    Raises :class:`HomeNotFound` for a local path that is not a directory, or a remote
    destination without rollouts (a missing bucket or prefix).
    """
    if given is None:
        return ReadHome(own_home, "sessions", {})
    target, subdir, urls = mirror_home(given, own_home)
    if not target.is_dir():
        if _local_path(given) is None:  # nothing was mirrored: name the URL, not the cache
            raise HomeNotFound(f"no rollouts found under {given}")
        raise HomeNotFound(f"home directory not found: {target}")
    return ReadHome(target, subdir, urls)
