"""The exec-server protocol's encodings (``exec_server.py``): bytes as base64, paths as ``file:``
URIs. Plain functions without the wire models, so a client that only encodes (the environment
routing of the tools) does not build the pydantic models at start-up."""

from __future__ import annotations

import base64
from urllib.parse import quote, unquote, urlsplit

__all__ = ["b64decode", "b64encode", "file_uri", "uri_path"]


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def b64decode(text: str) -> bytes:
    """Strict base64 (raises ``ValueError`` on anything else)."""
    return base64.b64decode(text.encode("ascii"), validate=True)


def file_uri(path: str) -> str:
    """``/a b/c`` → ``file:///a%20b/c``."""
    return "file://" + quote(path, safe="/:@!$&'()*+,;=-._~")


def uri_path(uri: str) -> str:
    """The absolute path of a ``file:`` URI; ``ValueError`` with Codex's wording otherwise."""
    parts = urlsplit(uri)
    if not parts.scheme:
        raise ValueError("invalid URI: relative URL without a base")
    if parts.scheme != "file":
        raise ValueError(f"invalid URI: expected a file: URI, got {parts.scheme}:")
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"invalid URI: file URI with a host ({parts.netloc}) is not local")
    path = unquote(parts.path)
    if not path.startswith("/"):
        raise ValueError("invalid URI: the path is not absolute")
    return path
