"""The v2 thread and turn methods of one connection (``ThreadHandlers``).

Each method takes ``Params`` and returns the result object (or raises ``RpcError``). Threads that
are loaded live in ``self.threads`` (thread id → ``LiveThread``); recorded ones are found through
``store.ThreadStore``. Settings given to ``turn/start`` (model, approvalPolicy, sandbox) stick to
the thread for the following turns, as in Codex.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup

from mini_codex.app_server.history import parse_timestamp, thread_json, turns_of
from mini_codex.app_server.params import Params, user_input
from mini_codex.app_server.rpc import INVALID_REQUEST, Connection, RpcError
from mini_codex.app_server.sessions import HostValues, ThreadSpec
from mini_codex.app_server.store import ThreadStore
from mini_codex.app_server.threads import LiveThread
from mini_codex.errors import MiniCodexError
from mini_codex.host import sandbox_policy
from mini_codex.protocol import message_text
from mini_codex.rollout.index import SessionInfo

__all__ = ["ThreadHandlers"]

JsonDict = dict[str, Any]
Handler = Callable[[Params], Awaitable[JsonDict]]
_SANDBOX_JSON = {
    "read-only": "readOnly",
    "workspace-write": "workspaceWrite",
    "danger-full-access": "dangerFullAccess",
}


def _failure(exc: MiniCodexError) -> RpcError:
    return RpcError(INVALID_REQUEST, str(exc))


class ThreadHandlers:
    def __init__(self, host: HostValues, connection: Connection, task_group: TaskGroup) -> None:
        self.host = host
        self.connection = connection
        self.tg = task_group
        self.store = ThreadStore(host.home, host.codex_home)
        self.threads: dict[str, LiveThread] = {}

    def table(self) -> dict[str, Handler]:
        return {
            "thread/start": self.thread_start,
            "thread/resume": self.thread_resume,
            "thread/fork": self.thread_fork,
            "thread/list": self.thread_list,
            "thread/loaded/list": self.thread_loaded_list,
            "thread/read": self.thread_read,
            "thread/archive": self.thread_archive,
            "thread/unarchive": self.thread_unarchive,
            "thread/name/set": self.thread_name_set,
            "thread/compact/start": self.thread_compact_start,
            "turn/start": self.turn_start,
            "turn/steer": self.turn_steer,
            "turn/interrupt": self.turn_interrupt,
        }

    # --- opening threads -------------------------------------------------------------------------

    def _spec(self, params: Params, *, resume_path: Path | None = None) -> ThreadSpec:
        config = params.obj("config") or {}
        return ThreadSpec(
            cwd=params.cwd() or Path.cwd().resolve(),
            model=params.string("model"),
            approval_policy=params.approval_policy(),
            sandbox=params.sandbox(),
            config=dict(config),
            base_instructions=params.string("baseInstructions"),
            developer_instructions=params.string("developerInstructions"),
            resume_path=resume_path,
            ephemeral=bool(params.flag("ephemeral")),
        )

    async def _open(self, spec: ThreadSpec) -> LiveThread:
        thread = LiveThread(self.host, spec, self.connection)
        self.tg.start_soon(thread.run)
        await thread.opened()
        self.threads[thread.id] = thread
        return thread

    def _live_json(self, thread: LiveThread, *, turns: list[JsonDict] | None = None) -> JsonDict:
        session = thread.session
        provider = session.config.model_provider if session is not None else ""
        return thread_json(
            thread_id=thread.id,
            cwd=str(session.cwd if session is not None else thread.spec.cwd),
            created_at=int(thread.created_at),
            updated_at=int(thread.updated_at),
            preview=thread.preview,
            path=thread.rollout_path,
            status=thread.status,
            model_provider=provider,
            model=session.model if session is not None else None,
            name=thread.name,
            ephemeral=thread.spec.ephemeral,
            turns=turns,
        )

    def _settings(self, thread: LiveThread, *, turns: list[JsonDict] | None = None) -> JsonDict:
        session = thread.session
        assert session is not None
        sandbox = {"type": _SANDBOX_JSON[session.sandbox.mode]}
        return {
            "thread": self._live_json(thread, turns=turns),
            "model": session.model,
            "modelProvider": session.config.model_provider,
            "cwd": str(session.cwd),
            "approvalPolicy": session.approval_policy,
            "approvalsReviewer": "user",
            "sandbox": sandbox,
        }

    async def thread_start(self, params: Params) -> JsonDict:
        thread = await self._open(self._spec(params))
        result = self._settings(thread)
        self.connection.after_response("thread/started", {"thread": result["thread"]})
        return result

    def _loaded(self, thread_id: str) -> LiveThread | None:
        thread = self.threads.get(thread_id)
        return thread if thread is not None and thread.loaded else None

    def _live(self, params: Params) -> LiveThread:
        thread_id = params.required_str("threadId")
        thread = self._loaded(thread_id)
        if thread is None:
            raise RpcError(INVALID_REQUEST, f"thread {thread_id} is not loaded (thread/resume)")
        return thread

    def _recorded_turns(self, path: Path | None, cwd: str) -> list[JsonDict]:
        if path is None or not path.is_file():
            return []
        try:
            return turns_of(path, cwd)
        except MiniCodexError:
            return []

    async def thread_resume(self, params: Params) -> JsonDict:
        thread_id = params.required_str("threadId")
        thread = self._loaded(thread_id)
        if thread is None:
            try:
                path = self.store.find(thread_id)
            except MiniCodexError as exc:
                raise _failure(exc) from None
            thread = await self._open(self._spec(params, resume_path=path))
            thread.name = self.store.names().get(thread.id)
        session = thread.session
        assert session is not None
        turns = self._recorded_turns(thread.rollout_path, str(session.cwd))
        if not thread.preview:
            thread.preview = _preview(turns)
        return self._settings(thread, turns=turns)

    async def thread_fork(self, params: Params) -> JsonDict:
        thread_id = params.required_str("threadId")
        live = self._loaded(thread_id)
        try:
            source = live.rollout_path if live is not None else self.store.find(thread_id)
            if source is None:
                raise MiniCodexError(f"thread {thread_id} has no rollout to fork (ephemeral)")
            path, _ = self.store.fork(source)
        except MiniCodexError as exc:
            raise _failure(exc) from None
        thread = await self._open(self._spec(params, resume_path=path))
        session = thread.session
        assert session is not None
        turns = self._recorded_turns(thread.rollout_path, str(session.cwd))
        thread.preview = _preview(turns)
        result = self._settings(thread, turns=turns)
        result["thread"]["forkedFromId"] = thread_id
        self.connection.after_response("thread/started", {"thread": result["thread"]})
        return result

    # --- recorded threads ------------------------------------------------------------------------

    def _recorded_json(self, info: SessionInfo, *, turns: list[JsonDict] | None = None) -> JsonDict:
        live = self._loaded(info.id)
        if live is not None:
            return self._live_json(live, turns=turns)
        return thread_json(
            thread_id=info.id,
            cwd=info.cwd or "",
            created_at=parse_timestamp(info.created),
            updated_at=parse_timestamp(info.updated),
            preview=info.first_user_message or "",
            path=info.path,
            status={"type": "notLoaded"},
            model_provider="",
            name=self.store.names().get(info.id),
            turns=turns,
        )

    async def thread_list(self, params: Params) -> JsonDict:
        limit = params.integer("limit") or 25
        if limit <= 0:
            raise RpcError(-32602, "Invalid params for thread/list: `limit` must be positive")
        try:
            page = self.store.list(
                archived=bool(params.flag("archived")), cursor=params.string("cursor"), limit=limit
            )
        except MiniCodexError as exc:
            raise RpcError(-32602, f"Invalid params for thread/list: {exc}") from None
        cwd = params.raw.get("cwd")
        wanted = {cwd} if isinstance(cwd, str) else set(cwd) if isinstance(cwd, list) else None
        data = [
            self._recorded_json(info) for info in page.infos if wanted is None or info.cwd in wanted
        ]
        return {"data": data, "nextCursor": page.next_cursor}

    async def thread_loaded_list(self, params: Params) -> JsonDict:
        return {"data": [t for t, live in self.threads.items() if live.loaded], "nextCursor": None}

    async def thread_read(self, params: Params) -> JsonDict:
        thread_id = params.required_str("threadId")
        include = bool(params.flag("includeTurns"))
        live = self._loaded(thread_id)
        if live is not None:
            cwd = live.notifier.cwd
            turns = self._recorded_turns(live.rollout_path, cwd) if include else None
            return {"thread": self._live_json(live, turns=turns)}
        try:
            path = self.store.find(thread_id)
        except MiniCodexError as exc:
            raise _failure(exc) from None
        info = self.store.info(path)
        if info is None:
            raise RpcError(INVALID_REQUEST, f"no thread {thread_id}")
        turns = self._recorded_turns(path, info.cwd or "") if include else None
        return {"thread": self._recorded_json(info, turns=turns)}

    async def thread_archive(self, params: Params) -> JsonDict:
        thread_id = params.required_str("threadId")
        live = self.threads.pop(thread_id, None)
        if live is not None:
            await live.close()
        try:
            self.store.archive(thread_id)
        except MiniCodexError as exc:
            raise _failure(exc) from None
        self.connection.after_response("thread/archived", {"threadId": thread_id})
        return {}

    async def thread_unarchive(self, params: Params) -> JsonDict:
        thread_id = params.required_str("threadId")
        try:
            path = self.store.unarchive(thread_id)
        except MiniCodexError as exc:
            raise _failure(exc) from None
        info = self.store.info(path)
        if info is None:
            raise RpcError(INVALID_REQUEST, f"no thread {thread_id}")
        self.connection.after_response("thread/unarchived", {"threadId": thread_id})
        return {"thread": self._recorded_json(info)}

    async def thread_name_set(self, params: Params) -> JsonDict:
        thread_id = params.required_str("threadId")
        name = params.required_str("name")
        live = self._loaded(thread_id)
        if live is None:
            try:
                self.store.find(thread_id)
            except MiniCodexError as exc:
                raise _failure(exc) from None
        else:
            live.name = name
        self.store.set_name(thread_id, name)
        self.connection.after_response(
            "thread/name/updated", {"threadId": thread_id, "threadName": name}
        )
        return {}

    async def thread_compact_start(self, params: Params) -> JsonDict:
        self._live(params).start_compaction()
        return {}

    # --- turns -----------------------------------------------------------------------------------

    async def turn_start(self, params: Params) -> JsonDict:
        thread = self._live(params)
        message, content, skills = user_input(params)
        session = thread.session
        assert session is not None
        approval, sandbox, model = (
            params.approval_policy(),
            params.sandbox(),
            params.string("model"),
        )
        if approval is not None:
            session.approval_policy = approval
        if sandbox is not None:
            policy = sandbox_policy(sandbox, session.config)
            assert policy is not None
            session.sandbox = policy
        if model is not None:
            session.model = model
        thread.updated_at = time.time()
        turn = thread.start_turn([message], content, skills)
        return {"turn": turn.to_json()}

    async def turn_steer(self, params: Params) -> JsonDict:
        thread = self._live(params)
        expected = params.required_str("expectedTurnId")
        message, _, _ = user_input(params)
        return {"turnId": thread.steer(message_text(message), expected)}

    async def turn_interrupt(self, params: Params) -> JsonDict:
        thread = self._live(params)
        thread.interrupt(params.required_str("turnId"))
        return {}

    # --- shutdown --------------------------------------------------------------------------------

    async def close_all(self) -> None:
        """Interrupt every thread and close its session (and rollout), all at once."""
        async with anyio.create_task_group() as group:
            for thread in list(self.threads.values()):
                group.start_soon(thread.close)
        self.threads.clear()


def _preview(turns: list[JsonDict]) -> str:
    for turn in turns:
        for item in turn["items"]:
            if item["type"] == "userMessage":
                for part in item["content"]:
                    if part.get("type") == "text":
                        return str(part["text"])
    return ""
