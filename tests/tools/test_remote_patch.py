"""``apply_patch`` routed to a remote environment goes through ``fs/*`` on its executor."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from mini_codex.environments.client import ExecServerClient
from mini_codex.environments.manager import EnvironmentSnapshot, EnvironmentView
from mini_codex.environments.transport import open_websocket
from mini_codex.exec_server import ListenConfig, serve_websocket
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.tools.apply_patch import ApplyPatchTool
from mini_codex.tools.base import ToolContext
from mini_codex.tools.environment_routing import NO_USABLE_ENVIRONMENT
from mini_codex.tools.remote_patch import RoutedPatch, split_environment_header

pytestmark = pytest.mark.anyio

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "exec_server"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_header_is_split_off() -> None:
    patch = "*** Begin Patch\n*** Environment ID: worker\n*** Add File: a\n+x\n*** End Patch\n"
    assert split_environment_header(patch) == (
        "worker",
        "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n",
    )
    plain = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n"
    assert split_environment_header(plain) == (None, plain)


def test_the_grammar_gains_the_header_only_when_advertised() -> None:
    tool = ApplyPatchTool(freeform=True)
    assert RoutedPatch(tool, advertise=False).spec == tool.spec
    grammar = RoutedPatch(tool, advertise=True).spec.format
    assert grammar is not None
    assert grammar["definition"].startswith(
        "start: begin_patch environment_id? hunk+ end_patch\n"
        'environment_id: "*** Environment ID: " filename LF\n'
    )


async def test_a_remote_patch_reads_and_writes_through_the_executor(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("one\ntwo\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    config = ListenConfig(own_env=dict(os.environ), cwd=str(tmp_path), shell="/bin/bash")
    bound: list[int] = []
    listening = anyio.Event()

    def ready(port: int) -> None:
        bound.append(port)
        listening.set()

    methods: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve_websocket("127.0.0.1", 0, config, ready=ready))
        await listening.wait()
        client = ExecServerClient(await open_websocket(f"ws://127.0.0.1:{bound[0]}", timeout_s=10))
        original = client.request

        async def logged(method: str, params: Any, **kwargs: Any) -> dict[str, Any]:
            methods.append(method)
            return await original(method, params, **kwargs)

        client.request = logged  # type: ignore[method-assign]
        tg.start_soon(client.run)
        await client.initialize(timeout_s=10)
        snapshot = EnvironmentSnapshot(
            (
                EnvironmentView("local", "/nonexistent", "ready", "bash"),
                EnvironmentView("worker", str(tmp_path), "ready", "bash", client=client),
                EnvironmentView("broken", str(tmp_path), "failed", error="refused"),
            )
        )
        ctx = ToolContext(
            cwd=Path("/nonexistent"),
            sandbox=SandboxPolicy.workspace_write(),
            call_id="c",
            turn_id="t",
            step_id="s",
            environments=snapshot,
        )
        tool = RoutedPatch(ApplyPatchTool(freeform=True), advertise=True)
        patch = (
            "*** Begin Patch\n*** Environment ID: worker\n*** Add File: sub/new.txt\n+hello\n"
            "*** Update File: old.txt\n*** Move to: moved.txt\n@@\n one\n-two\n+TWO\n"
            "*** Delete File: gone.txt\n*** End Patch\n"
        )
        result = await tool.call(patch, ctx)
        refused = await tool.call(patch.replace("worker", "broken"), ctx)
        escape = await tool.call(patch.replace("sub/new.txt", "../escape.txt"), ctx)
        await client.aclose()
        tg.cancel_scope.cancel()
    assert (
        result.text
        == "Success. Updated the following files:\nA sub/new.txt\nM moved.txt\nD gone.txt\n"
    )
    assert refused.text == NO_USABLE_ENVIRONMENT
    assert escape.text.startswith("apply_patch failed: path '../escape.txt' must be relative")
    assert (tmp_path / "sub" / "new.txt").read_text() == "hello\n"
    assert (tmp_path / "moved.txt").read_text() == "one\nTWO\n"
    assert not (tmp_path / "old.txt").exists()
    assert not (tmp_path / "gone.txt").exists()
    assert methods[1:] == [
        "fs/readFile",  # the plan: the file it updates
        "fs/getMetadata",  # the backups: gone.txt, sub/new.txt, moved.txt
        "fs/readFile",
        "fs/getMetadata",
        "fs/getMetadata",
        "fs/getMetadata",  # the directories: sub (missing), the cwd (twice)
        "fs/getMetadata",
        "fs/getMetadata",
        "fs/remove",
        "fs/remove",
        "fs/createDirectory",
        "fs/writeFile",
        "fs/createDirectory",
        "fs/writeFile",
    ]


def _tree(root: Path) -> dict[str, str | None]:
    return {
        str(p.relative_to(root)): p.read_text() if p.is_file() else None
        for p in sorted(root.rglob("*"))
    }


async def test_a_write_failing_half_way_is_rolled_back(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    (work / "c.txt").write_text("bye\n")
    (work / "blocker").write_text("a file where the patch wants a directory\n")
    before = _tree(work)
    config = ListenConfig(own_env=dict(os.environ), cwd=str(work), shell="/bin/bash")
    bound: list[int] = []
    listening = anyio.Event()

    def ready(port: int) -> None:
        bound.append(port)
        listening.set()

    written: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve_websocket("127.0.0.1", 0, config, ready=ready))
        await listening.wait()
        client = ExecServerClient(await open_websocket(f"ws://127.0.0.1:{bound[0]}", timeout_s=10))
        original = client.write_file

        async def logged(path: str, data: bytes) -> None:
            written.append(path)
            await original(path, data)

        client.write_file = logged  # type: ignore[method-assign]
        tg.start_soon(client.run)
        await client.initialize(timeout_s=10)
        snapshot = EnvironmentSnapshot(
            (
                EnvironmentView("local", "/nonexistent", "ready", "bash"),
                EnvironmentView("worker", str(work), "ready", "bash", client=client),
            )
        )
        ctx = ToolContext(
            cwd=Path("/nonexistent"),
            sandbox=SandboxPolicy.workspace_write(),
            call_id="c",
            turn_id="t",
            step_id="s",
            environments=snapshot,
        )
        tool = RoutedPatch(ApplyPatchTool(freeform=True), advertise=True)
        patch = (
            "*** Begin Patch\n*** Environment ID: worker\n"
            "*** Update File: a.txt\n@@\n-one\n+ONE\n"
            "*** Delete File: c.txt\n"
            "*** Add File: new/deep/d.txt\n+new\n"
            "*** Add File: blocker/x.txt\n+x\n*** End Patch\n"
        )
        result = await tool.call(patch, ctx)
        await client.aclose()
        tg.cancel_scope.cancel()
    assert written[:2] == [f"{work}/a.txt", f"{work}/new/deep/d.txt"]  # it did get half-way
    assert _tree(work) == before
    assert not result.success
    first, second = result.text.split("\n")
    assert (
        first
        == f"apply_patch failed on `worker`: creating {work}/blocker: File exists (os error 17)"
    )
    assert second == "The changes already written were undone: no files were changed."


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a5f2a5e40000000049454e44ae426082"
)


async def test_view_image_reads_a_remote_image_and_keeps_codexs_schema(tmp_path: Path) -> None:
    import base64
    import json

    from mini_codex.tools.environment_routing import EnvironmentRouted
    from mini_codex.tools.view_image import ViewImageTool

    (tmp_path / "pic.png").write_bytes(PNG)
    (tmp_path / "notes.txt").write_text("not an image")
    config = ListenConfig(own_env=dict(os.environ), cwd=str(tmp_path), shell="/bin/bash")
    bound: list[int] = []
    listening = anyio.Event()

    def ready(port: int) -> None:
        bound.append(port)
        listening.set()

    tool = EnvironmentRouted(ViewImageTool(), advertise=True)
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve_websocket("127.0.0.1", 0, config, ready=ready))
        await listening.wait()
        client = ExecServerClient(await open_websocket(f"ws://127.0.0.1:{bound[0]}", timeout_s=10))
        tg.start_soon(client.run)
        await client.initialize(timeout_s=10)
        snapshot = EnvironmentSnapshot(
            (
                EnvironmentView("local", "/nonexistent", "ready", "bash"),
                EnvironmentView("worker", str(tmp_path), "ready", "bash", client=client),
            )
        )
        ctx = ToolContext(
            cwd=Path("/nonexistent"),
            sandbox=SandboxPolicy.workspace_write(),
            call_id="c",
            turn_id="t",
            step_id="s",
            environments=snapshot,
        )
        image = await tool.call(json.dumps({"path": "pic.png", "environment_id": "worker"}), ctx)
        text = await tool.call(json.dumps({"path": "notes.txt", "environment_id": "worker"}), ctx)
        await client.aclose()
        tg.cancel_scope.cancel()
    assert image.content == (
        {
            "type": "input_image",
            "image_url": "data:image/png;base64," + base64.b64encode(PNG).decode(),
        },
    )
    assert text.text == f"view_image: {tmp_path}/notes.txt is not a PNG, JPEG, GIF or WebP image"
    codex = json.loads((FIXTURE / "codex_multi_env_request.json").read_text())
    codex_view = next(t for t in codex["tools"] if t.get("name") == "view_image")
    assert tool.spec.to_responses_tool()["parameters"] == codex_view["parameters"]
