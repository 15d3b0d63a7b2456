"""mini-codex side by side with the Codex CLI on the same work against the same local server.

Installs ``@openai/codex`` at ``CODEX_VERSION`` with npm into a cache directory (``--cache``,
default ``~/.cache/mini-codex-bench``; ``--codex PATH`` uses an existing binary instead), then
drives both CLIs as subprocesses against ``tests/models/fake_openai_server.py`` on 127.0.0.1:

* **turn**: one ``exec`` turn of 20 commands (``echo bench-N``), then a final message; both sides
  get the same ``exec_command`` calls (the tool both advertise to a Responses provider: unified
  exec is the default, as in Codex 0.169). Before any ratio is printed the benchmark checks, in
  the server's log, that each side ran every command: the last request carries the 20
  ``function_call_output`` items, each with ``Process exited with code 0`` and its ``bench-N``
  output. A side that did not (an "unsupported call" answer, a failed command) stops the run
  with exit code 1 and says which commands and what they answered;
* **resume N**: a Codex-written rollout of N lines (10k, 100k, 300k), made by repeating the 20-step
  turn of ``tests/fixtures/rollouts/codex/codex-exec-0.169.0-...-20-steps.jsonl`` (ordinals
  renumbered, call ids made unique per repetition), resumed by both with one more prompt that the
  server answers with one message. Each run gets a fresh copy of the file (both CLIs append).
  Checked before a ratio: each side sent exactly one request, carrying the new prompt and the
  replayed history (the same number of ``function_call_output`` items on both sides).

Each run is measured by a small wrapper process: wall time from spawn to exit and the peak RSS
of the largest process of the tree (``RUSAGE_CHILDREN``). ``--runs`` runs per case, the median is
reported. Without npm (and without ``--codex``) the benchmark prints why and exits 0 with a
``{"skipped": ...}`` final line.

* **first byte**: ``exec --json hi`` of each CLI against a listening socket on 127.0.0.1; the time
  from spawn to the first byte of its first request (``first_byte.py``), ``max(--runs, 5)`` runs
  each, alternating; the process is then killed.

Final line: ``{"turn_wall_ratio": mini/Codex, "turn_rss_ratio": mini/Codex, "resume_10k_speedup":
Codex/mini, "resume_100k_speedup": ..., "resume_300k_speedup": ..., "resume_300k_rss_ratio":
mini/Codex, "first_byte_codex_s", "first_byte_mini_s", "first_byte_ratio": mini/Codex,
"load_average", "bytecode", ...}``.

Both CLIs run with ``HOME`` set to an empty directory (``base_env``). mini-codex is run from its
installed script, with its bytecode compiled first (``bytecode.py``: ``compileall`` of the package
and site-packages, as an installed CLI has its ``.pyc`` files; this environment sets
``PYTHONDONTWRITEBYTECODE``). The machine's load average is printed: only the ratios of one run
mean anything on a shared machine.

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

from fake_openai_server import (  # noqa: E402
    Recorded,
    Reply,
    responses_events,
    serve,
    sse_reply,
    usage,
)

from bytecode import ensure_bytecode  # noqa: E402
from first_byte import first_byte_s  # noqa: E402

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
    if out.returncode != 0 or not out.stdout.strip():
        raise RuntimeError(f"could not run {argv[0]}: {out.stderr[-1500:]}")
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


class DidNotRun(RuntimeError):
    """A side did not do the scripted work: no ratio may be printed."""


def _call(n: int) -> dict[str, Any]:
    arguments = json.dumps({"cmd": f"echo bench-{n}"})
    return {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
            "name": "exec_command", "arguments": arguments}  # fmt: skip


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_done", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip


def turn_replies() -> list[Reply]:
    replies = [
        sse_reply(responses_events([_call(n)], response_id=f"r{n}", usage=usage(100, 5)))
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


def check_turn(who: str, requests: list[Recorded]) -> None:
    """Every scripted command ran on ``who``'s side: the last request carries each call's output,
    exit code 0 and the command's own output (raises :class:`DidNotRun`)."""
    if len(requests) != COMMANDS + 1:
        raise DidNotRun(f"{who}: {len(requests)} model requests, expected {COMMANDS + 1}")
    body = json.loads(requests[-1].raw)
    outputs = {
        item["call_id"]: item["output"]
        for item in body["input"]
        if item.get("type") == "function_call_output"
    }
    tools = {tool.get("name") for tool in body.get("tools", [])}
    if "exec_command" not in tools:
        raise DidNotRun(f"{who}: exec_command is not among the advertised tools {sorted(tools)}")
    failed = {
        f"call_{n}": outputs.get(f"call_{n}", "(no output)")
        for n in range(COMMANDS)
        if not _ran(outputs.get(f"call_{n}"), n)
    }
    if failed:
        first = next(iter(failed.items()))
        raise DidNotRun(
            f"{who}: {len(failed)} of {COMMANDS} commands did not run; {first[0]} answered "
            f"{first[1]!r}"
        )


