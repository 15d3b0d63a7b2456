"""The result store: a batch's ``DEST``, a directory or an fsspec URL (``s3://bucket/prefix``).

Layout::

    DEST/results.jsonl                  one line per finished task (the driver is its only writer)
    DEST/results.d/<seq>-<rand>.json    object stores only: one result per object until the run
                                        ends and folds them into results.jsonl
    DEST/summary.json                   counts, tokens, timing (rewritten at the end of a run)
    DEST/predictions.jsonl              SWE-bench predictions (``--swebench`` only)
    DEST/rollouts/<id>/rollout-….jsonl  the task's rollout, uploaded by the worker that ran it
    DEST/rollouts/<id>/.attempt-<uuid>  one marker per start of the task (counts attempts)

Atomicity: a rollout appears under its final name only when complete (local: write a temporary
file then rename; object stores: one PUT). ``results.jsonl`` on a local disk is appended one whole
line per ``write(2)`` and fsynced; a torn last line (a crash mid-write) is cut off when the store
is opened, so that task simply runs again. On an object store, where objects cannot be appended,
each result is its own small object under ``results.d/`` (one PUT of one line, so a run of N tasks
uploads O(N) bytes of results, not O(N²)); the end of the run folds them into ``results.jsonl``
(``fold_results``: write the file, then delete the parts). A crash before the fold loses nothing:
reading merges ``results.jsonl`` with the parts, in order. Ids already present are never written
twice.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from mini_codex.errors import MiniCodexError

__all__ = ["ResultStore", "StoreError", "is_url"]

RESULTS = "results.jsonl"
RESULT_PARTS = "results.d"
SUMMARY = "summary.json"
PREDICTIONS = "predictions.jsonl"
ROLLOUTS = "rollouts"


class StoreError(MiniCodexError):
    """The destination cannot be read or written."""


def is_url(dest: str) -> bool:
    return "://" in dest


class ResultStore:
    """One batch destination (see module docs). Opening it repairs a torn ``results.jsonl``."""

    def __init__(self, dest: str, storage_options: Mapping[str, Any] | None = None) -> None:
        import fsspec.core  # type: ignore[import-untyped]

        self.dest = dest
        try:
            fs, root = fsspec.core.url_to_fs(dest, **dict(storage_options or {}))
        except (ImportError, ValueError) as exc:
            raise StoreError(f"--out {dest}: {exc}") from None
        self.fs = fs
        self.root = root.rstrip("/")
        self.local = "file" in _protocols(fs)
        if self.local:
            self.root = str(Path(self.root).resolve())

    # --- paths ---------------------------------------------------------------------------------

    def path(self, *parts: str) -> str:
        return "/".join([self.root, *parts])

    def url(self, *parts: str) -> str:
        """What a user sees: a plain path for a local store, else the full URL."""
        path = self.path(*parts)
        return path if self.local else str(self.fs.unstrip_protocol(path))

    # --- results -------------------------------------------------------------------------------

    def prepare(self) -> None:
        """Create the destination (local) and cut a torn last line off ``results.jsonl``; a
        remote destination that cannot be written (no bucket, no credentials) fails here."""
        if not self.local:
            self.write_bytes(".mini-codex-batch", b"a mini-codex batch destination\n")
            return
        if self.local:
            Path(self.root).mkdir(parents=True, exist_ok=True)
            path = Path(self.path(RESULTS))
            if path.is_file():
                data = path.read_bytes()
                if data and not data.endswith(b"\n"):
                    keep = data.rfind(b"\n") + 1
                    with path.open("r+b") as handle:
                        handle.truncate(keep)
                        os.fsync(handle.fileno())

    def read_results(self) -> list[dict[str, Any]]:
        """Every complete result line, then every unfolded part (later ones for the same id win;
        bad lines skipped)."""
        data = self._read_bytes(RESULTS) or b""
        for name in self._part_names():
            part = self._read_bytes(f"{RESULT_PARTS}/{name}")
            if part is not None:
                data += b"\n" + part
        by_id: dict[str, dict[str, Any]] = {}
        for raw in data.split(b"\n"):
            if not raw.strip():
                continue
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue  # a torn line left by a crash: that task runs again
            if isinstance(value, dict) and isinstance(value.get("id"), str):
                by_id[value["id"]] = value
        return list(by_id.values())

    def append_result(self, record: Mapping[str, Any], existing: list[dict[str, Any]]) -> None:
        """Add one result line; ``existing`` is every record already in the file (in order)."""
        line = orjson.dumps(record) + b"\n"
        if self.local:
            fd = os.open(self.path(RESULTS), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            return
        # Named by position, so a listing reads them back in the order they finished.
        self.write_bytes(f"{RESULT_PARTS}/{len(existing):08d}-{uuid.uuid4().hex[:8]}.json", line)

    def rewrite_results(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Replace ``results.jsonl`` atomically with ``records`` and drop every unfolded part
        (used by ``--retry-failed`` and by :meth:`fold_results`)."""
        self.write_bytes(RESULTS, b"".join(orjson.dumps(r) + b"\n" for r in records))
        for name in self._part_names():
            with _mapped(f"cannot delete {self.url(RESULT_PARTS, name)}"):
                self.fs.rm_file(self.path(RESULT_PARTS, name))

    def fold_results(self) -> None:
        """Object stores: fold the parts written during a run into ``results.jsonl`` (no-op on a
        local disk, or when there is nothing to fold)."""
        if not self.local and self._part_names():
            self.rewrite_results(self.read_results())

    def _part_names(self) -> list[str]:
        if self.local:
            return []
        return sorted(n for n in self._names(RESULT_PARTS) if n.endswith(".json"))

    # --- files ---------------------------------------------------------------------------------

    def write_bytes(self, name: str, data: bytes) -> None:
        """Write ``DEST/name`` atomically."""
        path = self.path(name)
        with _mapped(f"cannot write {self.url(name)}"):
            if self.local:
                _local_atomic_write(Path(path), data)
            else:
                self.fs.pipe_file(path, data)

    def write_json(self, name: str, value: Any) -> None:
        self.write_bytes(name, orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")

    def _read_bytes(self, name: str) -> bytes | None:
        path = self.path(name)
        with _mapped(f"cannot read {self.url(name)}"):
            try:
                if self.local:
                    return Path(path).read_bytes() if Path(path).is_file() else None
                return bytes(self.fs.cat_file(path))
            except FileNotFoundError:
                return None

    # --- rollouts and attempts -----------------------------------------------------------------

    def put_rollout(self, task_id: str, local: Path) -> str | None:
        """Upload a finished rollout to ``rollouts/<id>/<name>``; returns its URL (None when the
        session recorded nothing, so no file exists)."""
        if not local.is_file():
            return None
        name = f"{ROLLOUTS}/{task_id}/{local.name}"
        self.write_bytes(name, local.read_bytes())
        return self.url(name)

    def mark_attempt(self, task_id: str) -> int:
        """Record that the task starts now; returns how many starts it has had (this one too)."""
        folder = f"{ROLLOUTS}/{task_id}"
        self.write_bytes(f"{folder}/.attempt-{uuid.uuid4().hex}", b"")
        return sum(1 for name in self._names(folder) if name.startswith(".attempt-"))

    def rollout_files(self) -> Iterator[str]:
        """Paths (in the store's filesystem) of every rollout file under ``rollouts/``."""
        self.fs.invalidate_cache()
        with _mapped(f"cannot list {self.url(ROLLOUTS)}"):
            try:
                found = self.fs.find(self.path(ROLLOUTS))
            except FileNotFoundError:
                return
        for path in sorted(found):
            name = str(path).rsplit("/", 1)[-1]
            if name.startswith("rollout-") and name.endswith((".jsonl", ".jsonl.zst")):
                yield str(path)

    def mirror_rollouts(self, cache: Path) -> dict[str, str]:
        """Copy every rollout under ``rollouts/`` to ``cache/rollouts/...`` (files whose size
        changed only); returns local path -> URL. Lets the session index read a remote batch."""
        mapping: dict[str, str] = {}
        prefix = self.path(ROLLOUTS) + "/"
        for path in self.rollout_files():
            relative = path[len(prefix) :] if path.startswith(prefix) else path.rsplit("/", 1)[-1]
            local = cache / ROLLOUTS / relative
            with _mapped(f"cannot read {self.fs.unstrip_protocol(path)}"):
                size = self.fs.size(path)
                if not (local.is_file() and local.stat().st_size == size):
                    local.parent.mkdir(parents=True, exist_ok=True)
                    _local_atomic_write(local, bytes(self.fs.cat_file(path)))
            mapping[str(local)] = str(self.fs.unstrip_protocol(path))
        return mapping

    def fetch(self, relative: str) -> bytes:
        """The bytes of ``DEST/relative`` (``StoreError`` when missing or unreadable)."""
        data = self._read_bytes(relative)
        if data is None:
            raise StoreError(f"{self.url(relative)}: no such file")
        return data

    def _names(self, folder: str) -> list[str]:
        with _mapped(f"cannot list {self.url(folder)}"):
            try:
                entries = self.fs.ls(self.path(folder), detail=False, refresh=True)
            except TypeError:
                entries = self.fs.ls(self.path(folder), detail=False)
            except FileNotFoundError:
                return []
        return [str(entry).rstrip("/").rsplit("/", 1)[-1] for entry in entries]


@contextmanager
def _mapped(what: str) -> Iterator[None]:
    """The one boundary where storage errors (OS, fsspec, botocore, ...) become ``StoreError``."""
    try:
        yield
    except StoreError:
        raise
    except Exception as exc:
        detail = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise StoreError(f"{what}: {detail}") from None


def _protocols(fs: Any) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


def _local_atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with temp.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
