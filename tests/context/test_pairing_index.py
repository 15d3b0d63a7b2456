"""``ContextManager.for_prompt`` skips the normalization walk when every call is answered; the
result must always equal ``normalize_history`` of the stored items, whatever the appends and
rewrites in between."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_codex.context import ContextManager, normalize_history
from mini_codex.protocol.items import (
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    ResponseItem,
    user_message,
)

IDS = st.sampled_from(["a", "b", "c", "d"])

ITEMS = st.one_of(
    IDS.map(lambda i: FunctionCall(name="f", arguments="{}", call_id=i)),
    IDS.map(lambda i: FunctionCallOutput(call_id=i, output="out")),
    IDS.map(lambda i: CustomToolCall(name="p", input="x", call_id=i)),
    IDS.map(lambda i: CustomToolCallOutput(call_id=i, output="out")),
    st.just(user_message("hi")),
)

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.lists(ITEMS, max_size=4)),
        st.tuples(st.just("replace"), st.lists(ITEMS, max_size=6)),
        st.tuples(st.just("remove_first"), st.just([])),
        st.tuples(st.just("prompt"), st.just([])),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_for_prompt_equals_normalize_history_after_any_edits(
    ops: list[tuple[str, list[ResponseItem]]],
) -> None:
    history = ContextManager()
    for op, items in ops:
        match op:
            case "append":
                history.record_items(items)
            case "replace":
                history.replace(items)
            case "remove_first":
                history.remove_first_item()
            case _:
                pass
        assert history.for_prompt() == normalize_history(list(history.items))
