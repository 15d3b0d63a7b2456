"""One self-contained HTML file of a session (``rollout inspect --html``): the same page, offline.

The page's script and stylesheet are inlined, and the API documents it would fetch (the session,
and per step its world state and request) are embedded as one JSON object, so the file opens from
disk with no server and no network, e.g. attached to a bug report. A session with more than
:data:`MAX_REQUESTS` steps embeds the requests of the newest ones only (the page says so for the
others). A large file is exported from its newest checkpoint window, as the app opens it.

The rollout is untrusted: the data is a ``<script type="application/json">`` block (not run) with
``<``, ``>`` and ``&`` escaped, and the page's Content-Security-Policy allows only the inlined
``app.js`` and ``app.css`` by their SHA-256 hashes (no handler attribute, no other script runs).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import orjson

from mini_codex.web.app import static_text
from mini_codex.web.inspector import (
    load_file_view,
    request_document,
    session_document,
    world_state_document,
)

__all__ = ["MAX_REQUESTS", "embedded_json", "export_html"]

MAX_REQUESTS = 400
"""Steps whose request (the whole input) is embedded, newest first."""


def export_html(path: Path) -> str:
    loaded = load_file_view(path)
    meta = loaded.view.meta or {}
    session_id = str(meta.get("id") or path.stem)
    base = f"/api/sessions/{session_id}"
    document = session_document(session_id, path, loaded)
    api: dict[str, Any] = {
        "/api/sessions": [_listing(session_id, path, document)],
        base: document,
    }
    steps = list(loaded.view.steps.values())
    for index, step in enumerate(steps):
        api[f"{base}/steps/{step.step_id}/world_state"] = world_state_document(step)
        if index >= len(steps) - MAX_REQUESTS:
            api[f"{base}/steps/{step.step_id}/request"] = request_document(loaded, step)
    data = embedded_json({"session_id": session_id, "api": api})
    style = static_text("app.css")
    script = static_text("app.js")
    csp = (
        f"default-src 'none'; script-src {_sha256(script)}; style-src {_sha256(style)}; "
        "base-uri 'none'; form-action 'none'"
    )
    page = static_text("index.html")
    page = page.replace(
        '<meta charset="utf-8">',
        f'<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" content="{csp}">',
    )
    page = page.replace('<link rel="stylesheet" href="static/app.css">', f"<style>{style}</style>")
    # The data is not a script (type application/json: never run, so the CSP need not allow
    # it); app.js is the one inline script, allowed by its hash.
    page = page.replace(
        '<script src="static/app.js"></script>',
        f'<script type="application/json" id="mini-codex-data">{data}</script>\n'
        f"<script>{script}</script>",
    )
    return page


def embedded_json(value: Any) -> str:
    """JSON safe inside an HTML element: ``<``, ``>``, ``&`` as ``\\u`` escapes (no ``</script>``,
    no ``<!--``); they only ever occur inside JSON strings, where the escapes mean the same."""
    text = orjson.dumps(value).decode()
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _sha256(text: str) -> str:
    digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
    return f"'sha256-{digest}'"


def _listing(session_id: str, path: Path, document: dict[str, Any]) -> dict[str, Any]:
    meta = document.get("meta") or {}
    first = next(
        (
            item.get("text")
            for turn in document["turns"]
            for item in turn["items"]
            if item.get("role") == "user" and not str(item.get("text", "")).startswith("<")
        ),
        None,
    )
    return {
        "id": session_id,
        "path": str(path),
        "cwd": meta.get("cwd"),
        "started": meta.get("timestamp"),
        "updated": None,
        "model": None,
        "first_prompt": first,
        "turns": len(document["turns"]),
        "size": document["page"]["size"],
        "error": None,
    }
