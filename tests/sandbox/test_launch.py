"""Choosing the confinement: bubblewrap, else Landlock + seccomp, else refuse (or, when allowed,
run unconfined and say so); the shim's write grants carve protected paths out of the roots."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.bwrap import SandboxAvailability, clear_detection_cache
from mini_codex.sandbox.landlock import landlock_argv
from mini_codex.sandbox.landlock_shim import write_grants
from mini_codex.sandbox.launch import (
    PreparedCommand,
    SandboxRequest,
    SandboxUnavailableError,
    clear_sandbox_detection,
    confine,
    detect_sandbox,
)
from mini_codex.sandbox.policy import writable_roots

pytestmark = pytest.mark.anyio

NONE = SandboxAvailability(kind="none", reason="no namespaces")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    clear_sandbox_detection()
    clear_detection_cache()
    yield
    clear_sandbox_detection()
    clear_detection_cache()


def request(policy: SandboxPolicy, backend: SandboxAvailability, **kw: object) -> SandboxRequest:
    return SandboxRequest(policy=policy, cwd=Path("/w"), backend=backend, env={}, **kw)  # type: ignore[arg-type]


def test_without_a_sandbox_restricted_policies_are_refused_unless_allowed() -> None:
    with pytest.raises(SandboxUnavailableError, match="no OS sandbox works on this machine"):
        confine(["true"], request(SandboxPolicy.read_only(), NONE), Path("/w"))
    allowed = confine(
        ["true"], request(SandboxPolicy.read_only(), NONE, allow_unsandboxed=True), Path("/w")
    )
    assert allowed == PreparedCommand(
        ["true"],
        "none",
        "Warning: ran without a sandbox (no namespaces); the read-only policy was not enforced "
        "(sandbox.allow_unsandboxed = true).",
        command=("true",),
    )


def test_full_access_and_escalated_commands_are_not_confined() -> None:
    bwrap = SandboxAvailability(kind="bwrap", reason="", executable="/usr/bin/bwrap")
    full = request(SandboxPolicy.danger_full_access(), NONE)
    assert confine(["ls"], full, Path("/w")) == PreparedCommand(["ls"], "none", command=("ls",))
    escalated = confine(
        ["ls"], request(SandboxPolicy.workspace_write(), bwrap), Path("/w"), escalated=True
    )
    assert escalated == PreparedCommand(["ls"], "none", command=("ls",))


def test_the_landlock_argv_carries_roots_protected_paths_and_network() -> None:
    roots = writable_roots(
        SandboxPolicy.workspace_write(exclude_slash_tmp=True), "/w", never_writable=["/h"]
    )
    assert landlock_argv(["ls"], roots=roots, network_access=False, python="/py", shim="/s") == [
        *("/py", "-I", "/s"),
        '{"writable":["/w"],"protected":["/w/.git","/w/.mini-codex","/w/.codex","/h"],'
        '"network":false}',
        *("--", "ls"),
    ]


def test_write_grants_split_a_root_around_existing_protected_paths(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for directory in ("src/pkg", ".git/hooks", "home/rules"):
        (root / directory).mkdir(parents=True)
    (root / "README").write_text("x")
    (root / "escape").symlink_to(tmp_path)
    (tmp_path / "other").mkdir()
    dirs, files = write_grants(
        [str(root), str(tmp_path / "other")],
        [str(root / ".git"), str(root / "home"), str(root / ".codex")],
    )
    assert (dirs, files) == ([str(root / "src"), str(tmp_path / "other")], [str(root / "README")])


async def test_without_bwrap_the_landlock_fallback_is_chosen() -> None:
    found = await detect_sandbox("no-such-bwrap-here")
    assert found.kind == "landlock", found.reason
    assert "bubblewrap unavailable: 'no-such-bwrap-here' not found on PATH" in found.reason
