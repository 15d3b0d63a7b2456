"""MCP errors, and the one boundary where the SDK's and the OS's errors become them.

::

    MiniCodexError
    └── McpError                   anything an MCP server did or failed to do
        ├── McpStartupError        could not start: spawn failure, handshake error, startup timeout
        ├── McpUnavailableError    the connection is gone (crashed, closed) or never came up
        └── McpCallError           one request failed (server error reply, per-call timeout)

``map_mcp_errors(server, doing)`` is the only place that catches foreign exceptions (``MCPError``,
``OSError``, ``TimeoutError``, pydantic ``ValidationError``, httpx2 transport errors, exception
groups from the SDK's task groups) and names the server and what was being done.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

import httpx2
from pydantic import ValidationError

from mini_codex.errors import MiniCodexError

# The MCP SDK (``mcp``, ~0.5 s to import) is imported inside the functions that inspect its
# exceptions: a session without MCP servers never loads it (issue 13, start-up).

__all__ = [
    "McpCallError",
    "McpError",
    "McpStartupError",
    "McpUnavailableError",
    "describe_exception",
    "is_connection_closed",
    "is_error",
    "is_timeout",
    "map_mcp_errors",
]


class McpError(MiniCodexError):
    """An MCP server failed; the message names the server."""

    def __init__(self, server: str, message: str) -> None:
        super().__init__(message)
        self.server = server


class McpStartupError(McpError):
    """The server could not be started or did not finish its handshake in time."""


class McpUnavailableError(McpError):
    """The connection is closed (the server exited or crashed) or was never established."""


class McpCallError(McpError):
    """One request (a tool call, a listing) failed; the connection itself may still be fine."""


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception of a (nested) exception group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_exception(exc: BaseException) -> str:
    """A one-line, human description of a foreign exception."""
    from mcp.shared.exceptions import MCPError  # the SDK only when it is in use (issue 13)

    leaf = _leaf(exc)
    if isinstance(leaf, MCPError):
        return f"{leaf.error.message} (code {leaf.error.code})"
    if isinstance(leaf, FileNotFoundError):
        return f"command not found: {leaf.filename or leaf}"
    if isinstance(leaf, OSError):
        return leaf.strerror or str(leaf) or type(leaf).__name__
    if isinstance(leaf, ValidationError):
        return f"invalid message from server: {leaf.error_count()} validation error(s)"
    text = str(leaf).strip().splitlines()
    return f"{type(leaf).__name__}: {text[0]}" if text else type(leaf).__name__


def is_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or the first leaf of a group) is an ``Exception``, not cancellation."""
    return isinstance(_leaf(exc), Exception)


def is_connection_closed(exc: BaseException) -> bool:
    import mcp_types
    from mcp.shared.exceptions import MCPError

    leaf = _leaf(exc)
    if isinstance(leaf, MCPError):
        return leaf.error.code == mcp_types.CONNECTION_CLOSED
    return isinstance(leaf, (httpx2.TransportError, BrokenPipeError, ConnectionError))


def is_timeout(exc: BaseException) -> bool:
    import mcp_types
    from mcp.shared.exceptions import MCPError

    leaf = _leaf(exc)
    if isinstance(leaf, MCPError):
        return leaf.error.code == mcp_types.REQUEST_TIMEOUT
    return isinstance(leaf, TimeoutError | httpx2.TimeoutException)


Doing = Literal["start", "call", "list"]


@contextmanager
def map_mcp_errors(server: str, doing: Doing, what: str = "") -> Iterator[None]:
    """Translate SDK/OS failures inside the block into ``McpError`` subclasses.

    Cancellation passes through untouched; ``McpError`` raised inside passes through as is.
    """
    try:
        yield
    except McpError:
        raise
    except (Exception, BaseExceptionGroup) as exc:
        leaf = _leaf(exc)
        if isinstance(leaf, McpError):
            raise leaf from exc
        if not isinstance(leaf, Exception):  # cancellation etc. inside a group
            raise
        detail = describe_exception(leaf)
        subject = f"MCP server {server!r}"
        if doing == "start":
            raise McpStartupError(server, f"{subject} failed to start: {detail}") from exc
        if is_connection_closed(leaf):
            raise McpUnavailableError(
                server, f"{subject} closed the connection (it exited or crashed): {detail}"
            ) from exc
        if is_timeout(leaf):
            raise McpCallError(server, f"{subject}: {what or doing} timed out") from exc
        raise McpCallError(server, f"{subject}: {what or doing} failed: {detail}") from exc
