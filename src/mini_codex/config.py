"""Configuration: a Codex-shaped ``config.toml`` plus ``-c key=value`` overrides.

Pure: this module parses text it is given; ``cli/`` finds and reads the file and the environment.
Unknown keys are kept and reported (never fatal), so a config written for the Codex CLI loads too.
Malformed TOML, a bad override or a value of the wrong type raise ``ConfigError`` naming the key.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mini_codex.errors import ConfigError

SandboxModeName = Literal["read-only", "workspace-write", "danger-full-access"]
ApprovalPolicyName = Literal["untrusted", "on-failure", "on-request", "never"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class ModelProviderConfig(_Section):
    """One ``[model_providers.NAME]`` table."""

    name: str | None = None
    base_url: str | None = None
    env_key: str | None = None
    """Environment variable holding the API key; without it no key is required."""
    wire_api: Literal["responses", "chat"] = "responses"
    http_headers: dict[str, str] = Field(default_factory=dict)
    query_params: dict[str, str] = Field(default_factory=dict)
    request_max_retries: int = 4
    stream_max_retries: int = 5
    stream_idle_timeout_ms: int = 300_000
    tool_calling: Literal["native", "envelope"] = "native"
    """Chat wire API only: ``envelope`` asks for JSON-schema-constrained replies instead of
    native ``tools`` (for servers and models without tool calling; ``models.tool_envelope``)."""


class LlamaCppConfig(_Section):
    """``[llamacpp]``: the embedded llama.cpp server of ``--oss`` (``oss_provider``)."""

    n_ctx: int = Field(default=8192, ge=256)
    """Context window in tokens."""
    threads: int = Field(default=1, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    seed: int = Field(default=0, ge=0)
    max_tokens: int = Field(default=1024, ge=16)
    """Upper bound on the tokens of one reply."""


class SandboxWorkspaceWrite(_Section):
    writable_roots: tuple[str, ...] = ()
    network_access: bool = False
    exclude_tmpdir_env_var: bool = False
    exclude_slash_tmp: bool = False


class SandboxConfig(_Section):
    """``[sandbox]``: what to do where no OS sandbox works."""

    allow_unsandboxed: bool = False
    """Run commands unconfined (and say so to the model) instead of refusing them."""


class ShellEnvironmentPolicy(_Section):
    """``[shell_environment_policy]``: the environment of the model's commands (Codex's)."""

    inherit: Literal["all", "core", "none"] = "all"
    ignore_default_excludes: bool = False
    """Keep variables whose names contain KEY, SECRET or TOKEN (excluded by default)."""
    exclude: tuple[str, ...] = ()
    """Glob patterns (case-insensitive) of names to drop."""
    set: dict[str, str] = Field(default_factory=dict)
    include_only: tuple[str, ...] = ()
    """When not empty, only names matching one of these globs are kept (applied last)."""


class RolloutConfig(_Section):
    fsync_at_turn_end: bool = True
    fsync_on_shutdown: bool = True
    checkpoint_every_items: int = 2000
    checkpoint_every_bytes: int = 16 * 1024 * 1024
    checkpoint_min_ratio: float = Field(default=5.0, ge=0.0)
    """A checkpoint waits for this many times the history's bytes since the last one (0: no
    wait, a full history copy every ``checkpoint_every_items`` lines)."""


class ToolsConfig(_Section):
    """``[tools]``: which built-in tools the model gets."""

    unified_exec: bool | None = None
    """``exec_command`` + ``write_stdin`` (PTY sessions) instead of ``shell``; unset: on for the
    OpenAI Responses provider (as Codex 0.169), off for Chat providers and scripted models."""
    unified_exec_max_sessions: int = Field(default=8, gt=0)
    """At most this many ``exec_command`` sessions run at once."""


class AgentsConfig(_Section):
    """``[agents]``: sub-agent limits (Codex's keys and defaults; see ``host/agents``)."""

    max_threads: int = Field(default=6, ge=1)
    """At most this many child agents of one session are open at once."""
    max_depth: int = Field(default=1, ge=1)
    """How deep agents may nest; a child at this depth gets no spawn tools."""


class WorkspaceConfig(_Section):
    persist_cap: int = 2000
    """At most this many paths are persisted in the rollout's ``workspace`` snapshot."""
    render_cap: int = 100
    """At most this many added/removed paths are listed to the model per update."""


class McpServerConfig(_Section):
    """One ``[mcp_servers.NAME]`` table: a stdio command or a streamable HTTP ``url``."""

    command: str | None = None
    """Executable of a stdio server (found on ``PATH``)."""
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment of a stdio server (on top of HOME, LOGNAME, PATH, SHELL, TERM, USER)."""
    env_vars: tuple[str, ...] = ()
    """Names of variables copied from mini-codex's own environment into a stdio server's."""
    cwd: str | None = None
    url: str | None = None
    """Endpoint of a streamable HTTP server (``http://127.0.0.1:3001/mcp``)."""
    headers: dict[str, str] = Field(default_factory=dict)
    http_headers: dict[str, str] = Field(default_factory=dict)
    """Codex's name for ``headers``; both are sent (``headers`` wins on a clash)."""
    bearer_token_env_var: str | None = None
    """Environment variable holding a bearer token sent as ``Authorization`` (HTTP only)."""
    env_http_headers: dict[str, str] = Field(default_factory=dict)
    """Header name → environment variable whose value is sent as that header (HTTP only; an
    unset variable sends nothing)."""
    enabled: bool = True
    required: bool = False
    """Steps wait for this server, and ``exec`` fails when it cannot start."""
    startup_timeout_sec: float = Field(default=30.0, gt=0)
    tool_timeout_sec: float = Field(default=60.0, gt=0)
    max_concurrent_calls: int = Field(default=4, ge=1)
    """Tool calls of this server that run at once (calls of one response run concurrently)."""
    enabled_tools: tuple[str, ...] | None = None
    """Allow-list of raw tool names (None: all)."""
    disabled_tools: tuple[str, ...] = ()
    """Deny-list of raw tool names, applied after ``enabled_tools``."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                "an MCP server needs either `command` (stdio) or `url` (streamable HTTP)"
                + (", not both" if self.command is not None else "")
            )
        return self

    @property
    def transport(self) -> Literal["stdio", "streamable_http"]:
        return "stdio" if self.command is not None else "streamable_http"


class PluginConfig(_Section):
    """One ``[plugins.NAME]`` table: a local plugin folder (``mini-codex plugin add PATH``)."""

    path: str
    """The plugin folder (holding ``.codex-plugin/plugin.json``)."""
    enabled: bool = True


class SkillsConfig(_Section):
    """``[skills]``: skill discovery (``SKILL.md`` folders; see ``mini_codex.skills``)."""

    enabled: bool = True
    """False: no skills catalog and no ``$name`` injection."""


class HookCommand(_Section):
    """One command hook: a shell command given the event's JSON on stdin."""

    type: Literal["command"] = "command"
    command: str
    timeout: float = Field(default=60.0, gt=0)
    """Seconds before the command is killed (the hook then counts as failed, never fatal)."""


class HookMatcher(_Section):
    """Hooks for the tools whose name matches ``matcher`` (a regex; empty or None: every tool)."""

    matcher: str | None = None
    hooks: tuple[HookCommand, ...] = ()


class HooksConfig(_Section):
    """``[hooks]``: Codex's (Claude-Code-shaped) command hooks, by event name."""

    SessionStart: tuple[HookMatcher, ...] = ()
    PreToolUse: tuple[HookMatcher, ...] = ()
    """May deny a call: exit code 2 (reason on stderr), or stdout JSON with
    ``hookSpecificOutput.permissionDecision = "deny"`` / ``decision = "block"`` and a reason."""
    PostToolUse: tuple[HookMatcher, ...] = ()
    Stop: tuple[HookMatcher, ...] = ()


class FeaturesConfig(_Section):
    """``[features]``: Codex's feature flags that mini-codex knows."""

    deferred_executor: bool = False
    """Codex's ``deferred_executor``: the ``<environments_instructions>`` guidance is shown."""
    multi_agent: bool = False
    """The ``multi_agent_v1`` tools (spawn, message, wait for and close child agents). On by
    default in Codex 0.169 (behind ``tool_search``); opt-in in mini-codex."""


class Config(_Section):
    """The effective configuration (file + overrides)."""

    model: str = "gpt-5.1-codex"
    model_provider: str = "openai"
    model_providers: dict[str, ModelProviderConfig] = Field(default_factory=dict)
    openai_base_url: str | None = None
    """Base URL of the built-in ``openai`` provider (wins over ``OPENAI_BASE_URL``); the Codex
    TypeScript SDK passes its ``baseUrl`` as ``-c openai_base_url="..."``."""
    model_reasoning_effort: str | None = None
    model_reasoning_summary: str | None = None
    model_context_window: int | None = None
    """Tokens in the model's context window, when the built-in table does not know the model."""
    model_auto_compact_token_limit: int | None = None
    """Auto-compaction threshold; default 90 % of the context window (spec §8.1)."""
    compact_prompt: str | None = None
    """The prompt of a compaction's summarization request (default: the built-in one)."""
    experimental_compact_prompt_file: Path | None = None
    """A file holding the compact prompt (``compact_prompt`` wins when both are set)."""
    tool_output_token_limit: int = Field(default=10_000, gt=0)
    """Tokens of one tool output kept in history; longer outputs keep their head and tail."""
    oss_provider: Literal["llamacpp", "ollama", "lmstudio"] = "llamacpp"
    """The local model server of ``--oss``."""
    llamacpp: LlamaCppConfig = Field(default_factory=LlamaCppConfig)
    approval_policy: ApprovalPolicyName = "on-request"
    sandbox_mode: SandboxModeName = "workspace-write"
    sandbox_workspace_write: SandboxWorkspaceWrite = Field(default_factory=SandboxWorkspaceWrite)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    web_search: Literal["disabled", "cached", "live"] | None = None
    """Codex's hosted web search: accepted; anything but ``disabled`` is reported as unsupported
    (``cli/codex_flags.py``)."""
    shell_environment_policy: ShellEnvironmentPolicy = Field(default_factory=ShellEnvironmentPolicy)
    project_doc_max_bytes: int = 32 * 1024
    project_root_markers: tuple[str, ...] = (".git",)
    shell_timeout_ms: int = 10_000
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    agents: AgentsConfig = Field(default_factory=AgentsConfig)
    features: FeaturesConfig = Field(default_factory=FeaturesConfig)
    rollout: RolloutConfig = Field(default_factory=RolloutConfig)
    workspace: WorkspaceConfig = Field(default_factory=WorkspaceConfig)
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    plugins: dict[str, PluginConfig] = Field(default_factory=dict)
    skills: SkillsConfig = Field(default_factory=SkillsConfig)
    mcp_optional_startup_grace_ms: int = Field(default=1000, ge=0)
    """How long a step capture waits, once per connection set, for optional MCP servers."""
    notify: tuple[str, ...] | None = None
    """Argv run when a turn completes, with Codex's ``agent-turn-complete`` JSON appended."""
    hooks: HooksConfig = Field(default_factory=HooksConfig)
    profile: str | None = None
    """The ``[profiles.NAME]`` table laid over the top-level keys (``--profile`` wins)."""
    profiles: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def unknown_keys(self) -> list[str]:
        """Dotted names of keys this version does not know (reported, not fatal)."""
        found: list[str] = []
        _collect_unknown(self, "", found)
        return found


def _collect_unknown(model: BaseModel, prefix: str, found: list[str]) -> None:
    for key in model.model_extra or {}:
        found.append(prefix + key)
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            _collect_unknown(value, f"{prefix}{name}.", found)
        elif isinstance(value, dict):
            for sub_key, sub in value.items():
                if isinstance(sub, BaseModel):
                    _collect_unknown(sub, f"{prefix}{name}.{sub_key}.", found)


def parse_toml(text: str, *, source: str = "config.toml") -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from exc


def parse_override(assignment: str) -> tuple[list[str], Any]:
    """Parse ``key.path=value``; the value is TOML when it parses as TOML, else a plain string."""
    key, sep, raw = assignment.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"bad -c override {assignment!r}: expected key=value")
    path = [part.strip() for part in key.split(".")]
    if any(not part for part in path):
        raise ConfigError(f"bad -c override {assignment!r}: empty key segment")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return path, value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Return a copy of ``data`` with each ``key=value`` override set (nested tables created)."""
    result = _deep_copy(data)
    for assignment in overrides:
        path, value = parse_override(assignment)
        node = result
        for part in path[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                raise ConfigError(
                    f"bad -c override {assignment!r}: {part!r} is not a table in the config"
                )
            node = child
        node[path[-1]] = value
    return result


def _deep_copy(data: dict[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(v) if isinstance(v, dict) else v for k, v in data.items()}


def _merge(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in layer.items():
        old = merged.get(key)
        both_tables = isinstance(old, dict) and isinstance(value, dict)
        merged[key] = _merge(old, value) if both_tables else value  # type: ignore[arg-type]
    return merged


def with_profile(
    data: dict[str, Any], name: str | None, *, source: str = "config.toml"
) -> dict[str, Any]:
    """``data`` with the ``[profiles.NAME]`` table merged over it (Codex's ``--profile``)."""
    if name is None:
        return data
    profiles = data.get("profiles") or {}
    table = profiles.get(name) if isinstance(profiles, dict) else None
    if not isinstance(table, dict):
        known = ", ".join(sorted(profiles)) if isinstance(profiles, dict) else ""
        raise ConfigError(f"{source}: profile {name!r} not found (known: {known or 'none'})")
    return {**_merge(data, table), "profile": name}


def load_config(
    text: str | None,
    overrides: list[str] | None = None,
    *,
    source: str = "config.toml",
    profile: str | None = None,
    extra: dict[str, Any] | None = None,
) -> Config:
    """Build the effective config from file text (or None), the selected profile (``profile``,
    else the ``profile`` key) and ``-c`` overrides, in that order of precedence (last wins)."""
    data = parse_toml(text, source=source) if text is not None else {}
    chosen = profile or apply_overrides(data, overrides or []).get("profile")
    if chosen is not None and not isinstance(chosen, str):
        raise ConfigError(f"{source}: profile: expected a string")
    data = apply_overrides(with_profile(data, chosen, source=source), overrides or [])
    if extra:
        data = _merge(data, extra)  # values given in code (the SDK's config overrides) win
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise ConfigError(f"{source}: {where}: {first['msg']}") from exc
