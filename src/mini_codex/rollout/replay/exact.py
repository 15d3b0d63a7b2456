"""Exact-type validity checks: parsed JSON that provably validates, without pydantic (pure).

What belongs here: deciding from a parsed JSON payload, with a few ``type(x) is T`` checks, that
its protocol model would validate it *as is* (no coercion, no error), so replay can keep the raw
JSON and build the model only when someone reads it (``history.py``); and :func:`item_source`,
which falls back to pydantic when such a check is not conclusive. What does not: the replay view
(``entries.py``, ``classify.py``).

A check answers True only when validation certainly succeeds and the model's ``to_json()`` equals
the input; False means "not proven" (pydantic decides). Each response-item check is written for
the fields its model had when it was written; :data:`ITEM_CHECKS` only holds the checks whose
model (and, for messages, content-part models) still has exactly those fields and no validators
(see :func:`_pinned`), so a protocol change makes replay slower (pydantic decides), never wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeAlias, get_args, get_origin

from pydantic import BaseModel, Tag

from mini_codex import protocol
from mini_codex.protocol import ResponseItem
from mini_codex.protocol.items import RESPONSE_ITEM_ADAPTER, ContentPart
from mini_codex.rollout.replay.history import ItemSource
from mini_codex.rollout.replay.lines import DECODE_ERRORS

__all__ = [
    "ITEM_CHECKS",
    "ITEM_FIELDS",
    "MODELLED_ITEM_TYPES",
    "PART_CHECKS",
    "FieldSpec",
    "exact_field_spec",
    "fields_check",
    "item_source",
    "message_is_exact",
]

# --- models with simple fields --------------------------------------------------------------------

FieldSpec: TypeAlias = dict[str, tuple[frozenset[type] | None, bool]]
"""Field name → (the JSON types that validate as-is, or None for any value; required)."""


def exact_field_spec(model: type[BaseModel]) -> FieldSpec | None:
    """The exact JSON types each field of ``model`` accepts without coercion, when simple.

    None when some field needs real validation (nested models, typed containers); then only
    pydantic can decide. The ``type`` tag is skipped: dispatch already checked it.
    """
    if not _plain(model):
        return None
    spec: FieldSpec = {}
    for name, info in model.model_fields.items():
        if name == "type":
            continue
        allowed: set[type] = set()
        for option in get_args(info.annotation) or (info.annotation,):
            if option is Any:
                allowed = set()
                break
            origin = get_origin(option)
            if option in (str, int, bool, type(None), dict, list):
                allowed.add(option)
            elif origin in (list, dict) and all(
                arg is Any or arg is str for arg in get_args(option)
            ):
                allowed.add(origin)
            else:
                return None
        alias = info.alias or name
        spec[alias] = (frozenset(allowed) if allowed else None, info.is_required())
    return spec


def fields_check(spec: FieldSpec) -> Callable[[dict[str, Any]], bool]:
    """Does a payload have the exact JSON types ``spec`` allows (required fields present)? A
    closure over the restricted fields only (a field that takes any value and is optional needs
    no look)."""
    fields = tuple(
        (name, types, required)
        for name, (types, required) in spec.items()
        if types is not None or required
    )

    def check(payload: dict[str, Any]) -> bool:
        for name, types, required in fields:
            if name in payload:
                if types is not None and type(payload[name]) not in types:
                    return False
            elif required:
                return False
        return True

    return check


# --- response items -------------------------------------------------------------------------------


# Written for speed (they run once per history item of a replayed file): ``in`` and subscripts
# rather than ``get``, no helper calls on the common path.

_STR_NONE = frozenset({str, type(None)})


def _dicts(value: object) -> bool:
    """A JSON array of objects (``list[dict[str, Any]]``: JSON object keys are strings)."""
    if type(value) is not list:
        return False
    for member in value:
        if type(member) is not dict:
            return False
    return True


def _text_part(part: dict[str, Any]) -> bool:
    return "text" in part and type(part["text"]) is str


def _image_part(part: dict[str, Any]) -> bool:
    return ("image_url" not in part or type(part["image_url"]) in _STR_NONE) and (
        "detail" not in part or type(part["detail"]) in _STR_NONE
    )


PART_CHECKS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "input_text": _text_part,
    "output_text": _text_part,
    "input_image": _image_part,
}
"""Content parts the protocol models; any other ``type`` string is an ``UnknownContent``."""


def message_is_exact(payload: dict[str, Any]) -> bool:
    """A ``message`` payload that validates as is (its ``type`` already checked)."""
    if "role" not in payload or type(payload["role"]) is not str:
        return False
    if "id" in payload and type(payload["id"]) not in _STR_NONE:
        return False
    content = payload.get("content")
    if type(content) is not list:
        return False
    for part in content:
        if type(part) is not dict:
            return False
        kind = part.get("type")
        if type(kind) is not str:
            return False
        check = PART_CHECKS.get(kind)
        if check is not None and not check(part):
            return False
    return True


def _reasoning(payload: dict[str, Any]) -> bool:
    if "summary" in payload:
        summary = payload["summary"]
        if type(summary) is not list:
            return False
        for member in summary:
            if type(member) is not dict:
                return False
    if "content" in payload:
        content = payload["content"]
        if content is not None and not _dicts(content):
            return False
    return (
        "encrypted_content" not in payload or type(payload["encrypted_content"]) in _STR_NONE
    ) and ("id" not in payload or type(payload["id"]) in _STR_NONE)


def _tool_call(argument: str, *optional: str) -> Callable[[dict[str, Any]], bool]:
    """The check of a tool call whose input field is ``argument`` (``arguments``, ``input``),
    with ``id`` and the ``optional`` fields each absent, a string or None."""
    optional = ("id", *optional)

    def check(payload: dict[str, Any]) -> bool:
        try:
            name, value, call_id = payload["name"], payload[argument], payload["call_id"]
        except KeyError:
            return False
        return (
            type(name) is str
            and type(value) is str
            and type(call_id) is str
            and all(key not in payload or type(payload[key]) in _STR_NONE for key in optional)
        )

    return check


def _tool_output(payload: dict[str, Any]) -> bool:
    try:
        call_id, output = payload["call_id"], payload["output"]
    except KeyError:
        return False
    return type(call_id) is str and (type(output) is str or _dicts(output))


_OPTIONAL_STR = str | None
_OUTPUT = str | list[dict[str, Any]]
_DICTS = list[dict[str, Any]]

Fields: TypeAlias = dict[str, tuple[Any, bool]]
"""Field name → (annotation, required): the fields a check was written for."""


def _tool_call_fields(kind: str, argument: str, *optional: str) -> Fields:
    """The fields a :func:`_tool_call` check was written for."""
    return {
        "type": (Literal[kind], False),
        "name": (str, True),
        argument: (str, True),
        "call_id": (str, True),
        "id": (_OPTIONAL_STR, False),
        **dict.fromkeys(optional, (_OPTIONAL_STR, False)),
    }


def _tool_output_fields(kind: str) -> Fields:
    """The fields the :func:`_tool_output` check was written for."""
    return {"type": (Literal[kind], False), "call_id": (str, True), "output": (_OUTPUT, True)}


_WRITTEN_FOR: dict[str, tuple[type[BaseModel], Fields, Callable[[dict[str, Any]], bool]]] = {
    "message": (
        protocol.Message,
        {
            "type": (Literal["message"], False),
            "role": (str, True),
            "content": (list[ContentPart], True),
            "id": (_OPTIONAL_STR, False),
        },
        message_is_exact,
    ),
    "reasoning": (
        protocol.Reasoning,
        {
            "type": (Literal["reasoning"], False),
            "summary": (_DICTS, False),
            "content": (_DICTS | None, False),
            "encrypted_content": (_OPTIONAL_STR, False),
            "id": (_OPTIONAL_STR, False),
        },
        _reasoning,
    ),
    "function_call": (
        protocol.FunctionCall,
        _tool_call_fields("function_call", "arguments", "namespace"),
        _tool_call("arguments", "namespace"),
    ),
    "function_call_output": (
        protocol.FunctionCallOutput,
        _tool_output_fields("function_call_output"),
        _tool_output,
    ),
    "custom_tool_call": (
        protocol.CustomToolCall,
        _tool_call_fields("custom_tool_call", "input"),
        _tool_call("input"),
    ),
    "custom_tool_call_output": (
        protocol.CustomToolCallOutput,
        _tool_output_fields("custom_tool_call_output"),
        _tool_output,
    ),
}
"""Each modelled item type: its model, the fields its check was written for, the check."""

_PARTS_WRITTEN_FOR: dict[str, tuple[type[BaseModel], Fields]] = {
    "input_text": (
        protocol.InputText,
        {"type": (Literal["input_text"], False), "text": (str, True)},
    ),
    "output_text": (
        protocol.OutputText,
        {"type": (Literal["output_text"], False), "text": (str, True)},
    ),
    "input_image": (
        protocol.InputImage,
        {
            "type": (Literal["input_image"], False),
            "image_url": (_OPTIONAL_STR, False),
            "detail": (_OPTIONAL_STR, False),
        },
    ),
    "unknown": (protocol.UnknownContent, {"type": (str, True)}),
}


def _union_tags(union: Any) -> dict[str, Any]:
    """Tag → model of a ``Discriminator`` union of ``Annotated[Model, Tag(...)]`` members."""
    members = get_args(get_args(union)[0])
    return {
        extra.tag: get_args(member)[0]
        for member in members
        for extra in get_args(member)[1:]
        if isinstance(extra, Tag)
    }


def _plain(model: type[BaseModel]) -> bool:
    """Unknown fields allowed and no custom validators: valid field types are all it takes."""
    decorators = model.__pydantic_decorators__
    return model.model_config.get("extra") == "allow" and not (
        decorators.validators
        or decorators.field_validators
        or decorators.root_validators
        or decorators.model_validators
    )


def _pinned(model: type[BaseModel], fields: Fields) -> bool:
    """Does ``model`` still validate like its check assumes: exactly ``fields`` (annotation,
    required, no alias), and :func:`_plain`?"""
    actual = {
        name: (info.annotation, info.is_required()) for name, info in model.model_fields.items()
    }
    return (
        actual == fields
        and all(info.alias is None for info in model.model_fields.values())
        and _plain(model)
    )


_ITEM_MODELS = _union_tags(ResponseItem)
_PART_MODELS = _union_tags(ContentPart)

_PARTS_CURRENT = _PART_MODELS == {
    tag: model for tag, (model, _) in _PARTS_WRITTEN_FOR.items()
} and all(_pinned(model, fields) for model, fields in _PARTS_WRITTEN_FOR.values())

MODELLED_ITEM_TYPES = frozenset(_ITEM_MODELS) - {"unknown"}
"""Item ``type`` values with their own model; any other string is an ``UnknownItem``."""

_UNKNOWN_CURRENT = _ITEM_MODELS.get("unknown") is protocol.UnknownItem and _pinned(
    protocol.UnknownItem, {"type": (str, True)}
)

ITEM_CHECKS: dict[str, Callable[[dict[str, Any]], bool]] = {
    kind: check
    for kind, (model, fields, check) in _WRITTEN_FOR.items()
    if _ITEM_MODELS.get(kind) is model
    and _pinned(model, fields)
    and (kind != "message" or _PARTS_CURRENT)
}
"""Item ``type`` → exact check, for the modelled types whose check is still current."""

ITEM_FIELDS: dict[str, Fields] = {
    kind: fields for kind, (_, fields, _) in _WRITTEN_FOR.items() if kind in ITEM_CHECKS
}
"""Item ``type`` → the fields its (current) exact check was written for: annotation, required.
``fast/typed_lines.py`` builds its decoders from these, so they are pinned the same way."""


def item_source(payload: dict[str, Any]) -> ItemSource | None:
    """``payload`` itself when it provably validates, else its typed item, or None (invalid).

    ``payload`` is an object whose ``type`` is a string (the shape check of ``classify``).
    """
    kind = payload["type"]
    check = ITEM_CHECKS.get(kind)
    if check is not None:
        if check(payload):
            return payload
    elif kind not in MODELLED_ITEM_TYPES and _UNKNOWN_CURRENT:
        return payload  # UnknownItem: any object with a string type
    try:
        return RESPONSE_ITEM_ADAPTER.validate_python(payload)
    except DECODE_ERRORS:
        return None
