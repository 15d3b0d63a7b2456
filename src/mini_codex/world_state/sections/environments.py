"""The ``environments`` section: where commands run, and the turn's date, zone and policies.

Spec: codex-worldstate.md §2.3, §7.2 and the quirks of §8 item 10. Role user, markers
``<environment_context>`` … ``</environment_context>``; the body starts with a newline.

Snapshot (JSON): ``{environments: {<id>: {cwd, status, shell?, is_primary?}}, current_date?,
timezone?, network?, filesystem?, subagents?}``. The cwd is stored as a native path string
(``file:///repo`` → ``/repo``, ``file:///C:/windows`` → ``C:\\windows``); ``is_primary`` is stored
only when true, and only when there is more than one environment; network and filesystem are
stored as their rendered XML strings.

Diff rule (previous = the Known snapshot, else an empty one): an environment is an update when it is
new, when the single/multiple boundary was crossed, or when its cwd, status or is_primary changed
(the shell only counts when both sides know one); a vanished ID is "unavailable". The date, zone,
network or filesystem changing also renders; ``subagents`` alone never does. Whenever something
renders, every present date/zone/network/filesystem/subagents value is repeated.

Network XML (our choice of shape, the one upstream uses): ``<network enabled="true">`` then
``<allowed>a.com,b.com</allowed>`` and ``<denied>c.com</denied>`` (each only when non-empty, domains
comma-joined and not escaped) then ``</network>``. The filesystem XML comes in pre-rendered and is
inserted verbatim. Every other value is XML-escaped, including each ``subagents`` line.

No legacy matcher: ``Unknown`` renders exactly like ``Absent`` here (an empty previous snapshot),
so recognising an old ``<environment_context>`` in history would change nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar, Final, Literal, TypeAlias, assert_never
from urllib.parse import unquote, urlsplit

import msgspec
from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.section import Absent, Known, Previous, Section, Unknown
from mini_codex.world_state.sections._text import xml_escape

__all__ = [
    "ENVIRONMENT_CONTEXT_END",
    "ENVIRONMENT_CONTEXT_START",
    "Environment",
    "EnvironmentEntry",
    "EnvironmentStatus",
    "EnvironmentsSection",
    "EnvironmentsSnapshot",
    "NetworkPolicy",
    "native_path",
]

ENVIRONMENT_CONTEXT_START: Final = "<environment_context>"
ENVIRONMENT_CONTEXT_END: Final = "</environment_context>"

EnvironmentStatus: TypeAlias = Literal["available", "starting", "failed"]
"""``failed`` (with its ``error``) is what Codex 0.169 shows for an environment that could not
connect: ``<status>failed</status>`` and ``<error>…</error>``, no shell."""

_WINDOWS_DRIVE_PATH = re.compile(r"^/[A-Za-z]:(/|$)")


def native_path(cwd: str) -> str:
    """The native path string for a cwd given as a path or a ``file://`` URI.

    ``file:///repo`` → ``/repo``; ``file:///C:/windows`` → ``C:\\windows``;
    ``file://server/share/x`` → ``\\\\server\\share\\x``. Anything else is returned unchanged.
    """
    if not cwd.lower().startswith("file:"):
        return cwd
    parts = urlsplit(cwd)
    path = unquote(parts.path)
    host = parts.netloc if parts.netloc.lower() != "localhost" else ""
    if host:
        return "\\\\" + host + path.replace("/", "\\")
    if _WINDOWS_DRIVE_PATH.match(path):
        return path[1:].replace("/", "\\")
    return path or "/"


class Environment(msgspec.Struct, frozen=True):
    """One turn environment as the host sees it now."""

    id: str
    """Stable environment ID (``local``, ``devbox``, ...)."""
    cwd: str
    """Working directory: a native path or a ``file://`` URI."""
    status: EnvironmentStatus = "available"
    """``starting`` while the environment is not ready yet."""
    shell: str | None = None
    """Shell name, when known (a starting environment has none)."""
    is_primary: bool = False
    """Whether this is the turn's primary environment."""
    error: str | None = None
    """Why a ``failed`` environment is not usable."""


