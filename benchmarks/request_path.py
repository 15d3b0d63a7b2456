"""The request path of ``step_overhead.py``: steps with a long history, and time to first byte.

**Long history.** A real ``Session`` with the real Responses provider runs against
``tests/models/fake_openai_server.py`` on 127.0.0.1 (bodies read, not parsed), answering every
request with one call of a no-op tool and then a final message. The same turn runs twice: with
an empty history and with ``--history-mb`` (default 50) MB of history (function-call / output
pairs of 2 KB outputs, recorded into the session before the turn). A step's time is the wall
time between two consecutive requests: the harness's own work plus sending the body and the
server's reply. The raw cost of moving the body is measured on its own: the same bytes POSTed
with ``http.client`` to the same kind of server, reply read (median of ``RAW_POSTS``). The target
(issue 13): median step with the long history ≤ 1.5 × the median step with the empty one + that raw
socket write. For context it also reports the same POST through ``httpx2.AsyncClient`` (the
SDK's HTTP stack) with the body as one bytes object.

**Time to first request byte.** ``mini-codex exec --json`` spawned with a config whose provider
points at a listening socket on 127.0.0.1; the time from spawn to the first byte the socket
receives (the process is then stopped; ``first_byte.py``). Median of ``runs``.
"""

from __future__ import annotations

import http.client
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2

from mini_codex.config import Config, ModelProviderConfig
from mini_codex.host import SessionOptions, open_options
from mini_codex.models import ModelClientOptions
from mini_codex.models.openai_responses import OpenAIResponsesClient
from mini_codex.protocol.items import FunctionCall, FunctionCallOutput, ResponseItem
from mini_codex.runtime.tool_router import RegisteredTool
from mini_codex.tools.base import ToolContext, ToolOutput, ToolSpec

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "models"))

from fake_openai_server import Reply, responses_events, serve, sse_reply, usage  # noqa: E402

from first_byte import Launch, first_byte_s  # noqa: E402

OUTPUT_CHARS = 2_000
RAW_POSTS = 7
"""How many raw POSTs the baseline is the median of: as many as it takes for a steady median
(a single POST of 49 MB here varies between 27 and 150 ms; the step median is over 20 steps)."""


