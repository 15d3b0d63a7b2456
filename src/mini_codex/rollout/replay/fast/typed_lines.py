"""Typed decoding of the common rollout lines: parse and exact-type check in one C call (pure).

What belongs here: msgspec decoders for the lines a replay meets most — ``response_item`` lines
whose item has a current exact check (``exact.ITEM_FIELDS``), ``event_msg`` lines of the
modelled events (``classify.EVENT_MODELS``), ``world_state`` lines and ``turn_context`` lines —
and the byte hint that picks one. What does not: what replay does with a decoded line
(``fast/scan.py``), the dict-based checks they stand in for (``exact.py``, ``classify.py``).

Why: a whole-file replay parses every line, and in CPython the per-line Python work of checking
a parsed ``dict`` costs as much as parsing it. A msgspec ``Struct`` decoder does the parse, the
envelope check and the exact-type check of the item or event in C.

The contract is one-sided, and it is what makes this safe: **a line a decoder accepts is one
that ``orjson.loads`` parses, whose envelope is the usual one (string ``timestamp``, ``type``,
object ``payload``) and whose payload passes the same exact check** (``exact.ITEM_CHECKS`` or
the event's field check), with equal values for every field replay reads. Anything a decoder
refuses takes the ``orjson`` path, which decides as before. So the decoders are stricter than
JSON where the two parsers differ:

* unknown fields are refused (``forbid_unknown_fields``), except a few known extras Codex
  writes, which are declared;
* a value the exact check takes as "any JSON" is typed :data:`JsonValue`: nesting at most
  :data:`JSON_DEPTH` deep and numbers as finite floats. orjson refuses integers too large for a
  float and nesting deeper than 1024; msgspec's ``Any`` would take both (with a raised
  recursion limit), its floats and bounded unions take neither. Such values are never read;
* integer fields are bounded to the 64-bit range, where both parsers give the same ``int``;
* values replay keeps (a world-state ``state``, a turn-context payload) are typed
  :data:`ExactJsonValue`: the same ``int``/``float``/``str``/``bool``/``None``/``list``/``dict``
  values orjson builds, or refused (64-bit integers, finite floats, bounded nesting).

Invalid UTF-8, lone surrogates, bad escapes, control characters, ``NaN`` and trailing data are
refused by both parsers alike (the tests check each).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec
from pydantic import BaseModel

from mini_codex.protocol import TurnContextItem
from mini_codex.rollout.replay.classify import EVENT_MODELS
from mini_codex.rollout.replay.exact import ITEM_FIELDS, FieldSpec, exact_field_spec

__all__ = [
    "DECODE_REFUSED",
    "EVENT_HINT",
    "EXACT_DEPTH",
    "HINT_SLICE",
    "ITEM_HINT",
    "JSON_DEPTH",
    "ORDINAL_HINTS",
    "TURN_CONTEXT_HINT",
    "TYPED_HINTS",
    "WORLD_STATE_HINT",
    "ExactJsonValue",
    "JsonValue",
    "TypedDecoders",
    "decoders_for",
    "typed_decoders",
]

JSON_DEPTH = 4
"""How deeply a :data:`JsonValue` may nest (arrays and objects)."""


def _bounded_json(depth: int, numbers: tuple[Any, ...]) -> Any:
    """JSON values nested at most ``depth`` deep whose numbers decode as one of ``numbers``."""
    scalars = (str, *numbers, bool, None)
    value: Any = Union[scalars]  # noqa: UP007 - a runtime type expression
    for _ in range(depth):
        value = Union[(*scalars, list[value], dict[str, value])]
    return value


_INT64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]

JsonValue: Any = _bounded_json(JSON_DEPTH, (float,))
"""Any JSON value nested at most :data:`JSON_DEPTH` deep, numbers as finite floats (a value
only checked, never read)."""

EXACT_DEPTH = 6
"""How deeply an :data:`ExactJsonValue` may nest."""


ExactJsonValue: Any = _bounded_json(EXACT_DEPTH, (_INT64, float))
"""A JSON value that is read: decoded to exactly what ``orjson.loads`` gives (integers within
64 bits, where orjson gives an ``int`` too; finite floats, parsed to the same double; nesting at
most :data:`EXACT_DEPTH` deep). Anything else is refused."""

_ITEM_EXTRAS = ("id", "status", "phase", "internal_chat_message_metadata_passthrough")
_STARTED_EXTRAS = ("started_at", "root_turn_id", "collaboration_mode_kind", "turn_attribution")
_COMPLETE_EXTRAS = (
    "started_at",
    "completed_at",
    "duration_ms",
    "time_to_first_token_ms",
    "root_turn_id",
)
_EVENT_EXTRAS: dict[str, tuple[str, ...]] = {
    "task_started": _STARTED_EXTRAS,
    "turn_started": _STARTED_EXTRAS,
    "task_complete": _COMPLETE_EXTRAS,
    "turn_complete": _COMPLETE_EXTRAS,
    "user_message": ("kind", "local_images", "text_elements"),
    "agent_message": ("phase", "memory_citation"),
}
"""Fields Codex writes on items and events that the protocol models do not (extras: any value
validates), declared so such lines still decode; any other unknown field sends the line to the
``orjson`` path."""

_TURN_CONTEXT_EXTRAS = (
    "active_permission_profile",
    "approvals_reviewer",
    "collaboration_mode",
    "cyber_access_program",
    "developer_instructions",
    "disabled_plugin_ids",
    "file_system_sandbox_policy",
    "multi_agent_version",
    "permission_profile",
    "personality",
    "root_turn_id",
    "truncation_policy",
    "user_instructions",
    "workspace_roots",
)
"""Turn-context fields Codex writes that ``TurnContextItem`` does not model (extras)."""
_TURN_CONTEXT_READ = frozenset({"turn_id", "model", "comp_hash", "realtime_active"})
"""The turn-context fields replay reads (``entries.TurnContextEntry``)."""

_ENVELOPE_EXTRAS = ("ordinal", "metadata")

HINT_SLICE = slice(48, 51)
"""Where the line ``type`` starts in ``{"timestamp":"<24 characters>","type":"…`` (the timestamp
format of Codex and mini-codex: milliseconds and ``Z``): three bytes that pick a decoder."""
ITEM_HINT = b"res"
EVENT_HINT = b"eve"
WORLD_STATE_HINT = b"wor"
TURN_CONTEXT_HINT = b"tur"

DECODE_REFUSED: tuple[type[BaseException], ...] = (msgspec.MsgspecError, RecursionError)
"""What a decoder raises for a line it does not take (the ``orjson`` path decides)."""


def _annotation_type(annotation: Any) -> Any:
    """The msgspec type for a field annotation of ``exact.ITEM_FIELDS``."""
    if annotation is Any:
        return JsonValue
    if annotation in (str, bool, type(None)):
        return annotation
    if annotation is int:
        return _INT64
    origin = get_origin(annotation)
    if origin is list:
        (member,) = get_args(annotation)
        # Objects (typed ones, like message content parts, are checked by ``content_facts``).
        return list[JsonValue] if member is Any else list[dict[str, JsonValue]]
    if origin is dict:
        return dict[str, JsonValue]
    options = get_args(annotation)
    if options:  # a union
        return Union[tuple(_annotation_type(option) for option in options)]  # noqa: UP007
    raise TypeError(f"no typed decoding for the annotation {annotation!r}")


_SPEC_TYPES: dict[type, Any] = {
    str: str,
    int: _INT64,
    bool: bool,
    type(None): None,
    dict: dict[str, JsonValue],
    list: list[JsonValue],
}


def _spec_type(types: frozenset[type] | None) -> Any:
    if types is None:
        return JsonValue
    members = [_SPEC_TYPES[kind] for kind in sorted(types, key=lambda kind: kind.__name__)]
    return members[0] if len(members) == 1 else Union[tuple(members)]  # noqa: UP007


def _struct(
    name: str, tag: str, fields: dict[str, tuple[Any, bool]], extras: tuple[str, ...]
) -> type[msgspec.Struct]:
    """A struct with ``fields`` (msgspec type, required) and the ``extras`` it lacks, tagged
    (``"type": tag``) unless ``tag`` is empty."""
    required = [(field, kind) for field, (kind, needed) in fields.items() if needed]
    optional = [(field, kind, None) for field, (kind, needed) in fields.items() if not needed]
    declared = [(field, JsonValue, None) for field in extras if field not in fields]
    tagging: dict[str, Any] = {"tag_field": "type", "tag": tag} if tag else {}
    return msgspec.defstruct(
        name,
        [*required, *optional, *declared],
        forbid_unknown_fields=True,
        gc=False,
        **tagging,
    )


def _item_struct(kind: str, fields: dict[str, tuple[Any, bool]]) -> type[msgspec.Struct]:
    typed = {
        field: (_annotation_type(annotation), required)
        for field, (annotation, required) in fields.items()
        if field != "type"
    }
    return _struct(f"Typed_{kind}", kind, typed, _ITEM_EXTRAS)


def _typed_spec(spec: FieldSpec) -> dict[str, tuple[Any, bool]]:
    return {field: (_spec_type(types), required) for field, (types, required) in spec.items()}


def _event_struct(kind: str, spec: FieldSpec) -> type[msgspec.Struct]:
    return _struct(f"Typed_{kind}", kind, _typed_spec(spec), _EVENT_EXTRAS.get(kind, ()))


class TypedDecoders:
    """The decoders, built from the protocol's current models (see :func:`typed_decoders`)."""

    def __init__(self, event_models: dict[str, type[BaseModel]]) -> None:
        self.items: dict[type[msgspec.Struct], str] = {
            _item_struct(kind, fields): kind for kind, fields in ITEM_FIELDS.items()
        }
        """Item struct → item ``type``."""
        self.message: type[msgspec.Struct] | None = next(
            (struct for struct, kind in self.items.items() if kind == "message"), None
        )
        """The ``message`` item struct (its parts go through ``classify.content_facts``)."""
        self.events: dict[type[msgspec.Struct], str] = {}
        """Event struct → event ``type``."""
        for kind, model in event_models.items():
            spec = exact_field_spec(model)
            if spec is not None:
                self.events[_event_struct(kind, spec)] = kind
        self.decode_item: Callable[[bytes], Any] = _line_decoder("response_item", self.items)
        """A ``response_item`` line → a struct with ``payload`` (an item struct), or raises
        one of :data:`DECODE_REFUSED`."""
        self.decode_event: Callable[[bytes], Any] = _line_decoder("event_msg", self.events)
        """An ``event_msg`` line → a struct with ``payload`` (an event struct), or raises."""
        state = msgspec.defstruct(
            "Typed_world_state",
            [("full", bool), ("state", dict[str, ExactJsonValue])],
            forbid_unknown_fields=True,
            gc=False,
        )
        self.decode_world_state: Callable[[bytes], Any] = _line_decoder("world_state", state)
        """A ``world_state`` line → a struct with ``payload.full`` and ``payload.state`` (the
        state as ``orjson`` parses it), or raises."""
        context = exact_field_spec(TurnContextItem)
        self.decode_turn_context: Callable[[bytes], Any] | None = (
            None
            if context is None or not _TURN_CONTEXT_READ <= set(context)
            else _line_decoder(
                "turn_context",
                _struct("Typed_turn_context", "", _typed_spec(context), _TURN_CONTEXT_EXTRAS),
            )
        )
        """A ``turn_context`` line whose payload passes the turn context's exact check → a
        struct with ``payload`` (a struct: ``turn_id``, ``model``, ``comp_hash``,
        ``realtime_active``…), or raises; None when that check is not a simple one."""


