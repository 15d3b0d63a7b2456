"""World-state hashes (spec §1.6, §7.1 case 1)."""

from __future__ import annotations

import hashlib
import struct

from mini_codex.jsonmerge import Json
from mini_codex.world_state import Fragment, fragment_hash, json_hash


def test_world_state_hash_normalizes_crlf_line_endings() -> None:
    crlf = Fragment("user", "", "", "line one\r\nline two")
    lf = Fragment("user", "", "", "line one\nline two")

    assert fragment_hash(crlf.role, crlf.text) == fragment_hash(lf.role, lf.text)
    assert fragment_hash("user", "line one\r\nline two") != fragment_hash("user", "line one")


def test_fragment_hash_is_sha1_of_the_length_prefixed_domain_tagged_input() -> None:
    role = "developer"
    text = "<permissions instructions>\r\nsandbox: élevé ✓\n</permissions instructions>"
    text_bytes = text.replace("\r\n", "\n").encode("utf-8")
    data = (
        b"codex-world-state-fragment-v1\x00"
        + struct.pack(">Q", 9)
        + b"developer"
        + struct.pack(">Q", len(text_bytes))
        + text_bytes
    )

    result = fragment_hash(role, text)

    assert len(text_bytes) > len(text.replace("\r\n", "\n"))  # lengths count bytes, not chars
    assert result == hashlib.sha1(data).hexdigest()
    assert result == result.lower()
    assert len(result) == 40


def test_fragment_hash_separates_role_and_text() -> None:
    assert fragment_hash("user", "xtext") != fragment_hash("userx", "text")


def test_json_hash_is_sha1_of_compact_key_sorted_json() -> None:
    value: Json = {"b": [1, {"d": None, "c": "é"}], "a": True}

    expected = hashlib.sha1('{"a":true,"b":[1,{"c":"é","d":null}]}'.encode()).hexdigest()

    assert json_hash(value) == expected


def test_json_hash_ignores_object_key_order() -> None:
    assert json_hash({"a": 1, "b": {"x": 1, "y": 2}}) == json_hash({"b": {"y": 2, "x": 1}, "a": 1})
    assert json_hash({"a": 1}) != json_hash({"a": True})