class _Noop:
    spec = ToolSpec(name="noop", description="does nothing", kind="function")

    async def call(self, payload: str, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(text="ok", success=True)


def history_items(megabytes: float) -> list[ResponseItem]:
    """Call/output pairs of ``OUTPUT_CHARS`` outputs adding up to about ``megabytes`` MB."""
    pairs = int(megabytes * 1_000_000 / (OUTPUT_CHARS + 200))
    filler = ("lorem ipsum dolor sit amet " * (OUTPUT_CHARS // 27 + 1))[:OUTPUT_CHARS]
    items: list[ResponseItem] = []
    for n in range(pairs):
        call_id = f"call_old_{n}"
        items.append(FunctionCall(name="noop", arguments="{}", call_id=call_id))
        items.append(FunctionCallOutput(call_id=call_id, output=f"{n} {filler}"))
    return items


def _replies(steps: int) -> list[Reply]:
    call = {"type": "function_call", "name": "noop", "arguments": "{}"}
    replies = [
        sse_reply(
            responses_events([{**call, "id": f"fc_{n}", "call_id": f"c_{n}"}], usage=usage(10, 1))
        )
        for n in range(steps)
    ]
    done = {"type": "message", "id": "m", "role": "assistant",
            "content": [{"type": "output_text", "text": "done"}]}  # fmt: skip
    replies.append(sse_reply(responses_events([done], usage=usage(10, 1))))
    return replies


async def _turn(cwd: Path, home: Path, steps: int, history: list[ResponseItem]) -> dict[str, Any]:
    stamps: list[float] = []
    with serve(_replies(steps), parse_bodies=False) as server:
        client = OpenAIResponsesClient.from_options(
            ModelClientOptions(
                model="gpt-5.1-codex",
                provider=ModelProviderConfig(base_url=server.url, request_max_retries=0),
                api_key="sk-local",
            )
        )
        options = SessionOptions(
            cwd=cwd,
            home=home,
            client=client,
            config=Config(model="gpt-5.1-codex"),
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            tools=[RegisteredTool(_Noop())],
            on_request=lambda prompt: stamps.append(time.perf_counter()),
            persist=False,
        )
        try:
            async with open_options(options) as session:
                session.history.record_items(history)
                assert await session.run_turn("benchmark") == "done"
        finally:
            await client.aclose()
        last_body = server.requests[-1].raw
        raw_s = statistics.median(_raw_post_s(last_body) for _ in range(RAW_POSTS))
        async_s = statistics.median([await _async_post_s(last_body) for _ in range(RAW_POSTS)])
    steps_ms = [(b - a) * 1000 for a, b in itertools.pairwise(stamps)]
    return {"median_ms": statistics.median(steps_ms[1:] or steps_ms), "body_bytes": len(last_body),
            "raw_post_ms": raw_s * 1000, "async_post_ms": async_s * 1000}  # fmt: skip


def _raw_post_s(body: bytes) -> float:
    """Seconds to POST ``body`` on a fresh connection and read the (scripted) reply."""
    with serve([sse_reply(responses_events([], usage=usage(1, 1)))], parse_bodies=False) as fresh:
        host, port = fresh.url.split("//")[1].split("/")[0].split(":")
        conn = http.client.HTTPConnection(host, int(port))
        started = time.perf_counter()
        conn.request("POST", "/v1/responses", body=body,
                     headers={"content-type": "application/json"})  # fmt: skip
        conn.getresponse().read()
        elapsed = time.perf_counter() - started
        conn.close()
    return elapsed


async def _async_post_s(body: bytes) -> float:
    """The same POST through ``httpx2.AsyncClient`` (the SDK's HTTP stack, one bytes body):
    for context, what the asyncio transport alone costs for the body."""
    with serve([sse_reply(responses_events([], usage=usage(1, 1)))], parse_bodies=False) as fresh:
        async with httpx2.AsyncClient() as client:
            started = time.perf_counter()
            response = await client.post(f"{fresh.url}/responses", content=body)
            await response.aread()
            return time.perf_counter() - started


def long_history(steps: int, megabytes: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mini-codex-history-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        short = anyio.run(_turn, root / "work", root / "h1", steps, [])
        items = history_items(megabytes)
        long = anyio.run(_turn, root / "work", root / "h2", steps, items)
    budget = 1.5 * short["median_ms"] + long["raw_post_ms"]
    return {
        "history_step1_ms": round(short["median_ms"], 3),
        "history_long_ms": round(long["median_ms"], 3),
        "history_long_body_mb": round(long["body_bytes"] / 1e6, 1),
        "history_raw_post_ms": round(long["raw_post_ms"], 3),
        "history_async_post_ms": round(long["async_post_ms"], 3),
        "history_budget_ms": round(budget, 3),
        "history_long_within_budget": long["median_ms"] <= budget,
    }


ENTRY = "from mini_codex.cli.entry import main; main()"


def mini_argv() -> list[str]:
    """The installed ``mini-codex`` script (or the entry point through this interpreter)."""
    script = Path(sys.executable).parent / "mini-codex"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", ENTRY]


def mini_exec_launch(home: Path, argv: list[str] | None = None) -> Launch:
    """``mini-codex exec --json hi`` (``argv``: how mini-codex is started, default
    :func:`mini_argv`) with a config (in ``home``) whose provider is the URL."""

    def launch(url: str) -> tuple[list[str], dict[str, str]]:
        (home / "config.toml").write_text(
            'model = "gpt-5.1-codex"\nmodel_provider = "local"\n[model_providers.local]\n'
            f'name = "local"\nbase_url = "{url}"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n"
        )
        env = {**os.environ, "MINI_CODEX_HOME": str(home), "HOME": str(home)}
        return [*(argv or mini_argv()), "exec", "--json", "hi"], env

    return launch


def first_request_byte_runs(runs: int = 5) -> list[float]:
    """Seconds from spawning ``mini-codex exec --json`` to its first request byte, per run."""
    with tempfile.TemporaryDirectory() as tmp:
        return first_byte_s(mini_exec_launch(Path(tmp)), Path(tmp), runs)


def first_request_byte_s(runs: int = 5) -> float:
    """Median of :func:`first_request_byte_runs`."""
    return statistics.median(first_request_byte_runs(runs))


if __name__ == "__main__":
    print(json.dumps({**long_history(20, 50), "first_request_byte_s": first_request_byte_s()}))
