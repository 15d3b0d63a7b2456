"""Batch destinations and remote rollouts for the reading commands (``sessions list --home``,
``rollout verify``): fsspec URLs (``s3://…``, ``file://…``) with credentials from the environment.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mini_codex.config import parse_override

__all__ = ["local_copy", "mirror_home", "storage_options_for"]


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