def _line_decoder(kind: str, payload: Any) -> Any:
    """The decoder of the lines of ``kind`` whose payload is a ``payload`` (a type, or a
    dict of the structs that may be)."""
    if isinstance(payload, dict):
        payload = Union[tuple(payload)]  # noqa: UP007
    line = msgspec.defstruct(
        f"Typed_{kind}_line",
        [
            ("timestamp", str),
            ("type", Literal[kind]),
            ("payload", payload),
            *((field, JsonValue, None) for field in _ENVELOPE_EXTRAS),
        ],
        forbid_unknown_fields=True,
        gc=False,
    )
    return msgspec.json.Decoder(line).decode


@functools.cache
def typed_decoders() -> TypedDecoders:
    """The decoders (built on first use: no work at import)."""
    return TypedDecoders(EVENT_MODELS)


TYPED_HINTS = frozenset({ITEM_HINT, EVENT_HINT, WORLD_STATE_HINT, TURN_CONTEXT_HINT})
"""The hints that pick a decoder (the lines of those kinds mini-codex writes have them)."""
ORDINAL_HINTS = frozenset(b'":%d' % digit for digit in range(10))
"""What a line Codex writes holds at :data:`HINT_SLICE`: ``"ordinal":N`` comes before its
``type`` (``{"timestamp":"<24 characters>","ordinal":N,"type":…``)."""


def _refuse(raw: bytes) -> Any:
    raise msgspec.DecodeError("no typed decoding for this file")


class _Refusing:
    """Decoders that take no line (every line takes the ``orjson`` path, which decides the
    same), for a file whose lines have no typed hints."""

    def __init__(self) -> None:
        self.items: dict[type[msgspec.Struct], str] = {}
        self.message: type[msgspec.Struct] | None = None
        self.events: dict[type[msgspec.Struct], str] = {}
        self.decode_item = self.decode_event = self.decode_world_state = _refuse
        self.decode_turn_context: Callable[[bytes], Any] | None = _refuse


def decoders_for(newest: Sequence[bytes]) -> TypedDecoders | _Refusing:
    """The decoders for a file whose newest block of lines is ``newest``: decoders that refuse
    every line when those lines are Codex's (an ordinal hint, no typed hint: building the typed
    decoders would cost more than the few lines of such a file they could take), else the
    typed ones. Either way the replay is the same (see the module docstring's contract)."""
    hints = {raw[HINT_SLICE] for raw in newest}
    if hints & ORDINAL_HINTS and not hints & TYPED_HINTS:
        return _Refusing()
    return typed_decoders()
