"""Plugins end to end: ``mini-codex plugin add|list|remove`` edit config.toml (comments kept), and a
plugin with one skill and one MCP server works in ``mini-codex exec`` (its skill is listed as
``plugin:skill`` and injected by ``$plugin:skill``, its real stdio MCP server starts like a
configured one and its tool is called)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from skill_files import write_skill

from mini_codex.config import McpServerConfig
from mini_codex.errors import ConfigError
from mini_codex.skills.plugins import LoadedPlugin, load_plugin

REPO = Path(__file__).resolve().parents[2]
TOY_SERVER = REPO / "tests" / "mcp" / "servers" / "toy_server.py"
MINI_CODEX = str(Path(sys.executable).parent / "mini-codex")


def _fake() -> ModuleType:
    name = "fake_openai_server"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "tests/models/fake_openai_server.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


fake = _fake()


def make_plugin(folder: Path) -> Path:
    (folder / ".codex-plugin").mkdir(parents=True)
    manifest = {"name": "acme", "version": "1.0.0", "description": "Acme tools",
                "skills": "./skills", "mcpServers": "./.mcp.json"}  # fmt: skip
    (folder / ".codex-plugin" / "plugin.json").write_text(json.dumps(manifest))
    write_skill(folder / "skills", "deploy", "Deploy with the acme toy server.")
    toy = {"command": sys.executable, "args": ["${PLUGIN_ROOT}/server.py", "--name", "toy"]}
    servers = {"mcpServers": {"toy": toy}}
    (folder / ".mcp.json").write_text(json.dumps(servers))
    (folder / "server.py").write_text(TOY_SERVER.read_text())
    return folder


def test_a_plugin_manifest_is_read_with_paths_kept_inside(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "acme-plugin").resolve()
    assert load_plugin(root) == LoadedPlugin(
        name="acme",
        root=str(root),
        version="1.0.0",
        description="Acme tools",
        skill_roots=(str(root / "skills"),),
        mcp_servers={
            "toy": McpServerConfig(
                command=sys.executable, args=(f"{root}/server.py", "--name", "toy"), cwd=str(root)
            )
        },
        hooks=None,
    )
    (root / ".codex-plugin" / "plugin.json").write_text('{"skills": "../elsewhere"}')
    with pytest.raises(ConfigError, match="leaves the plugin folder"):
        load_plugin(root)
    with pytest.raises(ConfigError, match="is not a plugin"):
        load_plugin(tmp_path)


def _env(tmp_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "user"),
        "MINI_CODEX_HOME": str(tmp_path / "home"),
        **(extra or {}),
    }


def _cli(
    tmp_path: Path, *args: str, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MINI_CODEX, *args], env=_env(tmp_path, extra), capture_output=True, text=True, timeout=120
    )


def test_plugin_add_list_remove_keep_the_rest_of_the_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    original = '# my settings\nmodel = "gpt-5.5"  # the model\n\n[mcp_servers.x]\ncommand = "x"\n'
    (home / "config.toml").write_text(original)
    plugin = make_plugin(tmp_path / "acme-plugin").resolve()
    added = _cli(tmp_path, "plugin", "add", str(plugin))
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("Added plugin 'acme' (1 skill folder(s), 1 MCP server(s)) in ")
    text = (home / "config.toml").read_text()
    assert text == original + f'\n[plugins.acme]\npath = "{plugin}"\n'
    listed = _cli(tmp_path, "plugin", "list", "--json")
    assert json.loads(listed.stdout) == [
        {"name": "acme", "path": str(plugin), "enabled": True, "version": "1.0.0",
         "description": "Acme tools", "skill_roots": [str(plugin / "skills")],
         "mcp_servers": ["toy"], "hooks": False}
    ]  # fmt: skip
    bad = _cli(tmp_path, "plugin", "add", str(tmp_path / "user"))
    assert (bad.returncode, bad.stderr.count("\n")) == (2, 1)
    assert (home / "config.toml").read_text() == text  # nothing written
    removed = _cli(tmp_path, "plugin", "remove", "acme")
    assert removed.returncode == 0, removed.stderr
    assert (home / "config.toml").read_text() == original
    missing = _cli(tmp_path, "plugin", "remove", "acme")
    assert missing.returncode == 2
    assert "no plugin named 'acme'" in missing.stderr


def _exec(
    tmp_path: Path, replies: list[Any], prompt: str
) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    with fake.serve(replies) as server:
        extra = {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-local"}
        done = _cli(tmp_path, "exec", "--json-events=mini-codex", "-C", str(work),
                    "--sandbox", "danger-full-access", prompt, extra=extra)  # fmt: skip
        return done, [request.body for request in server.requests]


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "m", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}  # fmt: skip


def test_a_plugin_with_a_skill_and_an_mcp_server_works_in_exec(tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path / "acme-plugin").resolve()
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text(
        'model = "gpt-5.5"\nmcp_optional_startup_grace_ms = 60000\n'  # a loaded machine
    )
    assert _cli(tmp_path, "plugin", "add", str(plugin)).returncode == 0

    # First run: what the model is offered.
    done, (body,) = _exec(tmp_path, [fake.sse_reply(fake.responses_events([_message("ok")]))], "hi")
    assert done.returncode == 0, done.stderr
    texts = [p["text"] for i in body["input"] for p in i.get("content", []) if "text" in p]
    (catalog,) = [t for t in texts if t.startswith("<skills_instructions>")]
    assert f"- `r0` = `{plugin / 'skills'}`" in catalog
    assert "- acme:deploy: Deploy with the acme toy server. (file: r0/deploy/SKILL.md)" in catalog
    # MCP tools come as one namespace entry per server (Codex 0.169's layout, issue 29).
    names = [
        f"{tool['name']}__{member['name']}"
        if tool.get("type") == "namespace"
        else member.get("name", "")
        for tool in body["tools"]
        for member in (tool.get("tools") or [tool])
    ]
    (echo,) = [name for name in names if "toy" in name and name.endswith("echo")]

    # Second run: the skill is injected by name and the plugin's MCP tool is called.
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": echo,
            "arguments": json.dumps({"text": "from the plugin"})}  # fmt: skip
    replies = [
        fake.sse_reply(fake.responses_events([call])),
        fake.sse_reply(fake.responses_events([_message("deployed")], response_id="r2")),
    ]
    done, bodies = _exec(tmp_path, replies, "Use $acme:deploy now.")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    (end,) = [event for event in events if event.get("type") == "tool_call_end"]
    assert "from the plugin" in end["output"]
    first_texts = [
        p["text"] for i in bodies[0]["input"] for p in i.get("content", []) if "text" in p
    ]
    skill_path = plugin / "skills" / "deploy" / "SKILL.md"
    assert first_texts[-1] == (
        f"<skill>\n<name>acme:deploy</name>\n<path>{skill_path}</path>\n"
        f"{skill_path.read_text()}\n</skill>"
    )
    outputs = [i for i in bodies[1]["input"] if i.get("type") == "function_call_output"]
    assert len(outputs) == 1
    assert "from the plugin" in json.dumps(outputs[0])


def test_plugin_hooks_run_after_the_configured_ones_and_configured_servers_win(
    tmp_path: Path,
) -> None:
    from mini_codex.config import Config, HookCommand, HookMatcher, HooksConfig
    from mini_codex.skills.plugins import apply_plugins

    root = make_plugin(tmp_path / "acme-plugin").resolve()
    hooks = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo plugin"}]}]}}
    (root / "hooks").mkdir()
    (root / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    plugin = load_plugin(root)
    configured = McpServerConfig(command="mine")
    mine = HookMatcher(hooks=(HookCommand(command="echo mine"),))
    config = Config(mcp_servers={"toy": configured}, hooks=HooksConfig(Stop=(mine,)))
    merged, warnings = apply_plugins(config, [plugin])
    assert merged.mcp_servers == {"toy": configured}
    assert warnings == [
        "plugin 'acme': MCP server 'toy' is already configured; the configured one is used"
    ]
    assert merged.hooks.Stop == (mine, HookMatcher(hooks=(HookCommand(command="echo plugin"),)))
