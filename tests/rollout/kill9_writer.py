"""Child process for ``test_kill9.py``: writes a long scripted session through RolloutRecorder.

Usage::

    kill9_writer.py run PATH SEED [--hold]   write the whole session; with --hold, stop after the
                                             third turn until a line arrives on stdin
    kill9_writer.py serve                    fork server: imports everything once, then for each
                                             "PATH SEED" line on stdin forks one writer child
    kill9_writer.py append PATH              resume PATH and append one line
    kill9_writer.py create PATH              start a new session at PATH and write one line

Output (stdout, flushed per line): ``start PID`` when a writer begins, ``m`` after every recorded
step and turn (progress markers the parent counts to pick a kill point), ``done`` at the end, and
from ``serve`` an ``exit STATUS`` line once the child is gone. A complete ``run`` also writes the
history it recorded to ``PATH.history.json``. ``append``/``create`` exit with status 3 and print
``locked: MESSAGE`` when the rollout is locked by another writer.

The session (deterministic for a seed): turns with a task_started event, the turn-start context
update (context items, a full world_state on the first turn and merge patches later, turn_context),
the user message, 1–4 steps of function call + output with world-state patches between steps
(files a tool "created"), a final assistant message and task_complete, then ``turn_ended``. A
checkpoint is written whenever the recorder says one is due.
"""

from __future__ import annotations

import os
import random
import sys
import traceback
from pathlib import Path
from typing import Any

import anyio
import orjson

from mini_codex.errors import RolloutLockedError
from mini_codex.jsonmerge import create_merge_patch
from mini_codex.protocol import (
    EventMsgLine,
    FunctionCall,
    FunctionCallOutput,
    ResponseItem,
    ResponseItemLine,
    RolloutLine,
    SessionMeta,
    TaskComplete,
    TaskStarted,
    TurnContextItem,
    TurnContextLine,
    UserMessageEvent,
    WorldStateItem,
    WorldStateLine,
    assistant_message,
    developer_message,
    user_message,
)
from mini_codex.rollout.recorder import RecorderOptions, RolloutRecorder
from mini_codex.rollout.replay.checkpoint import PreviousTurnSettings, WindowInfo

THREAD_ID = "019b6b08-58f3-7580-9dca-fe3f30a10650"
TURNS = 30
OPTIONS = RecorderOptions(checkpoint_every_items=45, checkpoint_min_ratio=0)


def marker(text: str = "m") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


class Session:
    """The writer side of a session: records lines and mirrors the model-visible history."""

    def __init__(self, recorder: RolloutRecorder) -> None:
        self.recorder = recorder
        self.history: list[ResponseItem] = []
        self.baseline: dict[str, Any] | None = None
        self.reference: TurnContextItem | None = None

    async def emit(self, lines: list[RolloutLine]) -> None:
        await self.recorder.record(lines)
        self.history.extend(line.payload for line in lines if isinstance(line, ResponseItemLine))

    def world_update(self, world: dict[str, Any]) -> WorldStateLine | None:
        if self.baseline is None:
            item = WorldStateItem(full=True, state=world)
        else:
            patch = create_merge_patch(self.baseline, world)
            if patch is None:
                return None
            assert isinstance(patch, dict)
            item = WorldStateItem(full=False, state=patch)
        self.baseline = world
        return WorldStateLine(payload=item)

    async def maybe_checkpoint(self) -> None:
        if self.recorder.checkpoint_due():
            settings = None
            if self.reference is not None:
                settings = PreviousTurnSettings(self.reference.model, None, None)
            await self.recorder.write_checkpoint(
                self.history, self.baseline, self.reference, settings, WindowInfo(0)
            )


def items(*messages: ResponseItem) -> list[RolloutLine]:
    return [ResponseItemLine(payload=message) for message in messages]


