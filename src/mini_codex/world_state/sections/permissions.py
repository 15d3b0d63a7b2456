"""The ``permissions`` section: sandbox, network and approval rules (spec §2.1 row ``permissions``).

The model-visible text is our own prose (``prompts/permissions_*.md``) in a developer fragment with
the Codex markers ``<permissions instructions>`` … ``</permissions instructions>``: the sandbox mode
(with the writable roots for ``workspace-write``), network access, the approval policy and, when
there are any, the approved command prefixes.

Snapshot (untagged, both shapes decode): ``{instructions: <hash>, approved_command_prefixes:
[[…], …]}``, where the hash is ``fragment_hash("developer", text)`` of the instructions rendered
**without** approved prefixes, and the prefixes are sorted and de-duplicated; or, legacy, a bare
hash string (of the full instructions, prefixes included).

* ``Known`` new form, same hash: equal prefix sets → nothing; previous prefixes a strict subset of
  the current ones → only ``Approved command prefix saved:`` plus one ``- ["a", "b"]`` line per
  added prefix (an unmarked developer fragment);
* ``Known`` legacy hash equal to the hash of the current full instructions → nothing;
* everything else (``Absent``, ``Unknown``, hash changed, a prefix removed) → the full instructions.

Legacy and retained matchers: a developer text with the permissions markers.
What does not belong here: enforcing any of it (``sandbox/``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import ClassVar, Final, Literal, TypeAlias, assert_never, cast, get_args

from pydantic import BaseModel, ConfigDict

from mini_codex.world_state.fragment import Fragment, markers_match
from mini_codex.world_state.hash import fragment_hash
from mini_codex.world_state.section import Absent, Known, Previous, Section, Unknown
from mini_codex.world_state.sections._text import load_prompt, render_prompt

__all__ = [
    "PERMISSIONS_END",
    "PERMISSIONS_START",
    "ApprovalPolicy",
    "CommandPrefix",
    "PermissionsSection",
    "PermissionsSnapshot",
    "SandboxMode",
    "format_command_prefix",
    "landlock_note",
    "unsandboxed_note",
]

PERMISSIONS_START: Final = "<permissions instructions>"
PERMISSIONS_END: Final = "</permissions instructions>"

ApprovalPolicy: TypeAlias = Literal["untrusted", "on-failure", "on-request", "never"]
SandboxMode: TypeAlias = Literal["read-only", "workspace-write", "danger-full-access"]
CommandPrefix: TypeAlias = tuple[str, ...]


class PermissionsSnapshot(BaseModel):
    """The persisted form: a hash of the instructions and the approved prefixes."""

    model_config = ConfigDict(frozen=True)

    instructions: str
    """``fragment_hash`` of the instructions rendered without approved prefixes."""
    approved_command_prefixes: tuple[CommandPrefix, ...] = ()
    """Approved command prefixes, sorted and de-duplicated."""


PermissionsState: TypeAlias = PermissionsSnapshot | str
"""A snapshot as decoded: the current form, or a legacy bare hash string."""


def format_command_prefix(prefix: Sequence[str]) -> str:
    """A prefix as a JSON array with ``", "`` separators: ``["touch", "allow-prefix.txt"]``."""
    return json.dumps(list(prefix), ensure_ascii=False)


def _prefix_lines(prefixes: Iterable[CommandPrefix]) -> str:
    return "\n".join("- " + format_command_prefix(prefix) for prefix in prefixes)


class PermissionsSection(Section[PermissionsState]):
    """The turn's approval policy and sandbox policy, plus the approved command prefixes."""

    ID: ClassVar[str] = "permissions"
    snapshot_type: ClassVar[object] = PermissionsState

    def __init__(
        self,
        approval_policy: ApprovalPolicy | str,
        sandbox_mode: SandboxMode | str,
        writable_roots: Sequence[str] = (),
        network_access: bool = False,
        approved_command_prefixes: Iterable[Sequence[str]] = (),
        sandbox_note: str | None = None,
    ) -> None:
        """``sandbox_note``: a truthful warning when the policy is not (or cannot be) enforced
        (``unsandboxed_note``)."""
        if approval_policy not in get_args(ApprovalPolicy):
            raise ValueError(
                f"unknown approval policy {approval_policy!r}; "
                f"expected one of {', '.join(get_args(ApprovalPolicy))}"
            )
        if sandbox_mode not in get_args(SandboxMode):
            raise ValueError(
                f"unknown sandbox mode {sandbox_mode!r}; "
                f"expected one of {', '.join(get_args(SandboxMode))}"
            )
        prefixes: set[CommandPrefix] = set()
        for prefix in approved_command_prefixes:
            if isinstance(prefix, str):
                raise ValueError(
                    f"an approved command prefix is a list of words, not a string: {prefix!r}"
                )
            prefixes.add(tuple(prefix))
        if () in prefixes:
            raise ValueError("an approved command prefix must not be empty")
        self.approval_policy = cast(ApprovalPolicy, approval_policy)
        self.sandbox_mode = cast(SandboxMode, sandbox_mode)
        self.writable_roots: tuple[str, ...] = tuple(writable_roots)
        self.network_access = network_access
        self.sandbox_note = sandbox_note
        self.approved_command_prefixes: tuple[CommandPrefix, ...] = tuple(sorted(prefixes))
        """Sorted, de-duplicated."""
        self.instructions_hash = fragment_hash("developer", self.instructions_fragment(False).text)
        """Hash of the instructions without approved prefixes (what the snapshot stores)."""

    def instructions_fragment(self, with_prefixes: bool = True) -> Fragment:
        """The full permissions instructions (optionally without the approved prefixes)."""
        parts = [
            self._sandbox_text(),
            *([self.sandbox_note] if self.sandbox_note else []),
            load_prompt(
                "permissions_network_enabled"
                if self.network_access
                else "permissions_network_restricted"
            ),
            load_prompt("permissions_approval_" + self.approval_policy.replace("-", "_")),
        ]
        if with_prefixes and self.approved_command_prefixes:
            parts.append(
                render_prompt(
                    "permissions_approved_prefixes",
                    prefixes=_prefix_lines(self.approved_command_prefixes),
                )
            )
        return Fragment(
            role="developer",
            start_marker=PERMISSIONS_START,
            end_marker=PERMISSIONS_END,
            body="\n" + "\n\n".join(parts) + "\n",
        )

    def _sandbox_text(self) -> str:
        match self.sandbox_mode:
            case "read-only":
                return load_prompt("permissions_sandbox_read_only")
            case "danger-full-access":
                return load_prompt("permissions_sandbox_danger_full_access")
            case "workspace-write":
                if self.writable_roots:
                    roots = render_prompt(
                        "permissions_writable_roots",
                        roots=", ".join(f"`{root}`" for root in self.writable_roots),
                    )
                else:
                    roots = load_prompt("permissions_no_writable_roots")
                return render_prompt("permissions_sandbox_workspace_write", writable_roots=roots)
            case _:
                assert_never(self.sandbox_mode)

    def snapshot(self) -> PermissionsSnapshot:
        return PermissionsSnapshot(
            instructions=self.instructions_hash,
            approved_command_prefixes=self.approved_command_prefixes,
        )

    def render_diff(self, previous: Previous[PermissionsState]) -> Fragment | None:
        match previous:
            case Known(snapshot=PermissionsSnapshot() as before):
                if before.instructions == self.instructions_hash:
                    known = set(before.approved_command_prefixes)
                    current = set(self.approved_command_prefixes)
                    if known == current:
                        return None
                    if known < current:
                        return self._prefixes_saved_fragment(sorted(current - known))
            case Known(snapshot=str() as legacy_hash):
                full = self.instructions_fragment()
                if legacy_hash == fragment_hash(full.role, full.text):
                    return None
                return full
            case Known():
                pass  # not a permissions state at all: treat like a changed hash
            case Absent() | Unknown():
                pass
            case _:
                assert_never(previous)
        return self.instructions_fragment()

    @staticmethod
    def _prefixes_saved_fragment(added: Sequence[CommandPrefix]) -> Fragment:
        body = render_prompt("permissions_prefix_saved", prefixes=_prefix_lines(added))
        return Fragment(role="developer", start_marker="", end_marker="", body=body)

    @classmethod
    def matches_legacy_fragment(cls, role: str, text: str) -> bool:
        return _is_permissions_block(role, text)

    @classmethod
    def has_retained_fragment_matcher(cls) -> bool:
        return True

    @classmethod
    def matches_retained_fragment(cls, role: str, text: str) -> bool:
        return _is_permissions_block(role, text)


def landlock_note() -> str:
    """The permissions text for ``workspace-write`` under the Landlock + seccomp fallback."""
    return load_prompt("permissions_landlock")


def unsandboxed_note(reason: str, *, allowed: bool) -> str:
    """The permissions text for a restricted policy on a machine where no OS sandbox works:
    commands run unconfined (``allowed``: ``sandbox.allow_unsandboxed``) or are refused."""
    name = "permissions_unsandboxed_allowed" if allowed else "permissions_unsandboxed_refused"
    return render_prompt(name, reason=reason)


def _is_permissions_block(role: str, text: str) -> bool:
    return role == "developer" and markers_match(PERMISSIONS_START, PERMISSIONS_END, text)
