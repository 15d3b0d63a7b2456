"""Head + tail truncation: UTF-8 safe, bounded, marker counts what was dropped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mini_codex.tools.truncate import truncate_marker, truncate_middle, truncate_middle_bytes


def test_short_text_is_unchanged_and_long_text_keeps_both_ends() -> None:
    assert truncate_middle("hello", 5) == "hello"
    assert truncate_middle("abcdefghij", 4) == "ab\n[... 6 bytes truncated ...]\nij"


def test_multibyte_characters_are_never_split() -> None:
    text = "é" * 10  # 20 bytes
    assert truncate_middle(text, 5) == "é\n[... 16 bytes truncated ...]\né"


def test_bytes_dropped_earlier_are_counted_and_always_marked() -> None:
    assert truncate_middle_bytes(b"abcd", 10, already_omitted=100) == (
        "ab\n[... 100 bytes truncated ...]\ncd"
    )
    assert truncate_middle_bytes(b"abcdefgh", 4, already_omitted=10) == (
        "ab\n[... 14 bytes truncated ...]\ngh"
    )


def test_invalid_utf8_is_replaced() -> None:
    assert truncate_middle_bytes(b"ok\xff", 10) == "ok\ufffd"


# Decoded tool output never holds lone surrogates (bytes are decoded with "replace"), so the
# property is stated for real Unicode text; surrogates have their own test below.
@given(
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="[")),
    st.integers(min_value=0, max_value=64),
)
def test_truncation_keeps_a_prefix_and_a_suffix_within_the_limit(text: str, limit: int) -> None:
    result = truncate_middle(text, limit)
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        assert result == text
        return
    head, rest = result.split("\n[... ", 1)
    count, tail = rest.split(" bytes truncated ...]\n", 1)
    assert text.startswith(head)
    assert text.endswith(tail)
    assert len(head.encode()) + len(tail.encode()) <= limit
    assert int(count) == len(data) - len(head.encode()) - len(tail.encode())
    assert result == head + truncate_marker(int(count)) + tail


def test_lone_surrogates_are_replaced_not_raised() -> None:
    assert truncate_middle("00\ud800\U00010000", 6) == "00?" + truncate_marker(4) + ""
