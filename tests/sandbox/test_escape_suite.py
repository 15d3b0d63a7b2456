"""The escape suite: real commands (and patches) trying to leave the sandbox, as root in CI.

Each attempt runs through the real ``shell`` / ``apply_patch`` tools under ``workspace-write`` and
``read-only``, with bubblewrap and with the Landlock + seccomp fallback (bubblewrap made
unavailable), each both in the session's long-lived sandbox (the default) and with one confinement
per command (the write attempts also through ``exec_command`` on a PTY), and the host is checked
afterwards: 0 escapes. The attempts: writes outside the
roots, through symlinks, into ``.git/hooks`` (also after ``umount .git``), remounting ``/``, to
``$HOME`` and ``$MINI_CODEX_HOME`` (which lies inside the workspace here), a TCP connection to a
127.0.0.1 listener, reading ``OPENAI_API_KEY`` from the environment or from the agent's
``/proc/PID/environ``, killing the agent's process, and background processes left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from msgspec.structs import replace

from mini_codex.config import ShellEnvironmentPolicy
from mini_codex.policy.environment import child_environment
from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.bwrap import SandboxAvailability, detect_bwrap
from mini_codex.sandbox.landlock import detect_landlock
from mini_codex.sandbox.launch import clear_sandbox_detection
from mini_codex.tools.apply_patch import ApplyPatchTool
from mini_codex.tools.base import ToolContext, ToolOutput
from mini_codex.tools.shell import ShellTool
from mini_codex.tools.unified_exec import unified_exec_tools

pytestmark = pytest.mark.anyio

SECRET = "sk-escape-suite-secret"
HOST_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "OPENAI_API_KEY": SECRET,
    "ANTHROPIC_API_KEY": SECRET,
    "LANG": "C.UTF-8",
}
NO_BACKEND_YET = SandboxAvailability(kind="none", reason="replaced by detection")
POLICIES = {
    "workspace-write": SandboxPolicy.workspace_write(),
    "read-only": SandboxPolicy.read_only(),
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


BACKENDS = ["bwrap-session", "bwrap-per-command", "landlock-session", "landlock-per-command"]
"""bubblewrap and the Landlock + seccomp fallback, each with one long-lived sandbox per session
(the default) and with one confinement per command."""


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest) -> SandboxAvailability:
    kind = request.param.split("-", 1)[0]
    if kind == "bwrap":
        found = await detect_bwrap(search_path=HOST_ENV["PATH"])
    else:
        found = await detect_landlock()
    if found.kind != kind:
        pytest.skip(f"{kind} does not work here: {found.reason}")
    return found


@pytest.fixture
async def shell(request: pytest.FixtureRequest) -> AsyncIterator[ShellTool]:
    """The session's shell tool (one per test, closed at its end, as a session closes it)."""
    params = getattr(request.node, "callspec", None)
    name = params.params.get("backend") if params is not None else None
    tool = ShellTool(long_lived_sandbox=not str(name).endswith("-per-command"))
    try:
        yield tool
    finally:
        await tool.aclose()


@dataclass
class Host:
    """The machine as the test sees it: a workspace with a git repo and a home inside it, and
    directories outside every writable root."""

    workspace: Path
    outside: Path
    home: Path
    mc_home: Path
    victim: subprocess.Popen[bytes]
    """A stand-in for the agent: a process holding the secret in its environment."""

    def hooks(self) -> list[str]:
        return sorted(p.name for p in (self.workspace / ".git" / "hooks").iterdir())


