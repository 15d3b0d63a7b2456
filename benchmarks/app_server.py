"""Load on one app-server: N threads each running a turn of M commands, all at once.

Drives ``mini-codex app-server`` (stdio) and, side by side on the same work, the real ``codex
app-server`` (``node_modules/.bin/codex``, CLI 0.169.0; ``--codex PATH`` for another binary)
against one local model server (``tests/app_server/thread_model.py``: each request is answered by
what it asks, so concurrent threads get their own replies: ``exec_command`` ``echo K-n`` M times,
then a message). Per side:

1. start the server, ``initialize``, open N threads (``danger-full-access``, ``never``);
2. send N ``turn/start`` at once and wait for every ``turn/completed``: the **wall** time of the
   turns (first ``turn/start`` to last ``turn/completed``) and the server process's **peak RSS**
   (``VmHWM`` of the server process itself, read before it exits);
3. check the work: every turn ``completed``, each thread's command items are exactly its own
   ``call_K_0..M-1`` with output ``K-n``, and no notification carries another thread's id or turn.

Both sides must pass the checks (the same work), then the final line prints both figures and
``wall_ratio`` = mini-codex wall / Codex wall (goal ≤ 0.5) and ``per_turn_overhead_ms`` (wall / N).
The Python side (``src`` and the venv's site-packages) is byte-compiled first, as an installed CLI
is (this environment sets ``PYTHONDONTWRITEBYTECODE``).
Without the Codex CLI it says so and reports ours only.

Run: ``uv run python benchmarks/app_server.py [--threads 20] [--commands 10]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "models"), str(REPO / "tests" / "app_server")]

from app_server_client import AppServerClient  # noqa: E402
from app_server_flow import CODEX, MINI_CODEX, provider_config  # noqa: E402
from thread_model import ThreadModelServer  # noqa: E402

JsonDict = dict[str, Any]


def _hwm_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _peak_rss_mb(root: int) -> float:
    """The largest peak RSS in the server's process tree (``codex`` is a Node launcher of the
    Rust binary, so the server proper is a child there)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    tree = {root}
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                changed = True
    return max(_hwm_kb(pid) for pid in tree) / 1024


def run_side(name: str, argv: list[str], env: dict[str, str], work: Path, threads: int,
             commands: int) -> JsonDict:  # fmt: skip
    client = AppServerClient(argv, env=env)
    try:
        client.initialize("bench")
        ids = []
        for _ in range(threads):
            started = client.request(
                "thread/start",
                {"cwd": str(work), "sandbox": "danger-full-access", "approvalPolicy": "never"},
                timeout=120,
            )
            ids.append(started["thread"]["id"])
        begin = time.perf_counter()
        turns: dict[str, str] = {}
        for k, thread in enumerate(ids):
            text = f"thread {k}: {commands} commands"
            turn = client.request(
                "turn/start", {"threadId": thread, "input": [{"type": "text", "text": text}]}
            )
            turns[thread] = turn["turn"]["id"]
        completed: dict[str, str] = {}
        while len(completed) < threads:
            done, _ = client.wait_method("turn/completed", timeout=600)
            completed[done["params"]["threadId"]] = done["params"]["turn"]["status"]
        wall = time.perf_counter() - begin
        rss = _peak_rss_mb(client.process.pid)
        messages = list(client.messages)
    finally:
        client.close(60)
    problems = check_work(messages, ids, turns, completed, commands)
    return {"side": name, "wall_s": round(wall, 3), "peak_rss_mb": round(rss, 1),
            "turns_completed": sum(s == "completed" for s in completed.values()),
            "notifications": sum("method" in m and "id" not in m for m in messages),
            "problems": problems}  # fmt: skip


def check_work(messages: list[JsonDict], ids: list[str], turns: dict[str, str],
               completed: dict[str, str], commands: int) -> list[str]:  # fmt: skip
    problems = [f"{t}: {s}" for t, s in completed.items() if s != "completed"]
    seen: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
    for message in messages:
        params = message.get("params") or {}
        thread = params.get("threadId")
        if thread is None or "id" in message:
            continue
        if thread not in turns:
            problems.append(f"a notification of an unknown thread {thread}")
        elif "turnId" in params and params["turnId"] != turns[thread]:
            problems.append(f"{message['method']} of {thread} names turn {params['turnId']}")
        if message.get("method") == "item/completed":
            item = params["item"]
            if item["type"] == "commandExecution":
                seen[thread].append((item["id"], item.get("aggregatedOutput")))
    for k, thread in enumerate(ids):
        expected = [(f"call_{k}_{n}", f"{k}-{n}\n") for n in range(commands)]
        if seen[thread] != expected:
            problems.append(f"thread {k} commands {seen[thread][:3]}… != {expected[:3]}…")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--commands", type=int, default=10)
    parser.add_argument("--codex", type=Path, default=CODEX)
    args = parser.parse_args()
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    targets = [str(REPO / "src"), str(site / "site-packages")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *targets], check=False)
    root = REPO / ".bench-app-server" / uuid.uuid4().hex  # Codex refuses helpers under /tmp
    results = []
    server = ThreadModelServer().start()
    try:
        sides: list[tuple[str, list[str], dict[str, str]]] = []
        mini_home = root / "mini-home"
        mini_home.mkdir(parents=True)
        (mini_home / "config.toml").write_text(provider_config(server.url))
        sides.append(("mini-codex", [MINI_CODEX, "app-server"],
                      {**os.environ, "MINI_CODEX_HOME": str(mini_home)}))  # fmt: skip
        if args.codex.exists():
            codex_home = root / "codex-home"
            (codex_home / "user-home").mkdir(parents=True)
            (codex_home / "config.toml").write_text(provider_config(server.url))
            env = {**os.environ, "CODEX_HOME": str(codex_home), "CODEX_API_KEY": "test",
                   "HOME": str(codex_home / "user-home")}  # fmt: skip
            sides.append(("codex", [str(args.codex), "app-server"], env))
        else:
            print(f"no Codex CLI at {args.codex} (npm ci): reporting mini-codex only")
        for name, argv, env in sides:
            work = root / f"work-{name}"
            work.mkdir()
            before = len(server.requests)
            result = run_side(name, argv, env, work, args.threads, args.commands)
            result["model_requests"] = len(server.requests) - before
            print(json.dumps(result))
            results.append(result)
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    by_side = {r["side"]: r for r in results}
    for result in results:
        if result["problems"]:
            raise SystemExit(f"{result['side']} did not do the work: {result['problems'][:5]}")
    expected_requests = args.threads * (args.commands + 1)
    for result in results:
        if result["model_requests"] != expected_requests:
            raise SystemExit(f"{result['side']}: {result['model_requests']} model requests, "
                             f"expected {expected_requests}")  # fmt: skip
    mini = by_side["mini-codex"]
    final: JsonDict = {
        "threads": args.threads,
        "commands_per_turn": args.commands,
        "mini_wall_s": mini["wall_s"],
        "mini_peak_rss_mb": mini["peak_rss_mb"],
        "mini_per_turn_overhead_ms": round(mini["wall_s"] / args.threads * 1000, 1),
    }
    if "codex" in by_side:
        codex = by_side["codex"]
        final.update(
            codex_wall_s=codex["wall_s"],
            codex_peak_rss_mb=codex["peak_rss_mb"],
            codex_per_turn_overhead_ms=round(codex["wall_s"] / args.threads * 1000, 1),
            wall_ratio=round(mini["wall_s"] / codex["wall_s"], 3),
        )
    print(json.dumps(final))


if __name__ == "__main__":
    main()
