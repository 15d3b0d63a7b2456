"""The error of the local-model layer: a server that is not there, a model it does not have."""

from __future__ import annotations

from mini_codex.errors import ConfigError


class LocalModelError(ConfigError):
    """A local model server cannot be used (not running, model missing, extra not installed)."""
