"""Validate app-server messages against the schema the real Codex CLI 0.169.0 generated.

``ProtocolValidator.check(messages, methods)`` validates every message a server wrote:

* a notification (``method``, no ``id``) against ``ServerNotification.json`` (its ``oneOf`` is
  selected by ``method``, so the params are checked against that notification's own schema);
* a server request (``method`` and ``id``) against ``ServerRequest.json``;
* a response against the ``*Response.json`` of the method it answers (the response name is the
  request's params name from ``ClientRequest.json`` with ``Params`` → ``Response``);
* an error against ``JSONRPCError.json`` (the parse error of a non-JSON line has ``id: null``,
  JSON-RPC 2.0's form, which Codex's ``RequestId`` cannot express: it is checked as that form).

It returns the list of problems (empty when every message validates).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

SCHEMA = Path(__file__).parents[1] / "fixtures" / "app_server" / "schema-0.169.0"
JsonDict = dict[str, Any]


@cache
def _validator(relative: str) -> Draft7Validator:
    return Draft7Validator(json.loads((SCHEMA / relative).read_text()))


@cache
def _one_of(relative: str) -> dict[str, Draft7Validator]:
    """method → a validator of that one variant (with the file's definitions)."""
    document = json.loads((SCHEMA / relative).read_text())
    variants: dict[str, Draft7Validator] = {}
    for variant in document["oneOf"]:
        method = variant["properties"]["method"]["enum"][0]
        variants[method] = Draft7Validator({**variant, "definitions": document["definitions"]})
    return variants


@cache
def response_file(method: str) -> str | None:
    """The response schema file of a client request method."""
    if method == "initialize":
        return "v1/InitializeResponse.json"
    document = json.loads((SCHEMA / "ClientRequest.json").read_text())
    for variant in document["oneOf"]:
        if variant["properties"]["method"]["enum"][0] != method:
            continue
        ref = variant["properties"].get("params", {}).get("$ref", "")
        name = ref.rsplit("/", 1)[-1].replace("Params", "Response")
        if (SCHEMA / "v2" / f"{name}.json").is_file():
            return f"v2/{name}.json"
    return None


def client_methods() -> set[str]:
    document = json.loads((SCHEMA / "ClientRequest.json").read_text())
    return {variant["properties"]["method"]["enum"][0] for variant in document["oneOf"]}


def _errors(validator: Draft7Validator, value: Any) -> list[str]:
    return [
        f"{'/'.join(str(p) for p in error.absolute_path)}: {error.message[:300]}"
        for error in validator.iter_errors(value)
    ]


def check_message(message: JsonDict, methods: Mapping[Any, str]) -> list[str]:
    """Problems of one message; ``methods`` maps the client's request ids to their methods."""
    if "jsonrpc" in message:
        return ["has a `jsonrpc` field (Codex omits it)"]
    if "method" in message and "id" not in message:
        variant = _one_of("ServerNotification.json").get(message["method"])
        if variant is None:
            return [f"unknown notification {message['method']!r}"]
        return _errors(variant, message)
    if "method" in message:
        variant = _one_of("ServerRequest.json").get(message["method"])
        if variant is None:
            return [f"unknown server request {message['method']!r}"]
        return _errors(variant, message)
    if "error" in message:
        if message.get("id") is None:
            error = message["error"]
            ok = isinstance(error, dict) and error.get("code") in (-32700, -32600)
            return [] if ok and isinstance(error.get("message"), str) else ["bad id-less error"]
        return _errors(_validator("JSONRPCError.json"), message)
    if "result" in message:
        method = methods.get(message.get("id"))
        if method is None:
            return [f"a response to an unknown request id {message.get('id')!r}"]
        relative = response_file(method)
        if relative is None:
            return [f"no response schema for {method}"]
        return _errors(_validator(relative), message["result"])
    return ["neither a notification, a request nor a response"]


def check_all(messages: Sequence[JsonDict], methods: Mapping[Any, str]) -> list[str]:
    problems = []
    for index, message in enumerate(messages):
        for problem in check_message(message, methods):
            shown = json.dumps(message)[:200]
            problems.append(f"message {index} {shown}: {problem}")
    return problems
