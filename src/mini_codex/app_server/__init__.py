"""``mini-codex app-server``: Codex's app-server JSON-RPC protocol (v2 threads and turns).

Layers: ``transport`` (stdio lines, websocket frames) → ``rpc`` (envelope, errors, one
connection's ordered output and server requests) → ``server`` (handshake and dispatch) →
``handlers`` (thread and turn methods) → ``threads`` (one live session per thread, opened through
``sessions``) with ``notifications`` (session events → v2 notifications, on top of the one
``ExecEventMapper``) and ``approvals`` (server requests). The front end (``cli/``) gives the
process's values in a ``HostValues``.
"""

from mini_codex.app_server.server import AppServer, serve_connection
from mini_codex.app_server.sessions import HostValues, ThreadSpec

__all__ = ["AppServer", "HostValues", "ThreadSpec", "serve_connection"]
