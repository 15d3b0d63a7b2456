"""mini-codex side by side with the Codex CLI on the same work against the same local server.

Installs ``@openai/codex`` at ``CODEX_VERSION`` with npm into a cache directory (``--cache``,
default ``~/.cache/mini-codex-bench``; ``--codex PATH`` uses an existing binary instead), then
drives both CLIs as subprocesses against ``tests/models/fake_openai_server.py`` on 127.0.0.1:

* **turn**: one ``exec`` turn of 20 shell commands (``true``), then a final message
  (Codex calls its ``exec_command`` tool, mini-codex its ``shell`` tool);
* **resume N**: a Codex-written rollout of N lines (10k, 100k, 300k), made by repeating the 20-step
  turn of ``tests/fixtures/rollouts/codex/codex-exec-0.169.0-...-20-steps.jsonl`` (ordinals
  renumbered, call ids made unique per repetition), resumed by both with one more prompt that the
  server answers with one message. Each run gets a fresh copy of the file (both CLIs append).

Each run is measured by a small wrapper process: wall time from spawn to exit and the peak RSS
of the largest process of the tree (``RUSAGE_CHILDREN``). ``--runs`` runs per case, the median is
reported. Without npm (and without ``--codex``) the benchmark prints why and exits 0 with a
``{"skipped": ...}`` final line.

Final line: ``{"turn_wall_ratio": mini/Codex, "resume_100k_speedup": Codex/mini,
"resume_300k_speedup": ..., "resume_300k_rss_ratio": mini/Codex, ...}``.

Run: ``uv run python benchmarks/codex_side_by_side.py [--runs 3] [--sizes 10000,100000,300000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "models"))

from fake_openai_server import Reply, responses_events, serve, sse_reply, usage  # noqa: E402

CODEX_VERSION = "0.169.0"
SOURCE = (
    REPO / "tests/fixtures/rollouts/codex"
    / "codex-exec-0.169.0-2026-11-local-fake-server-exec-command-20-steps.jsonl"
)  # fmt: skip
COMMANDS = 20

_WRAPPER = """
import json, resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                      stderr=subprocess.PIPE)
wall = time.perf_counter() - started
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"wall_s": wall, "rss_kb": rss, "code": done.returncode,
                  "stderr": done.stderr.decode(errors="replace")[-1500:]}))
