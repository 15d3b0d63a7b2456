"""The request bytes of a client whose caches follow a history's lineage (issue 23) are the bytes
of a fresh client and of the SDK's encoding, whatever was done to the history between requests.

Law: for any sequence of history operations (appends, a compaction's ``replace``,
``remove_first_item``, a rollback, tool calls left unanswered, two sessions' histories sent by
the same client in turns), one long-lived client asked for the body after any of them sends
exactly the bytes of a fresh client (no cache) for the same items, and those are the bytes of
``json.dumps`` (what the SDK sends) of ``request_body`` with ``stream`` in the SDK's key order.
A stale cache entry would show as a difference after the first operation that is not an append.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_lazy_request_bytes import ITEMS

from mini_codex.context import ContextManager, PromptHistory
from mini_codex.models.base import Prompt
from mini_codex.models.openai_responses import OpenAIResponsesClient, encoded_request_item
from mini_codex.models.request_body import RESPONSES_KEY_ORDER, ArrayChunks, ItemBytesCache
from mini_codex.protocol.items import (
    FunctionCall,
    FunctionCallOutput,
    ResponseItem,
    parse_response_item,
    user_message,
)

TYPED = ITEMS.map(parse_response_item)
PAIRED_KINDS = {"function_call", "function_call_output", "custom_tool_call",
                "custom_tool_call_output", "local_shell_call"}  # fmt: skip
UNPAIRED = ITEMS.filter(lambda item: item["type"] not in PAIRED_KINDS).map(parse_response_item)
"""Items that leave a balanced history balanced (its prompt is then a ``PromptHistory``)."""

OPERATIONS = st.one_of(
    st.tuples(st.just("append"), st.lists(UNPAIRED, min_size=1, max_size=4)),
    st.tuples(st.just("append_any"), st.lists(TYPED, min_size=1, max_size=2)),
    st.tuples(st.just("append_pair"), st.integers(0, 99)),
    st.tuples(st.just("call_unanswered"), st.integers(0, 99)),
    st.tuples(st.just("answer"), st.integers(0, 99)),
    st.tuples(st.just("compact"), st.integers(0, 6)),
    st.tuples(st.just("replace_same_length"), st.integers(0, 6)),
    st.tuples(st.just("remove_first"), st.none()),
    st.tuples(st.just("rollback"), st.integers(0, 2)),
    st.tuples(st.just("switch"), st.none()),
)


def _client() -> OpenAIResponsesClient:
    return OpenAIResponsesClient.__new__(OpenAIResponsesClient)  # encodes only, sends nothing


def _prompt(items: Any) -> Prompt:
    return Prompt(model="gpt-5.5", instructions="be brief", input=items)


def _sdk_bytes(prompt: Prompt) -> bytes:
    """What the SDK sends for ``request_body`` (``json.dumps``, its key order), no cache."""
    body = {**_client().request_body(prompt), "stream": True}
    ordered = {key: body[key] for key in RESPONSES_KEY_ORDER if key in body}
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _apply(history: ContextManager, operation: str, arg: Any) -> None:
    items = list(history.items)
    match operation:
        case "append" | "append_any":
            history.record_items(arg)
        case "append_pair":
            call_id = f"pair_{arg}"
            history.record_items(
                [
                    FunctionCall(name="noop", arguments="{}", call_id=call_id),
                    FunctionCallOutput(call_id=call_id, output=f"out {arg} é 😀"),
                ]
            )
        case "call_unanswered":  # normalize_history adds an aborted output to the prompt
            history.record_items([FunctionCall(name="noop", arguments="{}", call_id=f"open_{arg}")])
        case "answer":
            history.record_items(
                [FunctionCallOutput(call_id=f"open_{arg}", output="late")]
                if any(getattr(item, "call_id", None) == f"open_{arg}" for item in items)
                else []
            )
        case "compact":  # a summary replaces all but the last items
            kept = items[len(items) - min(arg, len(items)) :]
            history.replace([user_message("summary of what came before"), *kept])
        case "replace_same_length":  # as long as before, one item different: no length shortcut
            if items:
                index = arg % len(items)
                items[index] = user_message(f"edited {index}")
            history.replace(items)
        case "remove_first":
            history.remove_first_item()
        case "rollback":
            history.drop_last_n_user_turns(arg)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    start=st.lists(UNPAIRED, max_size=8),
    operations=st.lists(st.tuples(OPERATIONS, st.booleans()), min_size=1, max_size=12),
)
def test_a_warm_client_sends_the_bytes_of_a_fresh_one_after_any_history_edit(
    monkeypatch: pytest.MonkeyPatch,
    start: list[ResponseItem],
    operations: list[tuple[tuple[str, Any], bool]],
) -> None:
    monkeypatch.setattr(ArrayChunks, "CHUNK_BYTES", 64)  # chunks and a run in small bodies too
    histories = [ContextManager(start), ContextManager(start[:1])]
    warm = _client()
    current = 0
    for index, ((operation, arg), send) in enumerate(operations):
        if operation == "switch":  # another session's history through the same client
            current = 1 - current
        else:
            _apply(histories[current], operation, arg)
        if not send and index < len(operations) - 1:
            continue  # edits between two requests add up (an edit, then appends)
        prompt = _prompt(histories[current].for_prompt())
        expected = _client().request_bytes(_prompt(tuple(prompt.input)))  # a plain tuple
        assert warm.request_bytes(prompt) == expected
        assert expected == _sdk_bytes(prompt)


@pytest.mark.parametrize(
    ("edit", "arg"),
    [("remove_first", None), ("compact", 2), ("replace_same_length", 1), ("rollback", 1)],
)
def test_an_edit_then_appends_up_to_the_old_length_is_not_taken_for_appends(
    edit: str, arg: Any
) -> None:
    history = ContextManager([user_message("a"), user_message("b"), user_message("c")])
    _apply(history, "append_pair", 0)
    warm = _client()
    warm.request_bytes(_prompt(history.for_prompt()))
    _apply(history, edit, arg)
    for n in range(1, 4):  # as long as before, and longer
        _apply(history, "append_pair", n)
    prompt = _prompt(history.for_prompt())
    assert isinstance(prompt.input, PromptHistory)
    assert warm.request_bytes(prompt) == _client().request_bytes(_prompt(tuple(prompt.input)))
    assert warm.request_bytes(prompt) == _sdk_bytes(prompt)


def test_a_growing_history_encodes_only_its_new_items() -> None:
    pairs = [
        (FunctionCall(name="noop", arguments="{}", call_id=f"c{n}"),
         FunctionCallOutput(call_id=f"c{n}", output=f"out {n}"))
        for n in range(25)
    ]  # fmt: skip
    history = ContextManager([item for pair in pairs for item in pair])
    cache = ItemBytesCache(encoded_request_item)
    first = history.for_prompt()
    assert isinstance(first, PromptHistory)
    assert cache.encode_all(first) == [encoded_request_item(item) for item in first]
    assert cache.encoded_count == 50
    history.record_items([user_message("next")])
    second = history.for_prompt()
    assert second.lineage is first.lineage
    assert cache.encode_all(second) == [encoded_request_item(item) for item in second]
    assert (cache.encoded_count, cache.last_prefix) == (51, 50)
    history.remove_first_item()  # a new lineage: compared item by item, nothing re-encoded
    third = history.for_prompt()
    assert isinstance(third, PromptHistory)
    assert len(third) == 49  # the first call and its output
    assert third.lineage is not second.lineage
    assert cache.encode_all(third) == [encoded_request_item(item) for item in third]
    assert (cache.encoded_count, cache.last_prefix) == (51, 0)
    # The same lineage but shorter than last time (never made by a ContextManager): compared.
    shorter = PromptHistory(third[:10], third.lineage)
    assert cache.encode_all(shorter) == [encoded_request_item(item) for item in shorter]
    assert (cache.encoded_count, cache.last_prefix) == (51, 10)


def test_prompt_history_is_the_tuple_of_its_items() -> None:
    items = (user_message("a"), user_message("b"))
    history = PromptHistory(items, object())
    assert history == items
    assert history == list(items)
    assert list(items) == history
    assert not (history != list(items))
    assert history != [*items, user_message("c")]
    assert hash(PromptHistory((), object())) == hash(())  # hashed as the tuple it is
    assert history[1:] == items[1:]
