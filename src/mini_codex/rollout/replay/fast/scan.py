"""The replay hot loop: raw line text → parsed → classified → folded, one loop per file (pure).

What belongs here: :func:`scan_lines`, which feeds a ``fold.Fold`` from raw lines newest
first exactly as ``fold.feed(classify(orjson.loads(line)))`` would, counting into ``ReadStats``
the same way, but with the common well-formed lines handled inline. It reaches the fold only
through its public steps (``Fold.add_item``, ``Fold.closer_run``, ``Fold.add_world_state``, …),
never its segments. What does not: the fold's rules (``fold.py``), the classification rules
(``classify.py``; every line this loop does not recognize at a glance goes through it), file
reading (``rollout/reader.py``).

Why a separate loop: a whole-file replay of a 1M-line rollout runs it a million times, and in
CPython every function call and allocation per line shows. Each line first goes to the typed
decoder its kind hint picks (``typed_lines.py``: msgspec parses it and checks the item or event
exactly in C; none in a file Codex wrote, whose lines carry no hint: ``decoders_for``); a line
no decoder takes is parsed with ``orjson`` and checked here, inline for the common well-formed
kinds (valid non-message response items, ``token_count`` events, world-state lines, turn
contexts, the events replay uses), through ``classify`` for the rest. Both paths feed
the fold the same way; valid items keep the line text itself as their source.

Blank lines are not lines; whitespace around a line is ignored (``orjson`` skips JSON whitespace;
a line with other whitespace, such as a form feed, is stripped and parsed again).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import orjson

from mini_codex.rollout.replay.classify import (
    EVENTS,
    LINE_KINDS,
    TURN_CONTEXT_EXACT,
    classify_parsed_line,
    content_facts,
    message_entry,
    message_facts,
)
from mini_codex.rollout.replay.entries import TurnContextEntry
from mini_codex.rollout.replay.exact import ITEM_CHECKS
from mini_codex.rollout.replay.fast.typed_lines import (
    DECODE_REFUSED,
    EVENT_HINT,
    HINT_SLICE,
    ITEM_HINT,
    TURN_CONTEXT_HINT,
    WORLD_STATE_HINT,
    decoders_for,
)
from mini_codex.rollout.replay.fold import Fold
from mini_codex.rollout.replay.lines import ReadStats

__all__ = ["EVENT_ACTIONS", "scan_lines"]


def _message(payload: dict[str, Any]) -> bool:
    raise AssertionError("a route marker, never called")


_MESSAGE = _message

_ITEM_ROUTES: dict[str, Callable[[dict[str, Any]], bool]] = {
    kind: _MESSAGE if kind == "message" else check for kind, check in ITEM_CHECKS.items()
}
"""Item ``type`` → its exact check (tool items: never a boundary, always closers), or
:data:`_MESSAGE` for messages (their own path: the boundary rule needs the parts)."""


def _turn_started(fold: Fold, turn_id: Any) -> None:
    fold.turn_started(turn_id)


def _turn_complete(fold: Fold, turn_id: Any) -> None:
    fold.turn_complete(turn_id)


def _turn_aborted(fold: Fold, turn_id: Any) -> None:
    fold.turn_aborted(turn_id)


def _user_message(fold: Fold, _: Any) -> None:
    fold.user_message()


def _rolled_back(fold: Fold, num_turns: Any) -> None:
    fold.rolled_back(max(num_turns, 0))


EventAction = tuple[Callable[[Fold, Any], None], str]

EVENT_ACTIONS: dict[str, EventAction] = {
    "task_started": (_turn_started, "turn_id"),
    "turn_started": (_turn_started, "turn_id"),
    "task_complete": (_turn_complete, "turn_id"),
    "turn_complete": (_turn_complete, "turn_id"),
    "turn_aborted": (_turn_aborted, "turn_id"),
    "user_message": (_user_message, "message"),
    "thread_rolled_back": (_rolled_back, "num_turns"),
}
"""What ``Fold.feed`` does with the entry ``classify`` builds for each event replay uses: a
step and the payload field it takes (a field the event's exact check guarantees present or
defaulting to None)."""

_EVENTS: dict[str, tuple[Callable[[dict[str, Any]], bool], EventAction | None]] = {
    kind: (exact, EVENT_ACTIONS.get(kind))
    for kind, (exact, _) in EVENTS.items()
    if exact is not None
}
"""Event type → (exact check, action or None when replay ignores it), for the events whose
exact check is simple (the others go through ``classify``)."""

_TOOL = 1
_MESSAGE_ROUTE = 2


def scan_lines(
    fold: Fold, blocks: Iterator[Sequence[bytes]], stats: ReadStats
) -> Iterator[bytes] | None:
    """Feed ``fold`` the lines of ``blocks`` (newest first); the rest of the current block when
    the fold stopped early (``blocks`` then holds the blocks not read yet), None at the end."""
    classify_parsed = classify_parsed_line
    # The fold's steps (bound once: this loop runs per line).
    feed, add_item, closer_run = fold.feed, fold.add_item, fold.closer_run
    add_world_state, resolved = fold.add_world_state, fold.resolved
    turn_context_exact = TURN_CONTEXT_EXACT
    loads, decode_error, line_kinds = orjson.loads, orjson.JSONDecodeError, LINE_KINDS
    early_exit = fold.early_exit
    newest = next(blocks, None)
    if newest is None:
        return None
    blocks = itertools.chain((newest,), blocks)
    decoders = decoders_for(newest)
    decode_item, decode_event = decoders.decode_item, decoders.decode_event
    decode_world_state, decode_turn_context = (
        decoders.decode_world_state,
        decoders.decode_turn_context,
    )
    world_state_hint = WORLD_STATE_HINT
    turn_context_hint = TURN_CONTEXT_HINT
    refused = DECODE_REFUSED
    hint_at = HINT_SLICE
    item_hint = ITEM_HINT
    event_hint = EVENT_HINT
    message_struct: Any = decoders.message
    struct_events = {struct: EVENT_ACTIONS.get(kind) for struct, kind in decoders.events.items()}
    # ``append_item``: the active segment's ``items.append`` while feeding a valid closer item
    # is just that append (no fold call since: the segment and the base are unchanged).
    append_item: Callable[[bytes], None] | None = None
    lines = 0
    try:
        for block in blocks:
            lines += len(block)  # blank lines are taken off below, unread ones by _unread
            rest = iter(block)
            for raw in rest:
                # The typed decoders take the common lines whole (``typed_lines.py``); what they
                # refuse, and every other kind of line, is parsed and checked below.
                route = 0
                hint = raw[hint_at]
                if hint == item_hint:
                    try:
                        item = decode_item(raw).payload
                    except refused:
                        pass
                    else:
                        if type(item) is not message_struct:
                            route = _TOOL
                        else:
                            facts = content_facts(item.role, item.content)
                            if facts is not None and facts[2]:
                                route = _MESSAGE_ROUTE
                elif hint == event_hint:
                    try:
                        event = decode_event(raw).payload
                    except refused:
                        pass
                    else:
                        action = struct_events[type(event)]
                        if action is not None:
                            append_item = None
                            step, field = action
                            step(fold, getattr(event, field))
                            if early_exit and resolved():
                                return _unread(rest, stats)
                        continue
                elif hint == world_state_hint:
                    try:
                        world_state = decode_world_state(raw).payload
                    except refused:
                        pass
                    else:
                        append_item = None
                        add_world_state(world_state.full, world_state.state)
                        if early_exit and resolved():
                            return _unread(rest, stats)
                        continue
                elif hint == turn_context_hint and decode_turn_context is not None:
                    try:
                        context = decode_turn_context(raw).payload
                    except refused:
                        pass
                    else:
                        append_item = None
                        fold.turn_context(
                            TurnContextEntry(
                                raw,
                                context.turn_id,
                                context.model,
                                context.comp_hash,
                                context.realtime_active,
                            )
                        )
                        if early_exit and resolved():
                            return _unread(rest, stats)
                        continue
                if not route:
                    try:
                        obj = loads(raw)
                    except decode_error:
                        parsed = _parse_stripped(raw, stats)
                        if parsed is None:  # a blank line: not a line of the file
                            lines -= 1
                            continue
                        if parsed is _BAD:
                            continue
                        obj, raw = parsed
                    try:
                        kind = obj["type"]
                        payload = obj["payload"]
                        timestamp = obj["timestamp"]
                    except (KeyError, TypeError):  # not an object, or not the usual envelope
                        timestamp = None
                    if type(timestamp) is str:
                        if kind == "response_item":
                            route, facts = _item_route(payload, stats)
                            if route == _BAD_ITEM:
                                continue
                            if route == _PLAIN_MESSAGE:
                                append_item = None
                                fold.item(message_entry(payload, raw))  # type: ignore[arg-type]
                                if early_exit and resolved():
                                    return _unread(rest, stats)
                                continue
                        elif kind == "event_msg":
                            action = _event_action(payload)
                            if action is _IGNORED:
                                continue
                            if action is not None:
                                append_item = None
                                step, field = action
                                step(fold, payload.get(field))
                                if early_exit and resolved():
                                    return _unread(rest, stats)
                                continue
                        elif type(kind) is str and kind not in line_kinds:
                            stats.unknown_items += 1  # what classify does with it
                            continue
                        elif type(payload) is not dict:
                            pass
                        elif kind == "world_state":
                            full = payload.get("full")
                            state = payload.get("state")
                            if type(full) is bool and type(state) is dict:
                                append_item = None
                                add_world_state(full, state)
                                if early_exit and resolved():
                                    return _unread(rest, stats)
                                continue
                        elif kind == "turn_context":
                            if turn_context_exact is not None and turn_context_exact(payload):
                                append_item = None
                                _add_turn_context(fold, payload)
                                if early_exit and resolved():
                                    return _unread(rest, stats)
                                continue
                    if not route:
                        append_item = None
                        entry = classify_parsed(obj, stats, raw)
                        if entry is not None and feed(entry):
                            return _unread(rest, stats)
                        continue
                if route == _TOOL:  # a valid tool item: fold.add_item(raw, False, True)
                    if append_item is not None:
                        append_item(raw)
                        continue
                    append_item = closer_run(raw)
                    if append_item is None and early_exit and resolved():
                        return _unread(rest, stats)
                    continue
                # A valid message.
                append_item = None
                boundary, closer, _ = facts  # type: ignore[misc]
                add_item(raw, boundary, closer)
                if early_exit and resolved():
                    return _unread(rest, stats)
        return None
    finally:
        stats.lines += lines


_BAD: Any = object()
"""``_parse_stripped``: the line is not JSON (counted as a bad line)."""


def _parse_stripped(raw: bytes, stats: ReadStats) -> tuple[Any, bytes] | None:
    """Phase 2, for a line ``orjson`` refused as it is: the parsed stripped line and its bytes
    when that parses; None for a blank line, ``_BAD`` (counted) for a bad one."""
    line = raw.strip()
    if not line:
        return None
    if line is raw:
        stats.bad_lines += 1
        return _BAD  # type: ignore[no-any-return]
    try:
        obj: Any = orjson.loads(line)
    except orjson.JSONDecodeError:
        stats.bad_lines += 1
        return _BAD  # type: ignore[no-any-return]
    return obj, line


_BAD_ITEM = -1
_PLAIN_MESSAGE = -2


def _item_route(payload: Any, stats: ReadStats) -> tuple[int, Any]:
    """Phase 3, ``response_item``: (``_TOOL`` | ``_MESSAGE_ROUTE`` | ``_PLAIN_MESSAGE``
    (folded as a message entry) | ``_BAD_ITEM`` (counted) | 0 (``classify`` decides), the
    message's facts)."""
    try:  # payload["type"] also proves the payload an object
        check = _ITEM_ROUTES.get(payload["type"])
    except (KeyError, TypeError):
        return 0, None  # not modelled, a ghost snapshot, or bad: classify decides
    if check is None:
        return 0, None
    if check is not _MESSAGE:
        return (_TOOL if check(payload) else 0), None  # else pydantic decides (classify)
    facts = message_facts(payload)
    if facts is None:
        stats.bad_lines += 1
        return _BAD_ITEM, None
    return (_MESSAGE_ROUTE if facts[2] else _PLAIN_MESSAGE), facts


_IGNORED: Any = object()
"""``_event_action``: replay takes the event and does nothing with it."""


def _event_action(payload: Any) -> EventAction | None:
    """Phase 3, ``event_msg``: the fold step of an event the exact checks take, ``_IGNORED``
    for one replay ignores (a well-formed ``token_count``, an unknown event), None when
    ``classify`` decides."""
    try:  # payload["type"] also proves the payload an object
        event_kind = payload["type"]
    except (KeyError, TypeError):
        return None
    if event_kind == "token_count":
        info = payload.get("info")
        limits = payload.get("rate_limits")
        if (info is None or type(info) is dict) and (limits is None or type(limits) is dict):
            return _IGNORED  # type: ignore[no-any-return]
        return None
    if type(event_kind) is not str:
        return None
    known = _EVENTS.get(event_kind)
    if known is None:
        return _IGNORED if event_kind not in EVENTS else None
    exact_event, action = known
    if not exact_event(payload):
        return None
    return action if action is not None else _IGNORED


def _add_turn_context(fold: Fold, payload: dict[str, Any]) -> None:
    """The ``TurnContextEntry`` case of ``Fold.feed``, for a payload the exact check took."""
    get = payload.get
    fold.turn_context(
        TurnContextEntry(
            payload, get("turn_id"), get("model"), get("comp_hash"), get("realtime_active")
        )
    )


def _unread(rest: Iterator[bytes], stats: ReadStats) -> Iterator[bytes]:
    """The lines of ``rest`` (not read: the fold stopped), no longer counted in ``stats``."""
    unread = list(rest)
    stats.lines -= len(unread)  # all were counted with their block (blank ones included)
    return iter(unread)
