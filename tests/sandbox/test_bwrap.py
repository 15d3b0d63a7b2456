"""The bubblewrap command line (pure) and detection of a working bwrap (cached, degraded)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from pathlib import PurePosixPath as P

import pytest

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.bwrap import (
    SandboxAvailability,
    bwrap_argv,
    clear_detection_cache,
    detect_bwrap,
)
from mini_codex.sandbox.policy import WritableRoots, writable_roots

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    clear_detection_cache()
    yield
    clear_detection_cache()


NAMESPACES = (
    *("--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid", "--unshare-ipc"),
    *("--cap-drop", "ALL"),
)


def protected(*roots: str) -> list[str]:
    return [
        arg
        for root in roots
        for sub in (".git", ".mini-codex", ".codex")
        for arg in ("--ro-bind-try", f"{root}/{sub}", f"{root}/{sub}")
    ]


def test_workspace_write_argv_binds_roots_protects_git_and_unshares_the_network() -> None:
    policy = SandboxPolicy.workspace_write(("/data",))
    roots = writable_roots(
        policy, "/srv/ws", "/srv/session", tmpdir="/var/tmp/u", never_writable=["/srv/ws/home"]
    )
    assert bwrap_argv(
        ["/bin/bash", "-c", "make"],
        policy=policy,
        roots=roots,
        cwd="/srv/ws",
        workdir="/srv/ws/sub",
        executable="/usr/bin/bwrap",
    ) == [
        "/usr/bin/bwrap",
        *NAMESPACES,
        "--unshare-net",
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"),
        *("--bind-try", "/srv/ws", "/srv/ws", "--bind-try", "/data", "/data"),
        *("--bind-try", "/srv/session", "/srv/session"),
        *("--bind-try", "/var/tmp/u", "/var/tmp/u", "--bind-try", "/tmp", "/tmp"),
        *protected("/srv/ws", "/data", "/srv/session", "/var/tmp/u", "/tmp"),
        *("--ro-bind-try", "/srv/ws/home", "/srv/ws/home"),
        *("--chdir", "/srv/ws/sub"),
        *("--", "/bin/bash", "-c", "make"),
    ]


def test_read_only_argv_binds_nothing_writable_and_network_access_keeps_the_network() -> None:
    policy = SandboxPolicy.read_only(network_access=True)
    argv = bwrap_argv(["true"], policy=policy, roots=writable_roots(policy, "/w"), cwd="/w")
    assert argv == [
        "bwrap",
        *NAMESPACES,
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"),
        *("--chdir", "/w", "--", "true"),
    ]


def test_excluded_tmp_dirs_stay_read_only() -> None:
    policy = SandboxPolicy.workspace_write(exclude_tmpdir_env_var=True, exclude_slash_tmp=True)
    roots = writable_roots(policy, "/w", tmpdir="/var/tmp/u")
    assert roots.roots == (P("/w"),)


def test_danger_full_access_is_never_wrapped() -> None:
    with pytest.raises(ValueError, match="not run under bwrap"):
        bwrap_argv(
            ["true"],
            policy=SandboxPolicy.danger_full_access(),
            roots=WritableRoots(unrestricted=True),
            cwd="/w",
        )


async def test_a_missing_bwrap_degrades_with_a_reason(tmp_path: Path) -> None:
    assert await detect_bwrap("bwrap", search_path=str(tmp_path)) == SandboxAvailability(
        kind="none", reason="'bwrap' not found on PATH (install the bubblewrap package)"
    )


async def test_a_bwrap_that_fails_its_probe_degrades_and_is_probed_once(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    runs = tmp_path / "runs"
    fake.write_text(
        f"#!/bin/sh\necho run >> {runs}\n"
        "echo 'No permissions to create new namespace' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    first = await detect_bwrap(str(fake))
    assert first == SandboxAvailability(
        kind="none",
        reason=f"{fake} failed a probe (exit 1): No permissions to create new namespace",
    )
    assert await detect_bwrap(str(fake)) is first
    assert runs.read_text() == "run\n"
    clear_detection_cache()
    await detect_bwrap(str(fake))
    assert runs.read_text() == "run\nrun\n"


async def test_a_working_bwrap_is_detected() -> None:
    found = shutil.which("bwrap")
    if found is None:
        pytest.skip("bubblewrap is not installed (CI installs it with apt-get install bubblewrap)")
    availability = await detect_bwrap()
    if availability.kind == "none":
        pytest.skip(f"bwrap cannot create namespaces here: {availability.reason}")
    assert availability == SandboxAvailability(
        kind="bwrap", reason="bubblewrap namespaces work", executable=found
    )
