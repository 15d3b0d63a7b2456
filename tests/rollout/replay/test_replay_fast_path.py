"""The replay hot path's own contracts: exact-type checks, the lazy ``History``, the in-place
world-state fold, the block reader, and what a whole-file replay leaves behind (gc state, bad
items).

The end-to-end laws (raw-line loop == classify + fold == typed path, on any bytes) are in
``test_replay_laws.py``.
"""

from __future__ import annotations

import copy
import functools
import gc
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from replay_reference import classified

from mini_codex.jsonmerge import apply_merge_patch
from mini_codex.protocol import (
    Message,
    TurnContextItem,
    assistant_message,
    parse_response_item,
    user_message,
)
from mini_codex.protocol.events import EVENT_MSG_ADAPTER
from mini_codex.protocol.items import RESPONSE_ITEM_ADAPTER
from mini_codex.rollout import ReadStats, iter_raw_lines, replay_file
from mini_codex.rollout.reader import iter_raw_blocks_reverse
from mini_codex.rollout.replay.classify import EVENTS, TURN_CONTEXT_EXACT, message_facts
from mini_codex.rollout.replay.entries import WorldStateEntry, is_user_turn_boundary
from mini_codex.rollout.replay.exact import ITEM_CHECKS, MODELLED_ITEM_TYPES, item_source
from mini_codex.rollout.replay.fast.scan import EVENT_ACTIONS
from mini_codex.rollout.replay.fold import PATCH_WITHOUT_BASELINE, Fold
from mini_codex.rollout.replay.history import History
from mini_codex.rollout.replay.reconstruct import reconstruct_lines

ENV = "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"

# --- exact-type checks ----------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "x", "{}"])
_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=2)
        | st.dictionaries(st.sampled_from(["type", "text", "a"]), children, max_size=2)
    ),
    max_leaves=4,
)
_parts = st.fixed_dictionaries(
    {"type": st.sampled_from(["input_text", "output_text", "input_image", "refusal"])},
    optional={
        "text": st.none() | st.just(ENV) | st.sampled_from(["hi", "{}"]) | st.integers(),
        "image_url": _scalars,
        "detail": _scalars,
    },
)
_FIELDS = {
    "role": st.sampled_from(["user", "assistant", "developer", "tool"]) | _scalars,
    "content": st.lists(_parts | _values, max_size=3) | _values,
    "id": _scalars,
    "summary": st.lists(st.dictionaries(st.just("text"), _scalars), max_size=2) | _values,
    "encrypted_content": _scalars,
    "name": _scalars,
    "arguments": _scalars,
    "call_id": _scalars,
    "input": _scalars,
    "output": st.lists(st.dictionaries(st.just("text"), _scalars), max_size=2) | _values,
    "extra": _values,
}
_item_like = st.builds(
    lambda kind, fields: {"type": kind, **fields},
    st.sampled_from([*sorted(MODELLED_ITEM_TYPES), "web_search_call"]),
    st.dictionaries(st.sampled_from(sorted(_FIELDS)), st.none(), max_size=6).flatmap(
        lambda chosen: st.fixed_dictionaries({name: _FIELDS[name] for name in chosen})
    ),
)


@settings(max_examples=700, deadline=None)
@given(payload=_item_like)
def test_an_item_the_exact_check_accepts_validates_as_is(payload: dict[str, Any]) -> None:
    """The premise of the lazy history: a kept raw item never fails when it is read, and its
    raw JSON is its ``to_json()``."""
    check = ITEM_CHECKS.get(payload["type"])
    source = item_source(payload)
    try:
        validated = RESPONSE_ITEM_ADAPTER.validate_python(payload)
    except ValueError:
        validated = None

    if check is not None and check(payload):
        assert validated is not None
        assert validated.to_json() == payload
    if source is payload:
        assert validated is not None
        assert validated.to_json() == payload
    else:  # not proven: pydantic decided
        assert source == validated


_EVENT_FIELDS = {
    "turn_id": _scalars,
    "model_context_window": _scalars,
    "last_agent_message": _scalars,
    "reason": _scalars,
    "message": _scalars,
    "images": _values,
    "num_turns": _scalars,
    "info": _values,
    "rate_limits": _values,
}


@settings(max_examples=400, deadline=None)
@given(
    kind=st.sampled_from(sorted(EVENTS)),
    fields=st.dictionaries(st.sampled_from(sorted(_EVENT_FIELDS)), st.none(), max_size=3).flatmap(
        lambda chosen: st.fixed_dictionaries({name: _EVENT_FIELDS[name] for name in chosen})
    ),
)
def test_an_event_the_exact_check_accepts_validates_as_is(
    kind: str, fields: dict[str, Any]
) -> None:
    payload = {"type": kind, **fields}
    exact, _ = EVENTS[kind]

    if exact is not None and exact(payload):
        assert EVENT_MSG_ADAPTER.validate_python(payload).to_json() == payload


