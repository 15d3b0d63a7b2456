"""The replacement history of a local compaction (spec/codex-runtime.md §8.3 steps 3–5). PURE.

What belongs here: which user messages a compaction keeps, the summary message, where the fresh
initial context goes in a mid-turn replacement, and head + tail truncation of long texts. What
does not: the summarization request and installing the result (``runtime/compaction.py``), and
counting tokens (``models.tokens``; the functions here take a counter and a truncator so that
the pure core never loads a tokenizer).

* **Real user messages** are ``user`` messages that are user input (not an injected context
  fragment, ``context.contextual``) and not an earlier compaction's summary.
* **Kept**: the most recent real user messages whose tokens fit ``USER_MESSAGE_BUDGET`` (20,000),
  walking backwards; the oldest kept one is cut to the tokens left when it does not fit whole.
  Then the summary, as a ``user`` message: ``SUMMARY_PREFIX + "\\n" + <last assistant message>``
  (``NO_SUMMARY`` when the summarizer said nothing).
* **Mid-turn** only: the fresh initial context is inserted before the last real user message;
  else before the last summary; else appended. Pre-turn and manual replacements get none (the
  next turn start re-injects it in full, spec/codex-runtime.md §8.4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mini_codex.context.contextual import is_user_input_message
from mini_codex.protocol.items import Message, ResponseItem, message_text, user_message

__all__ = [
    "NO_SUMMARY",
    "SUMMARIZATION_PROMPT",
    "SUMMARY_PREFIX",
    "USER_MESSAGE_BUDGET",
    "build_replacement_history",
    "insert_initial_context",
    "is_summary_message",
    "real_user_messages",
    "summary_text",
]

USER_MESSAGE_BUDGET = 20_000
"""Tokens of recent user messages a compaction keeps verbatim."""

SUMMARY_PREFIX = (
    "Another model worked on this conversation before you and wrote the handoff summary below. "
    "The tools it used are still in the state it left them. Continue from this summary instead "
    "of redoing finished work:"
)
"""Starts every summary message (how a summary is told apart from user input)."""

NO_SUMMARY = "(no summary available)"

SUMMARIZATION_PROMPT = (
    "Your context window is about to be reset. Write a handoff summary for the model that will "
    "continue this conversation without seeing it. Include: the user's goal and constraints, "
    "decisions made and why, what has been done (files changed, commands run and their "
    "results), what is still open or failing, and the exact next steps. Be concise and "
    "concrete; quote file paths, identifiers and error messages exactly."
)
"""The built-in compact prompt (config ``compact_prompt`` / ``experimental_compact_prompt_file``
replace it)."""

Counter = Callable[[str], int]
Truncator = Callable[[str, int], str]


def is_summary_message(item: ResponseItem) -> bool:
    return (
        isinstance(item, Message)
        and item.role == "user"
        and message_text(item).startswith(SUMMARY_PREFIX)
    )


def real_user_messages(items: Sequence[ResponseItem]) -> list[str]:
    """Texts of the user messages that are user input (oldest first)."""
    return [
        message_text(item)
        for item in items
        if isinstance(item, Message)
        and is_user_input_message(item)
        and not is_summary_message(item)
    ]


def summary_text(last_assistant_message: str | None) -> str:
    body = (last_assistant_message or "").strip() or NO_SUMMARY
    return f"{SUMMARY_PREFIX}\n{body}"


def build_replacement_history(
    user_texts: Sequence[str],
    summary: str,
    *,
    count: Counter,
    truncate: Truncator,
    budget: int = USER_MESSAGE_BUDGET,
) -> list[ResponseItem]:
    """Recent user messages within ``budget`` tokens (oldest kept one cut), then the summary."""
    kept: list[str] = []
    remaining = budget
    for text in reversed(user_texts):
        if remaining <= 0:
            break
        tokens = count(text)
        if tokens <= remaining:
            kept.append(text)
            remaining -= tokens
        else:
            kept.append(truncate(text, remaining))
            break
    kept.reverse()
    return [*(user_message(text) for text in kept), user_message(summary)]


def insert_initial_context(
    replacement: Sequence[ResponseItem], initial_context: Sequence[ResponseItem]
) -> list[ResponseItem]:
    """``initial_context`` before the last real user message (else the last summary, else at
    the end)."""
    items = list(replacement)
    position = next(
        (
            index
            for index in range(len(items) - 1, -1, -1)
            if is_user_input_message(items[index]) and not is_summary_message(items[index])
        ),
        None,
    )
    if position is None:
        position = next(
            (i for i in range(len(items) - 1, -1, -1) if is_summary_message(items[i])), None
        )
    if position is None:
        position = len(items)
    return [*items[:position], *initial_context, *items[position:]]
