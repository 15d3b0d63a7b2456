"""The model history ("context manager"): retained items, world-state baseline, normalization.

Pure core (no I/O, no clock). ``history.py`` holds the ``ContextManager``; ``normalize.py`` the
prompt-time repairs of tool call/output pairing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_codex._lazy import lazy_exports

if TYPE_CHECKING:
    from mini_codex.context.contextual import is_contextual_text, is_user_input_message
    from mini_codex.context.history import ContextManager, is_user_turn_start
    from mini_codex.context.lazy import LazyHistory, PromptHistory, PromptItems
    from mini_codex.context.normalize import ABORTED_OUTPUT, normalize_history, paired_call_id

__all__ = [
    "ABORTED_OUTPUT",
    "ContextManager",
    "LazyHistory",
    "PromptHistory",
    "PromptItems",
    "is_contextual_text",
    "is_user_input_message",
    "is_user_turn_start",
    "normalize_history",
    "paired_call_id",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "is_contextual_text": "mini_codex.context.contextual",
        "is_user_input_message": "mini_codex.context.contextual",
        "ContextManager": "mini_codex.context.history",
        "is_user_turn_start": "mini_codex.context.history",
        "LazyHistory": "mini_codex.context.lazy",
        "PromptHistory": "mini_codex.context.lazy",
        "PromptItems": "mini_codex.context.lazy",
        "ABORTED_OUTPUT": "mini_codex.context.normalize",
        "normalize_history": "mini_codex.context.normalize",
        "paired_call_id": "mini_codex.context.normalize",
    },
)
