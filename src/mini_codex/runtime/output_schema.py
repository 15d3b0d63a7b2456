"""``--output-schema``: check a JSON Schema and a final message against it (one rule for the CLI
and the SDK). ``jsonschema`` is imported lazily."""

from __future__ import annotations

from typing import Any

import orjson

from mini_codex.errors import MiniCodexError

__all__ = ["OutputSchemaError", "check_schema", "final_message_error"]


class OutputSchemaError(MiniCodexError):
    """The output schema itself is not a valid JSON Schema."""


def check_schema(schema: Any, *, source: str = "output schema") -> dict[str, Any]:
    """``schema`` if it is a JSON Schema object; else an ``OutputSchemaError``."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        raise OutputSchemaError(f"{source}: a JSON Schema must be an object")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise OutputSchemaError(f"{source}: not a valid JSON Schema: {exc.message}") from None
    return schema


def final_message_error(text: str | None, schema: dict[str, Any]) -> str | None:
    """None when ``text`` is JSON matching ``schema``; else one line saying why not."""
    from jsonschema import Draft202012Validator

    if text is None:
        return "the turn ended without a final message to check against the output schema"
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return "the final message is not JSON, so it does not match the output schema"
    error = next(iter(Draft202012Validator(schema).iter_errors(value)), None)
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return f"the final message does not match the output schema at {where}: {error.message}"
