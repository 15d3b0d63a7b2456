"""The local executor: Codex's exec-server methods answered on this machine.

``LocalExecutor.handle(method, params)`` returns the result object or raises ``ExecutorError``
(code + message, Codex's codes: ``-32600`` bad request, ``-32601`` unknown method, ``-32602`` bad
params, ``-32004`` an I/O error with the OS message). One executor serves one connection: its
processes die with it (``aclose``). Commands run with the executor's own environment (``own_env``,
through the request's ``envPolicy``), confined by the session sandbox (``sandbox.launch.confine``)
for the policy the request carries; ``sandbox: null`` runs unconfined (full access), like Codex.
"""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import anyio
from anyio.abc import TaskGroup
from pydantic import BaseModel, ValidationError

from mini_codex._version import __version__
from mini_codex.environments.processes import ExecutorError, Notify, ProcessTable, child_env
from mini_codex.protocol.exec_server import (
    INVALID_PARAMS,
    IO_ERROR,
    METHOD_NOT_FOUND,
    CopyParams,
    CreateDirectoryParams,
    PathParams,
    ProcessReadParams,
    ProcessSignalParams,
    ProcessStartParams,
    ProcessTargetParams,
    ProcessWriteParams,
    RemoveParams,
    WriteFileParams,
    b64decode,
    b64encode,
    file_uri,
    uri_path,
)
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.launch import (
    SandboxRequest,
    SandboxUnavailableError,
    confine,
    detect_sandbox,
)

__all__ = ["LocalExecutor"]

_P = TypeVar("_P", bound=BaseModel)


def _params(model: type[_P], params: Any) -> _P:
    try:
        return model.model_validate(params if params is not None else {})
    except ValidationError as exc:
        problem = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in problem["loc"])
        message = f"missing field `{where}`" if problem["type"] == "missing" else problem["msg"]
        raise ExecutorError(INVALID_PARAMS, message) from exc


def _path(uri: str) -> str:
    try:
        return uri_path(uri)
    except ValueError as exc:
        raise ExecutorError(INVALID_PARAMS, str(exc)) from exc


def _os_error(exc: OSError) -> ExecutorError:
    return ExecutorError(IO_ERROR, f"{exc.strerror or exc} (os error {exc.errno})")


class LocalExecutor:
    """Answers one connection's requests; ``notify`` sends its notifications."""

    def __init__(
        self,
        task_group: TaskGroup,
        notify: Notify,
        *,
        own_env: Mapping[str, str],
        cwd: str,
        shell: str = "/bin/bash",
        allow_unsandboxed: bool = False,
    ) -> None:
        self.own_env = dict(own_env)
        self.cwd = cwd
        self.shell = shell
        self.allow_unsandboxed = allow_unsandboxed
        self.processes = ProcessTable(task_group, notify)

    def environment_info(self) -> dict[str, Any]:
        home = self.own_env.get("HOME") or str(Path.home())
        return {
            "shell": {"name": os.path.basename(self.shell), "path": self.shell},
            "executorVersion": f"mini-codex {__version__}",
            "cwd": file_uri(self.cwd),
            "userHomeDir": file_uri(home),
            "platformOs": platform.system().lower(),
            "temporaryDirectories": [],
            "tempDir": file_uri(self.own_env.get("TMPDIR", "/tmp")),
            "capabilities": {},
        }

    def aclose(self) -> None:
        self.processes.kill_all()

    async def handle(self, method: str, params: Any) -> dict[str, Any]:
        match method:
            case "initialize":
                return {"sessionId": _session_id(), "environmentInfo": self.environment_info()}
            case "environment/info":
                return self.environment_info()
            case "environmentConfig/read":
                return self._config_read()
            case "process/start":
                return await self._start(_params(ProcessStartParams, params))
            case "process/read":
                read = _params(ProcessReadParams, params)
                return await self.processes.read(
                    read.process_id, read.after_seq, read.max_bytes, read.wait_ms
                )
            case "process/write":
                write = _params(ProcessWriteParams, params)
                try:
                    data = b64decode(write.chunk)
                except ValueError as exc:
                    raise ExecutorError(INVALID_PARAMS, f"chunk is not base64: {exc}") from exc
                return {"status": await self.processes.write(write.process_id, data)}
            case "process/signal":
                sig = _params(ProcessSignalParams, params)
                self.processes.signal(sig.process_id, sig.signal)
                return {}
            case "process/terminate":
                target = _params(ProcessTargetParams, params)
                return {"running": self.processes.terminate(target.process_id)}
        if method.startswith("fs/"):
            return await anyio.to_thread.run_sync(self._fs, method, params)
        raise ExecutorError(METHOD_NOT_FOUND, f"exec-server does not implement `{method}`")

    def _config_read(self) -> dict[str, Any]:
        home = self.own_env.get("HOME") or str(Path.home())
        empty = {"layers": [], "cloudInsertionIndex": 0}
        return {
            "userHomeDir": file_uri(home),
            "codexHomeDir": file_uri(home),
            "hostname": platform.node(),
            "config": empty,
            "requirements": dict(empty),
        }

    async def _start(self, start: ProcessStartParams) -> dict[str, Any]:
        cwd = _path(start.cwd)
        env = child_env(self.own_env, start.env_policy, start.env)
        argv = list(start.argv)
        kind = "none"
        if start.sandbox is not None and argv:
            try:
                policy = SandboxPolicy.model_validate(start.sandbox)
            except ValidationError as exc:
                raise ExecutorError(INVALID_PARAMS, f"bad sandbox policy: {exc}") from exc
            request = SandboxRequest(
                policy=policy,
                cwd=Path(cwd),
                backend=await detect_sandbox(),
                env=env,
                allow_unsandboxed=self.allow_unsandboxed,
            )
            try:
                prepared = confine(argv, request, Path(cwd))
            except SandboxUnavailableError as exc:
                raise ExecutorError(-32603, str(exc)) from exc
            argv, kind = prepared.argv, prepared.confinement
        await self.processes.start(start.process_id, argv, cwd, env, start.pipe_stdin)
        return {"processId": start.process_id, "sandboxType": kind}

    def _fs(self, method: str, params: Any) -> dict[str, Any]:
        try:
            return self._fs_call(method, params)
        except OSError as exc:
            raise _os_error(exc) from exc

    def _fs_call(self, method: str, params: Any) -> dict[str, Any]:
        match method:
            case "fs/readFile":
                with open(_path(_params(PathParams, params).path), "rb") as handle:
                    return {"dataBase64": b64encode(handle.read())}
            case "fs/writeFile":
                write = _params(WriteFileParams, params)
                try:
                    data = b64decode(write.data_base64)
                except ValueError as exc:
                    raise ExecutorError(INVALID_PARAMS, f"dataBase64: {exc}") from exc
                with open(_path(write.path), "wb") as handle:
                    handle.write(data)
                return {}
            case "fs/createDirectory":
                create = _params(CreateDirectoryParams, params)
                if create.recursive:
                    os.makedirs(_path(create.path), exist_ok=True)
                else:
                    os.mkdir(_path(create.path))
                return {}
            case "fs/getMetadata":
                path = _path(_params(PathParams, params).path)
                info = os.stat(path)
                return {
                    "isDirectory": os.path.isdir(path),
                    "isFile": os.path.isfile(path),
                    "isSymlink": os.path.islink(path),
                    "size": info.st_size,
                    "createdAtMs": 0,
                    "modifiedAtMs": int(info.st_mtime * 1000),
                }
            case "fs/readDirectory":
                path = _path(_params(PathParams, params).path)
                with os.scandir(path) as entries:
                    listed = [
                        {
                            "fileName": entry.name,
                            "isDirectory": entry.is_dir(),
                            "isFile": entry.is_file(),
                        }
                        for entry in entries
                    ]
                return {"entries": listed}
            case "fs/remove":
                return _remove(_params(RemoveParams, params))
            case "fs/copy":
                copy = _params(CopyParams, params)
                source, target = _path(copy.source_path), _path(copy.destination_path)
                if os.path.isdir(source):
                    if not copy.recursive:
                        raise ExecutorError(INVALID_PARAMS, "copying a directory needs recursive")
                    shutil.copytree(source, target, symlinks=True)
                else:
                    shutil.copy2(source, target)
                return {}
            case "fs/canonicalize":
                path = _path(_params(PathParams, params).path)
                return {"path": file_uri(os.path.realpath(path, strict=True))}
        raise ExecutorError(METHOD_NOT_FOUND, f"exec-server does not implement `{method}`")


def _remove(remove: RemoveParams) -> dict[str, Any]:
    path = _path(remove.path)
    if not os.path.lexists(path):
        if remove.force:
            return {}
        raise FileNotFoundError(2, "No such file or directory")
    if os.path.isdir(path) and not os.path.islink(path):
        if remove.recursive:
            shutil.rmtree(path)
        else:
            os.rmdir(path)
    else:
        os.unlink(path)
    return {}


def _session_id() -> str:
    import uuid

    return str(uuid.uuid4())
