"""The embedded llama.cpp server's process (``python -m mini_codex.models.local.llamacpp_child``).

Started (only) by ``models.local.llamacpp.EmbeddedLlamaServer``. It serves one GGUF model with
``xllamacpp.Server`` on 127.0.0.1 (a random port unless ``--port``), prints one JSON line
``{"address": "http://127.0.0.1:PORT"}`` on stdout when it listens (or ``{"error": "..."}``),
then waits until its standard input closes and exits.

It never outlives its parent: on Linux ``PR_SET_PDEATHSIG`` makes the kernel send it SIGKILL
when the parent dies (also on ``kill -9``), and on every platform the closed stdin pipe ends it.
A parent that died before the signal was armed is noticed through ``--parent-pid``.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import sys
from typing import Any

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the stdin watch below still ends the process
    if os.getppid() != parent_pid:
        os._exit(0)  # the parent is already gone


def _params(args: argparse.Namespace) -> Any:
    import xllamacpp  # type: ignore[import-untyped]

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.n_ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.sampling.temp = args.temperature
    params.sampling.seed = args.seed
    params.n_predict = args.max_tokens
    params.endpoint_props = True
    params.use_jinja = True
    if args.port:
        params.port = args.port
    return params


def _emit(line: dict[str, str]) -> None:
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="llamacpp_child")
    parser.add_argument("--parent-pid", type=int, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    _die_with_parent(args.parent_pid)
    try:
        import xllamacpp

        server = xllamacpp.Server(_params(args))
    except Exception as exc:  # any load failure is reported to the parent as one line
        _emit({"error": f"{type(exc).__name__}: {exc}"})
        return 1
    _emit({"address": str(server.listening_address)})
    sys.stdin.read()  # returns when the parent closes the pipe (or dies)
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
