"""``mini-codex mcp add | remove | list``: config.toml edited, comments kept, input validated."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

from mini_codex.cli.main import app
from mini_codex.config import McpServerConfig, load_config

ORIGINAL = """\
# my settings
model = "gpt-5"  # the model I use

[rollout]
# keep this comment
fsync_at_turn_end = false
"""

runner = CliRunner()


def mcp(home: Path, *args: str) -> Result:
    return runner.invoke(app, ["mcp", *args], env={"MINI_CODEX_HOME": str(home)})


def test_add_writes_tables_and_keeps_comments_then_remove_restores_the_file(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(ORIGINAL)
    added = mcp(tmp_path, "add", "time", "--env", "TZ=UTC", "--", "uvx", "mcp-server-time")
    assert (added.exit_code, added.output) == (0, f"Added MCP server 'time' in {config}\n")
    web = mcp(
        tmp_path,
        "add",
        "web",
        "--url",
        "http://127.0.0.1:3001/mcp",
        "--bearer-token-env-var",
        "WEB_TOKEN",
        "--required",
        "--tool-timeout-sec",
        "5",
    )
    assert web.exit_code == 0, web.output
    assert config.read_text() == ORIGINAL + (
        "\n"
        "[mcp_servers.time]\n"
        'command = "uvx"\n'
        'args = ["mcp-server-time"]\n'
        'env = {TZ = "UTC"}\n'
        "\n"
        "[mcp_servers.web]\n"
        'url = "http://127.0.0.1:3001/mcp"\n'
        'bearer_token_env_var = "WEB_TOKEN"\n'
        "required = true\n"
        "tool_timeout_sec = 5.0\n"
    )
    assert load_config(config.read_text()).mcp_servers == {
        "time": McpServerConfig(command="uvx", args=("mcp-server-time",), env={"TZ": "UTC"}),
        "web": McpServerConfig(
            url="http://127.0.0.1:3001/mcp",
            bearer_token_env_var="WEB_TOKEN",
            required=True,
            tool_timeout_sec=5,
        ),
    }
    assert mcp(tmp_path, "remove", "web").exit_code == 0
    removed = mcp(tmp_path, "remove", "time")
    assert (removed.exit_code, removed.output) == (0, f"Removed MCP server 'time' from {config}\n")
    assert config.read_text() == ORIGINAL


def test_add_replaces_an_existing_server(tmp_path: Path) -> None:
    assert mcp(tmp_path, "add", "s", "--", "one").exit_code == 0
    again = mcp(tmp_path, "add", "s", "--", "two", "--flag")
    assert again.output == f"Updated MCP server 's' in {tmp_path / 'config.toml'}\n"
    assert (tmp_path / "config.toml").read_text() == (
        '[mcp_servers.s]\ncommand = "two"\nargs = ["--flag"]\n'
    )


def test_list_json_and_table(tmp_path: Path) -> None:
    assert mcp(tmp_path, "list", "--json").output == "[]\n"
    assert mcp(tmp_path, "list").output == f"no MCP servers in {tmp_path / 'config.toml'}\n"
    mcp(tmp_path, "add", "everything", "--", "node", "server.js", "stdio")
    mcp(tmp_path, "add", "web", "--url", "http://127.0.0.1:9/mcp")
    listed = mcp(tmp_path, "list", "--json")
    assert json.loads(listed.output) == [
        {
            "name": "everything",
            "enabled": True,
            "disabled_reason": None,
            "transport": {
                "type": "stdio",
                "command": "node",
                "args": ["server.js", "stdio"],
                "env": None,
                "env_vars": [],
                "cwd": None,
            },
            "startup_timeout_sec": None,
            "tool_timeout_sec": None,
            "auth_status": "unsupported",
            "required": False,
            "enabled_tools": None,
            "disabled_tools": [],
        },
        {
            "name": "web",
            "enabled": True,
            "disabled_reason": None,
            "transport": {
                "type": "streamable_http",
                "url": "http://127.0.0.1:9/mcp",
                "bearer_token_env_var": None,
                "http_headers": None,
                "env_http_headers": None,
                "http_headers_helper": None,
            },
            "startup_timeout_sec": None,
            "tool_timeout_sec": None,
            "auth_status": "unknown",  # nothing listens on port 9: its OAuth support is unknown
            "required": False,
            "enabled_tools": None,
            "disabled_tools": [],
        },
    ]
    assert mcp(tmp_path, "list").output == (
        "Name        Command  Args             Env  Cwd  Status   Auth       \n"
        "everything  node     server.js stdio  -    -    enabled  Unsupported\n"
        "\n"
        "Name  Url                     Bearer Token Env Var  Status   Auth   \n"
        "web   http://127.0.0.1:9/mcp  -                     enabled  Unknown\n"
    )


def test_bad_input_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    cases = [
        (["add", "bad name", "--", "x"], "invalid MCP server name 'bad name'"),
        (["add", "x"], "needs either `command` (stdio) or `url` (streamable HTTP)"),
        (["add", "x", "--url", "http://h/mcp", "--", "cmd"], "not both"),
        (["add", "x", "--bearer-token-env-var", "T", "--", "cmd"], "needs --url"),
        (["add", "x", "--env", "NOEQUALS", "--", "cmd"], "bad --env 'NOEQUALS'"),
        (["remove", "nope"], f"no MCP server named 'nope' in {config}"),
    ]
    for args, message in cases:
        result = mcp(tmp_path, *args)
        assert result.exit_code == 2, args
        assert message in result.output, (args, result.output)
    assert not config.exists()
    config.write_text("model = \n")
    broken = mcp(tmp_path, "add", "x", "--", "cmd")
    assert broken.exit_code == 2
    assert f"{config}: invalid TOML" in broken.output
    assert config.read_text() == "model = \n"
