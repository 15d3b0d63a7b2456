"""The model history ("context manager"): retained items, world-state baseline, normalization.

Pure core (no I/O, no clock). ``history.py`` holds the ``ContextManager``; ``normalize.py`` the
prompt-time repairs of tool call/output pairing.
"""

from mini_codex.context.contextual import is_contextual_text, is_user_input_message
from mini_codex.context.history import ContextManager, is_user_turn_start
from mini_codex.context.lazy import LazyHistory, PromptItems
from mini_codex.context.normalize import ABORTED_OUTPUT, normalize_history, paired_call_id

__all__ = [
    "ABORTED_OUTPUT",
    "ContextManager",
    "LazyHistory",
    "PromptItems",
    "is_contextual_text",
    "is_user_input_message",
    "is_user_turn_start",
    "normalize_history",
    "paired_call_id",
]