@pytest.fixture
def host() -> Iterator[Host]:
    # Outside every root: not under /tmp (writable under workspace-write) nor the workspace.
    # The workspace too: a workspace inside /tmp would make /tmp a root holding a .git.
    base = Path(tempfile.mkdtemp(prefix="mini-codex-escape-", dir="/var/tmp"))
    workspace = base / "ws"
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / "src").mkdir()
    (workspace / "README").write_text("readme\n")
    mc_home = workspace / "agent-home"
    mc_home.mkdir()
    (mc_home / "config.toml").write_text('sandbox_mode = "workspace-write"\n')
    outside, home = base / "outside", base / "home"
    outside.mkdir()
    home.mkdir()
    (outside / "target.txt").write_text("original\n")
    (workspace / "link-dir").symlink_to(outside)
    (workspace / "link-file").symlink_to(outside / "target.txt")
    victim = subprocess.Popen(
        ["sleep", "300"], env={**HOST_ENV, "MARKER": "victim"}, start_new_session=True
    )
    try:
        yield Host(workspace, outside, home, mc_home, victim)
    finally:
        victim.kill()
        victim.wait()
        shutil.rmtree(base, ignore_errors=True)


def context(host: Host, policy: SandboxPolicy, backend: SandboxAvailability) -> ToolContext:
    env = child_environment(HOST_ENV, ShellEnvironmentPolicy())
    env["HOME"] = str(host.home)
    return ToolContext(
        cwd=host.workspace,
        sandbox=policy,
        call_id="call-escape",
        turn_id="turn-escape",
        step_id="step-escape",
        env=env,
        never_writable=(host.mc_home,),
        sandbox_backend=backend,
        approval_policy="never",
    )


async def run(
    shell: ShellTool, host: Host, policy: str, backend: SandboxAvailability, command: str
) -> ToolOutput:
    ctx = context(host, POLICIES[policy], backend)
    return await shell.call(json.dumps({"command": command, "timeout_ms": 20_000}), ctx)


def untouched(host: Host) -> None:
    """Nothing outside the writable roots changed."""
    assert sorted(p.name for p in host.outside.iterdir()) == ["target.txt"]
    assert (host.outside / "target.txt").read_text() == "original\n"
    assert list(host.home.iterdir()) == []
    assert host.hooks() == []
    assert sorted(p.name for p in host.mc_home.iterdir()) == ["config.toml"]
    assert (host.mc_home / "config.toml").read_text() == 'sandbox_mode = "workspace-write"\n'


ESCAPES = {
    "write outside the roots": "echo x > {outside}/escaped.txt",
    "write through a symlinked directory": "echo x > link-dir/escaped.txt",
    "write through a symlinked file": "echo x > link-file",
    "write through a symlink made by the command": (
        "ln -s {outside} made-link; echo x > made-link/escaped.txt; "
        "ln -s {outside}/target.txt made-file-link; echo x > made-file-link"
    ),
    "bind-mount outside into the workspace": (
        "mkdir -p src/mnt; mount --bind {outside} src/mnt; echo x > src/mnt/escaped.txt"
    ),
    "write into .git/hooks": "echo 'echo pwned' > .git/hooks/pre-commit",
    "umount .git, then write its hooks": "umount .git; umount -l .git; echo x > .git/hooks/post",
    "remount / read-write": (
        "mount -o remount,bind,rw /; mount -o remount,rw /; echo x > {outside}/escaped.txt"
    ),
    "write $HOME": "echo x > $HOME/.bashrc",
    "write $MINI_CODEX_HOME": (
        "echo 'sandbox_mode = \"danger-full-access\"' > agent-home/config.toml; "
        "mkdir -p agent-home/rules && echo x > agent-home/rules/allow.rules"
    ),
    "chmod outside the roots": "chmod 777 {outside}/target.txt",
    "move out of the way": "mv agent-home agent-home.old; mv .git git.old",
}


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("attempt", sorted(ESCAPES))
async def test_no_write_escapes(
    shell: ShellTool, host: Host, backend: SandboxAvailability, policy: str, attempt: str
) -> None:
    mode_before = (host.outside / "target.txt").stat().st_mode
    result = await run(shell, host, policy, backend, ESCAPES[attempt].format(outside=host.outside))
    assert "Warning" not in result.text
    untouched(host)
    assert (host.outside / "target.txt").stat().st_mode == mode_before
    assert (host.workspace / ".git" / "config").read_text() == "[core]\n"


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("attempt", sorted(ESCAPES))
async def test_exec_command_has_no_write_escapes_either(
    request: pytest.FixtureRequest,
    host: Host,
    backend: SandboxAvailability,
    policy: str,
    attempt: str,
) -> None:
    """The same attempts through ``exec_command`` (unified exec, on a PTY)."""
    exec_command, _ = unified_exec_tools()
    exec_command.sandboxes.long_lived = not request.node.callspec.params["backend"].endswith(
        "-per-command"
    )
    ctx = context(host, POLICIES[policy], backend)
    command = ESCAPES[attempt].format(outside=host.outside)
    mode_before = (host.outside / "target.txt").stat().st_mode
    try:
        result = await exec_command.call(json.dumps({"cmd": command, "yield_time_ms": 20_000}), ctx)
    finally:
        await exec_command.aclose()
    assert result.details is not None
    assert "exit_code" in result.details
    untouched(host)
    assert (host.outside / "target.txt").stat().st_mode == mode_before
    assert (host.workspace / ".git" / "config").read_text() == "[core]\n"


