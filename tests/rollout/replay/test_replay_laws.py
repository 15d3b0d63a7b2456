"""Laws of the reconstruction fold, checked on random well-formed rollouts (hypothesis).

* Early exit is exact: ``reconstruct_from_newest(reversed(lines)) == reconstruct(lines)``.
* The fast path (JSON → lazily validated entries) equals the typed path.
* Checkpoints are transparent: inserting checkpoints whose payload is the reconstruction of the
  lines before them (between turns, or between steps after the turn's input) changes nothing.
* Fuzz: mutated rollouts (truncation, bit flips, random JSON lines, wrong types) never raise
  anything but a clear ``RolloutError``.

Generated rollouts mix task-framed turns (user, inter-agent, standalone; complete, incomplete,
aborted with or without id), Codex 2025 turns without task events, turn contexts with and without
ids, full snapshots and patches, tool steps, mid-turn compactions (with and without a window
number), legacy compactions and rollbacks.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, NamedTuple

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from replay_reference import classified

from mini_codex.errors import RolloutError
from mini_codex.protocol import ROLLOUT_LINE_ADAPTER, RolloutLine
from mini_codex.rollout import (
    ReadStats,
    Reconstructed,
    checkpoint_payload,
    decode_line,
    load_resume_state,
    read_rollout,
    reconstruct,
    reconstruct_from_newest,
    replay_file,
)
from mini_codex.rollout.replay import reconstruct_entries, reconstruct_lines
from mini_codex.rollout.replay.classify import classify

Json = dict[str, Any]
WINDOW_IDS = [f"01900000-0000-7000-8000-{n:012x}" for n in range(1, 40)]


class Turn(NamedTuple):
    kind: str  # user | inter_agent | inter_agent_line | standalone | taskless
    model: str
    end: str  # complete | incomplete | aborted | aborted_no_id
    world_state: str | None  # full | patch | None
    context: str  # same | no_id | missing
    steps: tuple[str, ...]
    rollback: int


class Plan(NamedTuple):
    session_window: bool
    turns: tuple[Turn, ...]


def turns(*, legacy: bool) -> st.SearchStrategy[Turn]:
    """Turns; ``legacy`` adds Codex 2025 shapes (no task events, compactions without a window
    number or without a replacement history), which never share a file with a checkpoint."""
    kinds = ["user", "user", "user", "inter_agent", "inter_agent_line", "standalone"]
    steps = ["tool", "assistant", "patch", "compaction"]
    if legacy:
        kinds += ["taskless"]
        steps += ["compaction_no_number", "legacy_compaction"]
    return st.builds(
        Turn,
        kind=st.sampled_from(kinds),
        model=st.sampled_from(["m1", "m2", "m3"]),
        end=st.sampled_from(["complete", "complete", "incomplete", "aborted", "aborted_no_id"]),
        world_state=st.sampled_from([None, "full", "patch"]),
        context=st.sampled_from(["same", "same", "no_id", "missing"]),
        steps=st.lists(st.sampled_from(steps), max_size=4).map(tuple),
        rollback=st.sampled_from([0, 0, 0, 1, 2, 5]),
    )


def plans(*, legacy: bool = True, session_window: bool | None = None) -> st.SearchStrategy[Plan]:
    window = st.booleans() if session_window is None else st.just(session_window)
    return st.builds(
        Plan,
        session_window=window,
        turns=st.lists(turns(legacy=legacy), min_size=1, max_size=6).map(tuple),
    )


def _line(kind: str, payload: Any) -> Json:
    return {"timestamp": "2026-08-22T00:00:00.000Z", "type": kind, "payload": payload}


def _message(role: str, text: str) -> Json:
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


def _context(turn_id: str | None, model: str) -> Json:
    payload: Json = {"cwd": "/repo", "approval_policy": "never", "model": model, "summary": "auto"}
    if turn_id is not None:
        payload["turn_id"] = turn_id
    return _line("turn_context", payload)


def build(plan: Plan) -> tuple[list[Json], list[int]]:
    """The rollout lines of ``plan`` and the indices where a checkpoint may be inserted."""
    meta: Json = {"id": "thread"}
    if plan.session_window:
        meta["context_window"] = {"window_id": WINDOW_IDS[0]}
    lines: list[Json] = [_line("session_meta", meta)]
    slots: list[int] = []
    window = 0
    counter = 0
    for index, turn in enumerate(plan.turns):
        turn_id = f"t{index}"
        taskless = turn.kind == "taskless"
        if not taskless:
            lines.append(_line("event_msg", {"type": "task_started", "turn_id": turn_id}))
        if turn.kind in ("user", "taskless"):
            lines.append(_line("response_item", _message("user", f"user {index}")))
            lines.append(_line("event_msg", {"type": "user_message", "message": f"user {index}"}))
        elif turn.kind == "inter_agent":
            text = orjson.dumps(
                {"author": "/root", "recipient": "/root/w", "content": "go", "trigger_turn": True}
            ).decode()
            lines.append(_line("response_item", _message("assistant", text)))
        elif turn.kind == "inter_agent_line":
            communication = {"author": "/root", "recipient": "/root/w", "content": f"go {index}"}
            lines.append(
                _line("inter_agent_communication", {**communication, "trigger_turn": True})
            )
        if turn.world_state is not None:
            counter += 1
            full = turn.world_state == "full"
            state = {"env": {"turn": index, "n": counter}} if full else {"env": {"n": counter}}
            lines.append(_line("world_state", {"full": full, "state": state}))
        context_id = None if taskless or turn.context == "no_id" else turn_id
        if turn.context != "missing":
            lines.append(_context(context_id, turn.model))
        slots.append(len(lines))
        for step_number, step in enumerate(turn.steps):
            call_id = f"call-{index}-{step_number}"
            if step == "tool":
                call = {
                    "type": "function_call",
                    "name": "sh",
                    "arguments": "{}",
                    "call_id": call_id,
                }
                lines.append(_line("response_item", call))
                output = {"type": "function_call_output", "call_id": call_id, "output": "ok"}
                lines.append(_line("response_item", output))
            elif step == "assistant":
                lines.append(_line("response_item", _message("assistant", f"a {call_id}")))
            elif step == "patch":
                counter += 1
                lines.append(_line("world_state", {"full": False, "state": {"p": counter}}))
            elif step in ("compaction", "compaction_no_number"):
                payload: Json = {
                    "message": "",
                    "replacement_history": [_message("user", f"summary {call_id}")],
                }
                if step == "compaction":
                    window += 1
                    payload.update(
                        window_number=window,
                        first_window_id=WINDOW_IDS[0],
                        previous_window_id=WINDOW_IDS[window - 1],
                        window_id=WINDOW_IDS[window],
                    )
                lines.append(_line("compacted", payload))
                counter += 1
                state = {"env": {"compacted": call_id, "n": counter}}
                lines.append(_line("world_state", {"full": True, "state": state}))
                if turn.context != "missing":
                    lines.append(_context(context_id, turn.model))
            else:  # legacy_compaction
                lines.append(_line("compacted", {"message": f"legacy {call_id}"}))
            slots.append(len(lines))
        if not taskless:
            if turn.end == "complete":
                lines.append(_line("event_msg", {"type": "task_complete", "turn_id": turn_id}))
            elif turn.end == "aborted":
                lines.append(_line("event_msg", {"type": "turn_aborted", "turn_id": turn_id}))
            elif turn.end == "aborted_no_id":
                lines.append(_line("event_msg", {"type": "turn_aborted"}))
        slots.append(len(lines))
        if turn.rollback:
            lines.append(
                _line("event_msg", {"type": "thread_rolled_back", "num_turns": turn.rollback})
            )
            slots.append(len(lines))
    return lines, sorted(set(slots))


def typed(lines: list[Json]) -> list[RolloutLine]:
    return [ROLLOUT_LINE_ADAPTER.validate_python(line) for line in lines]


def key(result: Reconstructed) -> tuple[Any, ...]:
    return (
        result.history,
        result.world_state,
        result.reference_context,
        result.previous_turn_settings,
        result.window,
    )


def fast(lines: list[Json]) -> Reconstructed:
    stats = ReadStats()
    entries = [entry for line in reversed(lines) if (entry := classify(line, stats)) is not None]
    return reconstruct_entries(entries, early_exit=False, stats=stats)


@settings(max_examples=300, deadline=None)
@given(plan=plans())
def test_bounded_replay_equals_full_replay(plan: Plan) -> None:
    lines, _ = build(plan)
    decoded = typed(lines)

    full = reconstruct(decoded)

    assert key(reconstruct_from_newest(reversed(decoded))) == key(full)
    assert key(fast(lines)) == key(full)


def with_checkpoints(lines: list[Json], positions: list[int]) -> list[Json]:
    """Insert a checkpoint (payload = reconstruction of everything before it) at each position."""
    result: list[Json] = []
    previous = 0
    for position in positions:
        result.extend(lines[previous:position])
        previous = position
        state = reconstruct(typed(result))
        payload = checkpoint_payload(
            state.history, state.reference_context, state.previous_turn_settings, state.window
        )
        result.append(_line("compacted", payload.to_json()))
        if state.world_state is not None:
            result.append(_line("world_state", {"full": True, "state": state.world_state}))
    result.extend(lines[previous:])
    return result


@settings(max_examples=200, deadline=None)
@given(plan=plans(legacy=False, session_window=True), data=st.data())
def test_checkpoints_do_not_change_the_reconstruction(plan: Plan, data: st.DataObject) -> None:
    lines, slots = build(plan)
    positions = data.draw(st.lists(st.sampled_from(slots), max_size=3, unique=True).map(sorted))
    checkpointed = typed(with_checkpoints(lines, positions))

    expected = key(reconstruct(typed(lines)))

    assert key(reconstruct(checkpointed)) == expected
    assert key(reconstruct_from_newest(reversed(checkpointed))) == expected


def test_generated_rollouts_cover_the_interesting_cases() -> None:
    """The generator reaches rollbacks, compactions, checkpoints and early exits."""
    plan = Plan(
        session_window=True,
        turns=(
            Turn("user", "m1", "complete", None, "same", ("tool", "assistant"), 0),
            Turn("user", "m1", "complete", "full", "same", ("tool", "compaction"), 0),
            Turn("standalone", "m2", "aborted", None, "same", ("assistant",), 0),
            Turn("user", "m3", "incomplete", "patch", "same", ("patch",), 1),
            Turn("taskless", "m2", "complete", None, "no_id", ("assistant",), 0),
        ),
    )
    lines, slots = build(plan)
    full = reconstruct(typed(lines))
    consumed = [0]

    def newest_first() -> Any:
        for line in reversed(typed(lines)):
            consumed[0] += 1
            yield line

    bounded = reconstruct_from_newest(newest_first())

    assert key(bounded) == key(full)
    assert consumed[0] < len(lines) - 7  # stopped at the surviving compaction
    assert full.previous_turn_settings is not None
    assert full.previous_turn_settings.model == "m2"
    assert full.world_state == {"env": {"compacted": "call-1-1", "n": 2}}
    assert len(slots) > 4


# --- fuzz -----------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["type", "payload", "state", "full", "role", "content", "text", "x"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


def _replace_random_value(obj: Any, rng: random.Random, value: Any) -> Any:
    """``obj`` with one randomly chosen nested value replaced by ``value`` (a new object)."""
    if isinstance(obj, dict) and obj and rng.random() < 0.8:
        name = rng.choice(sorted(obj))
        return {**obj, name: _replace_random_value(obj[name], rng, value)}
    if isinstance(obj, list) and obj and rng.random() < 0.8:
        index = rng.randrange(len(obj))
        copy = list(obj)
        copy[index] = _replace_random_value(obj[index], rng, value)
        return copy
    return value


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    plan=plans(),
    seed=st.integers(0, 2**32 - 1),
    mutations=st.lists(
        st.sampled_from(["truncate", "flip", "insert_json", "wrong_type", "drop_line"]),
        min_size=1,
        max_size=4,
    ),
    junk=st.lists(json_values, min_size=4, max_size=4),
)
def test_mutated_rollouts_never_raise_unexpected_errors(
    tmp_path: Path, plan: Plan, seed: int, mutations: list[str], junk: list[Any]
) -> None:
    rng = random.Random(seed)
    lines, slots = build(plan)
    objects = with_checkpoints(lines, slots[:1])
    for mutation, value in zip(mutations, junk, strict=False):
        if mutation == "wrong_type" and objects:
            index = rng.randrange(len(objects))
            objects[index] = _replace_random_value(objects[index], rng, value)
        elif mutation == "insert_json":
            objects.insert(rng.randrange(len(objects) + 1), value)
        elif mutation == "drop_line" and objects:
            del objects[rng.randrange(len(objects))]
    data = bytearray(b"".join(orjson.dumps(obj) + b"\n" for obj in objects))
    for mutation in mutations:
        if mutation == "flip" and data:
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif mutation == "truncate" and data:
            del data[rng.randrange(len(data)) :]
    path = tmp_path / f"fuzz-{seed}.jsonl"
    path.write_bytes(bytes(data))

    for load in (_typed_replay, replay_file, load_resume_state):
        try:
            result = load(path)
        except RolloutError:
            continue
        orjson.dumps(result.to_json())


def _typed_replay(path: Path) -> Reconstructed:
    read = read_rollout(path)
    return reconstruct(read.lines, read.stats)


@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_decoding_random_json_never_raises(value: Any) -> None:
    stats = ReadStats()
    for candidate in (value, {"type": "response_item", "payload": value}):
        for kind in ("compacted", "world_state", "event_msg", "turn_context", "session_meta"):
            classify({"type": kind, "payload": candidate}, stats)
        classify(candidate, stats)

    assert stats.lines == 12


@pytest.mark.parametrize("kind", ["compacted", "world_state", "event_msg", "turn_context"])
def test_typed_and_fast_paths_agree_on_bad_lines(kind: str) -> None:
    samples: list[Any] = [None, 1, "x", [], {}, {"type": 3}, {"full": "yes", "state": {}}]
    for payload in samples:
        line = {"type": kind, "payload": payload}
        typed_stats, fast_stats = ReadStats(), ReadStats()
        decode_line(line, typed_stats)
        classify(line, fast_stats)

        assert typed_stats == fast_stats, payload


# --- the raw-line hot loop ------------------------------------------------------------------------


def _blocks(data: bytes, cuts: list[int]) -> list[list[bytes]]:
    """``data``'s lines (newline kept) newest first, cut into blocks at ``cuts`` (line counts)."""
    lines = data.splitlines(keepends=True)[::-1]
    blocks: list[list[bytes]] = []
    start = 0
    for cut in [*cuts, len(lines)]:
        end = min(max(cut, start), len(lines))
        blocks.append(lines[start:end])
        start = end
    return blocks