def _ran(output: Any, n: int) -> bool:
    text = output if isinstance(output, str) else json.dumps(output)
    return "Process exited with code 0" in text and f"bench-{n}" in text


def check_resume(who: str, requests: list[Recorded]) -> int:
    """One request, with the new prompt; returns how many tool outputs the history replayed."""
    if len(requests) != 1:
        raise DidNotRun(f"{who}: {len(requests)} model requests on resume, expected 1")
    raw = requests[0].raw
    if b"go on" not in raw:
        raise DidNotRun(f"{who}: the resumed request does not carry the new prompt")
    return raw.count(b'"type":"function_call_output"')


def session_id() -> str:
    return json.loads(SOURCE.read_text().splitlines()[0])["payload"]["id"]


# --- the cases ------------------------------------------------------------------------------------


def base_env(work: Path) -> dict[str, str]:
    """This environment with ``HOME`` set to an empty directory of the run: both CLIs run their
    commands in a login shell (``bash -lc``), which would otherwise source the user's profile
    (here pyenv's, whose ``rehash`` waits on a lock other processes hold: 10 s stalls)."""
    home = work / "user-home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "HOME": str(home)}


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
            with serve(turn_replies(), parse_bodies=False) as server:
                if who == "codex":
                    env = {**base_env(work), "OPENAI_API_KEY": "sk-local-fake",
                           "CODEX_HOME": str(codex_home(work / "home", server.url))}  # fmt: skip
                    argv = [str(codex), "exec", "--json", *CODEX_FLAGS, "run true 20 times"]
                else:
                    home = mini_home(work / "home", server.url)
                    env = {**base_env(work), "MINI_CODEX_HOME": str(home)}
                    argv = [*mini_argv(), "exec", "--json", "run true 20 times"]
                (work / "project").mkdir()
                results[who].append(measure(argv, cwd=work / "project", env=env))
                check_turn(who, server.requests)
    return results


def run_resume(codex: Path, tmp: Path, lines: int, runs: int) -> dict[str, list[Run]]:
    source = tmp / f"rollout-{lines}.jsonl"
    make_rollout(source, lines)
    sid = session_id()
    results: dict[str, list[Run]] = {"codex": [], "mini": []}
    replayed: dict[str, set[int]] = {"codex": set(), "mini": set()}
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
                    env = {**base_env(work), "OPENAI_API_KEY": "sk-local-fake",
                           "CODEX_HOME": str(home)}  # fmt: skip
                    argv = [str(codex), "exec", "resume", *CODEX_FLAGS, "--json", sid, "go on"]
                else:
                    home = mini_home(work / "home", server.url)
                    copy = work / "rollout.jsonl"
                    shutil.copyfile(source, copy)
                    env = {**base_env(work), "MINI_CODEX_HOME": str(home)}
                    argv = [*mini_argv(), "resume", "--json", "--cd", str(work / "project"),
                            str(copy), "go on"]  # fmt: skip
                results[who].append(measure(argv, cwd=work / "project", env=env))
                replayed[who].add(check_resume(who, server.requests))
            shutil.rmtree(work)
    source.unlink()
    if replayed["codex"] != replayed["mini"] or len(replayed["mini"]) != 1:
        raise DidNotRun(
            f"resume {lines}: the resumed requests carry different histories (tool outputs: "
            f"Codex {sorted(replayed['codex'])}, mini-codex {sorted(replayed['mini'])})"
        )
    return results


