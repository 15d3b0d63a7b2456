"""Sandbox overhead: wall time of N ``true`` commands run sandboxed vs unsandboxed (one run).

Each command goes through the same path as the ``shell`` tool (``sandbox.launch.confine`` then
``sandbox.exec.run_command``: own process group, output capture, group kill at the end) under
``workspace-write``, once with bubblewrap, once with the Landlock + seccomp fallback, and once
unconfined (``danger-full-access``). Rounds alternate so machine load hits all modes alike.
Goal: sandboxed ≤ 1.3 × unsandboxed + 5 ms per command. Prints the figures as a final JSON line.
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
from mini_codex.sandbox.exec import run_command
from mini_codex.sandbox.landlock import detect_landlock
from mini_codex.sandbox.launch import SandboxRequest, confine

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


async def timed(
    n: int, workspace: Path, policy: SandboxPolicy, backend: SandboxAvailability
) -> float:
    request = SandboxRequest(policy=policy, cwd=workspace, backend=backend, env=ENV)
    started = time.perf_counter()
    for _ in range(n):
        prepared = confine(["true"], request, workspace)
        result = await run_command(prepared.argv, cwd=workspace, env=ENV, timeout_s=30)
        assert result.exit_code == 0, result.text()
    return time.perf_counter() - started


async def main(commands: int, rounds: int) -> dict[str, object]:
    bwrap = await detect_bwrap(search_path=ENV["PATH"])
    landlock = await detect_landlock()
    modes: dict[str, tuple[SandboxPolicy, SandboxAvailability]] = {
        "unsandboxed": (SandboxPolicy.danger_full_access(), SandboxAvailability("none", "")),
    }
    if bwrap.kind == "bwrap":
        modes["bwrap"] = (SandboxPolicy.workspace_write(), bwrap)
    if landlock.kind == "landlock":
        modes["landlock"] = (SandboxPolicy.workspace_write(), landlock)
    per_round = max(commands // rounds, 1)
    totals = dict.fromkeys(modes, 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        for policy, backend in modes.values():  # warm-up
            await timed(2, workspace, policy, backend)
        for _ in range(rounds):
            for name, (policy, backend) in modes.items():
                totals[name] += await timed(per_round, workspace, policy, backend)
    n = per_round * rounds
    base = totals["unsandboxed"]
    result: dict[str, object] = {
        "commands": n,
        "unsandboxed_s": round(base, 3),
        "unsandboxed_ms_per_command": round(base / n * 1000, 2),
    }
    targets: dict[str, bool] = {}
    for name in ("bwrap", "landlock"):
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
