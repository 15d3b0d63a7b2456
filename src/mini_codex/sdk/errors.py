"""The SDK's errors: ``CodexError`` and one subclass per kind of failure.

Each subclass also derives from the library error it stands for, so a caller can catch either
(``except ConfigError`` works for an SDK config problem too) and ``__cause__`` is the original::

    CodexError(MiniCodexError)
    ├── CodexConfigError(CodexError, ConfigError)            config.toml, overrides, the provider
    ├── CodexInputError(CodexError, InputError)              a bad sandbox/approval, a missing cwd
    ├── CodexImageError(CodexError, ImageError)              an image part that cannot be attached
    ├── CodexRolloutError(CodexError, RolloutError)          resume: no such thread, not a rollout
    ├── CodexResumeRefusedError(CodexError, ResumeRefusedError)  resume where it would be unsafe
    ├── CodexMcpError(CodexError, McpError)                  a required MCP server did not start
    ├── CodexOutputSchemaError(CodexError, OutputSchemaError)  a bad or unmatched output schema
    └── TurnFailedError(CodexError)                          the turn failed (its error message)
"""

from __future__ import annotations

from mini_codex.errors import ConfigError, InputError, MiniCodexError, RolloutError
from mini_codex.host.rollouts import ResumeRefusedError
from mini_codex.mcp.errors import McpError
from mini_codex.runtime.output_schema import OutputSchemaError
from mini_codex.tools.images import ImageError

__all__ = [
    "CodexConfigError",
    "CodexError",
    "CodexImageError",
    "CodexInputError",
    "CodexMcpError",
    "CodexOutputSchemaError",
    "CodexResumeRefusedError",
    "CodexRolloutError",
    "TurnFailedError",
    "codex_error",
]


class CodexError(MiniCodexError):
    """Everything the SDK raises."""


class CodexConfigError(CodexError, ConfigError):
    """The config (file, overrides, provider, key) is refused."""


class CodexInputError(CodexError, InputError):
    """A thread setting or input is refused (sandbox, approval policy, working directory)."""


class CodexImageError(CodexError, ImageError):
    """An image part cannot be attached."""


class CodexRolloutError(CodexError, RolloutError):
    """A thread to resume is not found, or its file is not a rollout."""


class CodexResumeRefusedError(CodexError, ResumeRefusedError):
    """Resuming where the thread was recorded would be unsafe (the home directory, ``/``)."""


class CodexMcpError(CodexError, McpError):
    """A required MCP server could not start."""


class CodexOutputSchemaError(CodexError, OutputSchemaError):
    """The output schema is not a JSON Schema, or the final message does not match it."""


class TurnFailedError(CodexError):
    """The turn failed; the message is the turn's error."""


_KINDS: tuple[tuple[type[MiniCodexError], type[CodexError]], ...] = (
    (ResumeRefusedError, CodexResumeRefusedError),
    (ConfigError, CodexConfigError),
    (InputError, CodexInputError),
    (ImageError, CodexImageError),
    (RolloutError, CodexRolloutError),
    (McpError, CodexMcpError),
    (OutputSchemaError, CodexOutputSchemaError),
)


def codex_error(exc: MiniCodexError) -> CodexError:
    """The SDK error for ``exc`` (same message, ``__cause__`` set); a ``CodexError`` as is."""
    if isinstance(exc, CodexError):
        return exc
    kind = next((codex for base, codex in _KINDS if isinstance(exc, base)), CodexError)
    error = kind(str(exc))
    error.__cause__ = exc
    return error