def _raw(data: bytes, cuts: list[int]) -> Reconstructed:
    stats = ReadStats()
    return reconstruct_lines(_blocks(data, cuts), early_exit=False, stats=stats, count_all=True)


def _mutated(
    plan: Plan, seed: int, mutations: list[str], junk: list[Any], checkpoint: bool = True
) -> bytes:
    """The bytes of ``plan``'s rollout after ``mutations`` (see the fuzz test)."""
    rng = random.Random(seed)
    lines, slots = build(plan)
    objects = with_checkpoints(lines, slots[:1]) if checkpoint else lines
    for mutation, value in zip(mutations, junk, strict=False):
        if mutation == "wrong_type" and objects:
            index = rng.randrange(len(objects))
            objects[index] = _replace_random_value(objects[index], rng, value)
        elif mutation == "insert_json":
            objects.insert(rng.randrange(len(objects) + 1), value)
        elif mutation == "drop_line" and objects:
            del objects[rng.randrange(len(objects))]
    data = bytearray(b"".join(orjson.dumps(obj) + b"\n" for obj in objects))
    for mutation in mutations:
        if mutation == "flip" and data:
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif mutation == "truncate" and data:
            del data[rng.randrange(len(data)) :]
        elif mutation == "whitespace" and data:
            position = rng.randrange(len(data))
            data[position:position] = rng.choice([b"\n", b"\r\n", b"  ", b"\n \n", b"\x0c", b"\t"])
    return bytes(data)


