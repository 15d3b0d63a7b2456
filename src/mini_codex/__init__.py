"""mini-codex: a Python coding-agent runtime built on the contracts of OpenAI Codex."""

__version__ = "0.1.0"

__all__ = ["__version__"]
