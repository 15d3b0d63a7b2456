"""Pure sandbox decisions: writable roots per policy, and which paths they allow."""

from __future__ import annotations

from pathlib import PurePosixPath as P

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.policy import WritableRoots, is_path_writable, writable_roots


def test_workspace_write_roots_are_cwd_extra_roots_the_session_tmp_and_tmp_dirs() -> None:
    policy = SandboxPolicy.workspace_write(("/data/shared", "build/out", "/work/repo"))
    roots = (
        P("/work/repo"),
        P("/data/shared"),
        P("/work/repo/build/out"),
        P("/tmp/session-1"),
        P("/var/tmp/me"),
        P("/tmp"),
    )
    assert writable_roots(
        policy,
        "/work/repo",
        "/tmp/session-1",
        tmpdir="/var/tmp/me",
        never_writable=["/work/repo/home"],
    ) == WritableRoots(
        unrestricted=False,
        roots=roots,
        read_only_subpaths=tuple(
            root / sub for root in roots for sub in (".git", ".mini-codex", ".codex")
        ),
        never_writable=(P("/work/repo/home"),),
    )


def test_excluded_tmp_dirs_and_a_relative_tmpdir_are_not_roots() -> None:
    excluded = SandboxPolicy.workspace_write(exclude_tmpdir_env_var=True, exclude_slash_tmp=True)
    assert writable_roots(excluded, "/w", tmpdir="/var/tmp/me").roots == (P("/w"),)
    assert writable_roots(SandboxPolicy.workspace_write(), "/w", tmpdir="rel").roots == (
        P("/w"),
        P("/tmp"),
    )


def test_the_home_is_never_writable_even_inside_a_root() -> None:
    roots = writable_roots(SandboxPolicy.workspace_write(), "/w", never_writable=["/w/.home"])
    assert not roots.allows("/w/.home/config.toml")
    assert not roots.allows("/w/.codex/config.toml")
    assert not roots.allows("/w/.mini-codex/rules/x.rules")
    assert roots.allows("/w/src/x.py")


def test_read_only_and_danger_full_access_roots() -> None:
    assert writable_roots(SandboxPolicy.read_only(), "/w") == WritableRoots(unrestricted=False)
    assert writable_roots(SandboxPolicy.danger_full_access(), "/w") == WritableRoots(
        unrestricted=True
    )


@pytest.mark.parametrize(
    ("policy", "path", "writable"),
    [
        (SandboxPolicy.workspace_write(), "src/main.py", True),
        (SandboxPolicy.workspace_write(), "/work/repo", True),
        (SandboxPolicy.workspace_write(), "/work/repo/../other/x", False),
        (SandboxPolicy.workspace_write(), "/work/repository/x", False),
        (SandboxPolicy.workspace_write(), "/etc/passwd", False),
        (SandboxPolicy.workspace_write(), ".git/hooks/pre-commit", False),
        (SandboxPolicy.workspace_write(), ".git", False),
        (SandboxPolicy.workspace_write(), ".github/workflows/ci.yml", True),
        (SandboxPolicy.workspace_write(), "/tmp/session/x", True),
        (SandboxPolicy.workspace_write(("/data",)), "/data/deep/file", True),
        (SandboxPolicy.read_only(), "src/main.py", False),
        (SandboxPolicy.danger_full_access(), "/etc/passwd", True),
    ],
)
def test_is_path_writable(policy: SandboxPolicy, path: str, writable: bool) -> None:
    assert is_path_writable(policy, "/work/repo", path, "/tmp/session") is writable


def test_resolved_roots_are_judged_by_where_they_point() -> None:
    links = {"/work/link-to-data": "/data", "/work/repo": "/work/repo"}
    policy = SandboxPolicy.workspace_write(("/work/link-to-data",), exclude_slash_tmp=True)
    roots = writable_roots(policy, "/work/repo").resolved(lambda path: links.get(path, path))
    assert roots.roots == (P("/work/repo"), P("/data"))
    assert roots.allows("/data/x")
    assert not roots.allows("/work/link-to-data/x")
    assert not roots.allows("/data/.git/config")


def test_relative_paths_need_an_absolute_cwd() -> None:
    with pytest.raises(ValueError, match="expected an absolute path"):
        writable_roots(SandboxPolicy.workspace_write(), "relative/cwd")


SEGMENT = st.sampled_from(["a", "b", "..", ".", ".git", "src"])


@given(st.lists(SEGMENT, max_size=6))
def test_a_path_is_writable_under_workspace_write_iff_it_normalizes_inside_and_outside_git(
    segments: list[str],
) -> None:
    path = "/".join(segments) or "."
    normalized = P("/w/r").joinpath(*segments)
    parts: list[str] = []
    for part in normalized.parts[1:]:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    inside = parts[:2] == ["w", "r"] and parts[2:3] != [".git"]
    assert is_path_writable(SandboxPolicy.workspace_write(), "/w/r", path) is inside


def test_policy_serializes_to_the_codex_turn_context_shape() -> None:
    assert SandboxPolicy.danger_full_access().to_turn_context_json() == {
        "type": "danger-full-access"
    }
    assert SandboxPolicy.read_only().to_turn_context_json() == {
        "type": "read-only",
        "network_access": False,
    }
    assert SandboxPolicy.workspace_write(("/x",)).to_turn_context_json() == {
        "type": "workspace-write",
        "writable_roots": ["/x"],
        "network_access": False,
        "exclude_tmpdir_env_var": False,
        "exclude_slash_tmp": False,
    }
