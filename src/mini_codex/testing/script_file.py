"""The script-file format of ``--model scripted:PATH``, and its loader.

A script is a JSONL file: one JSON object per line, one line per model request, in order. Blank
lines are skipped. A line is either a response::

    {"output": [<item>, ...], "end_turn": false, "usage": {...}, "response_id": "resp_1"}

(``end_turn``, ``usage`` and ``response_id`` are optional) or a failure of that request::

    {"error": {"kind": "stream", "message": "...", "retry_after_s": 0.5}, "output": [<item>, ...]}

(``message``, ``retry_after_s`` and ``output`` are optional; with ``output`` the items are streamed
before the error, as a stream cut mid-way). Error kinds: ``stream``, ``rate_limit``, ``server``,
``connection``, ``timeout`` (retryable) and ``context_window``, ``usage_limit``, ``quota``,
``invalid_request``, ``auth`` (not retryable).

Items are Responses-API output items, with conveniences for hand-written scripts:

* ``{"type": "message", "content": "text"}``: ``role`` defaults to ``assistant`` (the only role a
  model produces); a string ``content`` means one ``output_text`` part;
* ``{"type": "function_call", "name": "shell", "arguments": {"command": "ls"}}``: ``arguments``
  may be an object (encoded as JSON); ``call_id`` and ``id`` may be left out;
* ``{"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch..."}``;
* ``{"type": "reasoning", "summary": "text"}``: a string summary means one ``summary_text`` part;
* any other ``type`` (``web_search_call``, ...) is passed through unchanged. Tool *outputs*
  (``function_call_output``, ``custom_tool_call_output``) are not model output and are refused.

``usage`` is ``{"input_tokens": int, "output_tokens": int}`` plus optional
``cached_input_tokens``, ``reasoning_output_tokens`` and ``total_tokens`` (default: the sum).
Every problem is a ``ConfigError`` naming the file and the line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from mini_codex.errors import ConfigError, ModelError
from mini_codex.models import errors
from mini_codex.models.base import ModelClientOptions, TokenUsage
from mini_codex.models.errors import ProviderError
from mini_codex.protocol.items import ResponseItem, parse_response_item
from mini_codex.testing.scripted_model import (
    ScriptedFailure,
    ScriptedModel,
    ScriptedResponse,
    ScriptStep,
)

ERROR_KINDS: dict[str, type[ProviderError]] = {
    "stream": errors.StreamError,
    "rate_limit": errors.RateLimited,
    "server": errors.ServerError,
    "connection": errors.ConnectionFailed,
    "timeout": errors.Timeout,
    "context_window": errors.ContextWindowExceeded,
    "usage_limit": errors.UsageLimitReached,
    "quota": errors.QuotaExceeded,
    "invalid_request": errors.InvalidRequest,
    "auth": errors.AuthenticationError,
}

_RESPONSE_KEYS = frozenset({"output", "end_turn", "usage", "response_id"})
_FAILURE_KEYS = frozenset({"error", "output"})
_ERROR_KEYS = frozenset({"kind", "message", "retry_after_s"})
_USAGE_KEYS = frozenset(
    {
        "input_tokens",
        "cached_input_tokens",
        "output_tokens",
        "reasoning_output_tokens",
        "total_tokens",
    }
)
_NOT_MODEL_OUTPUT = frozenset({"function_call_output", "custom_tool_call_output"})


class _LineError(Exception):
    """A problem on the current line (the loader adds file and line number)."""


def scripted_model_from_options(options: ModelClientOptions) -> ScriptedModel:
    """Registry factory for ``scripted:PATH``: ``options.model`` is the script path."""
    return ScriptedModel(load_script(options.model), name=options.model)


def load_script(path: str | Path) -> list[ScriptStep]:
    """Read a script file; raise ``ConfigError("PATH:LINE: ...")`` on any problem."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read model script {str(path)!r}: {exc.strerror or exc}") from exc
    steps: list[ScriptStep] = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            steps.append(parse_script_line(raw))
        except _LineError as exc:
            raise ConfigError(f"{path}:{lineno}: {exc}") from None
    if not steps:
        raise ConfigError(f"{path}: model script has no responses")
    return steps


