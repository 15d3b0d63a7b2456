"""Codex's exec-server protocol (0.169.0): JSON-RPC without the ``"jsonrpc"`` field.

Requests carry ``id`` + ``method`` + ``params``; notifications have no ``id``; one message per
websocket frame or per stdio line. Field names are camelCase on the wire; paths are ``file:`` URIs,
bytes are base64. The shapes here were checked against frames recorded from the real
``codex exec-server`` and the real CLI as its client (``tests/fixtures/exec_server/``).

Params models ignore fields they do not use (the CLI sends ``metadata``, ``arg0``,
``managedNetwork``, …) but refuse a missing required one, as Codex does (``fs/copy`` without
``recursive`` is ``-32602 missing field `recursive```).
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from mini_codex.protocol.exec_server_codec import b64decode, b64encode, file_uri, uri_path

__all__ = [
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "IO_ERROR",
    "METHOD_NOT_FOUND",
    "CopyParams",
    "CreateDirectoryParams",
    "EnvPolicy",
    "PathParams",
    "ProcessReadParams",
    "ProcessStartParams",
    "ProcessTargetParams",
    "ProcessWriteParams",
    "RemoveParams",
    "WriteFileParams",
    "b64decode",
    "b64encode",
    "file_uri",
    "uri_path",
]

INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
IO_ERROR: Final = -32004
"""Codex answers a failed file-system or I/O call with this code and the OS message."""

Stream: TypeAlias = Literal["stdout", "stderr", "pty"]
WriteStatus: TypeAlias = Literal["accepted", "unknownProcess", "stdinClosed", "starting"]


class _Params(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class EnvPolicy(_Params):
    """How the executor derives a child's environment from its own (then ``env`` on top)."""

    inherit: Literal["all", "none", "core"] = "all"
    ignore_default_excludes: bool = True
    exclude: list[str] = Field(default_factory=list)
    set: dict[str, str] = Field(default_factory=dict)
    include_only: list[str] = Field(default_factory=list)


class ProcessStartParams(_Params):
    process_id: str
    argv: list[str]
    cwd: str
    env: dict[str, str] = Field(default_factory=dict)
    env_policy: EnvPolicy | None = None
    tty: bool = False
    pipe_stdin: bool = False
    sandbox: dict[str, Any] | None = None
    """None: unconfined. Otherwise the policy the executor enforces with its own sandbox, as
    mini-codex's ``SandboxPolicy`` JSON (``{"mode": "workspace-write", ...}``); Codex's own
    sandbox object is not recorded (its CLI sent ``null`` under full access)."""


class ProcessTargetParams(_Params):
    process_id: str


class ProcessReadParams(_Params):
    process_id: str
    after_seq: int | None = None
    max_bytes: int | None = None
    wait_ms: int | None = None


class ProcessWriteParams(_Params):
    process_id: str
    chunk: str
    write_id: str | None = None


class ProcessSignalParams(_Params):
    process_id: str
    signal: str = "interrupt"


class PathParams(_Params):
    path: str


class WriteFileParams(_Params):
    path: str
    data_base64: str


class CreateDirectoryParams(_Params):
    path: str
    recursive: bool = True


class RemoveParams(_Params):
    path: str
    recursive: bool = True
    force: bool = True


class CopyParams(_Params):
    source_path: str
    destination_path: str
    recursive: bool
