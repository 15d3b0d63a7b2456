"""World-state hashes (spec/codex-worldstate.md §1.6).

What belongs here: the fingerprints sections store instead of large instruction texts
(``permissions``, ``collaboration_mode``, ...): :func:`fragment_hash` over a rendered fragment, and
:func:`json_hash` over a JSON value. Both are persisted in rollouts, so every byte of their input
is part of the format: changing any of it forces a re-render after an upgrade.
"""

from __future__ import annotations

import hashlib

import orjson

from mini_codex.jsonmerge import Json

__all__ = ["FRAGMENT_HASH_DOMAIN", "fragment_hash", "json_hash"]

FRAGMENT_HASH_DOMAIN: bytes = b"codex-world-state-fragment-v1\x00"
"""The ASCII domain tag plus one NUL byte that starts every fragment hash input."""


def _component(value: str) -> bytes:
    data = value.replace("\r\n", "\n").encode("utf-8")
    return len(data).to_bytes(8, "big") + data


def fragment_hash(role: str, text: str) -> str:
    """The lowercase-hex SHA-1 of a fragment's role and rendered text (markers + body).

    Input: the domain tag, then role and text, each with CRLF normalised to LF and fed as an
    8-byte big-endian length followed by its UTF-8 bytes.
    """
    data = FRAGMENT_HASH_DOMAIN + _component(role) + _component(text)
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def json_hash(value: Json) -> str:
    """The lowercase-hex SHA-1 of ``value`` as compact JSON with every object's keys sorted.

    Key order therefore does not matter; non-ASCII text is hashed as raw UTF-8 (not escaped),
    like serde_json's compact writer.
    """
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()