@pytest.mark.parametrize("policy", sorted(POLICIES))
async def test_no_network_to_a_local_listener(
    shell: ShellTool, host: Host, backend: SandboxAvailability, policy: str
) -> None:
    accepted: list[bytes] = []
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    port = server.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                accepted.append(conn.recv(100) or b"<connected>")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        result = await run(
            shell,
            host,
            policy,
            backend,
            f"echo hello > /dev/tcp/127.0.0.1/{port} && echo CONNECTED; "
            f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))' "
            "&& echo CONNECTED",
        )
    finally:
        stop.set()
        thread.join()
        server.close()
    assert "CONNECTED" not in result.text
    assert accepted == []


@pytest.mark.parametrize("policy", sorted(POLICIES))
async def test_no_secrets_and_no_reach_into_the_agent(
    shell: ShellTool, host: Host, backend: SandboxAvailability, policy: str
) -> None:
    victim = host.victim.pid
    result = await run(
        shell,
        host,
        policy,
        backend,
        "env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; "
        f"cat /proc/{victim}/environ; kill -9 {victim} && echo KILLED; "
        f"kill -0 {os.getpid()} && echo REACHED",
    )
    assert SECRET not in result.text
    assert "KILLED" not in result.text
    assert "REACHED" not in result.text
    assert host.victim.poll() is None


