"""Skill discovery on real folders: roots and their order, scope ranking, dedupe, limits,
frontmatter validation and hostile files."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from skill_files import write_skill

from mini_codex.skills.discovery import (
    MAX_SCAN_DEPTH,
    MAX_SKILL_FILE_BYTES,
    SkillDiscovery,
    SkillRootsConfig,
    find_project_root,
    skill_roots,
)
from mini_codex.skills.model import SkillError, SkillRoot, SkillSpec


def _config(tmp_path: Path, **kwargs: object) -> SkillRootsConfig:
    return SkillRootsConfig(
        home=tmp_path / "home",
        user_home=tmp_path / "user",
        admin_root=tmp_path / "admin",
        **kwargs,  # type: ignore[arg-type]
    )


def test_roots_follow_codex_order_from_the_project_root_down_to_the_cwd(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    cwd = project / "pkg" / "sub"
    cwd.mkdir(parents=True)
    (project / ".git").mkdir()
    plugin = SkillRoot(str(tmp_path / "plug" / "skills"), "user", plugin="plug")
    roots = skill_roots(_config(tmp_path, plugin_roots=(plugin,)), cwd)
    assert roots == [
        SkillRoot(str(cwd / ".codex/skills"), "repo"),
        SkillRoot(str(project / "pkg/.codex/skills"), "repo"),
        SkillRoot(str(project / ".codex/skills"), "repo"),
        SkillRoot(str(tmp_path / "home/skills"), "user"),
        SkillRoot(str(tmp_path / "user/.agents/skills"), "user"),
        SkillRoot(str(tmp_path / "admin"), "admin"),
        plugin,
        SkillRoot(str(project / ".agents/skills"), "repo"),
        SkillRoot(str(project / "pkg/.agents/skills"), "repo"),
        SkillRoot(str(cwd / ".agents/skills"), "repo"),
    ]


def test_without_a_marker_the_cwd_is_the_project_root(tmp_path: Path) -> None:
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    assert find_project_root(cwd, (".git",)) == cwd
    assert find_project_root(cwd, ()) == cwd
    (tmp_path / "a" / "marker.toml").write_text("")
    assert find_project_root(cwd, ("marker.toml",)) == tmp_path / "a"


def test_scope_rank_then_name_then_path_and_dedupe_by_canonical_path(tmp_path: Path) -> None:
    repo = tmp_path / "ws" / ".agents" / "skills"
    user = tmp_path / "home" / "skills"
    admin = tmp_path / "admin"
    a = write_skill(repo, "zeta", "repo z")
    write_skill(user, "alpha", "user a")
    write_skill(admin, "beta", "admin b")
    write_skill(repo, "alpha", "repo a", folder="alpha2")
    # The same folder reached twice (a symlinked root) is one skill, found under the first root.
    os.symlink(repo, tmp_path / "again")
    roots = [
        SkillRoot(str(repo), "repo"),
        SkillRoot(str(user), "user"),
        SkillRoot(str(admin), "admin"),
        SkillRoot(str(tmp_path / "again"), "user"),
        SkillRoot(str(tmp_path / "missing"), "user"),
    ]
    outcome = SkillDiscovery().load(roots)
    assert [(s.scope, s.name, s.description) for s in outcome.skills] == [
        ("repo", "alpha", "repo a"),
        ("repo", "zeta", "repo z"),
        ("user", "alpha", "user a"),
        ("admin", "beta", "admin b"),
    ]
    assert outcome.roots == (str(repo), str(user), str(admin))
    assert outcome.skills[1] == SkillSpec("zeta", "repo z", str(a), "repo", str(repo))
    assert outcome.errors == ()
    assert [root.path for root in outcome.scanned_roots] == [
        str(repo),
        str(user),
        str(admin),
        str(repo),
    ]


def test_depth_limit_dot_folders_and_the_folder_name_fallback(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    deep = root
    for level in range(MAX_SCAN_DEPTH):
        deep = deep / f"d{level}"
    write_skill(deep.parent, "at-limit", folder=deep.name)  # depth 6: found
    write_skill(deep, "too-deep", folder="d6")  # depth 7: not scanned
    write_skill(root / ".hidden", "hidden")
    nameless = root / "nameless" / "SKILL.md"
    nameless.parent.mkdir()
    nameless.write_text("---\ndescription: no name here\n---\nbody\n")
    outcome = SkillDiscovery().load([SkillRoot(str(root), "repo")])
    assert [s.name for s in outcome.skills] == ["at-limit", "nameless"]


def test_folder_count_limit_per_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mini_codex.skills.discovery as discovery

    monkeypatch.setattr(discovery, "MAX_SKILLS_DIRS_PER_ROOT", 5)
    root = tmp_path / "skills"
    for index in range(8):
        write_skill(root, f"s{index}")
    outcome = SkillDiscovery().load([SkillRoot(str(root), "repo")])
    assert [s.name for s in outcome.skills] == ["s0", "s1", "s2", "s3"]
    assert outcome.notes == (f"skills scan truncated after 5 folders (root {root})",)


def test_invalid_skills_are_one_error_each(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "good", "fine")
    write_skill(root, "n" * 65, "too long a name", folder="long-name")
    write_skill(root, "long-description", "d" * 1025)
    (root / "no-frontmatter").mkdir()
    (root / "no-frontmatter" / "SKILL.md").write_text("# just text\n")
    (root / "bad-yaml").mkdir()
    (root / "bad-yaml" / "SKILL.md").write_text("---\nname: [unclosed\n---\n")
    (root / "not-a-map").mkdir()
    (root / "not-a-map" / "SKILL.md").write_text("---\n- a list\n---\n")
    outcome = SkillDiscovery().load([SkillRoot(str(root), "repo")])
    assert [s.name for s in outcome.skills] == ["good"]
    errors = {Path(e.path).parent.name: e.message for e in outcome.errors}
    assert errors["long-name"] == "invalid name: exceeds maximum length of 64 characters"
    assert errors["long-description"] == (
        "invalid description: exceeds maximum length of 1024 characters"
    )
    assert errors["no-frontmatter"] == "missing YAML frontmatter delimited by ---"
    assert errors["bad-yaml"].startswith("invalid YAML: ")
    assert errors["not-a-map"] == "invalid YAML: the frontmatter is not a mapping"
    assert len(outcome.errors) == 5


def test_hostile_files_are_refused_without_hanging(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "good")
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo" / "SKILL.md")  # no writer: opening it must not block
    (root / "link").mkdir()
    os.symlink(root / "good" / "SKILL.md", root / "link" / "SKILL.md")
    (root / "huge").mkdir()
    with open(root / "huge" / "SKILL.md", "wb") as handle:
        handle.write(b"---\nname: huge\n---\n")
        handle.truncate(MAX_SKILL_FILE_BYTES + 1)
    (root / "binary").mkdir()
    (root / "binary" / "SKILL.md").write_bytes(b"---\nname: \xff\xfe\n---\n")
    (root / "loop").mkdir()
    os.symlink(root / "loop", root / "loop" / "again")  # a folder loop ends
    os.symlink(tmp_path / "nowhere", root / "dangling")
    with ThreadPoolExecutor(1) as pool:  # a hang fails the test after 10 s
        outcome = pool.submit(SkillDiscovery().load, [SkillRoot(str(root), "repo")]).result(10)
    assert [s.name for s in outcome.skills] == ["good"]
    assert {Path(e.path).parent.name: e.message for e in outcome.errors} == {
        "binary": "failed to read file: not valid UTF-8",
        "fifo": "not a regular file (a FIFO)",
        "huge": f"larger than {MAX_SKILL_FILE_BYTES} bytes",
        "link": "not a regular file (a symlink)",
    }


def test_a_rescan_reuses_parsed_files_until_they_change(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    path = write_skill(root, "one", "first")
    discovery = SkillDiscovery()
    first = discovery.load([SkillRoot(str(root), "repo")])
    assert discovery.load([SkillRoot(str(root), "repo")]) == first
    path.write_text("---\nname: one\ndescription: second, and longer\n---\n")
    changed = discovery.load([SkillRoot(str(root), "repo")])
    assert [s.description for s in changed.skills] == ["second, and longer"]
    path.write_text("no frontmatter any more\n")
    broken = discovery.load([SkillRoot(str(root), "repo")])
    assert broken.skills == ()
    assert broken.errors == (SkillError(str(path), "missing YAML frontmatter delimited by ---"),)


def test_plugin_skills_are_namespaced_and_policy_hides_them_from_implicit_use(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plugin" / "skills"
    write_skill(root, "deploy", "ship it")
    hidden = write_skill(root, "secret", "only by name")
    (hidden.parent / "agents").mkdir()
    (hidden.parent / "agents" / "openai.yaml").write_text(
        "policy:\n  allow_implicit_invocation: false\n"
    )
    outcome = SkillDiscovery().load([SkillRoot(str(root), "user", plugin="acme")])
    assert [(s.name, s.plugin, s.allow_implicit) for s in outcome.skills] == [
        ("acme:deploy", "acme", True),
        ("acme:secret", "acme", False),
    ]