class NetworkPolicy(msgspec.Struct, frozen=True):
    """Domain allow/deny lists of the managed network policy."""

    allowed_domains: Sequence[str] = ()
    denied_domains: Sequence[str] = ()

    def render(self) -> str:
        """The ``<network …>`` XML; a domain listed in both lists counts as denied."""
        access: dict[str, bool] = {}
        for domain in self.allowed_domains:
            access[domain] = True
        for domain in self.denied_domains:
            access[domain] = False
        allowed = [domain for domain, allow in access.items() if allow]
        denied = [domain for domain, allow in access.items() if not allow]
        rendered = '<network enabled="true">'
        if allowed:
            rendered += "<allowed>" + ",".join(allowed) + "</allowed>"
        if denied:
            rendered += "<denied>" + ",".join(denied) + "</denied>"
        return rendered + "</network>"


class EnvironmentEntry(BaseModel):
    """The persisted comparison data of one environment."""

    model_config = ConfigDict(frozen=True)

    cwd: str
    status: EnvironmentStatus
    shell: str | None = None
    is_primary: bool = False
    """Stored only when true (so legacy entries without it read as not primary)."""
    error: str | None = None
    """Stored only for a ``failed`` environment."""

    @model_serializer(mode="wrap")
    def _omit_false_primary(self, serialize: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = serialize(self)
        if not self.is_primary:
            data.pop("is_primary", None)
        if self.error is None:
            data.pop("error", None)
        return data

    def has_same_diff_value(self, other: EnvironmentEntry) -> bool:
        """Equal cwd, status and primary flag; shells are compared only when both are known."""
        return (
            self.cwd == other.cwd
            and self.status == other.status
            and self.is_primary == other.is_primary
            and self.error == other.error
            and (self.shell is None or other.shell is None or self.shell == other.shell)
        )


class EnvironmentsSnapshot(BaseModel):
    """The persisted comparison data of the whole section."""

    model_config = ConfigDict(frozen=True)

    environments: dict[str, EnvironmentEntry]
    current_date: str | None = None
    timezone: str | None = None
    network: str | None = None
    """Rendered network XML."""
    filesystem: str | None = None
    """Rendered filesystem XML."""
    subagents: str | None = None


_EMPTY: Final = EnvironmentsSnapshot(environments={})


class EnvironmentsSection(Section[EnvironmentsSnapshot]):
    """The turn's environments plus date, timezone, network, filesystem and subagents."""

    ID: ClassVar[str] = "environments"
    snapshot_type: ClassVar[object] = EnvironmentsSnapshot

    def __init__(
        self,
        environments: Sequence[Environment],
        current_date: str | None = None,
        timezone: str | None = None,
        network: NetworkPolicy | None = None,
        filesystem: str | None = None,
        subagents: str | None = None,
    ) -> None:
        by_id: dict[str, Environment] = {}
        for environment in environments:
            if environment.id in by_id:
                raise ValueError(f"duplicate environment id: {environment.id!r}")
            by_id[environment.id] = environment
        self.environments: dict[str, Environment] = dict(sorted(by_id.items()))
        """Environments by ID, in sorted ID order."""
        self.current_date = current_date
        self.timezone = timezone
        self.network = network.render() if network is not None else None
        """Rendered network XML."""
        self.filesystem = filesystem
        """Rendered filesystem XML."""
        self.subagents = subagents or None
        """Subagents text; empty counts as none."""

    def snapshot(self) -> EnvironmentsSnapshot:
        multiple = len(self.environments) > 1
        return EnvironmentsSnapshot(
            environments={
                env_id: EnvironmentEntry(
                    cwd=native_path(environment.cwd),
                    status=environment.status,
                    shell=environment.shell if environment.status != "failed" else None,
                    is_primary=multiple and environment.is_primary,
                    error=environment.error if environment.status == "failed" else None,
                )
                for env_id, environment in self.environments.items()
            },
            current_date=self.current_date,
            timezone=self.timezone,
            network=self.network,
            filesystem=self.filesystem,
            subagents=self.subagents,
        )

    def render_diff(self, previous: Previous[EnvironmentsSnapshot]) -> Fragment | None:
        match previous:
            case Known(snapshot=before):
                pass
            case Absent() | Unknown():
                before = _EMPTY
            case _:
                assert_never(previous)
        current = self.snapshot()
        # ``subagents`` is deliberately not compared: it never triggers a render on its own.
        context_changed = (
            current.current_date != before.current_date
            or current.timezone != before.timezone
            or current.network != before.network
            or current.filesystem != before.filesystem
        )
        multiple = len(current.environments) > 1
        was_multiple = len(before.environments) > 1
        updates: dict[str, Environment | None] = {}  # None: unavailable now
        for env_id, entry in current.environments.items():
            old = before.environments.get(env_id)
            if old is None or multiple != was_multiple or not entry.has_same_diff_value(old):
                updates[env_id] = self.environments[env_id]
        for env_id in before.environments:
            if env_id not in current.environments:
                updates[env_id] = None
        if not updates and not context_changed:
            return None
        legacy_single = (
            len(self.environments) == 1
            and all(env.status == "available" for env in self.environments.values())
            and all(update is not None for update in updates.values())
        )
        body = self._body(
            dict(sorted(updates.items())),
            legacy_single=legacy_single,
            include_primary=multiple or was_multiple,
        )
        return Fragment(
            role="user",
            start_marker=ENVIRONMENT_CONTEXT_START,
            end_marker=ENVIRONMENT_CONTEXT_END,
            body=body,
        )

    def _body(
        self,
        updates: dict[str, Environment | None],
        *,
        legacy_single: bool,
        include_primary: bool,
    ) -> str:
        lines: list[str] = []
        if legacy_single:
            for environment in updates.values():
                if environment is not None:
                    lines.extend(_environment_lines(environment, "  "))
        elif updates:
            lines.append("  <environments>")
            for env_id, update in updates.items():
                attr_id = xml_escape(env_id)
                if update is None:
                    lines.append(f'    <environment id="{attr_id}" status="unavailable" />')
                    continue
                primary = ""
                if include_primary:
                    primary = ' primary="true"' if update.is_primary else ' primary="false"'
                lines.append(f'    <environment id="{attr_id}"{primary}>')
                lines.extend(_environment_lines(update, "      "))
                lines.append("    </environment>")
            lines.append("  </environments>")
        if self.current_date is not None:
            lines.append(f"  <current_date>{xml_escape(self.current_date)}</current_date>")
        if self.timezone is not None:
            lines.append(f"  <timezone>{xml_escape(self.timezone)}</timezone>")
        if self.network is not None:
            lines.append("  " + self.network)
        if self.filesystem is not None:
            lines.append("  " + self.filesystem)
        if self.subagents is not None:
            lines.append("  <subagents>")
            lines.extend("    " + xml_escape(line) for line in _text_lines(self.subagents))
            lines.append("  </subagents>")
        return "\n" + "".join(line + "\n" for line in lines)


def _environment_lines(environment: Environment, indent: str) -> list[str]:
    lines = [f"{indent}<cwd>{xml_escape(native_path(environment.cwd))}</cwd>"]
    if environment.status == "starting":
        lines.append(f"{indent}<status>starting</status>")
    if environment.status == "failed":
        lines.append(f"{indent}<status>failed</status>")
        if environment.error is not None:
            lines.append(f"{indent}<error>{xml_escape(environment.error)}</error>")
    elif environment.shell is not None:
        lines.append(f"{indent}<shell>{xml_escape(environment.shell)}</shell>")
    return lines


def _text_lines(text: str) -> list[str]:
    """Split on ``\n`` (a trailing ``\r`` is dropped, no empty last line), like Rust ``lines()``."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]
