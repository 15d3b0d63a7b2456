"""Which user-role messages are context (injected fragments) rather than user input.

One rule for everything that counts user turns: rollback (``ContextManager``), replay and legacy
turn segmentation (``rollout``), verification. A user message is context when one of its
``input_text`` parts starts (after leading whitespace, case-insensitively) with a known fragment
marker, Codex's and ours.
"""

from __future__ import annotations

from collections.abc import Sequence

from mini_codex.protocol.items import InputText, Message, ResponseItem

CONTEXTUAL_USER_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<workspace_files>",
)
"""Lower-case starts of user-role fragments that are context, not user input."""


def is_contextual_text(text: str) -> bool:
    head = text.lstrip()[:32].lower()
    return head.startswith(CONTEXTUAL_USER_PREFIXES)


def is_contextual_user_parts(parts: Sequence[tuple[str, str | None]]) -> bool:
    """``parts`` as (content type, text or None) pairs of a user message."""
    return any(
        kind == "input_text" and text is not None and is_contextual_text(text)
        for kind, text in parts
    )


def is_user_input_message(item: ResponseItem) -> bool:
    """A ``user`` message that is user input (not an injected context fragment)."""
    if not isinstance(item, Message) or item.role != "user":
        return False
    return not any(
        isinstance(part, InputText) and is_contextual_text(part.text) for part in item.content
    )
