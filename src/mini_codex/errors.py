"""The one exception tree of mini-codex.

Foreign errors (OS, JSON, SDK) are translated into these at exactly one boundary per adapter.

::

    MiniCodexError
    ├── ConfigError            bad config file, bad -c override, unknown model/provider
    ├── ProtocolError          a wire/persisted value that does not decode
    ├── WorldStateError        section contract violations (duplicate ID, ...)
    ├── RolloutError           rollout files: unreadable, empty, newer schema, locked
    │   ├── RolloutLockedError     another writer holds the file
    │   ├── RolloutSchemaError     mini_codex_schema newer than supported
    │   └── NotARolloutError       the file does not start with a session_meta record
    ├── ModelError             model provider failures (retryable flag carried)
    ├── ToolError              tool dispatch failures that are not answered to the model
    └── SandboxError           sandbox setup failures
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