def run_first_byte(codex: Path, tmp: Path, runs: int) -> dict[str, list[float]]:
    """Seconds from spawn to the first request byte of ``exec --json hi``, both CLIs, ``runs``
    times each (alternating)."""
    results: dict[str, list[float]] = {"codex": [], "mini": []}
    for index in range(runs):
        for who in ("codex", "mini"):
            work = tmp / f"first-byte-{who}-{index}"
            (work / "project").mkdir(parents=True)

            def launch(
                url: str, who: str = who, work: Path = work
            ) -> tuple[list[str], dict[str, str]]:
                if who == "codex":
                    env = {**base_env(work), "OPENAI_API_KEY": "sk-local-fake",
                           "CODEX_HOME": str(codex_home(work / "home", url))}  # fmt: skip
                    return [str(codex), "exec", "--json", *CODEX_FLAGS, "hi"], env
                env = {**base_env(work), "MINI_CODEX_HOME": str(mini_home(work / "home", url))}
                return [*mini_argv(), "exec", "--json", "hi"], env

            results[who].extend(first_byte_s(launch, work / "project", 1))
            shutil.rmtree(work, ignore_errors=True)
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
    codex = args.codex.resolve() if args.codex else install_codex(args.cache)
    if codex is None:
        print("skipped: npm is not available to install @openai/codex (give --codex PATH)")
        print(json.dumps({"skipped": "npm not available"}))
        return 0
    sizes = [int(size) for size in args.sizes.split(",") if size]
    condition = ensure_bytecode()
    figures: dict[str, Any] = {"codex_version": CODEX_VERSION, "runs": args.runs,
                               "bytecode": condition}  # fmt: skip
    print(f"mini-codex: {condition}; load average {os.getloadavg()[0]:.1f}")
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
        try:
            turn = run_turn(codex, tmp, args.runs)
        except DidNotRun as exc:
            print(f"FAILED: {exc}", file=sys.stderr)
            print(json.dumps({"failed": str(exc)}))
            return 1
        first = run_first_byte(codex, tmp, max(args.runs, 5))
        c_first, m_first = (statistics.median(first[who]) for who in ("codex", "mini"))
        print(f"{'first byte':<16} {c_first:>9.3f} {'':>9} {m_first:>9.3f} {'':>9} "
              f"{m_first / c_first:>7.2f}")  # fmt: skip
        figures["first_byte_codex_s"] = round(c_first, 3)
        figures["first_byte_mini_s"] = round(m_first, 3)
        figures["first_byte_ratio"] = round(m_first / c_first, 3)
        c, m = report("turn", turn)
        figures["turn_wall_ratio"] = round(m.wall_s / c.wall_s, 3)
        figures["turn_rss_ratio"] = round(m.rss_mb / c.rss_mb, 3)
        for lines in sizes:
            name = f"resume_{lines // 1000}k"
            try:
                resumed = run_resume(codex, tmp, lines, args.runs)
            except DidNotRun as exc:
                print(f"FAILED: {exc}", file=sys.stderr)
                print(json.dumps({"failed": str(exc)}))
                return 1
            c, m = report(name, resumed)
            figures[f"{name}_speedup"] = round(c.wall_s / m.wall_s, 3)
            figures[f"{name}_rss_ratio"] = round(m.rss_mb / c.rss_mb, 3)
    figures["load_average"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
