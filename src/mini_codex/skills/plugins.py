"""Plugins: a folder with ``.codex-plugin/plugin.json`` bundling skills, MCP servers and hooks.

Manifest fields read (spec/codex-surfaces.md §3.1): ``name`` (else the folder name),
``version``, ``description``; ``skills`` (a ``./``-relative folder or a list of them; default
``./skills`` when it exists); ``mcpServers`` (a ``./``-relative JSON file or an inline object;
default ``./.mcp.json`` when it exists), in the ``{"mcpServers": {NAME: {...}}}`` shape or as the
bare map; ``hooks`` (a ``./``-relative JSON file or an inline object; default
``./hooks/hooks.json``), in the ``{"hooks": {EVENT: [...]}}`` shape or bare. The legacy
``.claude-plugin/plugin.json`` is read too. Paths may not leave the plugin folder.

The plugin's skills are named ``<plugin>:<skill>``; its MCP servers are validated as
``[mcp_servers.NAME]`` tables (``${PLUGIN_ROOT}`` / ``${CLAUDE_PLUGIN_ROOT}`` expanded, the
working directory defaulting to the plugin folder) and join the configured servers, which win on
a name clash; its hooks run after the configured ones. A broken plugin is a warning naming it;
the rest of the session goes on.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from pydantic import BaseModel, ValidationError

from mini_codex.config import Config, HooksConfig, McpServerConfig, PluginConfig
from mini_codex.discovery.safe_read import read_workspace_file
from mini_codex.errors import ConfigError
from mini_codex.skills.model import SkillRoot

__all__ = [
    "MANIFEST_PATHS",
    "LoadedPlugin",
    "apply_plugins",
    "load_plugin",
    "load_plugins",
]

MANIFEST_PATHS = (".codex-plugin/plugin.json", ".claude-plugin/plugin.json")
MAX_JSON_BYTES = 1 << 20
_ROOT_VARIABLES = ("${PLUGIN_ROOT}", "${CLAUDE_PLUGIN_ROOT}")
_Model = TypeVar("_Model", bound=BaseModel)


class LoadedPlugin(msgspec.Struct, frozen=True):
    name: str
    root: str
    version: str | None = None
    description: str | None = None
    skill_roots: tuple[str, ...] = ()
    mcp_servers: Mapping[str, McpServerConfig] = msgspec.field(default_factory=dict)
    hooks: HooksConfig | None = None


def _read_json(path: Path, what: str) -> Any:
    try:
        content = read_workspace_file(str(path), MAX_JSON_BYTES, boundary=None)
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc}") from None
    if content.truncated:
        raise ConfigError(f"{what} {path} is larger than {MAX_JSON_BYTES} bytes")
    try:
        return json.loads(content.data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{what} {path} is not JSON: {exc}") from None


def _inside(root: Path, relative: object, what: str) -> Path:
    if not isinstance(relative, str) or not relative.strip():
        raise ConfigError(f"{what}: expected a ./-relative path")
    path = (root / relative).resolve()
    if path != root and root not in path.parents:
        raise ConfigError(f"{what}: {relative!r} leaves the plugin folder")
    return path


def _manifest(root: Path) -> tuple[Path, dict[str, Any]]:
    for relative in MANIFEST_PATHS:
        path = root / relative
        if path.is_file():
            data = _read_json(path, "plugin manifest")
            if not isinstance(data, dict):
                raise ConfigError(f"plugin manifest {path}: expected a JSON object")
            return path, data
    raise ConfigError(f"{root} is not a plugin: no {MANIFEST_PATHS[0]}")


def _expand(value: str, root: Path) -> str:
    for variable in _ROOT_VARIABLES:
        value = value.replace(variable, str(root))
    return value


def _server(raw: object, root: Path, where: str) -> McpServerConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected an object")
    table = {key: value for key, value in raw.items() if key != "type"}
    for key in ("command", "cwd", "url"):
        if isinstance(table.get(key), str):
            table[key] = _expand(table[key], root)
    if isinstance(table.get("args"), list):
        table["args"] = [_expand(a, root) if isinstance(a, str) else a for a in table["args"]]
    if isinstance(table.get("env"), dict):
        table["env"] = {
            k: _expand(v, root) if isinstance(v, str) else v for k, v in table["env"].items()
        }
    if "command" in table:
        table.setdefault("cwd", str(root))
    return _validated(McpServerConfig, table, where)


def _validated(model: type[_Model], data: object, where: str) -> _Model:
    """``data`` as ``model``; else a one-line ``ConfigError``: ``where``, then the first problem."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{where}: {loc + ': ' if loc else ''}{first['msg']}") from None


