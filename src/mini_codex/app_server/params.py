"""Request params: typed reads that answer ``-32602`` naming the field, and user input.

``Params`` wraps the ``params`` object of one request. ``user_input`` turns v2 ``UserInput``
parts (``text``, ``image {url}``, ``localImage {path}``) into one user message for the session and
the ``content`` of the ``userMessage`` item.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from mini_codex.app_server.rpc import INVALID_PARAMS, RpcError
from mini_codex.errors import MiniCodexError
from mini_codex.protocol import InputImage, InputText, Message
from mini_codex.protocol.policy import ApprovalPolicy, SandboxMode
from mini_codex.skills.model import SkillSelection
from mini_codex.tools.images import image_data_url

__all__ = ["Params", "user_input"]

JsonDict = dict[str, Any]
T = TypeVar("T")

_APPROVALS: dict[str, ApprovalPolicy] = {
    "untrusted": "untrusted",
    "on-failure": "on-failure",
    "on-request": "on-request",
    "never": "never",
}
_SANDBOXES: dict[str, SandboxMode] = {
    "read-only": "read-only",
    "workspace-write": "workspace-write",
    "danger-full-access": "danger-full-access",
}


def invalid(method: str, message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params for {method}: {message}")


class Params:
    def __init__(self, method: str, raw: Any) -> None:
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise invalid(method, "params must be an object")
        self.method = method
        self.raw: JsonDict = raw

    def _get(self, key: str, kind: type[T], required: bool, label: str) -> T | None:
        value = self.raw.get(key)
        if value is None:
            if required:
                raise invalid(self.method, f"missing field `{key}`")
            return None
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise invalid(self.method, f"`{key}` must be {label}")
        return value

    def string(self, key: str) -> str | None:
        return self._get(key, str, False, "a string")

    def required_str(self, key: str) -> str:
        value = self._get(key, str, True, "a string")
        assert value is not None
        return value

    def integer(self, key: str) -> int | None:
        return self._get(key, int, False, "an integer")

    def flag(self, key: str) -> bool | None:
        return self._get(key, bool, False, "a boolean")

    def obj(self, key: str) -> JsonDict | None:
        return self._get(key, dict, False, "an object")

    def array(self, key: str, *, required: bool = False) -> list[Any] | None:
        return self._get(key, list, required, "an array")

    def cwd(self, key: str = "cwd") -> Path | None:
        value = self.string(key)
        if value is None:
            return None
        path = Path(value).expanduser()
        if not path.is_absolute():
            raise invalid(self.method, f"`{key}` must be an absolute path, not {value!r}")
        if not path.is_dir():
            raise invalid(self.method, f"`{key}` {value} is not a directory")
        return path.resolve()

    def approval_policy(self) -> ApprovalPolicy | None:
        value = self.raw.get("approvalPolicy")
        if value is None:
            return None
        if isinstance(value, str) and value in _APPROVALS:
            return _APPROVALS[value]
        raise invalid(
            self.method,
            f"`approvalPolicy` {value!r} is not supported (untrusted, on-request, never, "
            "on-failure; granular policies are not)",
        )

    def sandbox(self) -> SandboxMode | None:
        value = self.raw.get("sandbox")
        if value is None:
            return None
        if isinstance(value, str) and value in _SANDBOXES:
            return _SANDBOXES[value]
        raise invalid(
            self.method,
            f"`sandbox` {value!r} is not one of read-only, workspace-write, danger-full-access",
        )


def user_input(
    params: Params, key: str = "input"
) -> tuple[Message, list[JsonDict], tuple[SkillSelection, ...]]:
    """The session's user message, the ``userMessage`` content of ``params[key]`` and its
    structured skill inputs (``{"type": "skill", "name", "path"}``: the ``SKILL.md`` is injected
    after the message, as a ``$name`` mention's is)."""
    parts = params.array(key, required=True)
    assert parts is not None
    if not parts:
        raise invalid(params.method, f"`{key}` is empty")
    content: list[JsonDict] = []
    message_parts: list[Any] = []
    skills: list[SkillSelection] = []
    for index, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            message_parts.append(InputText(text=part["text"]))
            content.append({"type": "text", "text": part["text"], "text_elements": []})
        elif kind == "image" and isinstance(part.get("url"), str):
            message_parts.append(InputImage(image_url=part["url"]))
            content.append({"type": "image", "url": part["url"]})
        elif kind == "localImage" and isinstance(part.get("path"), str):
            try:
                url = image_data_url(Path(part["path"]))
            except (MiniCodexError, OSError) as exc:
                raise invalid(params.method, f"`{key}[{index}]`: {exc}") from None
            message_parts.append(InputImage(image_url=url))
            content.append({"type": "localImage", "path": part["path"]})
        elif (
            kind == "skill"
            and isinstance(part.get("name"), str)
            and isinstance(part.get("path"), str)
        ):
            skills.append(SkillSelection(path=part["path"], name=part["name"]))
            content.append({"type": "skill", "name": part["name"], "path": part["path"]})
        else:
            raise invalid(
                params.method,
                f"`{key}[{index}]` is not a text, image, localImage or skill input (got {kind!r})",
            )
    return Message(role="user", content=message_parts), content, tuple(skills)
