"""One self-contained HTML file of a session (``rollout inspect --html``): the same page, offline.

The page's script and stylesheet are inlined, and the API documents it would fetch (the session,
and per step its world state and request) are embedded as one JSON object, so the file opens from
disk with no server and no network, e.g. attached to a bug report. A session with more than
:data:`MAX_REQUESTS` steps embeds the requests of the newest ones only (the page says so for the
others). A large file is exported from its newest checkpoint window, as the app opens it.
"""

from __future__ import annotations

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

__all__ = ["MAX_REQUESTS", "export_html"]

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
    data = orjson.dumps({"session_id": session_id, "api": api}).decode()
    # Inside <script>, "</" could end the element: escape it (JSON allows "\/").
    data = data.replace("</", "<\\/")
    page = static_text("index.html")
    page = page.replace(
        '<link rel="stylesheet" href="static/app.css">',
        "<style>\n" + static_text("app.css") + "</style>",
    )
    script = static_text("app.js").replace("</", "<\\/")
    page = page.replace(
        '<script src="static/app.js"></script>',
        f"<script>window.MINI_CODEX_DATA = {data};</script>\n<script>\n{script}</script>",
    )
    return page


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
