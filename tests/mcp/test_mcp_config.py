"""``[mcp_servers.NAME]`` tables in config.toml and ``-c`` overrides of them."""

from __future__ import annotations

import pytest

from mini_codex.config import McpServerConfig, load_config
from mini_codex.errors import ConfigError

TEXT = """
mcp_optional_startup_grace_ms = 250

[mcp_servers.everything]
command = "node"
args = ["node_modules/.bin/mcp-server-everything", "stdio"]
env = { DEBUG = "1" }
required = true
enabled_tools = ["echo", "get-sum"]
startup_timeout_ms = 20000  # a Codex key we do not use: kept, reported

[mcp_servers.web]
url = "http://127.0.0.1:3001/mcp"
http_headers = { "X-Team" = "a" }
bearer_token_env_var = "WEB_TOKEN"
tool_timeout_sec = 5
"""


def test_mcp_server_tables_are_typed_with_defaults() -> None:
    config = load_config(TEXT)
    assert config.mcp_optional_startup_grace_ms == 250
    assert config.mcp_servers == {
        "everything": McpServerConfig(
            command="node",
            args=("node_modules/.bin/mcp-server-everything", "stdio"),
            env={"DEBUG": "1"},
            required=True,
            enabled_tools=("echo", "get-sum"),
            startup_timeout_ms=20000,
        ),
        "web": McpServerConfig(
            url="http://127.0.0.1:3001/mcp",
            http_headers={"X-Team": "a"},
            bearer_token_env_var="WEB_TOKEN",
            tool_timeout_sec=5,
        ),
    }
    web = config.mcp_servers["web"]
    assert (web.transport, web.startup_timeout_sec, web.enabled) == ("streamable_http", 30.0, True)
    assert config.unknown_keys() == ["mcp_servers.everything.startup_timeout_ms"]


def test_overrides_reach_mcp_server_tables() -> None:
    config = load_config(
        TEXT,
        [
            "mcp_servers.everything.enabled=false",
            "mcp_servers.time.command=mcp-server-time",
            'mcp_servers.time.args=["--local-timezone", "UTC"]',
        ],
    )
    assert config.mcp_servers["everything"].enabled is False
    assert config.mcp_servers["time"] == McpServerConfig(
        command="mcp-server-time", args=("--local-timezone", "UTC")
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('args = ["x"]', "needs either `command` (stdio) or `url` (streamable HTTP)"),
        ('command = "x"\nurl = "http://h"', "not both"),
        ('command = "x"\ntool_timeout_sec = 0', "mcp_servers.s.tool_timeout_sec"),
    ],
)
def test_a_bad_mcp_server_table_is_a_clear_error(table: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(f"[mcp_servers.s]\n{table}\n")
