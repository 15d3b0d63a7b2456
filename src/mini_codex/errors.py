"""The one exception tree of mini-codex.

Foreign errors (OS, JSON, SDK) are translated into these at exactly one boundary per adapter.
Every class that derives from ``MiniCodexError`` is drawn here, with the module that defines it
when that is not this one (``tests/test_errors.py`` checks the drawing against the code). The
SDK's errors derive from both ``CodexError`` and the class they stand for.

::

    MiniCodexError
    ├── ConfigError                bad config file, bad -c override, unknown model/provider
    │   ├── RulesError                 a command-rules file that does not load (policy.rules)
    │   ├── LocalModelError            --oss: the local model cannot start (models.local.errors)
    │   └── CodexConfigError           (sdk.errors)
    ├── InputError                 a front end's option or input refused (--sandbox, --cd)
    │   └── CodexInputError            (sdk.errors)
    ├── ResumeRefusedError         resume where it would be unsafe (the home directory, /)
    │   └── CodexResumeRefusedError    (sdk.errors)
    ├── ProtocolError              a wire/persisted value that does not decode
    ├── WorldStateError            section contract violations (duplicate ID, ...)
    ├── RolloutError               rollout files: unreadable, empty, newer schema, locked
    │   ├── RolloutLockedError         another writer holds the file
    │   ├── RolloutSchemaError         mini_codex_schema newer than supported
    │   ├── NotARolloutError           the file does not start with a session_meta record
    │   └── CodexRolloutError          (sdk.errors)
    ├── ModelError                 model provider failures (retryable flag carried)
    │   └── ProviderError              a classified provider failure (models.errors)
    │       ├── AuthenticationError        the key is refused (models.errors, as below)
    │       ├── ConnectionFailed
    │       ├── ContextWindowExceeded
    │       ├── RateLimited
    │       ├── ServerError
    │       ├── StreamError
    │       ├── Timeout
    │       ├── InvalidRequest
    │       │   └── ToolsNotSupported      a chat server without tools (models.chat_completions)
    │       └── UsageLimitReached
    │           └── QuotaExceeded
    ├── McpError                   MCP servers (mcp.errors, as below)
    │   ├── McpStartupError
    │   │   └── McpAuthError           the server wants an OAuth login (mcp.oauth)
    │   ├── McpUnavailableError
    │   ├── McpCallError
    │   └── CodexMcpError              (sdk.errors)
    ├── ToolError                  tool dispatch failures that are not answered to the model
    │   └── ToolCollisionError         two tools with one name in a step (runtime.tool_router)
    ├── SandboxError               sandbox setup failures
    │   └── SandboxUnavailableError    no sandbox and unsandboxed runs not allowed (sandbox.launch)
    ├── ImageError                 an image that cannot be attached (tools.images)
    │   └── CodexImageError            (sdk.errors)
    ├── PatchParseError            apply_patch input that does not parse (tools.apply_patch.parser)
    ├── PatchApplyError            a patch that does not apply (tools.apply_patch.apply)
    │   └── PatchOutsideSandboxError   it writes outside the writable roots
    ├── HunkMismatchError          a hunk that does not match the file (tools.apply_patch.content)
    ├── OutputSchemaError          bad schema, or an unmatched answer (runtime.output_schema)
    │   └── CodexOutputSchemaError     (sdk.errors)
    ├── CompactionFailed           a compaction whose summary request failed (runtime.compaction)
    ├── NoActiveTurnError          steering while no turn runs
    ├── ExpectedTurnMismatchError  steering named another turn
    ├── EmptyInputError            blank steering input
    ├── StoreError                 a batch result store that cannot be read/written (batch.store)
    ├── WorkspaceError             a batch task workspace that cannot be made (batch.workspace)
    │   └── PreparationInterrupted     the batch was aborted while it was being made
    ├── NotFound                   the inspector: no such session (web.inspector)
    ├── BadRequest                 the inspector: a request it refuses (web.inspector)
    ├── HomeNotFound               ``ui --home``: no such home (cli.remote)
    └── CodexError                 the SDK's root (sdk.errors)
        └── TurnFailedError            a failed turn (sdk.errors)
"""

from __future__ import annotations


class MiniCodexError(Exception):
    """Root of every error mini-codex raises on purpose."""


class ConfigError(MiniCodexError):
    """Configuration is malformed or names something that does not exist."""


class ProtocolError(MiniCodexError):
    """A wire or persisted value could not be decoded."""


class WorldStateError(MiniCodexError):
    """A WorldState section contract was violated (for example a duplicate section ID)."""


class RolloutError(MiniCodexError):
    """A rollout file cannot be read or written."""


class RolloutLockedError(RolloutError):
    """Another process holds the writer lock of a rollout file."""


class RolloutSchemaError(RolloutError):
    """A rollout was written by a newer mini-codex schema than this one supports."""


class NotARolloutError(RolloutError):
    """The file is not a rollout (its first line is not a ``session_meta``); never written to."""


class ModelError(MiniCodexError):
    """A model provider request failed."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class ToolError(MiniCodexError):
    """A tool could not be dispatched (errors answered to the model are not raised)."""


class SandboxError(MiniCodexError):
    """The sandbox could not be set up."""


class InputError(MiniCodexError):
    """A front end's option or input is refused (an unknown ``--sandbox``, a missing ``--cd``)."""


class NoActiveTurnError(MiniCodexError):
    """Steering input was given while no turn is running."""


class ExpectedTurnMismatchError(MiniCodexError):
    """Steering named a turn that is not the running one."""

    def __init__(self, expected: str, actual: str) -> None:
        super().__init__(f"expected turn {expected} but turn {actual} is running")
        self.expected = expected
        self.actual = actual


class EmptyInputError(MiniCodexError):
    """Steering input was empty."""


class ResumeRefusedError(MiniCodexError):
    """A session cannot be resumed where it would run (its recorded cwd is unsafe)."""