_ABSENT = object()
"""A component the manifest does not name and whose default file is not there."""


def _component(root: Path, value: object, label: str, key: str, default: str, what: str) -> object:
    """The manifest's ``key`` component (``mcpServers``, ``hooks``): given inline, as a path
    inside the plugin, or by its ``default`` file when that exists (else ``_ABSENT``); a file
    that nests it under ``key`` is unwrapped."""
    if value is None:
        if not (root / default).is_file():
            return _ABSENT
        value = f"./{default}"
    data = (
        _read_json(_inside(root, value, f"{label}: {key}"), what)
        if isinstance(value, str)
        else value
    )
    if isinstance(data, dict) and isinstance(data.get(key), dict):
        data = data[key]
    return data


def _mcp_servers(root: Path, value: object, label: str) -> dict[str, McpServerConfig]:
    data = _component(root, value, label, "mcpServers", ".mcp.json", "MCP config")
    if data is _ABSENT:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{label}: mcpServers: expected an object of servers")
    return {
        str(name): _server(raw, root, f"{label}: MCP server {name!r}") for name, raw in data.items()
    }


def _hooks(root: Path, value: object, label: str) -> HooksConfig | None:
    data = _component(root, value, label, "hooks", "hooks/hooks.json", "hooks file")
    if data is _ABSENT:
        return None
    return _validated(HooksConfig, data, f"{label}: hooks")


def _skill_roots(root: Path, value: object, label: str) -> tuple[str, ...]:
    if value is None:
        default = root / "skills"
        return (str(default),) if default.is_dir() else ()
    entries = value if isinstance(value, list) else [value]
    return tuple(str(_inside(root, entry, f"{label}: skills")) for entry in entries)


def load_plugin(path: Path) -> LoadedPlugin:
    """Read the plugin in ``path``; raises ``ConfigError`` (one line) when it is broken."""
    try:
        root = path.expanduser().resolve()
    except OSError as exc:
        raise ConfigError(f"plugin {path}: {exc.strerror or exc}") from None
    if not root.is_dir():
        raise ConfigError(f"plugin {path}: not a folder")
    manifest_path, data = _manifest(root)
    raw_name = data.get("name")
    name = raw_name if isinstance(raw_name, str) and raw_name.strip() else root.name
    label = f"plugin {name!r} ({manifest_path})"
    version, description = data.get("version"), data.get("description")
    return LoadedPlugin(
        name=name.strip(),
        root=str(root),
        version=version if isinstance(version, str) else None,
        description=description if isinstance(description, str) else None,
        skill_roots=_skill_roots(root, data.get("skills"), label),
        mcp_servers=_mcp_servers(root, data.get("mcpServers"), label),
        hooks=_hooks(root, data.get("hooks"), label),
    )


def load_plugins(plugins: Mapping[str, PluginConfig]) -> tuple[list[LoadedPlugin], list[str]]:
    """The enabled plugins that load, and one warning per plugin that does not."""
    loaded: list[LoadedPlugin] = []
    warnings: list[str] = []
    for key, entry in sorted(plugins.items()):
        if not entry.enabled:
            continue
        try:
            plugin = load_plugin(Path(os.path.expanduser(entry.path)))
        except ConfigError as exc:
            warnings.append(f"plugin {key!r} is not loaded: {exc}")
            continue
        loaded.append(plugin)
    return loaded, warnings


def plugin_skill_roots(plugins: list[LoadedPlugin]) -> tuple[SkillRoot, ...]:
    return tuple(
        SkillRoot(path, "user", plugin=plugin.name)
        for plugin in plugins
        for path in plugin.skill_roots
    )


def apply_plugins(config: Config, plugins: list[LoadedPlugin]) -> tuple[Config, list[str]]:
    """``config`` with the plugins' MCP servers and hooks added (configured servers win)."""
    if not plugins:
        return config, []
    servers = dict(config.mcp_servers)
    warnings: list[str] = []
    hooks = config.hooks
    for plugin in plugins:
        for name, server in plugin.mcp_servers.items():
            if name in servers:
                warnings.append(
                    f"plugin {plugin.name!r}: MCP server {name!r} is already configured; "
                    "the configured one is used"
                )
                continue
            servers[name] = server
        if plugin.hooks is not None:
            merged = {
                event: (*getattr(hooks, event), *getattr(plugin.hooks, event))
                for event in HooksConfig.model_fields
            }
            hooks = HooksConfig.model_validate(merged)
    return config.model_copy(update={"mcp_servers": servers, "hooks": hooks}), warnings
