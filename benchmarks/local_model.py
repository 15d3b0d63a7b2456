"""The bundled local model on this machine: server start, time to first token, tokens/s, and the
harness's share of a step's wall time.

* Server start: wall time of ``EmbeddedLlamaServer.start()`` (spawn the child process, load the
  GGUF, listen), median of ``--starts`` cold starts.
* Time to first token and tokens/s: a plain streamed completion (``--tokens`` tokens, no tools)
  through the Chat Completions client; tokens/s is the server's ``completion_tokens`` over the
  time from the first to the last delta, median of ``--runs`` runs with a fresh prompt each (no
  prompt cache hit).
* Harness share: a real ``Session`` runs one turn of ``exec --oss`` (the e2e prompt: the model
  calls the shell tool through the JSON envelope, then answers). A timing wrapper around the
  client measures the time spent inside the model stream per request; a step's wall time runs from
  one request's start to the next (or to the end of the turn). The share is
  ``(step wall − model time) / step wall``: recording, tool dispatch and run, step capture, world
  state and prompt building.

Final line: ``{"server_start_s": …, "ttft_s": …, "tokens_per_s": …, "harness_share": …, …}``.
Run: ``uv run python benchmarks/local_model.py [--runs N] [--tokens N] [--threads N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from mini_codex.config import Config, LlamaCppConfig
from mini_codex.host import SessionOptions, open_options
from mini_codex.models.base import Completed, ModelClient, ModelEvent, OutputTextDelta, Prompt
from mini_codex.models.local import (
    EmbeddedLlamaServer,
    LlamaCppSettings,
    OssRequest,
    bundled_model_path,
    open_oss,
)
from mini_codex.protocol.items import user_message

STEP_PROMPT = "Use the shell tool to run: ls"


def server_starts(count: int, threads: int) -> list[float]:
    times = []
    for _ in range(count):
        server = EmbeddedLlamaServer(
            LlamaCppSettings(model_path=bundled_model_path(), n_ctx=2048, threads=threads)
        )
        started = time.perf_counter()
        server.start()
        times.append(time.perf_counter() - started)
        server.stop()
    return times


async def one_generation(client: ModelClient, model: str, run: int) -> tuple[float, float]:
    prompt = Prompt(
        model=model,
        instructions="You are a storyteller.",
        input=(user_message(f"Tell story number {run} about a lighthouse keeper, in detail."),),
    )
    started = time.perf_counter()
    first = last = 0.0
    tokens = 0
    async for event in client.stream(prompt):
        if isinstance(event, OutputTextDelta):
            last = time.perf_counter()
            first = first or last
        elif isinstance(event, Completed) and event.usage is not None:
            tokens = event.usage.output_tokens
    return first - started, (tokens - 1) / (last - first) if last > first else 0.0


class TimedClient:
    """A ``ModelClient`` that records (start, seconds inside the stream) per request."""

    def __init__(self, inner: ModelClient) -> None:
        self.inner = inner
        self.requests: list[tuple[float, float]] = []

    async def stream(self, prompt: Prompt) -> AsyncIterator[ModelEvent]:
        started = time.perf_counter()
        inside = 0.0
        iterator = aiter(self.inner.stream(prompt))
        try:
            while True:
                resumed = time.perf_counter()
                try:
                    event = await anext(iterator)
                except StopAsyncIteration:
                    inside += time.perf_counter() - resumed
                    break
                inside += time.perf_counter() - resumed
                yield event
        finally:  # the runtime may stop reading right after ``Completed``
            self.requests.append((started, inside))

    async def aclose(self) -> None:
        await self.inner.aclose()


async def harness_share(timed: TimedClient, model: str, config: Config) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        options = SessionOptions(
            cwd=work,
            home=Path(tmp) / "home",
            client=timed,
            config=config,
            model=model,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
        async with open_options(options) as session:
            await session.run_turn(STEP_PROMPT)
            ended = time.perf_counter()
    shares = []
    starts = [start for start, _ in timed.requests] + [ended]
    for (start, inside), following in zip(timed.requests, starts[1:], strict=True):
        wall = following - start
        shares.append((wall - inside) / wall)
    return shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    starts = server_starts(args.starts, args.threads)
    settings = LlamaCppConfig(n_ctx=4096, threads=args.threads, max_tokens=args.tokens)
    with open_oss(OssRequest(llamacpp=settings)) as local:

        async def generate() -> list[tuple[float, float]]:
            client = local.client()
            try:
                return [await one_generation(client, local.model, run) for run in range(args.runs)]
            finally:
                await client.aclose()

        generations = anyio.run(generate)
        config = Config(model_context_window=local.context_window, sandbox_mode="workspace-write")
        timed = TimedClient(local.client())

        async def turn() -> list[float]:
            try:
                return await harness_share(timed, local.model, config)
            finally:
                await timed.aclose()

        shares = anyio.run(turn)

    ttft = statistics.median(first for first, _ in generations)
    rate = statistics.median(rate for _, rate in generations)
    print(f"server start    {statistics.median(starts):8.2f} s   (runs: {starts})")
    print(f"first token     {ttft:8.3f} s   (short prompt, no cache)")
    print(f"generation      {rate:8.1f} tokens/s ({args.threads} thread(s))")
    print(f"harness share   {statistics.median(shares):8.3%} of a step ({len(shares)} steps)")
    print(
        json.dumps(
            {
                "server_start_s": round(statistics.median(starts), 3),
                "ttft_s": round(ttft, 3),
                "tokens_per_s": round(rate, 1),
                "harness_share": round(statistics.median(shares), 4),
                "harness_shares": [round(share, 4) for share in shares],
                "steps": len(shares),
                "threads": args.threads,
                "cpus": os.cpu_count(),
                "load_avg_1m": round(os.getloadavg()[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