@settings(max_examples=300, deadline=None)
@given(
    fields=st.dictionaries(
        st.sampled_from(
            ["turn_id", "cwd", "model", "realtime_active", "sandbox_policy", "effort", "x"]
        ),
        _values,
        max_size=5,
    )
)
def test_a_turn_context_the_exact_check_accepts_validates_as_is(fields: dict[str, Any]) -> None:
    assert TURN_CONTEXT_EXACT is not None
    if TURN_CONTEXT_EXACT(fields):
        assert TurnContextItem.model_validate(fields).to_json() == fields


def test_every_modelled_item_has_a_current_exact_check() -> None:
    """If a protocol change retires a check, replay stays correct but loses its fast path."""
    assert set(ITEM_CHECKS) == MODELLED_ITEM_TYPES


def test_the_hot_loop_acts_on_exactly_the_events_classify_builds_entries_for() -> None:
    built = {kind for kind, (_, builder) in EVENTS.items() if builder is not None}

    assert set(EVENT_ACTIONS) == built
    assert all(exact is not None for exact, _ in EVENTS.values())


_messages = st.fixed_dictionaries(
    {"type": st.just("message"), "role": _FIELDS["role"], "content": _FIELDS["content"]},
    optional={"id": _scalars},
)


@settings(max_examples=400, deadline=None)
@given(payload=_messages)
def test_message_facts_follow_the_typed_boundary_rule(payload: dict[str, Any]) -> None:
    facts = message_facts(payload)
    try:
        item = parse_response_item(payload)
    except ValueError:
        return
    if facts is None:  # the shape check is stricter than pydantic only for unvalidated parts
        return
    boundary, closer, exact = facts
    assert isinstance(item, Message)

    assert boundary == is_user_turn_boundary(item)
    assert closer == (not boundary and item.role not in {"user", "developer", "system"})
    if exact:
        assert item.to_json() == payload


# --- History --------------------------------------------------------------------------------------


def _line(item: dict[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": "t", "type": "response_item", "payload": item}) + b"\n"


def test_history_validates_items_only_when_read() -> None:
    broken = {"type": "function_call", "name": "sh"}  # missing fields: never proven valid
    history = History([_line(user_message("hi").to_json()), broken])

    assert history[0] == user_message("hi")
    assert len(history) == 2
    with pytest.raises(ValueError, match="arguments"):
        history[1]  # a source the fold never produces: validation runs only here


def test_history_equals_the_tuple_it_stands_for() -> None:
    items = (user_message("hi"), assistant_message("hello"))
    lazy = History([_line(item.to_json()) for item in items])

    assert lazy == items
    assert items == lazy
    assert lazy == History.of(items)
    assert lazy != list(items)
    assert lazy[1:] == History.of(items[1:])
    assert list(reversed(lazy)) == list(reversed(items))
    for value in (lazy, items):  # messages hold lists: neither hashes
        with pytest.raises(TypeError, match="unhashable"):
            hash(value)
    assert repr(lazy) == f"History({items!r})"


def test_history_json_needs_no_validation_and_equals_the_items_json() -> None:
    items = [user_message("hi").to_json(), {"type": "web_search_call", "status": "completed"}]
    lazy = History([_line(items[0]), items[1], assistant_message("a")])

    first = lazy.to_json()
    lazy[0]  # a read item is emitted from its model, an unread one from its JSON

    assert first == lazy.to_json() == [*items, assistant_message("a").to_json()]
    assert lazy.to_json()[1] is not items[1]  # a fresh copy, never the kept object


# --- world state ----------------------------------------------------------------------------------

_patch_values = st.recursive(
    st.none() | st.integers(0, 3) | st.sampled_from(["a", "b"]) | st.lists(st.integers(0, 2)),
    lambda children: st.dictionaries(st.sampled_from(["x", "y", "z"]), children, max_size=3),
    max_leaves=8,
)
_objects = st.dictionaries(st.sampled_from(["x", "y", "z"]), _patch_values, max_size=3)


@settings(max_examples=150, deadline=None)
@given(base=_objects, patches=st.lists(_objects, max_size=5))
def test_world_state_fold_equals_applying_each_patch(
    base: dict[str, Any], patches: list[dict[str, Any]]
) -> None:
    fold = Fold(early_exit=False)
    fold.world_state = [*reversed(patches), WorldStateEntry(True, base)]
    before = copy.deepcopy((base, patches))

    result = fold.replay_world_state()

    assert result == functools.reduce(apply_merge_patch, patches, base)
    assert (base, patches) == before  # inputs untouched
    assert fold.warnings == []


def test_patches_without_a_baseline_only_warn() -> None:
    fold = Fold(early_exit=False)
    fold.world_state = [{"x": 2}, WorldStateEntry(True, {"x": 1}), {"y": 1}]

    assert fold.replay_world_state() == {"x": 2}
    assert fold.warnings == [PATCH_WITHOUT_BASELINE]


# --- blocks and files -----------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=30).map(lambda raw: raw.replace(b"\n", b"")), max_size=10),
    terminated=st.booleans(),
    block_size=st.integers(min_value=1, max_value=48),
)
def test_blocks_hold_the_file_lines_newest_first_with_their_newlines(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], terminated: bool, block_size: int
) -> None:
    path = tmp_path_factory.mktemp("blocks") / "rollout.jsonl"
    data = b"\n".join(lines) + (b"\n" if terminated and lines else b"")
    path.write_bytes(data)

    read = [line for block in iter_raw_blocks_reverse(path, block_size) for line in block]

    expected = [line + b"\n" for line in data.split(b"\n")]
    expected[-1] = expected[-1][:-1]  # after the last newline (or the whole unterminated line)

    assert read == [line for line in expected if line][::-1]


