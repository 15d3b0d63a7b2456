"""``mini-codex plugin list | add PATH | remove NAME``: the ``[plugins.NAME]`` tables.

A plugin is a folder with ``.codex-plugin/plugin.json`` (see ``mini_codex.skills.plugins``); it
bundles skills (named ``plugin:skill``), MCP servers (started like configured ones) and hooks.
``plugin add PATH`` reads the manifest first (a broken plugin is refused, nothing is written)
and records ``[plugins.<name>] path = "<absolute folder>"``; ``plugin remove NAME`` deletes the
table; ``plugin list [--json]`` shows the configured plugins and what each bundles. The file is
edited with tomlkit as ``mcp add`` does: comments and formatting survive, the write is atomic, a
malformed file is refused, never overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import orjson
import tomlkit
import typer

from mini_codex.cli.mcp_cmd import (
    _config_path,
    _dumps,
    _fail,
    _parse,
    _read,
    _remove_entry,
    _validated,
    _write,
)
from mini_codex.config import PluginConfig
from mini_codex.errors import ConfigError, MiniCodexError
from mini_codex.skills.plugins import LoadedPlugin, load_plugin

__all__ = ["add_plugin", "plugin_app", "plugins_in", "remove_plugin"]

plugin_app = typer.Typer(
    name="plugin",
    help="Configure plugins (the plugins tables of $MINI_CODEX_HOME/config.toml).",
    no_args_is_help=True,
    add_completion=False,
)

_NAME = re.compile(r"^[A-Za-z0-9_.@-]+$")


def add_plugin(text: str, plugin: LoadedPlugin, *, source: str = "config.toml") -> tuple[str, bool]:
    """``text`` with ``[plugins.<name>]`` pointing at the plugin; True when it replaced one."""
    if not _NAME.match(plugin.name):
        raise ConfigError(
            f"invalid plugin name {plugin.name!r}: use letters, digits, '_', '-', '.' and '@'"
        )
    document = _parse(text, source)
    plugins = document.get("plugins")
    if plugins is None:
        plugins = tomlkit.table(is_super_table=True)
        document["plugins"] = plugins
    elif not isinstance(plugins, dict):
        raise ConfigError(f"{source}: plugins is not a table")
    replaced = plugin.name in plugins
    table = tomlkit.table()
    table["path"] = plugin.root
    plugins[plugin.name] = table
    return _dumps(document), replaced


def remove_plugin(text: str, name: str, *, source: str = "config.toml") -> str:
    return _remove_entry(text, "plugins", name, "plugin", source)


def plugins_in(text: str, *, source: str = "config.toml") -> dict[str, PluginConfig]:
    return _validated(text, "plugins", source).plugins


def _describe(name: str, entry: PluginConfig) -> dict[str, Any]:
    listing: dict[str, Any] = {"name": name, "path": entry.path, "enabled": entry.enabled}
    try:
        plugin = load_plugin(Path(entry.path))
    except ConfigError as exc:
        return {**listing, "error": str(exc)}
    return {
        **listing,
        "version": plugin.version,
        "description": plugin.description,
        "skill_roots": list(plugin.skill_roots),
        "mcp_servers": sorted(plugin.mcp_servers),
        "hooks": plugin.hooks is not None,
    }


@plugin_app.command("add")
def add_command(path: Annotated[Path, typer.Argument(help="The plugin folder.")]) -> None:
    """Add (or replace) a plugin from a local folder."""
    config = _config_path()
    try:
        plugin = load_plugin(path)
        text, replaced = add_plugin(_read(config), plugin, source=str(config))
        _write(config, text)
    except MiniCodexError as exc:
        raise _fail(exc) from None
    what = [
        f"{len(plugin.skill_roots)} skill folder(s)",
        f"{len(plugin.mcp_servers)} MCP server(s)",
    ]
    if plugin.hooks is not None:
        what.append("hooks")
    verb = "Updated" if replaced else "Added"
    typer.echo(f"{verb} plugin {plugin.name!r} ({', '.join(what)}) in {config}")


@plugin_app.command("remove")
def remove_command(name: Annotated[str, typer.Argument(help="Plugin name.")]) -> None:
    """Remove a plugin."""
    config = _config_path()
    try:
        _write(config, remove_plugin(_read(config), name, source=str(config)))
    except MiniCodexError as exc:
        raise _fail(exc) from None
    typer.echo(f"Removed plugin {name!r} from {config}")


@plugin_app.command("list")
def list_command(
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON array.")] = False,
) -> None:
    """List the configured plugins."""
    config = _config_path()
    try:
        plugins = plugins_in(_read(config), source=str(config))
    except MiniCodexError as exc:
        raise _fail(exc) from None
    listing = [_describe(name, entry) for name, entry in sorted(plugins.items())]
    if json_output:
        typer.echo(orjson.dumps(listing).decode())
        return
    if not listing:
        typer.echo(f"no plugins in {config}")
        return
    for entry in listing:
        state = "enabled" if entry["enabled"] else "disabled"
        if "error" in entry:
            typer.echo(f"{entry['name']}  {state}  {entry['path']}  error: {entry['error']}")
            continue
        servers = ", ".join(entry["mcp_servers"]) or "none"
        typer.echo(
            f"{entry['name']}  {state}  {entry['path']}  skills: {len(entry['skill_roots'])} "
            f"folder(s)  MCP servers: {servers}  hooks: {'yes' if entry['hooks'] else 'no'}"
        )
