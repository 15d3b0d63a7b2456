"""The typed line decoders (``typed_lines.py``): they only ever take lines the orjson path takes,
with equal values, so replay results never depend on which path a line went through.

Each case is checked two ways: the one-sided contract itself (a decoder accepts ⇒ orjson parses
the line and the dict-based exact check passes, with equal values where replay reads them) and
the whole scan (``reconstruct_lines``, which routes lines to the decoders) against the reference
path (strip, ``orjson.loads``, ``classify``, fold) on a small rollout holding the line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from replay_reference import classified

from mini_codex.protocol import TurnContextItem
from mini_codex.rollout import Reconstructed
from mini_codex.rollout.reader import iter_raw_blocks_reverse
from mini_codex.rollout.replay import reconstruct_lines
from mini_codex.rollout.replay.classify import EVENTS, TURN_CONTEXT_EXACT
from mini_codex.rollout.replay.exact import ITEM_CHECKS, ITEM_FIELDS, exact_field_spec
from mini_codex.rollout.replay.fast.typed_lines import (
    DECODE_REFUSED,
    EVENT_HINT,
    HINT_SLICE,
    ITEM_HINT,
    TURN_CONTEXT_HINT,
    WORLD_STATE_HINT,
    TypedDecoders,
    decoders_for,
    typed_decoders,
)
from mini_codex.rollout.replay.lines import ReadStats

STAMP = "2026-08-22T00:00:00.000Z"
HINTS = {
    "response_item": ITEM_HINT,
    "event_msg": EVENT_HINT,
    "world_state": WORLD_STATE_HINT,
    "turn_context": TURN_CONTEXT_HINT,
}


def envelope(kind: str, payload: bytes, extra: bytes = b"") -> bytes:
    return b'{"timestamp":"%s","type":"%s","payload":%s%s}' % (
        STAMP.encode(),
        kind.encode(),
        payload,
        extra,
    )


def typed(raw: bytes) -> Any:
    """The decoded line, or None when the decoders refuse it (or the hint picks none)."""
    decoders = typed_decoders()
    decode = {
        ITEM_HINT: decoders.decode_item,
        EVENT_HINT: decoders.decode_event,
        WORLD_STATE_HINT: decoders.decode_world_state,
        TURN_CONTEXT_HINT: decoders.decode_turn_context,
    }.get(raw[HINT_SLICE])
    if decode is None:
        return None
    try:
        return decode(raw)
    except DECODE_REFUSED:
        return None


def exact_json(value: Any) -> str:
    """JSON text that tells 1 from 1.0 and keeps key order (equal values, equal types)."""
    return json.dumps(value, allow_nan=True)


def assert_contract(raw: bytes) -> bool:
    """The one-sided contract for ``raw``; True when a decoder took the line."""
    line = typed(raw)
    if line is None:
        return False
    parsed = orjson.loads(raw)  # raises: the decoder took a line orjson refuses
    assert parsed["timestamp"] == line.timestamp
    assert parsed["type"] == line.type
    payload = parsed["payload"]
    if line.type == "response_item":
        assert ITEM_CHECKS[payload["type"]](payload)
    elif line.type == "event_msg":
        exact, _ = EVENTS[payload["type"]]
        assert exact is not None
        assert exact(payload)
        for field in ("turn_id", "num_turns"):
            if hasattr(line.payload, field):
                assert exact_json(getattr(line.payload, field)) == exact_json(payload.get(field))
    elif line.type == "world_state":
        assert exact_json(payload) == exact_json(
            {"full": line.payload.full, "state": line.payload.state}
        )
    else:
        assert TURN_CONTEXT_EXACT is not None
        assert TURN_CONTEXT_EXACT(payload)
        for field in ("turn_id", "model", "comp_hash", "realtime_active"):
            assert exact_json(getattr(line.payload, field)) == exact_json(payload.get(field))
    return True


def scanned(data: bytes) -> Reconstructed:
    blocks = [data.splitlines(keepends=True)[::-1]]
    return reconstruct_lines(iter(blocks), early_exit=False, stats=ReadStats(), count_all=True)


def assert_scan_matches_reference(line: bytes) -> None:
    """``line`` inside a turn: the scan (typed decoders first) equals the reference path."""
    data = b"\n".join(
        [
            envelope("event_msg", b'{"type":"task_started","turn_id":"t1"}'),
            envelope(
                "response_item",
                b'{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}',
            ),
            envelope("world_state", b'{"full":true,"state":{"model":{"name":"m"}}}'),
            line,
            envelope("event_msg", b'{"type":"task_complete","turn_id":"t1"}'),
        ]
    )
    got, want = scanned(data), classified(data)
    assert (got.history.to_json(), exact_json(got.world_state)) == (
        want.history.to_json(),
        exact_json(want.world_state),
    )
    assert (got.reference_context, got.previous_turn_settings, got.window) == (
        want.reference_context,
        want.previous_turn_settings,
        want.window,
    )
    assert (got.stats, got.warnings) == (want.stats, want.warnings)


# --- the decoders follow the protocol ------------------------------------------------------------


def test_every_current_exact_check_has_a_typed_decoder() -> None:
    decoders = typed_decoders()

    assert set(decoders.items.values()) == set(ITEM_FIELDS) == set(ITEM_CHECKS)
    assert set(decoders.events.values()) == {
        kind for kind, (exact, _) in EVENTS.items() if exact is not None
    }


def test_the_lines_mini_codex_writes_take_the_typed_path(tmp_path: Path) -> None:
    """A real session's rollout (the README demo): every line of the four common kinds is taken
    by its decoder, so the fast path is the one a real replay uses."""
    root = Path(__file__).resolve().parents[3]
    cli = Path(sys.executable).parent / "mini-codex"
    env = {**os.environ, "MINI_CODEX_HOME": str(tmp_path / "home")}
    env.pop("OPENAI_API_KEY", None)
    workspace = tmp_path / "work"
    workspace.mkdir()
    command = [str(cli), "exec", "--model", "scripted:examples/demo.jsonl"]
    subprocess.run(
        [*command, "--cd", str(workspace), "create hello.py and run it"],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
        timeout=120,
    )
    (rollout,) = (tmp_path / "home" / "sessions").rglob("rollout-*.jsonl")
    kinds = []
    for raw in rollout.read_bytes().splitlines():
        kind = orjson.loads(raw)["type"]
        kinds.append(kind)
        if kind in HINTS:
            assert raw[HINT_SLICE] == HINTS[kind]
            assert assert_contract(raw), raw[:120]

    assert {"response_item", "event_msg", "world_state", "turn_context"} <= set(kinds)


# --- where the two parsers differ ----------------------------------------------------------------

_CALL = b'"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"'
_DIVERGENT = {
    "plain call": envelope("response_item", b"{%s}" % _CALL),
    "invalid UTF-8 in an extra": envelope("response_item", b'{%s,"status":"\xff"}' % _CALL),
    "overlong UTF-8 in a field": envelope(
        "response_item", b'{"type":"function_call","name":"\xc0\xaf","arguments":"","call_id":"c"}'
    ),
    "lone surrogate escape": envelope("response_item", b'{%s,"status":"\\ud800"}' % _CALL),
    "float overflow in an extra": envelope("response_item", b'{%s,"status":1e400}' % _CALL),
    "400-digit integer in an extra": envelope(
        "response_item", b'{%s,"status":%s}' % (_CALL, b"9" * 400)
    ),
    "25-digit integer in an extra": envelope(
        "response_item", b'{%s,"status":%s}' % (_CALL, b"9" * 25)
    ),
    "400-digit integer in a summary part": envelope(
        "response_item",
        b'{"type":"reasoning","summary":[{"type":"summary_text","n":%s}]}' % (b"9" * 400),
    ),
    "deep nesting in an extra": envelope(
        "response_item", b'{%s,"status":%s%s}' % (_CALL, b"[" * 1100, b"]" * 1100)
    ),
    "duplicate field, first of the wrong type": envelope(
        "response_item", b'{%s,"name":5,"name":"shell"}' % _CALL
    ),
    "duplicate field, last of the wrong type": envelope(
        "response_item", b'{%s,"name":"shell","name":5}' % _CALL
    ),
    "duplicate item type": envelope("response_item", b'{%s,"type":"reasoning"}' % _CALL),
    "duplicate line type": envelope("response_item", b"{%s}" % _CALL, b',"type":"event_msg"'),
    "duplicate payload": envelope("response_item", b"{%s}" % _CALL, b',"payload":1'),
    "escaped key": envelope(
        "response_item",
        b'{"type":"function_call","n\\u0061me":"x","arguments":"{}","call_id":"c1"}',
    ),
    "escaped tag": envelope(
        "response_item", b'{"type":"function\\u005fcall","name":"x","arguments":"","call_id":"c"}'
    ),
    "unknown field": envelope("response_item", b'{%s,"surprise":true}' % _CALL),
    "control character": envelope("response_item", b'{%s,"status":"a\x01b"}' % _CALL),
    "NaN": envelope("response_item", b'{%s,"status":NaN}' % _CALL),
    "trailing garbage": envelope("response_item", b"{%s}" % _CALL) + b"x",
    "form feed after the line": envelope("response_item", b"{%s}" % _CALL) + b"\x0c",
    "spaces after the line": envelope("response_item", b"{%s}" % _CALL) + b"  ",
    "rollback beyond 64 bits": envelope(
        "event_msg", b'{"type":"thread_rolled_back","num_turns":%d}' % 2**64
    ),
    "rollback at 2**63": envelope(
        "event_msg", b'{"type":"thread_rolled_back","num_turns":%d}' % 2**63
    ),
    "rollback as a float": envelope("event_msg", b'{"type":"thread_rolled_back","num_turns":1.0}'),
    "rollback as a bool": envelope("event_msg", b'{"type":"thread_rolled_back","num_turns":true}'),
    "turn id as a number": envelope("event_msg", b'{"type":"task_started","turn_id":7}'),
    "unknown event": envelope("event_msg", b'{"type":"agent_reasoning","text":"x"}'),
    "token count with big numbers": envelope(
        "event_msg", b'{"type":"token_count","info":{"n":%s},"rate_limits":null}' % (b"9" * 30)
    ),
    "world state with an int beyond 64 bits": envelope(
        "world_state", b'{"full":false,"state":{"model":{"n":%d}}}' % 2**64
    ),
    "world state with -0.0 and 1E5": envelope(
        "world_state", b'{"full":false,"state":{"model":{"a":-0.0,"b":1E5,"c":-0}}}'
    ),
    "world state nested deeply": envelope(
        "world_state", b'{"full":false,"state":{"model":%s1%s}}' % (b"[" * 12, b"]" * 12)
    ),
    "world state with an extra field": envelope(
        "world_state", b'{"full":false,"state":{},"note":"x"}'
    ),
    "world state full as a number": envelope("world_state", b'{"full":1,"state":{}}'),
    "turn context with a big integer": envelope(
        "turn_context", b'{"turn_id":"t1","model":"m","summary":%s}' % (b"9" * 30)
    ),
    "turn context with a wrong type": envelope("turn_context", b'{"turn_id":"t1","model":5}'),
    "timestamp of another length": b'{"timestamp":"2026-08-22T00:00:00Z","type":"response_item",'
    b'"payload":{%s}}' % _CALL,
}


@pytest.mark.parametrize("name", list(_DIVERGENT))
def test_a_decoder_never_takes_what_the_orjson_path_would_decide_otherwise(name: str) -> None:
    raw = _DIVERGENT[name]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)  # a raised limit must not let deeper nesting through
    try:
        assert_contract(raw)
    finally:
        sys.setrecursionlimit(limit)
    assert_scan_matches_reference(raw)


def test_the_typed_path_takes_the_common_cases() -> None:
    """The table above is not vacuous: the well-formed cases do take the typed path."""
    taken = {name for name, raw in _DIVERGENT.items() if typed(raw) is not None}

    assert taken == {
        "plain call",
        "25-digit integer in an extra",
        "spaces after the line",
        "escaped key",
        "escaped tag",
        "token count with big numbers",
        "world state with -0.0 and 1E5",
        "turn context with a big integer",  # in a field that takes any value
    }


# --- any payload ----------------------------------------------------------------------------------

_numbers = st.one_of(
    st.integers(),
    st.integers(min_value=2**62, max_value=2**66),
    st.integers(min_value=-(2**66), max_value=-(2**62)),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=300, max_value=320).map(lambda digits: int("9" * digits)),
)
_scalars = st.one_of(st.none(), st.booleans(), st.text(max_size=4), _numbers)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


def _field_names() -> list[str]:
    decoders = typed_decoders()
    structs = [*decoders.items, *decoders.events]
    names = {field for struct in structs for field in struct.__struct_fields__}
    names |= set(exact_field_spec(TurnContextItem) or {})
    return sorted(names | {"unknown", "text", "role", "content", "workspace_roots"})


_payload_fields = st.dictionaries(st.sampled_from(_field_names()), _values, max_size=5)
_item_kinds = st.sampled_from(sorted(ITEM_FIELDS))
_event_kinds = st.sampled_from(sorted(kind for kind, (exact, _) in EVENTS.items() if exact))


@settings(max_examples=400, deadline=None)
@given(kind=_item_kinds, fields=_payload_fields)
def test_any_item_payload_keeps_the_contract(kind: str, fields: dict[str, Any]) -> None:
    payload = json.dumps({"type": kind, **fields}).encode()
    raw = envelope("response_item", payload)

    assert_contract(raw)
    assert_scan_matches_reference(raw)


@settings(max_examples=400, deadline=None)
@given(kind=_event_kinds, fields=_payload_fields)
def test_any_event_payload_keeps_the_contract(kind: str, fields: dict[str, Any]) -> None:
    raw = envelope("event_msg", json.dumps({"type": kind, **fields}).encode())

    assert_contract(raw)
    assert_scan_matches_reference(raw)


@settings(max_examples=300, deadline=None)
@given(full=st.one_of(st.booleans(), _scalars), state=st.dictionaries(st.text(max_size=3), _values))
def test_any_world_state_keeps_the_contract(full: Any, state: dict[str, Any]) -> None:
    raw = envelope("world_state", json.dumps({"full": full, "state": state}).encode())

    assert_contract(raw)
    assert_scan_matches_reference(raw)


@settings(max_examples=300, deadline=None)
@given(fields=_payload_fields)
def test_any_turn_context_keeps_the_contract(fields: dict[str, Any]) -> None:
    raw = envelope("turn_context", json.dumps(fields).encode())

    assert_contract(raw)
    assert_scan_matches_reference(raw)


def test_a_whole_file_replays_the_same_through_either_path(tmp_path: Path) -> None:
    """Every divergent line in one file, read backwards in small blocks like a real replay."""
    data = b"\n".join(_DIVERGENT.values()) + b"\n"
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(data)

    got = reconstruct_lines(
        iter_raw_blocks_reverse(path, 512), early_exit=False, stats=ReadStats(), count_all=True
    )
    want = classified(data)

    assert (got.history.to_json(), exact_json(got.world_state), got.stats) == (
        want.history.to_json(),
        exact_json(want.world_state),
        want.stats,
    )


# --- files Codex wrote: no typed decoding ---------------------------------------------------------

CODEX_20_STEPS = next(
    (Path(__file__).resolve().parents[2] / "fixtures/rollouts/codex").glob("codex-exec-0.169.0-*")
)

_CALL_M1 = b'{"type":"function_call","name":"shell","arguments":"{}","call_id":"m1"}'
_OUTPUT_M1 = b'{"type":"function_call_output","call_id":"m1","output":"ok"}'


def test_a_codex_file_is_replayed_without_typed_decoders_and_the_same() -> None:
    """A file whose newest lines have no typed hint (Codex's ``ordinal`` sits there) gets
    decoders that refuse every line; mini-codex lines older than the newest block (a file
    mini-codex continued, then Codex) then take the orjson path: the replay is the same."""
    codex = CODEX_20_STEPS.read_bytes().splitlines(keepends=True)
    assert not isinstance(decoders_for(codex[-40:]), TypedDecoders)
    mini = [
        envelope("event_msg", b'{"type":"task_started","turn_id":"m1"}') + b"\n",
        envelope("response_item", _CALL_M1) + b"\n",
        envelope("response_item", _OUTPUT_M1) + b"\n",
        envelope("event_msg", b'{"type":"task_complete","turn_id":"m1"}') + b"\n",
    ]
    assert decoders_for(mini) is typed_decoders()
    assert decoders_for([*codex[-40:], mini[0]]) is typed_decoders()
    assert decoders_for([]) is typed_decoders()  # nothing known: the usual decoders
    compacted = envelope("compacted", b'{"message":"m"}') + b"\n"
    assert decoders_for([compacted]) is typed_decoders()
    data = b"".join([*codex[:30], *mini, *codex[30:]])
    newest_first = data.splitlines(keepends=True)[::-1]
    for size in (10, len(newest_first)):
        blocks = [newest_first[start : start + size] for start in range(0, len(newest_first), size)]
        got = reconstruct_lines(iter(blocks), early_exit=False, stats=ReadStats(), count_all=True)
        want = classified(data)
        assert (got.history.to_json(), got.stats, got.warnings, exact_json(got.world_state)) == (
            want.history.to_json(),
            want.stats,
            want.warnings,
            exact_json(want.world_state),
        )
        assert (got.reference_context, got.previous_turn_settings, got.window) == (
            want.reference_context,
            want.previous_turn_settings,
            want.window,
        )
