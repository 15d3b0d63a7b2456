"""The ``--trace-requests`` line of a prompt, with each history item's JSON encoded once.

``TraceLineEncoder.line(prompt)`` is byte for byte ``orjson.dumps(prompt.to_trace_json())``,
but the history items' JSON comes from an ``ItemCache`` (by identity, like the request bodies),
so tracing a long session does not re-serialize its whole history at every request.
"""

from __future__ import annotations

import msgspec.structs
import orjson

from mini_codex.models.base import Prompt
from mini_codex.models.request_body import ItemCache, compact
from mini_codex.protocol.items import ResponseItem

_INPUT = b',"input":[],"tools":'
"""Where the empty input sits in the record of a prompt without history. Everything before it is
a string or a number (their quotes are escaped), so its first occurrence is the real one."""


def _item_json(item: ResponseItem) -> bytes:
    return compact(orjson.dumps(item.to_json()))


class TraceLineEncoder:
    """One per trace file (a cache of the items of the last traced prompt)."""

    def __init__(self) -> None:
        self._items: ItemCache[ResponseItem, bytes] = ItemCache(_item_json)

    def line(self, prompt: Prompt) -> bytes:
        """``orjson.dumps(prompt.to_trace_json())``."""
        empty = orjson.dumps(msgspec.structs.replace(prompt, input=()).to_trace_json())
        at = empty.find(_INPUT)
        if at < 0:  # not the layout this encoder knows: encode the whole record
            return orjson.dumps(prompt.to_trace_json())
        items = b",".join(self._items.values(prompt.input))
        return b"".join(
            (empty[:at], b',"input":[', items, b'],"tools":', empty[at + len(_INPUT) :])
        )


__all__ = ["TraceLineEncoder"]
