"""Sandbox and approval policies as data (decisions live in ``mini_codex.sandbox.policy``).

``SandboxPolicy`` is the legacy Codex sandbox policy reduced to what mini-codex enforces: a mode,
extra writable roots (``workspace-write`` only) and whether the network is reachable.
``to_turn_context_json()`` gives the shape Codex persists in ``turn_context.sandbox_policy``
(``{"type": "workspace-write", "writable_roots": [...], "network_access": false, ...}``).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias, assert_never

from pydantic import BaseModel, ConfigDict

__all__ = ["ApprovalPolicy", "SandboxMode", "SandboxPolicy"]

SandboxMode: TypeAlias = Literal["read-only", "workspace-write", "danger-full-access"]
"""How much a command may change: nothing, the workspace (plus writable roots), or anything."""

ApprovalPolicy: TypeAlias = Literal["untrusted", "on-failure", "on-request", "never"]
"""When the user is asked before a command runs (Codex ``AskForApproval``, serialized form)."""


class SandboxPolicy(BaseModel):
    """What commands and file edits may touch."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: SandboxMode
    writable_roots: tuple[str, ...] = ()
    """Extra writable directories for ``workspace-write`` (absolute, or relative to the cwd)."""
    network_access: bool = False
    """Whether sandboxed commands may reach the network (``danger-full-access`` always may)."""
    exclude_tmpdir_env_var: bool = False
    """``workspace-write``: do not make ``$TMPDIR`` writable."""
    exclude_slash_tmp: bool = False
    """``workspace-write``: do not make ``/tmp`` writable."""

    @classmethod
    def read_only(cls, *, network_access: bool = False) -> SandboxPolicy:
        return cls(mode="read-only", network_access=network_access)

    @classmethod
    def workspace_write(
        cls,
        writable_roots: tuple[str, ...] = (),
        *,
        network_access: bool = False,
        exclude_tmpdir_env_var: bool = False,
        exclude_slash_tmp: bool = False,
    ) -> SandboxPolicy:
        return cls(
            mode="workspace-write",
            writable_roots=writable_roots,
            network_access=network_access,
            exclude_tmpdir_env_var=exclude_tmpdir_env_var,
            exclude_slash_tmp=exclude_slash_tmp,
        )

    @classmethod
    def danger_full_access(cls) -> SandboxPolicy:
        return cls(mode="danger-full-access", network_access=True)

    def to_turn_context_json(self) -> dict[str, Any]:
        """The Codex ``SandboxPolicy`` JSON (tagged by ``type``) for ``turn_context`` lines."""
        match self.mode:
            case "danger-full-access":
                return {"type": "danger-full-access"}
            case "read-only":
                return {"type": "read-only", "network_access": self.network_access}
            case "workspace-write":
                return {
                    "type": "workspace-write",
                    "writable_roots": list(self.writable_roots),
                    "network_access": self.network_access,
                    "exclude_tmpdir_env_var": self.exclude_tmpdir_env_var,
                    "exclude_slash_tmp": self.exclude_slash_tmp,
                }
            case _:
                assert_never(self.mode)