"""


@dataclass(frozen=True)
class Run:
    wall_s: float
    rss_mb: float


def measure(argv: list[str], *, cwd: Path, env: dict[str, str]) -> Run:
    out = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *argv], cwd=cwd, env=env, capture_output=True, text=True
    )
    result = json.loads(out.stdout)
    if result["code"] != 0:
        raise RuntimeError(f"{argv[0]} exited {result['code']}: {result['stderr']}")
    return Run(result["wall_s"], result["rss_kb"] / 1024)


# --- Codex ----------------------------------------------------------------------------------------


def install_codex(cache: Path) -> Path | None:
    """The cached ``codex`` binary, installed with npm when missing; None without npm."""
    prefix = cache / f"codex-{CODEX_VERSION}"
    binary = prefix / "node_modules" / ".bin" / "codex"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        return None
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
         "--loglevel=error", f"@openai/codex@{CODEX_VERSION}"],
        check=True,
    )  # fmt: skip
    return binary


def codex_home(path: Path, url: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.toml").write_text(
        f'model = "gpt-5.5"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "{url}"\nwire_api = "responses"\nrequest_max_retries = 0\n'
        "stream_max_retries = 0\n"
    )
    return path


def mini_home(path: Path, url: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.toml").write_text(
        f'model = "gpt-5.5"\nmodel_provider = "fake"\nsandbox_mode = "danger-full-access"\n\n'
        f'[model_providers.fake]\nname = "fake"\nbase_url = "{url}"\nwire_api = "responses"\n'
        "request_max_retries = 0\nstream_max_retries = 0\n"
    )
    return path


CODEX_FLAGS = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]


# --- the scripted work ----------------------------------------------------------------------------


def _call(n: int, codex: bool) -> dict[str, Any]:
    name, arguments = ("exec_command", {"cmd": "true"}) if codex else ("shell", {"command": "true"})
    return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": name,
            "arguments": json.dumps(arguments)}  # fmt: skip


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_done", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip


def turn_replies(codex: bool) -> list[Reply]:
    replies = [
        sse_reply(responses_events([_call(n, codex)], response_id=f"r{n}", usage=usage(100, 5)))
        for n in range(COMMANDS)
    ]
    replies.append(sse_reply(responses_events([_message("done")], usage=usage(100, 1))))
    return replies


def resume_replies() -> list[Reply]:
    return [sse_reply(responses_events([_message("resumed")], usage=usage(100, 1)))]


_CALL_ID = re.compile(r'"call_id":"([^"]+)"')


def make_rollout(path: Path, lines: int) -> None:
    """A Codex rollout of ``lines`` lines: the source session repeated (see the docstring)."""
    source = SOURCE.read_text().splitlines()
    head, body = source[0], source[1:]
    with path.open("w") as out:
        out.write(head + "\n")
        ordinal, rep = 1, 0
        while ordinal < lines:
            for line in body:
                if ordinal >= lines:
                    break
                line = re.sub(r'"ordinal":\d+', f'"ordinal":{ordinal}', line, count=1)
                line = _CALL_ID.sub(f'"call_id":"\\1_{rep}"', line)
                out.write(line + "\n")
                ordinal += 1
            rep += 1


def session_id() -> str:
    return json.loads(SOURCE.read_text().splitlines()[0])["payload"]["id"]


# --- the cases ------------------------------------------------------------------------------------


def mini_argv() -> list[str]:
    script = Path(sys.executable).parent / "mini-codex"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from mini_codex.cli.main import app; app()"]


def run_turn(codex: Path, tmp: Path, runs: int) -> dict[str, list[Run]]:
    results: dict[str, list[Run]] = {"codex": [], "mini": []}
    for index in range(runs):
        for who in ("codex", "mini"):
            work = tmp / f"turn-{who}-{index}"
            work.mkdir()
            with serve(turn_replies(who == "codex"), parse_bodies=False) as server:
                if who == "codex":
                    env = {**os.environ, "OPENAI_API_KEY": "sk-local-fake",
                           "CODEX_HOME": str(codex_home(work / "home", server.url))}  # fmt: skip
                    argv = [str(codex), "exec", "--json", *CODEX_FLAGS, "run true 20 times"]
                else:
                    home = mini_home(work / "home", server.url)
                    env = {**os.environ, "MINI_CODEX_HOME": str(home)}
                    argv = [*mini_argv(), "exec", "--json", "run true 20 times"]
                (work / "project").mkdir()
                results[who].append(measure(argv, cwd=work / "project", env=env))
                assert len(server.requests) == COMMANDS + 1, (who, len(server.requests))
    return results


def run_resume(codex: Path, tmp: Path, lines: int, runs: int) -> dict[str, list[Run]]:
    source = tmp / f"rollout-{lines}.jsonl"
    make_rollout(source, lines)
    sid = session_id()
    results: dict[str, list[Run]] = {"codex": [], "mini": []}
    for index in range(runs):
        for who in ("codex", "mini"):
            work = tmp / f"resume-{lines}-{who}-{index}"
            (work / "project").mkdir(parents=True)
            with serve(resume_replies(), parse_bodies=False) as server:
                if who == "codex":
                    home = codex_home(work / "home", server.url)
                    day = home / "sessions" / "2026" / "11" / "29"
                    day.mkdir(parents=True)
                    shutil.copyfile(source, day / f"rollout-2026-11-29T19-31-21-{sid}.jsonl")
                    env = {**os.environ, "OPENAI_API_KEY": "sk-local-fake",
                           "CODEX_HOME": str(home)}  # fmt: skip
                    argv = [str(codex), "exec", "resume", *CODEX_FLAGS, "--json", sid, "go on"]
                else:
                    home = mini_home(work / "home", server.url)
                    copy = work / "rollout.jsonl"
                    shutil.copyfile(source, copy)
                    env = {**os.environ, "MINI_CODEX_HOME": str(home)}
                    argv = [*mini_argv(), "resume", "--json", str(copy), "go on"]
                results[who].append(measure(argv, cwd=work / "project", env=env))
                assert len(server.requests) == 1, (who, lines, len(server.requests))
            shutil.rmtree(work)
    source.unlink()
    return results


def median(runs: list[Run]) -> Run:
    return Run(statistics.median(r.wall_s for r in runs), statistics.median(r.rss_mb for r in runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="10000,100000,300000")
    parser.add_argument("--codex", type=Path, default=None, help="an installed codex binary")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "mini-codex-bench")
    args = parser.parse_args(argv)
    codex = args.codex or install_codex(args.cache)
    if codex is None:
        print("skipped: npm is not available to install @openai/codex (give --codex PATH)")
        print(json.dumps({"skipped": "npm not available"}))
        return 0
    sizes = [int(size) for size in args.sizes.split(",") if size]
    figures: dict[str, Any] = {"codex_version": CODEX_VERSION, "runs": args.runs}
    print(f"{'case':<16} {'Codex s':>9} {'Codex MB':>9} {'mini s':>9} {'mini MB':>9} {'ratio':>7}")

    def report(name: str, results: dict[str, list[Run]]) -> tuple[Run, Run]:
        c, m = median(results["codex"]), median(results["mini"])
        print(f"{name:<16} {c.wall_s:>9.2f} {c.rss_mb:>9.0f} {m.wall_s:>9.2f} {m.rss_mb:>9.0f} "
              f"{m.wall_s / c.wall_s:>7.2f}")  # fmt: skip
        figures[f"{name}_codex_s"] = round(c.wall_s, 3)
        figures[f"{name}_mini_s"] = round(m.wall_s, 3)
        figures[f"{name}_codex_rss_mb"] = round(c.rss_mb, 1)
        figures[f"{name}_mini_rss_mb"] = round(m.rss_mb, 1)
        return c, m

    with tempfile.TemporaryDirectory(prefix="mini-codex-side-by-side-") as tmp_name:
        tmp = Path(tmp_name)
        c, m = report("turn", run_turn(codex, tmp, args.runs))
        figures["turn_wall_ratio"] = round(m.wall_s / c.wall_s, 3)
        figures["turn_rss_ratio"] = round(m.rss_mb / c.rss_mb, 3)
        for lines in sizes:
            name = f"resume_{lines // 1000}k"
            c, m = report(name, run_resume(codex, tmp, lines, args.runs))
            figures[f"{name}_speedup"] = round(c.wall_s / m.wall_s, 3)
            figures[f"{name}_rss_ratio"] = round(m.rss_mb / c.rss_mb, 3)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