async def write_session(path: Path, seed: int, hold: bool) -> list[ResponseItem]:
    rng = random.Random(seed)
    meta = SessionMeta(id=THREAD_ID, cwd="/repo", originator="kill9_writer")
    world: dict[str, Any] = {
        "model": {"slug": "m0"},
        "permissions": {"sandbox": "workspace-write", "approval": "never"},
        "workspace": {"files": {"README.md": {}}},
    }
    async with RolloutRecorder.open(path, session_meta=meta, options=OPTIONS) as recorder:
        session = Session(recorder)
        for turn in range(TURNS):
            turn_id = f"turn-{turn}"
            await session.emit([EventMsgLine(payload=TaskStarted(turn_id=turn_id))])
            if turn % 7 == 6:
                world = {**world, "model": {"slug": f"m{turn}"}}
            context_items: list[ResponseItem] = []
            if session.baseline is None:
                context_items = [
                    developer_message("<permissions>workspace-write, never</permissions>"),
                    user_message("<environment_context><cwd>/repo</cwd></environment_context>"),
                ]
            elif world["model"] != session.baseline["model"]:
                context_items = [developer_message(f"<model_switch>{world['model']['slug']}")]
            update = session.world_update(world)
            context = TurnContextItem(
                turn_id=turn_id, cwd="/repo", model=world["model"]["slug"], summary="auto"
            )
            lines = items(*context_items)
            lines += [update] if update is not None else []
            lines += [TurnContextLine(payload=context)]
            prompt = f"task {turn}: " + "please " * rng.randint(1, 40)
            lines += items(user_message(prompt))
            lines += [EventMsgLine(payload=UserMessageEvent(message=prompt))]
            await session.emit(lines)
            session.reference = context
            marker()
            for step in range(rng.randint(1, 4)):
                if step > 0 and rng.random() < 0.6:
                    name = f"src/f{turn}_{step}.py"
                    files = {**world["workspace"]["files"], name: {}}
                    world = {**world, "workspace": {"files": files}}
                    patch = session.world_update(world)
                    assert patch is not None
                    await session.emit([*items(developer_message(f"<workspace>+ {name}")), patch])
                call_id = f"call-{turn}-{step}"
                arguments = orjson.dumps({"command": ["touch", f"f{step}"]}).decode()
                await session.emit(
                    items(FunctionCall(name="shell", arguments=arguments, call_id=call_id))
                )
                output = "output line\n" * rng.randint(1, 200)
                await session.emit(items(FunctionCallOutput(call_id=call_id, output=output)))
                marker()
                await session.maybe_checkpoint()
            answer = f"turn {turn} done"
            await session.emit(
                [
                    *items(assistant_message(answer)),
                    EventMsgLine(payload=TaskComplete(turn_id=turn_id, last_agent_message=answer)),
                ]
            )
            await recorder.turn_ended()
            marker()
            if hold and turn == 2:
                marker("holding")
                await anyio.to_thread.run_sync(sys.stdin.readline)
    return session.history


def run(path: Path, seed: int, hold: bool) -> None:
    marker(f"start {os.getpid()}")
    history = anyio.run(write_session, path, seed, hold)
    Path(f"{path}.history.json").write_bytes(orjson.dumps([item.to_json() for item in history]))
    marker("done")


def serve() -> None:
    marker("ready")
    for request in sys.stdin:
        path, seed = request.split()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                run(Path(path), int(seed), hold=False)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        marker(f"exit {status}")


async def append_one(path: Path, create: bool) -> None:
    meta = SessionMeta(id=THREAD_ID) if create else None
    async with RolloutRecorder.open(path, session_meta=meta) as recorder:
        await recorder.record(items(user_message("intruder")))


def main(argv: list[str]) -> int:
    command = argv[0]
    if command == "run":
        run(Path(argv[1]), int(argv[2]), hold="--hold" in argv)
    elif command == "serve":
        serve()
    elif command in ("append", "create"):
        try:
            anyio.run(append_one, Path(argv[1]), command == "create")
        except RolloutLockedError as exc:
            marker(f"locked: {type(exc).__name__}: {exc}")
            return 3
        marker("done")
    else:
        raise SystemExit(f"unknown command {command!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
