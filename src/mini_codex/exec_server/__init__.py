"""``mini-codex exec-server``: Codex's exec-server protocol served by the local executor.

A front end: each connection (a websocket, or our stdin/stdout) gets its own
``environments.local_executor.LocalExecutor``; this package only frames, authenticates and
dispatches (``connection.py``, ``listen.py``).
"""

from mini_codex.exec_server.connection import serve_connection
from mini_codex.exec_server.listen import ListenConfig, serve_stdio, serve_websocket

__all__ = ["ListenConfig", "serve_connection", "serve_stdio", "serve_websocket"]