def remove(path: str) -> bool:
    """Remove ``path``; whether it existed."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def marked_processes(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if marker.encode() in cmdline and stat.rsplit(")", 1)[1].split()[0] != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("policy", sorted(POLICIES))
async def test_background_processes_do_not_outlive_the_call(
    shell: ShellTool, host: Host, backend: SandboxAvailability, policy: str
) -> None:
    marker = f"escape-{uuid.uuid4().hex}"
    script = f"sleep 300; : {marker}"
    result = await run(
        shell,
        host,
        policy,
        backend,
        f"(setsid sh -c '{script}' &); (nohup sh -c '{script}' >/dev/null 2>&1 &); "
        f"sh -c '{script}' & disown; echo started",
    )
    assert "started" in result.text
    for _ in range(100):  # a killed process may take a moment to disappear
        if not marked_processes(marker):
            break
        await anyio.sleep(0.05)
    alive = marked_processes(marker)
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert alive == []


async def test_workspace_and_tmp_stay_writable_and_tmp_is_shared_between_commands(
    shell: ShellTool, host: Host, backend: SandboxAvailability
) -> None:
    name = f"/tmp/mini-codex-escape-{uuid.uuid4().hex}"
    try:
        first = await run(
            shell,
            host,
            "workspace-write",
            backend,
            f"echo made > src/made.txt && echo more >> README && echo kept > {name}",
        )
        second = await run(shell, host, "workspace-write", backend, f"cat {name}")
    finally:
        remove(name)
    assert first.success, first.text
    assert (host.workspace / "src" / "made.txt").read_text() == "made\n"
    assert (host.workspace / "README").read_text() == "readme\nmore\n"
    assert second.text.endswith("Output:\nkept\n")


async def test_new_files_next_to_a_protected_directory(
    shell: ShellTool, host: Host, backend: SandboxAvailability
) -> None:
    """bubblewrap re-protects .git with a read-only bind; Landlock can only grant, so the
    fallback cannot let a command create files in a directory holding .git (apply_patch can)."""
    result = await run(shell, host, "workspace-write", backend, "echo top > top.txt")
    created = (host.workspace / "top.txt").exists()
    assert (result.success, created) == (
        (True, True) if backend.kind == "bwrap" else (False, False)
    )
    patched = await ApplyPatchTool(freeform=True).call(
        "*** Begin Patch\n*** Add File: patched.txt\n+ok\n*** End Patch",
        context(host, POLICIES["workspace-write"], backend),
    )
    assert patched.success is True
    assert (host.workspace / "patched.txt").read_text() == "ok\n"


async def test_read_only_refuses_writes_in_the_workspace(
    shell: ShellTool, host: Host, backend: SandboxAvailability
) -> None:
    name = f"/tmp/mini-codex-escape-{uuid.uuid4().hex}"
    result = await run(shell, host, "read-only", backend, f"echo x > made.txt; echo y > {name}")
    assert result.success is False
    assert sorted(p.name for p in host.workspace.iterdir()) == sorted(
        [".git", "README", "agent-home", "link-dir", "link-file", "src"]
    )
    assert not remove(name)


# --- apply_patch under the same policy ----------------------------------------------------------

PATCH_ESCAPES = {
    "outside via ..": "*** Add File: ../../escaped.txt\n+x",
    "outside via an absolute path": "*** Add File: {outside}/escaped.txt\n+x",
    "through a symlinked directory": "*** Add File: link-dir/escaped.txt\n+x",
    "through a symlinked file": "*** Update File: link-file\n@@\n-original\n+changed",
    "into .git/hooks": "*** Add File: .git/hooks/pre-commit\n+echo pwned",
    "into $MINI_CODEX_HOME": "*** Update File: agent-home/config.toml\n@@\n-sandbox_mode = "
    '"workspace-write"\n+sandbox_mode = "danger-full-access"',
    "into $HOME": "*** Add File: {home}/.bashrc\n+x",
}


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("attempt", sorted(PATCH_ESCAPES))
async def test_apply_patch_has_no_escapes_either(host: Host, policy: str, attempt: str) -> None:
    body = PATCH_ESCAPES[attempt].format(outside=host.outside, home=host.home)
    patch = f"*** Begin Patch\n{body}\n*** End Patch"
    none = SandboxAvailability(kind="none", reason="not needed for patches")
    result = await ApplyPatchTool(freeform=True).call(patch, context(host, POLICIES[policy], none))
    assert result.success is False
    assert "No files were changed." in result.text
    untouched(host)


async def test_without_bwrap_detection_falls_back_to_landlock_and_still_confines(
    host: Host,
) -> None:
    clear_sandbox_detection()
    try:
        ctx = replace(
            context(host, POLICIES["workspace-write"], NO_BACKEND_YET), sandbox_backend=None
        )
        tool = ShellTool(bwrap_executable="no-such-bwrap")
        command = f"echo x > {host.outside}/escaped.txt; echo top > top.txt; echo ok > src/ok"
        result = await tool.call(json.dumps({"command": command}), ctx)
    finally:
        clear_sandbox_detection()
    untouched(host)
    assert "Warning" not in result.text
    # Landlock's signature: no new file next to .git, but subdirectories stay writable.
    assert not (host.workspace / "top.txt").exists()
    assert (host.workspace / "src" / "ok").read_text() == "ok\n"
