"""Asking a local model server what it has: Ollama, LM Studio and llama.cpp, each in its own API.

Before a session uses a local server, ``probe_*`` checks (synchronously, with a short timeout)
that it runs and has the model, and reads what only the server knows: the context window and
whether the model does native tool calling.

* Ollama: ``GET /api/tags`` lists the pulled models (``name``; ``NAME`` matches ``NAME:latest``);
  ``POST /api/show`` gives ``capabilities`` (``"tools"``) and ``model_info``
  (``<arch>.context_length``).
* LM Studio: ``GET /api/v0/models`` lists the downloaded models (``id``, ``type``,
  ``capabilities`` with ``"tool_use"``, ``loaded_context_length`` / ``max_context_length``).
* llama.cpp: ``GET /props`` gives ``default_generation_settings.n_ctx`` and
  ``chat_template_caps.supports_tools``.

Every failure is a one-line ``LocalModelError`` that says what to do (start the server, pull the
model). ``root`` is the server's address without the ``/v1`` of its OpenAI-compatible API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx2

from mini_codex.models.local.errors import LocalModelError

PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ServerModel:
    """What a local server says about one model."""

    name: str
    """The model name to send in requests."""
    context_window: int | None
    native_tools: bool


@dataclass(frozen=True)
class ServerKind:
    label: str
    start_hint: str
    get_hint: str


OLLAMA = ServerKind(
    label="Ollama",
    start_hint="start it with `ollama serve`",
    get_hint="pull it with `ollama pull {model}`",
)
LMSTUDIO = ServerKind(
    label="LM Studio",
    start_hint="start its local server (`lms server start`, or the Developer tab of the app)",
    get_hint="download it with `lms get {model}` (or in the app)",
)


def api_root(base_url: str) -> str:
    """``http://host:port`` from an OpenAI-compatible base URL (``.../v1``)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def _get_json(
    kind: ServerKind, root: str, path: str, *, body: Mapping[str, Any] | None = None
) -> Any:
    url = root + path
    try:
        with httpx2.Client(timeout=PROBE_TIMEOUT_S) as client:
            response = client.post(url, json=body) if body is not None else client.get(url)
    except httpx2.TransportError as exc:
        raise LocalModelError(
            f"{kind.label} is not running at {root} ({exc or type(exc).__name__}); "
            f"{kind.start_hint}, or set its base_url in [model_providers]"
        ) from None
    if response.status_code != 200:
        raise LocalModelError(
            f"{kind.label} at {root}: GET {path} answered HTTP {response.status_code} "
            f"({response.text.strip()[:200]}); is this {kind.label}?"
        )
    try:
        return response.json()
    except ValueError:
        raise LocalModelError(
            f"{kind.label} at {root}: {path} did not answer JSON; is this {kind.label}?"
        ) from None


def _missing(kind: ServerKind, root: str, model: str, available: list[str]) -> LocalModelError:
    have = ", ".join(available) if available else "none"
    return LocalModelError(
        f"model {model!r} is not available in {kind.label} at {root} (available: {have}); "
        + kind.get_hint.format(model=model)
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def probe_ollama(root: str, model: str) -> ServerModel:
    tags = _get_json(OLLAMA, root, "/api/tags")
    entries = tags.get("models") if isinstance(tags, dict) else None
    names = [
        str(entry.get("name") or entry.get("model"))
        for entry in entries or []
        if isinstance(entry, dict) and (entry.get("name") or entry.get("model"))
    ]
    wanted = {model, f"{model}:latest"} if ":" not in model else {model}
    found = next((name for name in names if name in wanted), None)
    if found is None:
        raise _missing(OLLAMA, root, model, names)
    show = _get_json(OLLAMA, root, "/api/show", body={"model": found})
    show = show if isinstance(show, dict) else {}
    capabilities = show.get("capabilities") or []
    info = show.get("model_info") or {}
    window = next(
        (
            _int(value)
            for key, value in (info.items() if isinstance(info, dict) else ())
            if key.endswith(".context_length") and _int(value)
        ),
        None,
    )
    return ServerModel(found, window, "tools" in capabilities)


def probe_lmstudio(root: str, model: str) -> ServerModel:
    listing = _get_json(LMSTUDIO, root, "/api/v0/models")
    entries = listing.get("data") if isinstance(listing, dict) else None
    models = [
        entry
        for entry in entries or []
        if isinstance(entry, dict) and entry.get("id") and entry.get("type", "llm") != "embeddings"
    ]
    entry = next((entry for entry in models if entry["id"] == model), None)
    if entry is None:
        raise _missing(LMSTUDIO, root, model, [str(entry["id"]) for entry in models])
    window = _int(entry.get("loaded_context_length")) or _int(entry.get("max_context_length"))
    return ServerModel(model, window, "tool_use" in (entry.get("capabilities") or []))


def probe_llamacpp(root: str, model: str) -> ServerModel:
    kind = ServerKind("llama.cpp", "", "")
    props = _get_json(kind, root, "/props")
    props = props if isinstance(props, dict) else {}
    settings = props.get("default_generation_settings") or {}
    caps = props.get("chat_template_caps") or {}
    return ServerModel(
        model,
        _int(settings.get("n_ctx")) if isinstance(settings, dict) else None,
        bool(isinstance(caps, dict) and caps.get("supports_tools")),
    )
