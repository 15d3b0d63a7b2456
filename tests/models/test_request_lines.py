"""``encoded_request_line``: a rollout line's request bytes, read straight from the line, are the
bytes the general path (``encoded_request_json`` of the parsed payload) gives, or None.

Law: for any ``response_item`` line ``orjson`` parses (keys in any order, any text, extra
fields, nulls, duplicated keys), ``encoded_request_line(line)`` is None or
``encoded_request_json(orjson.loads(line)["payload"])``; and it is not None for the common
well-formed items (the fast path is the one a resume takes). Checked also over every item of
the real Codex rollouts and of a rollout the side-by-side benchmark generates.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_codex.models.openai_responses import encoded_request_json
from mini_codex.models.request_lines import encoded_request_line, encoded_request_lines
from mini_codex.rollout.resume import replay_file

REPO = Path(__file__).resolve().parents[2]
TEXT = st.text(max_size=12) | st.sampled_from(['é "q" \\ \n\t\x00\x1f\x7f 中文 😀 \u2028', ""])
VALUE = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT
EXTRA = st.dictionaries(st.sampled_from(["id", "status", "metadata", "x"]), VALUE, max_size=2)


def _any_order(value: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.permutations(list(value.items())).map(dict)


def _maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field's value, sometimes of the wrong type or null (the fast path must refuse it)."""
    return value | st.none() | st.integers() | st.lists(TEXT, max_size=1)


PART = st.fixed_dictionaries(
    {"type": st.sampled_from(["input_text", "output_text", "input_image", "refusal"])},
    optional={"text": _maybe(TEXT), "annotations": st.just([]), "image_url": TEXT},
).flatmap(_any_order)

ITEM = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("message"), "role": _maybe(st.sampled_from(["user", "assistant"]))},
        optional={"content": _maybe(st.lists(PART, max_size=3)), "phase": _maybe(TEXT)},
    ),
    st.fixed_dictionaries(
        {"type": st.just("function_call"), "name": _maybe(TEXT), "arguments": _maybe(TEXT),
         "call_id": _maybe(TEXT)},
        optional={"namespace": _maybe(TEXT)},
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["function_call_output", "custom_tool_call_output"]),
         "call_id": _maybe(TEXT), "output": _maybe(TEXT)},
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["reasoning", "custom_tool_call", "future_item"])},
        optional={"summary": st.just([]), "encrypted_content": TEXT, "input": TEXT},
    ),
).flatmap(lambda item: EXTRA.map(lambda extra: {**extra, **item})).flatmap(_any_order)  # fmt: skip


def _line(payload: bytes, ordinal: bool = False) -> bytes:
    head = b'{"timestamp":"2026-01-01T00:00:00.000Z",'
    return (
        head
        + (b'"ordinal":7,' if ordinal else b"")
        + b'"type":"response_item","payload":'
        + (payload + b"}")
    )


def assert_batch_agrees(lines: list[bytes]) -> bytes | None:
    """The batch is every line's bytes comma-joined, or None when one line is not taken."""
    each = [encoded_request_line(line) for line in lines]
    joined = encoded_request_lines(lines)
    assert joined == (None if None in each else b",".join(each))  # type: ignore[arg-type]
    return joined


def assert_agrees(line: bytes) -> bytes | None:
    fast = encoded_request_line(line)
    if fast is not None:
        assert fast == encoded_request_json(orjson.loads(line)["payload"])
    return fast


@settings(max_examples=400, deadline=None)
@given(item=ITEM, ordinal=st.booleans(), ascii_only=st.booleans())
def test_any_line_encodes_like_its_parsed_payload(
    item: dict[str, Any], ordinal: bool, ascii_only: bool
) -> None:
    payload = json.dumps(item, ensure_ascii=ascii_only).encode()
    assert_agrees(_line(payload, ordinal))


@settings(max_examples=200, deadline=None)
@given(items=st.lists(ITEM, max_size=6), common=st.lists(st.integers(0, 5), max_size=6))
def test_a_batch_of_lines_encodes_like_each_line(
    items: list[dict[str, Any]], common: list[int]
) -> None:
    lines = [_line(json.dumps(item).encode()) for item in items]
    lines += [_line(json.dumps(COMMON[index]).encode()) for index in common]
    assert_batch_agrees(lines)
    assert_batch_agrees([_line(json.dumps(COMMON[index]).encode()) for index in common])


@given(item=ITEM, key=st.sampled_from(["type", "role", "name", "call_id", "output", "text"]))
def test_a_duplicated_key_keeps_its_last_value_as_orjson_does(
    item: dict[str, Any], key: str
) -> None:
    payload = json.dumps(item).encode()
    for value in (b'"x"', b"null", b'"message"', b'"function_call"'):
        assert_agrees(_line(b'{"%s":%s,%s' % (key.encode(), value, payload[1:])))
        assert_agrees(_line(b'%s,"%s":%s}' % (payload[:-1], key.encode(), value)))


COMMON = [
        {"type": "message", "id": "m", "role": "user", "content": [
            {"type": "input_text", "text": "hi"}, {"type": "input_text"}]},
        {"type": "message", "role": "assistant", "phase": "final_answer", "content": [
            {"type": "output_text", "text": "ok", "annotations": []}]},
        {"type": "function_call", "id": "fc", "status": "completed", "name": "exec_command",
         "arguments": "{}", "call_id": "c1"},
        {"type": "function_call", "name": "x", "namespace": "mcp", "arguments": "{}",
         "call_id": "c2"},
        {"type": "function_call_output", "call_id": "c1", "output": "done"},
        {"type": "custom_tool_call_output", "call_id": "c3", "output": "patched"},
]  # fmt: skip


def test_the_common_items_take_the_fast_path() -> None:
    for item in COMMON:
        assert assert_agrees(_line(json.dumps(item).encode())) is not None, item
    for item in (
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_image"}]},
        {"type": "reasoning", "summary": [], "encrypted_content": "e"},
    ):
        assert encoded_request_line(_line(json.dumps(item).encode())) is None, item


def _replayed_lines(path: Path) -> list[bytes]:
    history = replay_file(path).history
    return [line for index in range(len(history)) if (line := history.line_at(index)) is not None]


SHARED = Path("/work/shared/codex-rollouts")
CORPUS = sorted((REPO / "tests" / "fixtures" / "rollouts" / "codex").glob("*.jsonl")) + sorted(
    SHARED.glob("*.jsonl")
)


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_item_of_a_real_rollout_encodes_like_its_parsed_payload(path: Path) -> None:
    lines = _replayed_lines(path)
    encoded = [encoded_request_line(line) for line in lines]
    assert_batch_agrees(lines)
    expected = [encoded_request_json(orjson.loads(line)["payload"]) for line in lines]
    assert [
        fast if fast is not None else want for fast, want in zip(encoded, expected, strict=True)
    ] == expected


def test_a_generated_long_rollout_takes_the_fast_path_for_every_item(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    sys.path.insert(0, str(REPO / "tests" / "models"))
    from codex_side_by_side import make_rollout

    path = tmp_path / "rollout.jsonl"
    make_rollout(path, 2000)
    lines = _replayed_lines(path)
    assert len(lines) > 500
    assert [encoded_request_line(line) for line in lines] == [
        encoded_request_json(orjson.loads(line)["payload"]) for line in lines
    ]
    assert assert_batch_agrees(lines) is not None
