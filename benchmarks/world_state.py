"""Benchmark P1 (DESIGN §9): world-state capture + diff per step on a 100k-file workspace.

Builds a workspace of N files (default 100,000 in ≈2,000 directories, with a root and a nested
``.gitignore`` and some ignored files) in a temporary directory, then measures the median time
of one step:

* ours: ``WorkspaceScanner.scan()`` → ``WorldState([WorkspaceSection(files)])`` →
  ``snapshot()`` + ``merge_patch_from(previous snapshot)`` + ``render_diff(previous world
  state)``; with nothing changed, and with one file added (in a random directory) per step;
* naive: a full ``os.walk`` rescan filtered with ``pathspec`` (``GitIgnoreSpec.check_file`` for
  every entry, nested ``.gitignore`` files honoured, ignored directories pruned), the full path
  set encoded (``{path: 1}`` for every path, sorted), ``create_merge_patch`` of the two full
  encodings, and a set difference for the rendered diff; for both cases;
* naive-fast (extra, for context; 10 steps): the same full rescan with our compiled ignore
  rules instead of ``GitIgnoreSpec.check_file``;
* skills (issue 27): ``--skills N`` (default 500) ``SKILL.md`` folders under ``.agents/skills`` in
  the workspace (listed as workspace files too). Every step of ours also builds the
  ``host_skills`` section from the turn's skills (discovered once per turn, as Codex snapshots
  skills per turn), so the P1 ratio includes it while naive does not list skills at all. Printed
  apart: the per-turn rediscovery (stat-validated caches, nothing changed), the same with one
  ``SKILL.md`` edited per turn, and a naive rediscovery (fresh scan + parse + render);
* a hostile ``.gitignore`` (issue 19): the first capture (a fresh scanner's full scan, which
  reads and compiles the ignore file) with an empty root ``.gitignore`` against 1 MiB ones a
  model could write (``truncate -s 1M``, generated patterns, distinct wildcards; none matches a
  listed file); target: at most 2x.

The tree is built on tmpfs (``/dev/shm``) when available, because creating 100k files on a
contended disk can take a minute; ``--dir`` picks another place (results on ext4 ``/tmp`` were
the same order: 8.7–10.5 ms unchanged). File creation between steps is not timed. Before
measuring, the script waits until the tree is older than the scanner's racy margin (2 s), as a
workspace that was not just written would be.
Prints a table and, as the final line, one JSON object with the medians and ratios.

Run: ``uv run python benchmarks/world_state.py [--files N] [--steps S] [--naive-steps S]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pathspec import GitIgnoreSpec

from mini_codex.discovery.gitignore import IgnoreRules, decide
from mini_codex.discovery.workspace import DEFAULT_RACY_MARGIN_NS, WorkspaceScanner
from mini_codex.jsonmerge import Json, create_merge_patch
from mini_codex.skills.catalog import default_budget, render_catalog
from mini_codex.skills.discovery import SkillDiscovery, SkillRootsConfig, skill_roots
from mini_codex.skills.service import SkillsService
from mini_codex.world_state.sections.workspace import WorkspaceSection
from mini_codex.world_state.state import AnySection, WorldState
from mini_codex.world_state.workspace_files import WorkspaceFiles

ROOT_GITIGNORE = "*.log\nbuild/\n__pycache__/\n*.pyc\n"
NESTED_GITIGNORE = "*.tmp\n!keep.tmp\n"


def build_workspace(root: Path, files: int) -> tuple[int, list[Path]]:
    """Create the tree; returns (listed file count, leaf directories)."""
    per_dir = 50
    leaves = max(1, files // per_dir)
    packages = max(1, round(leaves**0.5))
    (root / ".gitignore").write_text(ROOT_GITIGNORE)
    (root / ".git").mkdir()
    (root / ".git/HEAD").write_text("ref: refs/heads/main\n")
    leaf_dirs: list[Path] = []
    created = 0
    for index in range(leaves):
        leaf = root / f"pkg{index % packages:03d}" / f"mod{index // packages:03d}"
        leaf.mkdir(parents=True)
        leaf_dirs.append(leaf)
        count = per_dir if index < leaves - 1 else files - created
        for number in range(count):
            _touch(leaf / f"file_{number:03d}.py")
        created += count
        if index % 40 == 0:  # some ignored entries
            _touch(leaf / "debug.log")
            (leaf / "__pycache__").mkdir()
            _touch(leaf / "__pycache__" / "file_000.cpython-311.pyc")
    nested = root / "pkg000"
    (nested / ".gitignore").write_text(NESTED_GITIGNORE)
    _touch(nested / "scratch.tmp")
    created += 1  # pkg000/.gitignore itself is listed
    (root / "build").mkdir()
    for number in range(200):
        _touch(root / "build" / f"artifact_{number}.o")
    return created + 1, leaf_dirs  # + the root .gitignore


def build_skills(root: Path, count: int) -> list[Path]:
    files = []
    for number in range(count):
        path = root / ".agents" / "skills" / f"skill-{number:03d}" / "SKILL.md"
        path.parent.mkdir(parents=True)
        path.write_text(
            f"---\nname: skill-{number:03d}\ndescription: Skill {number} knows how to do one "
            f"thing in this repository well.\n---\n\nSteps for skill {number}.\n"
        )
        files.append(path)
    return files


SKILLS_BUDGET = default_budget(272_000)


def _touch(path: Path) -> None:
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


# --- ours ---------------------------------------------------------------------------------------


class Ours:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.scanner = WorkspaceScanner(root)
        self.skills = SkillsService(SkillRootsConfig(home=root / ".bench-home", admin_root=None))
        self.turns = 0
        self.previous = self._world(self.scanner.scan())
        self.previous.snapshot()
        self.rendered = 0

    def _world(self, files: WorkspaceFiles) -> WorldState:
        skills, _ = self.skills.for_turn(self.root, "turn", SKILLS_BUDGET)
        sections: list[AnySection] = [WorkspaceSection(files)]
        if skills.section is not None:
            sections.append(skills.section)
        return WorldState(sections)

    def new_turn(self) -> None:
        """The first step of a turn rediscovers skills."""
        self.turns += 1
        self.skills.refresh(self.root, f"turn-{self.turns}", SKILLS_BUDGET)

    def step(self) -> None:
        files = self.scanner.scan()
        current = self._world(files)
        snapshot = current.snapshot()
        patch = snapshot.merge_patch_from(self.previous.snapshot())
        fragments = current.render_diff(self.previous)
        self.rendered += len(fragments) + (patch is not None)
        self.previous = current


# --- naive --------------------------------------------------------------------------------------


class Naive:
    """Full rescan, full encoding, full diff: what a stateless implementation would do."""

    def __init__(self, root: Path, *, fast: bool) -> None:
        self.root = str(root)
        self.fast = fast
        self.previous_paths: frozenset[str] = frozenset()
        self.previous_encoded: Json = {}
        self.paths_seen = 0
        self.step()

    def scan(self) -> frozenset[str]:
        found: list[str] = []
        chains: dict[str, list[tuple[str, object]]] = {}
        prefix = len(self.root) + 1
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel = dirpath[prefix:] if len(dirpath) > len(self.root) else ""
            chain = list(chains.get(rel.rpartition("/")[0] if rel else "", []))
            if ".gitignore" in filenames:
                with open(os.path.join(dirpath, ".gitignore")) as handle:
                    lines = handle.read().splitlines()
                rules: object = IgnoreRules(lines) if self.fast else GitIgnoreSpec.from_lines(lines)
                chain.insert(0, (rel, rules))
            chains[rel] = chain
            kept_dirs = []
            for name in dirnames:
                if name == ".git":
                    continue
                path = f"{rel}/{name}" if rel else name
                if not self.ignored(path, True, chain):
                    kept_dirs.append(name)
            dirnames[:] = kept_dirs
            for name in filenames:
                path = f"{rel}/{name}" if rel else name
                if not self.ignored(path, False, chain):
                    found.append(path)
        return frozenset(found)

    def ignored(self, path: str, is_dir: bool, chain: list[tuple[str, object]]) -> bool:
        if self.fast:
            return bool(decide(path, is_dir, tuple(chain)))  # type: ignore[arg-type]
        for base, spec in chain:
            relative = path[len(base) + 1 :] if base else path
            assert isinstance(spec, GitIgnoreSpec)
            verdict = spec.check_file(relative + "/" if is_dir else relative).include
            if verdict is not None:
                return bool(verdict)
        return False

    def step(self) -> None:
        paths = self.scan()
        encoded: Json = {"root": self.root, "files": dict.fromkeys(sorted(paths), 1)}
        create_merge_patch(self.previous_encoded, encoded)
        added = paths - self.previous_paths
        removed = self.previous_paths - paths
        self.paths_seen = len(paths) + len(added) + len(removed)
        self.previous_paths, self.previous_encoded = paths, encoded


# --- a hostile .gitignore (issue 19) ------------------------------------------------------------

MIB = 1 << 20


def hostile_gitignores() -> dict[str, bytes]:
    """1 MiB root ``.gitignore`` files a model could write; none matches a listed file.

    ``nul``: ``truncate -s 1M .gitignore`` (one line of NUL bytes). ``generated``: the shapes
    generated ignore files are made of (paths, names, directories, ``*.ext``, repeated lines)
    plus one wildcard pattern per thousand lines. ``wildcards``: distinct wildcard patterns only
    (the rules compile the first 2000 and note the rest).
    """
    rng = random.Random(11)
    lines: list[str] = []
    size = 0
    while size < MIB:
        number = rng.randrange(10**9)
        kind = len(lines) % 5
        if len(lines) % 1000 == 999:
            line = f"**/tmp_{number}/*.cache"
        elif kind == 0:
            line = f"generated/out_{number}.bin"
        elif kind == 1:
            line = f"name_{number}"
        elif kind == 2:
            line = f"cache_{number}/"
        elif kind == 3:
            line = f"*.e{number}"
        else:
            line = lines[-1]
        lines.append(line)
        size += len(line) + 1
    generated = ("\n".join(lines) + "\n").encode()[:MIB]
    wildcards = "".join(
        f"w{rng.randrange(10**6)}*x{rng.randrange(10**6)}\n" for _ in range(MIB // 12)
    ).encode()[:MIB]
    return {"nul": b"\0" * MIB, "generated": generated, "wildcards": wildcards}


def cold_capture_ms(root: Path, gitignore: bytes, repeats: int) -> float:
    """Median time of a first scan (a new session's first step) with this root ``.gitignore``."""
    (root / ".gitignore").write_bytes(gitignore)
    return median_ms(lambda: WorkspaceScanner(root).scan(), repeats)


# --- measurement --------------------------------------------------------------------------------


def median_ms(
    step: Callable[[], None], steps: int, before: Callable[[], None] | None = None
) -> float:
    samples: list[float] = []
    for _ in range(steps):
        if before is not None:
            before()
        start = time.perf_counter()
        step()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--naive-steps", type=int, default=30)
    parser.add_argument("--cold-repeats", type=int, default=3)
    parser.add_argument("--skills", type=int, default=500)
    parser.add_argument(
        "--dir",
        default=None,
        help="where to build the workspace (default: /dev/shm when writable, else the temp dir)",
    )
    args = parser.parse_args(argv)
    base = args.dir
    if base is None and os.access("/dev/shm", os.W_OK):
        base = "/dev/shm"

    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="mini-codex-bench-", dir=base) as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        started = time.perf_counter()
        listed, leaves = build_workspace(root, args.files)
        skill_files = build_skills(root, args.skills)
        listed += len(skill_files)
        built = time.perf_counter() - started
        time.sleep(DEFAULT_RACY_MARGIN_NS / 1e9 + 0.2)  # let the tree age past the racy margin

        counter = [0]

        def add_file() -> None:
            counter[0] += 1
            _touch(rng.choice(leaves) / f"added_{counter[0]:05d}.py")

        started = time.perf_counter()
        ours = Ours(root)
        first_scan = time.perf_counter() - started
        files = ours.scanner.scan()
        assert files.count == listed, (files.count, listed)
        directories = ours.scanner.last_stats.directories

        catalog = ours.skills.current
        assert catalog is not None
        assert catalog.catalog is not None
        assert len(catalog.outcome.skills) == args.skills
        listed_skills = catalog.catalog.included
        assert listed_skills + catalog.catalog.omitted == args.skills
        ours_unchanged = median_ms(ours.step, args.steps)
        ours_added = median_ms(ours.step, args.steps, add_file)
        added_so_far = counter[0]
        assert ours.scanner.scan().count == listed + added_so_far

        # Skills apart: a turn's rediscovery, unchanged and with one SKILL.md edited per turn.
        turn_unchanged = median_ms(ours.new_turn, args.steps)
        edits = [0]

        def edit_skill() -> None:
            edits[0] += 1
            path = skill_files[edits[0] % len(skill_files)]
            path.write_text(path.read_text() + f"Edit {edits[0]}.\n")

        turn_edited = median_ms(ours.new_turn, args.steps, edit_skill)
        config = SkillRootsConfig(home=root / ".bench-home", admin_root=None)

        def naive_skills() -> None:
            outcome = SkillDiscovery().load(skill_roots(config, root))
            rendered = render_catalog(outcome, SKILLS_BUDGET)
            assert rendered is not None
            assert rendered.included == listed_skills

        naive_turn = median_ms(naive_skills, max(5, args.naive_steps // 3))

        naive = Naive(root, fast=False)
        assert naive.paths_seen >= listed + added_so_far
        naive_unchanged = median_ms(naive.step, args.naive_steps)
        naive_added = median_ms(naive.step, args.naive_steps, add_file)
        fast = Naive(root, fast=True)  # context only: fewer steps keep the run short
        fast_steps = max(10, args.naive_steps // 3)
        fast_unchanged = median_ms(fast.step, fast_steps)
        fast_added = median_ms(fast.step, fast_steps, add_file)
        final_count = ours.scanner.scan().count
        assert final_count == listed + counter[0]
        assert fast.previous_paths == ours.scanner.scan().paths

        # First capture with an empty vs a 1 MiB hostile root .gitignore (same listing).
        empty_ms = cold_capture_ms(root, b"", args.cold_repeats)
        empty_count = WorkspaceScanner(root).scan().count
        hostile_ms: dict[str, float] = {}
        for name, content in hostile_gitignores().items():
            hostile_ms[name] = cold_capture_ms(root, content, args.cold_repeats)
            assert WorkspaceScanner(root).scan().count == empty_count

    rows = [
        ("ours: scan + snapshot + patch + render, unchanged", ours_unchanged),
        ("ours: same, one file added per step", ours_added),
        ("naive (os.walk + pathspec + full encode/diff), unchanged", naive_unchanged),
        ("naive, one file added per step", naive_added),
        ("naive-fast (compiled ignore rules), unchanged", fast_unchanged),
        ("naive-fast, one file added per step", fast_added),
        (f"skills ({args.skills}): rediscovery per turn, unchanged", turn_unchanged),
        ("skills: rediscovery per turn, one SKILL.md edited", turn_edited),
        ("skills: naive rediscovery (scan + parse + render)", naive_turn),
    ]
    print(
        f"workspace: {listed} listed files, {directories} directories in {base or 'tmp'} "
        f"(built in {built:.1f} s; first scan {first_scan * 1000:.0f} ms); "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    print(f"{'median per step':<60} {'ms':>10}")
    for label, value in rows:
        print(f"{label:<60} {value:>10.3f}")
    ratio_unchanged = naive_unchanged / ours_unchanged
    ratio_added = naive_added / ours_added
    print(f"{'ratio naive/ours, unchanged (target >= 20)':<60} {ratio_unchanged:>10.1f}")
    print(f"{'ratio naive/ours, one added':<60} {ratio_added:>10.1f}")
    print(f"{'ratio naive-fast/ours, unchanged':<60} {fast_unchanged / ours_unchanged:>10.1f}")
    print(f"{'ratio naive-fast/ours, one added':<60} {fast_added / ours_added:>10.1f}")
    print(f"{'first capture, empty root .gitignore (ms)':<60} {empty_ms:>10.1f}")
    for name, value in hostile_ms.items():
        label = f"first capture, 1 MiB .gitignore '{name}' (ms)"
        print(f"{label:<60} {value:>10.1f}")
    gitignore_ratio = max(hostile_ms.values()) / empty_ms
    print(f"{'ratio 1 MiB/empty .gitignore, worst (target <= 2)':<60} {gitignore_ratio:>10.2f}")
    result = {
        "files": listed,
        "ours_unchanged_ms": round(ours_unchanged, 3),
        "ours_one_added_ms": round(ours_added, 3),
        "naive_unchanged_ms": round(naive_unchanged, 3),
        "naive_one_added_ms": round(naive_added, 3),
        "ratio_unchanged": round(ratio_unchanged, 1),
        "ratio_one_added": round(ratio_added, 1),
        "target_ratio": 20,
        "skills": args.skills,
        "skills_listed_in_budget": listed_skills,
        "skills_turn_rediscovery_ms": round(turn_unchanged, 3),
        "skills_turn_rediscovery_one_edited_ms": round(turn_edited, 3),
        "skills_naive_rediscovery_ms": round(naive_turn, 3),
        "naive_fast_unchanged_ms": round(fast_unchanged, 3),
        "naive_fast_one_added_ms": round(fast_added, 3),
        "first_capture_empty_gitignore_ms": round(empty_ms, 1),
        **{f"first_capture_1mib_gitignore_{k}_ms": round(v, 1) for k, v in hostile_ms.items()},
        "ratio_1mib_gitignore": round(gitignore_ratio, 2),
        "target_gitignore_ratio": 2,
    }
    print(json.dumps(result))
    return 0 if ratio_unchanged >= 20 and gitignore_ratio <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
