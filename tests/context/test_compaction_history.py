"""The replacement history of a compaction (spec/codex-runtime.md §8.3 steps 3–5), pure."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mini_codex.context.compaction import (
    LEGACY_SUMMARY_PREFIXES,
    NO_SUMMARY,
    SUMMARY_PREFIX,
    build_replacement_history,
    insert_initial_context,
    is_summary_message,
    real_user_messages,
    strip_summary_prefix,
    summary_text,
)
from mini_codex.models.tokens import count_tokens, truncate_middle, truncate_to_tokens
from mini_codex.protocol import Message, user_message
from mini_codex.protocol.items import InputText, assistant_message


def words(text: str) -> int:
    return len(text.split())


def first_words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


def developer(text: str) -> Message:
    return Message(role="developer", content=[InputText(text=text)])


def test_summary_text_is_prefix_newline_answer_or_no_summary() -> None:
    assert summary_text("did X") == f"{SUMMARY_PREFIX}\ndid X"
    assert summary_text(None) == f"{SUMMARY_PREFIX}\n{NO_SUMMARY}"
    assert summary_text("  ") == f"{SUMMARY_PREFIX}\n{NO_SUMMARY}"
    assert is_summary_message(user_message(summary_text("x")))
    assert not is_summary_message(assistant_message(summary_text("x")))


def test_real_user_messages_skip_context_fragments_summaries_and_other_roles() -> None:
    items = [
        developer("<permissions instructions>"),
        user_message("<environment_context>cwd</environment_context>"),
        user_message("one"),
        assistant_message("a1"),
        user_message(summary_text("old summary")),
        user_message("two"),
    ]
    assert real_user_messages(items) == ["one", "two"]


def test_summaries_of_codex_and_of_earlier_mini_codex_versions_are_not_user_input() -> None:
    # Codex's fixed prefix is what we write (the recorded Codex rollout pins it:
    # tests/scenarios/test_compaction_interop.py); earlier mini-codex wrote its own sentence.
    (legacy,) = LEGACY_SUMMARY_PREFIXES
    assert SUMMARY_PREFIX.startswith("Another language model started to solve this problem")
    assert legacy.startswith("Another model worked on this conversation before you")
    items = [
        user_message("one"),
        user_message(f"{legacy}\nwritten by mini-codex 0.1"),
        user_message(f"{SUMMARY_PREFIX}\nwritten by Codex"),
        user_message("two"),
    ]
    assert [is_summary_message(item) for item in items] == [False, True, True, False]
    assert real_user_messages(items) == ["one", "two"]
    # A second compaction over either keeps exactly one summary: the new one.
    replacement = build_replacement_history(
        real_user_messages(items), summary_text("new"), count=words, truncate=first_words
    )
    assert replacement == [
        user_message("one"),
        user_message("two"),
        user_message(f"{SUMMARY_PREFIX}\nnew"),
    ]
    assert strip_summary_prefix(f"{legacy}\nold body") == "old body"
    assert strip_summary_prefix(f"{SUMMARY_PREFIX}\nnew body") == "new body"
    assert strip_summary_prefix("not a summary") == "not a summary"


def test_budget_keeps_recent_messages_and_cuts_the_oldest_kept_one() -> None:
    texts = ["w " * 50, "x " * 30, "y " * 40]  # 50, 30, 40 words
    history = build_replacement_history(texts, "SUM", count=words, truncate=first_words, budget=100)
    assert history == [
        user_message(first_words("w " * 50, 30)),
        user_message("x " * 30),
        user_message("y " * 40),
        user_message("SUM"),
    ]


def test_messages_older_than_the_budget_are_dropped() -> None:
    texts = ["a " * 50, "b " * 80, "c " * 60]
    history = build_replacement_history(texts, "SUM", count=words, truncate=first_words, budget=100)
    assert history == [
        user_message(first_words("b " * 80, 40)),
        user_message("c " * 60),
        user_message("SUM"),
    ]


def test_20k_token_budget_with_the_real_tokenizer() -> None:
    old = "alpha " * 15_000
    recent = "omega " * 12_000
    history = build_replacement_history(
        [old, recent],
        summary_text("s"),
        count=count_tokens,
        truncate=truncate_to_tokens,
    )
    assert [item.role for item in history] == ["user", "user", "user"]  # type: ignore[union-attr]
    kept_old = history[0]
    assert isinstance(kept_old, Message)
    text = kept_old.content[0].text  # type: ignore[union-attr]
    assert old.startswith(text)
    assert count_tokens(text) + count_tokens(recent) <= 20_000
    assert count_tokens(text) >= 20_000 - count_tokens(recent) - 2
    assert history[1] == user_message(recent)


@given(
    st.lists(st.integers(min_value=0, max_value=40), max_size=8),
    st.integers(min_value=0, max_value=100),
)
def test_kept_messages_never_exceed_the_budget_and_are_a_suffix(
    sizes: list[int], budget: int
) -> None:
    texts = [" ".join([f"m{index}"] * size) for index, size in enumerate(sizes)]
    history = build_replacement_history(
        texts, "S", count=words, truncate=first_words, budget=budget
    )
    assert history[-1] == user_message("S")
    kept = [item.content[0].text for item in history[:-1]]  # type: ignore[union-attr]
    assert sum(words(text) for text in kept) <= budget
    if kept:
        assert kept[1:] == texts[len(texts) - len(kept) + 1 :]
        assert texts[len(texts) - len(kept)].startswith(kept[0])


def test_initial_context_goes_before_the_last_real_user_message() -> None:
    ctx = [developer("<permissions instructions>"), user_message("<environment_context>")]
    summary = user_message(summary_text("s"))
    replacement = [user_message("one"), user_message("two"), summary]
    assert insert_initial_context(replacement, ctx) == [
        user_message("one"),
        *ctx,
        user_message("two"),
        summary,
    ]
    # No user message: before the summary; nothing at all: appended.
    assert insert_initial_context([summary], ctx) == [*ctx, summary]
    assert insert_initial_context([], ctx) == ctx


def test_truncate_middle_keeps_head_and_tail_around_a_marker() -> None:
    text = "".join(f"line {index}\n" for index in range(5000))
    cut = truncate_middle(text, 200)
    assert cut.startswith("line 0\nline 1\n")
    assert cut.endswith("line 4999\n")
    assert "tokens truncated" in cut
    assert count_tokens(cut) < 240
    assert truncate_middle("short", 200) == "short"


@given(
    st.lists(st.sampled_from(["user", "summary", "assistant", "context"]), max_size=8),
    st.integers(min_value=0, max_value=3),
)
def test_initial_context_is_inserted_once_as_a_block_and_nothing_else_moves(
    kinds: list[str], size: int
) -> None:
    make = {
        "user": lambda i: user_message(f"u{i}"),
        "summary": lambda i: user_message(summary_text(f"s{i}")),
        "assistant": lambda i: assistant_message(f"a{i}"),
        "context": lambda i: user_message(f"<environment_context>{i}"),
    }
    replacement = [make[kind](index) for index, kind in enumerate(kinds)]
    ctx = [developer(f"<permissions instructions>{i}") for i in range(size)]
    result = insert_initial_context(replacement, ctx)
    if not ctx:
        assert result == replacement
        return
    at = next((i for i in range(len(result)) if result[i : i + size] == ctx), None)
    assert at is not None
    assert result[:at] + result[at + size :] == replacement
    users = [i for i, kind in enumerate(kinds) if kind == "user"]
    summaries = [i for i, kind in enumerate(kinds) if kind == "summary"]
    expected = users[-1] if users else summaries[-1] if summaries else len(kinds)
    assert at == expected