_MUTATIONS = ["truncate", "flip", "insert_json", "wrong_type", "drop_line", "whitespace"]


@settings(max_examples=200, deadline=None)
@given(
    plan=plans(),
    seed=st.integers(0, 2**32 - 1),
    mutations=st.lists(st.sampled_from(_MUTATIONS), max_size=4),
    junk=st.lists(json_values, min_size=4, max_size=4),
    cuts=st.lists(st.integers(0, 60), max_size=4).map(sorted),
)
@example(  # a blank line among the lines left unread when the fold stops at the checkpoint
    plan=Plan(False, (Turn("user", "m1", "complete", None, "same", (), 0),)),
    seed=12680,
    mutations=["whitespace"],
    junk=[None] * 4,
    cuts=[],
)
def test_raw_line_loop_equals_classify_then_fold(
    plan: Plan, seed: int, mutations: list[str], junk: list[Any], cuts: list[int]
) -> None:
    """The inlined hot loop (``raw_scan``) is ``classify`` + ``Fold.feed``, on any bytes."""
    data = _mutated(plan, seed, mutations, junk)

    raw, reference = _raw(data, cuts), classified(data)

    assert key(raw) == key(reference)
    assert (raw.stats, raw.warnings) == (reference.stats, reference.warnings)
    assert raw.history.to_json() == [item.to_json() for item in reference.history]


