"""Sandbox overhead: wall time of N ``true`` commands run sandboxed vs unsandboxed (one run).

Each command goes through the same path as the ``shell`` tool (``sandbox.launch.confine`` then
``sandbox.pool.SandboxPool.run``: own process group, output capture, group kill at the end) under
``workspace-write``: with the session's long-lived bubblewrap sandbox (``bwrap``, the default;
its start-up is paid by the first command, once per session: ``bwrap_first_command_ms``), with
one bubblewrap per command (``bwrap_per_command``), the same two for the Landlock + seccomp
fallback (``landlock``: its session server, ``landlock_per_command``: one shim per command), and
unconfined (``danger-full-access``). Rounds alternate so machine load hits all modes
alike. Goal: sandboxed ≤ 1.3 × unsandboxed + 5 ms per command. Prints the figures as a final
JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import anyio

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.sandbox.bwrap import SandboxAvailability, detect_bwrap
from mini_codex.sandbox.landlock import detect_landlock
from mini_codex.sandbox.launch import SandboxRequest, confine
from mini_codex.sandbox.pool import SandboxPool

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


Mode = tuple[SandboxPolicy, SandboxAvailability, SandboxPool]


async def timed(n: int, workspace: Path, mode: Mode) -> float:
    policy, backend, pool = mode
    request = SandboxRequest(policy=policy, cwd=workspace, backend=backend, env=ENV)
    started = time.perf_counter()
    for _ in range(n):
        prepared = confine(["true"], request, workspace)
        result = await pool.run(prepared, request, workspace, env=ENV, timeout_s=30)
        assert result.exit_code == 0, result.text()
    return time.perf_counter() - started


async def main(commands: int, rounds: int) -> dict[str, object]:
    bwrap = await detect_bwrap(search_path=ENV["PATH"])
    landlock = await detect_landlock()
    write = SandboxPolicy.workspace_write()
    per_command = SandboxPool(long_lived=False)
    modes: dict[str, Mode] = {
        "unsandboxed": (
            SandboxPolicy.danger_full_access(),
            SandboxAvailability("none", ""),
            per_command,
        ),
    }
    session, landlock_session = SandboxPool(), SandboxPool()
    if bwrap.kind == "bwrap":
        modes["bwrap"] = (write, bwrap, session)
        modes["bwrap_per_command"] = (write, bwrap, per_command)
    if landlock.kind == "landlock":
        modes["landlock"] = (write, landlock, landlock_session)
        modes["landlock_per_command"] = (write, landlock, per_command)
    per_round = max(commands // rounds, 1)
    totals = dict.fromkeys(modes, 0.0)
    startup: dict[str, float] = {}
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        workspace = Path(tmp)
        try:
            for name, mode in modes.items():  # warm-up (starts the session's sandbox)
                startup[name] = await timed(1, workspace, mode)
                await timed(2, workspace, mode)
            for _ in range(rounds):
                for name, mode in modes.items():
                    totals[name] += await timed(per_round, workspace, mode)
        finally:
            await session.aclose()
            await landlock_session.aclose()
    n = per_round * rounds
    base = totals["unsandboxed"]
    result: dict[str, object] = {
        "commands": n,
        "unsandboxed_s": round(base, 3),
        "unsandboxed_ms_per_command": round(base / n * 1000, 2),
    }
    for name, pool in (("bwrap", session), ("landlock", landlock_session)):
        if name in totals:
            result[f"{name}_first_command_ms"] = round(startup[name] * 1000, 1)
            result[f"{name}_sandboxes_started"] = pool.started
    targets: dict[str, bool] = {}
    for name in ("bwrap", "bwrap_per_command", "landlock", "landlock_per_command"):
        if name not in totals:
            result[f"{name}_s"] = None
            continue
        total = totals[name]
        result[f"{name}_s"] = round(total, 3)
        result[f"{name}_ms_per_command"] = round(total / n * 1000, 2)
        result[f"{name}_vs_unsandboxed"] = round(total / base, 2)
        result[f"{name}_extra_ms_per_command"] = round((total - base) / n * 1000, 2)
        targets[f"{name}_le_1.3x_plus_5ms"] = total <= 1.3 * base + 0.005 * n
    result["targets"] = targets
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(anyio.run(main, args.commands, args.rounds)))
