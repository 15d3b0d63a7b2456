"""Head + tail truncation of tool output (pure), UTF-8 safe.

A text longer than the byte limit keeps its first half and its last half (of the limit, in
UTF-8 bytes, never splitting a character) around a marker that says how much was dropped::

    <head>
    [... 12345 bytes truncated ...]
    <tail>

The marker is not counted in the limit. ``already_omitted`` adds bytes dropped earlier (for
example by bounded capture in ``sandbox/exec.py``) to the count, and forces a marker even when the
rest fits. This lives in ``tools/`` because only tools truncate today; history truncation policy
(``context/``) may reuse it.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_OUTPUT_LIMIT_BYTES",
    "truncate_marker",
    "truncate_middle",
    "truncate_middle_bytes",
]

DEFAULT_OUTPUT_LIMIT_BYTES = 10 * 1024


def truncate_marker(omitted: int) -> str:
    return f"\n[... {omitted} bytes truncated ...]\n"


def _char_start(data: bytes, index: int) -> int:
    """The largest index <= ``index`` that does not point inside a UTF-8 sequence."""
    while 0 < index < len(data) and (data[index] & 0xC0) == 0x80:
        index -= 1
    return index


def _char_end(data: bytes, index: int) -> int:
    """The smallest index >= ``index`` that does not point inside a UTF-8 sequence."""
    while 0 < index < len(data) and (data[index] & 0xC0) == 0x80:
        index += 1
    return index


def truncate_middle_bytes(data: bytes, limit: int, *, already_omitted: int = 0) -> str:
    """Decode ``data`` (UTF-8, invalid bytes replaced) keeping at most ``limit`` bytes of it."""
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if len(data) <= limit:
        if already_omitted == 0:
            return data.decode("utf-8", "replace")
        half = _char_start(data, len(data) // 2)
        head, tail = data[:half], data[half:]
    else:
        head_end = _char_start(data, limit // 2)
        tail_start = _char_end(data, len(data) - (limit - limit // 2))
        head, tail = data[:head_end], data[tail_start:]
    omitted = len(data) - len(head) - len(tail) + already_omitted
    return (
        head.decode("utf-8", "replace") + truncate_marker(omitted) + tail.decode("utf-8", "replace")
    )


def truncate_middle(text: str, limit: int, *, already_omitted: int = 0) -> str:
    """``text`` with its middle replaced by a marker if it is longer than ``limit`` UTF-8 bytes."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit and already_omitted == 0:
        return text
    return truncate_middle_bytes(data, limit, already_omitted=already_omitted)