def _write(path: Path, items: list[dict[str, Any]]) -> Path:
    meta = {"timestamp": "t", "type": "session_meta", "payload": {"id": "thread"}}
    path.write_bytes(orjson.dumps(meta) + b"\n" + b"".join(_line(item) for item in items))
    return path


def test_a_kept_item_that_does_not_validate_is_a_bad_line_when_replayed(tmp_path: Path) -> None:
    """Right shape, wrong field type: found when classified, reported when the fold keeps it."""
    bad = {"type": "function_call", "name": "sh", "arguments": 1, "call_id": "c"}
    path = _write(tmp_path / "r.jsonl", [user_message("hi").to_json(), bad])

    result = replay_file(path)

    assert result.history == (user_message("hi"),)
    assert result.stats == ReadStats(lines=3, bad_lines=1)
    assert result.warnings == (
        "1 line(s) could not be decoded and were skipped",
        "skipped a response item that does not decode",
    )


def test_replay_restores_the_collector_state(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", [user_message("hi").to_json()])
    enabled = gc.isenabled()
    try:
        gc.enable()
        replay_file(path)
        assert gc.isenabled()
        gc.disable()
        replay_file(path)
        assert not gc.isenabled()
    finally:
        if enabled:
            gc.enable()


def test_whitespace_and_blank_lines_replay_like_their_stripped_text(tmp_path: Path) -> None:
    items = [user_message("hi").to_json(), assistant_message("hello").to_json()]
    plain = _write(tmp_path / "plain.jsonl", items)
    lines = plain.read_bytes().splitlines()
    messy = tmp_path / "messy.jsonl"
    messy.write_bytes(b"\r\n".join([lines[0], b"", b"  ", b"\x0c" + lines[1], lines[2] + b"\t"]))

    assert [raw for _, raw in iter_raw_lines(messy)] == lines
    assert replay_file(messy) == replay_file(plain)


_ENVELOPE_VALUES = st.none() | st.booleans() | st.integers(-5, 5) | st.text() | st.just([])
_LINE_TYPES = st.sampled_from(
    ["token_usage_record", "inter_agent_communication", "event_msg", "response_item", "compacted",
     "world_state", "turn_context", "session_meta", ""]
) | _ENVELOPE_VALUES  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    timestamp=st.just("2026-01-01T00:00:00.000Z") | _ENVELOPE_VALUES,
    kind=_LINE_TYPES,
    payload=_ENVELOPE_VALUES | st.dictionaries(st.sampled_from(["type", "x"]), _ENVELOPE_VALUES),
    ordinal=st.booleans(),
)
def test_any_envelope_replays_like_classify_then_fold(
    timestamp: Any, kind: Any, payload: Any, ordinal: bool
) -> None:
    """The hot loop's shortcuts for lines replay ignores (unknown line types, counted) agree
    with ``classify`` on any envelope, with or without Codex's ``ordinal``."""
    line: dict[str, Any] = {"timestamp": timestamp, **({"ordinal": 3} if ordinal else {})}
    line |= {"type": kind, "payload": payload}
    turn = [
        {"timestamp": "t", "type": "event_msg", "payload": {"type": "task_started"}},
        line,
        {"timestamp": "t", "type": "token_usage_record", "payload": {}},
    ]
    data = b"".join(orjson.dumps(obj) + b"\n" for obj in turn)
    got = reconstruct_lines(
        iter([data.splitlines(keepends=True)[::-1]]),
        early_exit=False,
        stats=ReadStats(),
        count_all=True,
    )
    want = classified(data)
    assert (got.stats, got.warnings, got.history.to_json(), got.world_state) == (
        want.stats,
        want.warnings,
        [item.to_json() for item in want.history],
        want.world_state,
    )
