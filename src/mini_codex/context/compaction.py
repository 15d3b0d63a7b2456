"""The replacement history of a local compaction (spec/codex-runtime.md §8.3 steps 3–5). PURE.

What belongs here: which user messages a compaction keeps, the summary message, where the fresh
initial context goes in a mid-turn replacement, and head + tail truncation of long texts. What
does not: the summarization request and installing the result (``runtime/compaction.py``), and
counting tokens (``models.tokens``; the functions here take a counter and a truncator so that
the pure core never loads a tokenizer).

* **Real user messages** are ``user`` messages that are user input (not an injected context
  fragment, ``context.contextual``) and not an earlier compaction's summary.
* **Summaries** start with ``SUMMARY_PREFIX``, Codex's own fixed sentence (codex-rs
  ``SUMMARY_PREFIX``, read from the ``compacted`` line of a Codex 0.169 rollout:
  ``tests/fixtures/codex_compaction``), so that Codex resuming a mini-codex session and compacting
  again drops our summary as it drops its own. ``LEGACY_SUMMARY_PREFIXES`` are the sentences
  earlier mini-codex versions wrote: recognized (a second compaction drops them too), never
  written. One rule for both directions: :func:`is_summary_text`.
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
    "LEGACY_SUMMARY_PREFIXES",
    "NO_SUMMARY",
    "SUMMARIZATION_PROMPT",
    "SUMMARY_PREFIX",
    "USER_MESSAGE_BUDGET",
    "build_replacement_history",
    "insert_initial_context",
    "is_summary_message",
    "is_summary_text",
    "real_user_messages",
    "strip_summary_prefix",
    "summary_text",
]

USER_MESSAGE_BUDGET = 20_000
"""Tokens of recent user messages a compaction keeps verbatim."""

SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process. You also have access to the state of the tools that were used by that "
    "language model. Use this to build on the work that has already been done and avoid "
    "duplicating work. Here is the summary produced by the other language model, use the "
    "information in this summary to assist with your own analysis:"
)
"""Starts every summary message we write: Codex's sentence, byte for byte (how a summary is told
apart from user input, by Codex and by us)."""

LEGACY_SUMMARY_PREFIXES: tuple[str, ...] = (
    "Another model worked on this conversation before you and wrote the handoff summary below. "
    "The tools it used are still in the state it left them. Continue from this summary instead "
    "of redoing finished work:",
)
"""Summary prefixes written by earlier mini-codex versions: recognized, never written."""

_ALL_SUMMARY_PREFIXES = (SUMMARY_PREFIX, *LEGACY_SUMMARY_PREFIXES)

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


def is_summary_text(text: str) -> bool:
    """Whether ``text`` is a compaction summary, ours or Codex's (any version)."""
    return text.startswith(_ALL_SUMMARY_PREFIXES)


def strip_summary_prefix(text: str) -> str:
    """The summary body of a summary message (``text`` unchanged when it is none)."""
    for prefix in _ALL_SUMMARY_PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix) :].strip()
    return text


def is_summary_message(item: ResponseItem) -> bool:
    return isinstance(item, Message) and item.role == "user" and is_summary_text(message_text(item))


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
