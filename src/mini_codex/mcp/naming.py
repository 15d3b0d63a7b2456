"""Model-visible names of MCP tools (spec/codex-runtime.md §5.7). Pure: no I/O.

Each tool keeps its raw identity (server name, raw tool name) for protocol calls; the model sees a
*callable namespace* and a *callable name*, joined into one flat function name::

    mcp__<server>__<tool>            e.g. server "everything", tool "echo" → mcp__everything__echo

Rules, in order:

1. Sanitize each part: every character outside ``[A-Za-z0-9_]`` becomes ``_`` (empty → ``_``), as
   Codex 0.169 does: the reference server's ``get-annotated-message`` is ``get_annotated_message``.
   The namespace is ``mcp__<server>`` (the ``mcp__`` prefix is not doubled when the server name
   already starts with it).
2. Identical raw identities are de-duplicated ("skipping duplicated tool").
3. Namespace collisions (one sanitized namespace from different servers) append
   ``_`` + the first 12 hex digits of SHA-1(raw namespace identity) to the namespace; tool-name
   collisions within a namespace append the same kind of suffix, from the raw tool identity.
4. Candidates are taken in raw-identity order, so the result does not depend on input order.
5. ``len(namespace) + 2 + len(name)`` (the flat name, ``__`` included) must be ≤ 64 and unique;
   otherwise the tool name is truncated and given the hash suffix; if even the suffix does not fit
   after the namespace, the namespace is truncated and the suffix becomes the name; a repeated
   clash hashes ``raw\\0<attempt>`` instead.

On the Responses wire a server's tools are one ``{"type": "namespace", "name": <namespace>,
"tools": [...]}`` entry whose members carry the name inside the namespace, and calls come back as
``{"name": <name>, "namespace": <namespace>}`` (``runtime/tool_router.py``); Chat Completions and
rollouts recorded before namespaces use the flat name. Names are ASCII after sanitizing, so
characters and bytes agree.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import msgspec

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "MCP_PREFIX",
    "NAME_DELIMITER",
    "QualifiedTool",
    "QualifiedTools",
    "hash_suffix",
    "qualify_tools",
    "sanitize_name_part",
    "server_namespace",
]

MAX_TOOL_NAME_LENGTH = 64
NAME_DELIMITER = "__"
MCP_PREFIX = "mcp__"
HASH_LEN = 12

_DISALLOWED = re.compile(r"[^A-Za-z0-9_]")


def sanitize_name_part(value: str) -> str:
    """Replace every character outside ``[A-Za-z0-9_]`` by ``_``; never empty."""
    return _DISALLOWED.sub("_", value) or "_"


def server_namespace(server: str) -> str:
    """The raw (unsanitized) callable namespace of a server: ``mcp__<server>``."""
    return server if server.startswith(MCP_PREFIX) else MCP_PREFIX + server


def hash_suffix(raw_identity: str) -> str:
    """``_`` + the first 12 hex digits of SHA-1(raw identity)."""
    return "_" + hashlib.sha1(raw_identity.encode("utf-8")).hexdigest()[:HASH_LEN]


class QualifiedTool(msgspec.Struct, frozen=True):
    server: str
    """Raw server name (config key)."""
    tool: str
    """Raw tool name, as sent in ``tools/call``."""
    namespace: str
    """Model-visible namespace (``mcp__<server>``, sanitized, maybe suffixed)."""
    name: str
    """Model-visible tool name inside the namespace."""

    @property
    def flat_name(self) -> str:
        """The function name the model sees and calls: ``<namespace>__<name>``."""
        return self.namespace + NAME_DELIMITER + self.name


class QualifiedTools(msgspec.Struct, frozen=True):
    tools: tuple[QualifiedTool, ...]
    """In raw-identity order."""
    skipped: tuple[tuple[str, str], ...] = ()
    """(server, tool) pairs dropped as duplicates of an identical raw identity."""


class _Candidate(msgspec.Struct):
    server: str
    tool: str
    namespace_identity: str
    tool_identity: str
    namespace: str
    name: str


def _fits(namespace: str, name: str) -> bool:
    return len(namespace) + len(NAME_DELIMITER) + len(name) <= MAX_TOOL_NAME_LENGTH


def _fit_with_hash(namespace: str, name: str, raw_identity: str) -> tuple[str, str]:
    suffix = hash_suffix(raw_identity)
    room = MAX_TOOL_NAME_LENGTH - len(namespace) - len(NAME_DELIMITER)
    if room >= len(suffix):
        return namespace, name[: room - len(suffix)] + suffix
    room_namespace = MAX_TOOL_NAME_LENGTH - len(NAME_DELIMITER) - len(suffix)
    return namespace[:room_namespace], suffix


def _unique(namespace: str, name: str, raw_identity: str, used: set[str]) -> tuple[str, str]:
    flat = namespace + NAME_DELIMITER + name
    if _fits(namespace, name) and flat not in used:
        used.add(flat)
        return namespace, name
    attempt = 0
    while True:
        key = raw_identity if attempt == 0 else f"{raw_identity}\0{attempt}"
        fitted_namespace, fitted_name = _fit_with_hash(namespace, name, key)
        flat = fitted_namespace + NAME_DELIMITER + fitted_name
        if flat not in used:
            used.add(flat)
            return fitted_namespace, fitted_name
        attempt += 1


def qualify_tools(tools: Iterable[tuple[str, str]]) -> QualifiedTools:
    """Model-visible names for ``(server, raw tool name)`` pairs; see the module docstring."""
    seen: set[str] = set()
    skipped: list[tuple[str, str]] = []
    candidates: list[_Candidate] = []
    for server, tool in tools:
        raw_namespace = server_namespace(server)
        namespace_identity = f"{server}\0{raw_namespace}\0"
        tool_identity = f"{namespace_identity}\0{tool}\0{tool}"
        if tool_identity in seen:
            skipped.append((server, tool))
            continue
        seen.add(tool_identity)
        candidates.append(
            _Candidate(
                server=server,
                tool=tool,
                namespace_identity=namespace_identity,
                tool_identity=tool_identity,
                namespace=sanitize_name_part(raw_namespace),
                name=sanitize_name_part(tool),
            )
        )

    namespace_owners: dict[str, set[str]] = {}
    for candidate in candidates:
        namespace_owners.setdefault(candidate.namespace, set()).add(candidate.namespace_identity)
    for candidate in candidates:
        if len(namespace_owners[candidate.namespace]) > 1:
            candidate.namespace += hash_suffix(candidate.namespace_identity)

    name_owners: dict[tuple[str, str], set[str]] = {}
    for candidate in candidates:
        key = (candidate.namespace, candidate.name)
        name_owners.setdefault(key, set()).add(candidate.tool_identity)
    for candidate in candidates:
        if len(name_owners[(candidate.namespace, candidate.name)]) > 1:
            candidate.name += hash_suffix(candidate.tool_identity)

    candidates.sort(key=lambda c: c.tool_identity)
    used: set[str] = set()
    qualified: list[QualifiedTool] = []
    for candidate in candidates:
        namespace, name = _unique(
            candidate.namespace, candidate.name, candidate.tool_identity, used
        )
        qualified.append(QualifiedTool(candidate.server, candidate.tool, namespace, name))
    return QualifiedTools(tools=tuple(qualified), skipped=tuple(skipped))
