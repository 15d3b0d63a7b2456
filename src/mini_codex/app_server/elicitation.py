"""MCP elicitation as a server request: the session's elicitation handler asks the client.

When an MCP server of a thread sends ``elicitation/create``, Codex's app-server sends the client
``mcpServer/elicitation/request`` (``McpServerElicitationRequestParams``: ``threadId``,
``turnId``, ``serverName`` and the MCP request itself, ``mode`` ``form`` with ``_meta``,
``message`` and ``requestedSchema``, or ``mode`` ``url`` with ``elicitationId`` and ``url``) and
awaits ``{action, content?, _meta?}`` (``McpServerElicitationRequestResponse``). As Codex does,
the thread shows ``active {activeFlags: ["waitingOnApproval"]}`` meanwhile, then
``serverRequest/resolved`` is sent and the flag drops; a thread whose approval policy is
``never`` declines without asking (nobody is to be asked).

The answer goes through ``mcp/elicitation.settle_answer`` like every front end's: ``accept``
content is validated against the requested schema (an answer that does not match is not sent:
the server gets ``decline`` and the thread a ``warning`` notification saying why; Codex
forwards it unchecked). A client that disconnects while asked, answers with a JSON-RPC error,
an unknown action or content that is not an object, declines.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from mini_codex.app_server.rpc import ClientGone, Connection, RpcError
from mini_codex.mcp.elicitation import ElicitationAnswer, ElicitationHandler, ElicitationRequest

__all__ = ["ELICITATION_METHOD", "answer_of", "client_elicitation_callback", "request_params"]

JsonDict = dict[str, Any]
ELICITATION_METHOD = "mcpServer/elicitation/request"


def request_params(request: ElicitationRequest, thread_id: str, turn_id: str | None) -> JsonDict:
    """``McpServerElicitationRequestParams`` of one MCP elicitation."""
    params: JsonDict = {
        "threadId": thread_id,
        "turnId": turn_id or None,
        "serverName": request.server,
        "mode": request.mode,
    }
    if request.mode == "url":
        return {
            **params,
            "_meta": request.meta,
            "elicitationId": request.elicitation_id or uuid.uuid4().hex,
            "message": request.message,
            "url": request.url or "",
        }
    schema = request.requested_schema or {"type": "object", "properties": {}}
    return {**params, "_meta": request.meta, "message": request.message, "requestedSchema": schema}


def answer_of(result: Any) -> ElicitationAnswer | str:
    """Our answer for the client's response, or why it is not one (then it is declined)."""
    if not isinstance(result, dict):
        return f"the client answered {result!r}, not an object"
    action, content = result.get("action"), result.get("content")
    if action not in ("accept", "decline", "cancel"):
        return f"the client answered an unknown action {action!r}"
    if action != "accept":
        return ElicitationAnswer(action)
    if content is not None and not isinstance(content, dict):
        return f"the client's content is {type(content).__name__}, not an object"
    return ElicitationAnswer("accept", content)


def client_elicitation_callback(
    connection: Connection,
    *,
    thread_id: Callable[[], str],
    turn_id: Callable[[], str | None],
    asks: Callable[[], bool],
    waiting: Callable[[bool], None],
    on_warning: Callable[[str], None],
) -> ElicitationHandler:
    """The session's elicitation handler for one thread.

    ``asks()`` is False when the thread's approval policy is ``never``; ``waiting(True/False)``
    brackets the question; ``on_warning`` hears why an answer was not taken."""

    async def ask(request: ElicitationRequest) -> ElicitationAnswer:
        if not asks():
            return ElicitationAnswer.decline()
        params = request_params(request, thread_id(), turn_id())
        request_id = connection.next_request_id()
        waiting(True)
        try:
            result = await connection.request(ELICITATION_METHOD, params)
        except ClientGone:
            return ElicitationAnswer.decline()
        except RpcError as exc:
            error = exc.data if isinstance(exc.data, dict) else {}
            detail = f"error {exc.code}: {error.get('message', exc.message)}"
            on_warning(f"elicitation from {request.server} declined: the client answered {detail}")
            return ElicitationAnswer.decline()
        finally:
            connection.notify(
                "serverRequest/resolved", {"threadId": thread_id(), "requestId": request_id}
            )
            waiting(False)
        answer = answer_of(result)
        if isinstance(answer, str):
            on_warning(f"elicitation from {request.server} declined: {answer}")
            return ElicitationAnswer.decline()
        return answer

    return ask