@settings(max_examples=100, deadline=None)
@given(plan=plans(), cuts=st.lists(st.integers(0, 60), max_size=4).map(sorted))
def test_raw_line_loop_equals_the_typed_path_on_well_formed_rollouts(
    plan: Plan, cuts: list[int]
) -> None:
    lines, _ = build(plan)
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)

    raw = _raw(data, cuts)
    typed_result = reconstruct(typed(lines))

    assert key(raw) == key(typed_result)
    assert raw.stats == typed_result.stats
    assert raw.history.to_json() == [item.to_json() for item in typed_result.history]


@settings(max_examples=100, deadline=None)
@given(plan=plans(legacy=False, session_window=True), cut=st.integers(0, 40))
def test_raw_early_exit_equals_the_whole_scan(plan: Plan, cut: int) -> None:
    lines, slots = build(plan)
    data = b"".join(orjson.dumps(line) + b"\n" for line in with_checkpoints(lines, slots[-1:]))

    bounded = reconstruct_lines(_blocks(data, [cut]), early_exit=True, stats=ReadStats())
    counted = ReadStats()
    reference = reconstruct_entries(
        (
            entry
            for raw in reversed(data.splitlines())
            if (entry := classify(orjson.loads(raw), counted)) is not None
        ),
        early_exit=True,
        stats=counted,
    )

    assert key(bounded) == key(reconstruct(typed(lines)))
    assert bounded.stats == reference.stats  # the lines read up to where the scan stopped
    assert bounded.stats.lines < len(data.splitlines())  # it stopped at the checkpoint
