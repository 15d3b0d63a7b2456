"""Server elicitation requests (``elicitation/create``) and their answers.

A server may ask the user for input during a request (a form with a flat JSON schema, or a URL to
open). mini-codex always declares the capability; who answers is an ``ElicitationHandler`` given
by the front end (the ``exec`` terminal prompt, an SDK callback, a test):

* no handler (nobody can be asked) → ``decline``;
* ``accept`` with ``content`` → the content is validated against the requested schema
  (``jsonschema``); an answer that does not match is not sent: the server gets ``decline`` and
  the handler's caller a one-line reason through ``on_invalid``;
* a handler that raises → ``cancel`` (the failure never reaches the server's tool call as a
  crash).

What the front ends show is ``ElicitationRequest.describe()``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "ElicitationAnswer",
    "ElicitationHandler",
    "ElicitationRequest",
    "answer_problem",
    "convert_field",
    "field_choices",
    "settle_answer",
]

Action = Literal["accept", "decline", "cancel"]

_TRUE = {"y", "yes", "true", "1"}
_FALSE = {"n", "no", "false", "0"}


def field_choices(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """``(value, title)`` of an enum field (``enum``, titled ``oneOf``, or an array of either)."""
    items = spec.get("items") if spec.get("type") == "array" else spec
    items = items if isinstance(items, dict) else {}
    if "enum" in items:
        names = items.get("enumNames") or []
        return [
            (str(value), str(names[index]) if index < len(names) else str(value))
            for index, value in enumerate(items["enum"])
        ]
    options = items.get("oneOf") or items.get("anyOf") or []
    return [
        (str(option["const"]), str(option.get("title", option["const"])))
        for option in options
        if isinstance(option, dict) and "const" in option
    ]


def _choice(spec: dict[str, Any], text: str) -> str:
    """A choice typed as its value or its title (any case) → its value."""
    lowered = text.strip().lower()
    for value, title in field_choices(spec):
        if lowered in (value.lower(), title.lower()):
            return value
    return text.strip()


def convert_field(spec: dict[str, Any], text: str) -> Any:
    """``text`` as the JSON value of a field of type ``spec["type"]``; raises ``ValueError``.

    Booleans take yes/no, arrays comma-separated items, enum fields a value or its title."""
    kind = spec.get("type", "string")
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    if kind == "boolean":
        lowered = text.strip().lower()
        if lowered in _TRUE | _FALSE:
            return lowered in _TRUE
        raise ValueError(f"expected yes or no, got {text!r}")
    if kind == "array":
        return [_choice(spec, part) for part in text.split(",") if part.strip()]
    return _choice(spec, text) if field_choices(spec) else text


@dataclass(frozen=True)
class ElicitationRequest:
    server: str
    message: str
    mode: Literal["form", "url"] = "form"
    requested_schema: dict[str, Any] = field(default_factory=dict)
    url: str | None = None
    elicitation_id: str | None = None
    """A URL request's id (the server matches its completion notification with it)."""
    meta: dict[str, Any] | None = None
    """The request's ``_meta``, as the server sent it."""

    def describe(self) -> str:
        """What the user is shown: the server, its message, and the fields or the URL."""
        lines = [f"MCP server {self.server} asks: {self.message}"]
        if self.mode == "url" and self.url:
            lines.append(f"open: {self.url}")
        properties = self.requested_schema.get("properties") or {}
        required = set(self.requested_schema.get("required") or ())
        for name, spec in properties.items():
            spec = spec if isinstance(spec, dict) else {}
            kind = spec.get("type", "string")
            if "enum" in spec:
                kind = "|".join(str(value) for value in spec["enum"])
            mark = "" if name in required else " (optional)"
            about = spec.get("description") or spec.get("title") or ""
            lines.append(f"  {name}: {kind}{mark}" + (f" - {about}" if about else ""))
        return "\n".join(lines)


@dataclass(frozen=True)
class ElicitationAnswer:
    action: Action
    content: dict[str, Any] | None = None

    @classmethod
    def decline(cls) -> ElicitationAnswer:
        return cls("decline")


ElicitationHandler = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]


def answer_problem(request: ElicitationRequest, answer: ElicitationAnswer) -> str | None:
    """Why an ``accept`` answer does not match the requested schema (None: it does)."""
    if answer.action != "accept" or request.mode != "form":
        return None
    import jsonschema  # only when an answer is checked (it takes a while to import)

    content = answer.content if answer.content is not None else {}
    schema = request.requested_schema or {"type": "object"}
    try:
        validator = jsonschema.Draft202012Validator(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(content))
    except jsonschema.exceptions.SchemaError as exc:
        return f"the server's schema is invalid: {exc.message}"
    if error is None:
        return None
    where = ".".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


async def settle_answer(
    request: ElicitationRequest,
    handler: ElicitationHandler | None,
    on_invalid: Callable[[str], None] | None = None,
) -> ElicitationAnswer:
    """Ask ``handler`` and return what goes back to the server (see the module docstring)."""
    if handler is None:
        return ElicitationAnswer.decline()
    try:
        answer = await handler(request)
    except Exception as exc:  # a front end's bug must not crash the server's request
        if on_invalid is not None:
            on_invalid(f"elicitation from {request.server} failed: {exc}")
        return ElicitationAnswer("cancel")
    problem = answer_problem(request, answer)
    if problem is not None:
        if on_invalid is not None:
            on_invalid(f"elicitation answer for {request.server} declined: {problem}")
        return ElicitationAnswer.decline()
    if answer.action == "accept" and request.mode == "form" and answer.content is None:
        return ElicitationAnswer("accept", {})
    return answer