def parse_script_line(raw: bytes | str) -> ScriptStep:
    """Parse one script line (raises ``_LineError`` with a message for the user)."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _LineError(f"invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise _LineError(f"expected a JSON object, got {_kind(value)}")
    if "error" in value:
        _check_keys(value, _FAILURE_KEYS, "a failure line")
        output = _parse_output(value["output"]) if "output" in value else ()
        return ScriptedFailure(_parse_error(value["error"]), output)
    if "output" not in value:
        raise _LineError('missing "output" (expected {"output": [...]} or {"error": {...}})')
    _check_keys(value, _RESPONSE_KEYS, "a response line")
    end_turn = value.get("end_turn")
    if end_turn is not None and not isinstance(end_turn, bool):
        raise _LineError(f'"end_turn" must be true or false, got {_kind(end_turn)}')
    response_id = value.get("response_id")
    if response_id is not None and not isinstance(response_id, str):
        raise _LineError(f'"response_id" must be a string, got {_kind(response_id)}')
    usage = _parse_usage(value["usage"]) if value.get("usage") is not None else None
    return ScriptedResponse(
        _parse_output(value["output"]), end_turn=end_turn, usage=usage, response_id=response_id
    )


def _parse_output(value: Any) -> tuple[ResponseItem, ...]:
    if not isinstance(value, list):
        raise _LineError(f'"output" must be a list of response items, got {_kind(value)}')
    return tuple(_parse_item(index, item) for index, item in enumerate(value))


def _parse_item(index: int, value: Any) -> ResponseItem:
    where = f"output item {index}"
    if not isinstance(value, dict):
        raise _LineError(f"{where}: expected a JSON object, got {_kind(value)}")
    kind = value.get("type")
    if not isinstance(kind, str) or not kind:
        raise _LineError(f'{where}: missing "type"')
    if kind in _NOT_MODEL_OUTPUT:
        raise _LineError(f"{where}: {kind!r} is a tool output, not something a model produces")
    item = dict(value)
    expand = _EXPANSIONS.get(kind)
    if expand is not None:
        expand(where, item)
    try:
        return parse_response_item(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(part) for part in first["loc"][1:]) or kind
        raise _LineError(f"{where} ({kind}): {loc}: {first['msg']}") from None


def _expand_message(where: str, item: dict[str, Any]) -> None:
    role = item.setdefault("role", "assistant")
    if role != "assistant":
        raise _LineError(f'{where}: a model response message has role "assistant", not {role!r}')
    if isinstance(item.get("content"), str):
        item["content"] = [{"type": "output_text", "text": item["content"]}]


def _expand_function_call(where: str, item: dict[str, Any]) -> None:
    arguments = item.get("arguments")
    if isinstance(arguments, dict | list):
        item["arguments"] = orjson.dumps(arguments).decode()
    item.setdefault("call_id", "")


def _expand_custom_tool_call(where: str, item: dict[str, Any]) -> None:
    item.setdefault("call_id", "")


def _expand_reasoning(where: str, item: dict[str, Any]) -> None:
    if isinstance(item.get("summary"), str):
        item["summary"] = [{"type": "summary_text", "text": item["summary"]}]


_EXPANSIONS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    "message": _expand_message,
    "function_call": _expand_function_call,
    "custom_tool_call": _expand_custom_tool_call,
    "reasoning": _expand_reasoning,
}


def _parse_error(value: Any) -> ModelError:
    if not isinstance(value, dict):
        raise _LineError(f'"error" must be an object with a "kind", got {_kind(value)}')
    _check_keys(value, _ERROR_KEYS, '"error"')
    kind = value.get("kind")
    cls = ERROR_KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        known = ", ".join(ERROR_KINDS)
        raise _LineError(f'"error.kind" must be one of {known}; got {kind!r}')
    message = value.get("message")
    if message is not None and not isinstance(message, str):
        raise _LineError(f'"error.message" must be a string, got {_kind(message)}')
    retry_after = value.get("retry_after_s")
    if retry_after is not None and (
        isinstance(retry_after, bool) or not isinstance(retry_after, int | float)
    ):
        raise _LineError(f'"error.retry_after_s" must be a number, got {_kind(retry_after)}')
    return cls(message, retry_after_s=None if retry_after is None else float(retry_after))


def _parse_usage(value: Any) -> TokenUsage:
    if not isinstance(value, dict):
        raise _LineError(f'"usage" must be an object, got {_kind(value)}')
    _check_keys(value, _USAGE_KEYS, '"usage"')
    counts: dict[str, int] = {}
    for key, count in value.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise _LineError(f'"usage.{key}" must be a non-negative integer, got {count!r}')
        counts[key] = count
    for key in ("input_tokens", "output_tokens"):
        if key not in counts:
            raise _LineError(f'"usage" is missing "{key}"')
    counts.setdefault("total_tokens", counts["input_tokens"] + counts["output_tokens"])
    return TokenUsage(**counts)


def _check_keys(value: dict[str, Any], allowed: frozenset[str], what: str) -> None:
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise _LineError(
            f"unknown key(s) {', '.join(map(repr, unknown))} in {what} "
            f"(allowed: {', '.join(sorted(allowed))})"
        )


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )
