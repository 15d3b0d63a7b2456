"""The embedded llama.cpp server's process: it starts, stops, and never outlives its parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mini_codex.config import LlamaCppConfig, ModelProviderConfig
from mini_codex.models import ModelClientOptions
from mini_codex.models.local import (
    EmbeddedLlamaServer,
    LlamaCppSettings,
    LocalModelError,
    OssModel,
    OssRequest,
    bundled_model_path,
    open_oss,
)


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def wait_gone(pid: int, timeout_s: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def small() -> LlamaCppSettings:
    return LlamaCppSettings(model_path=bundled_model_path(), n_ctx=256, max_tokens=16)


def test_start_serves_and_stop_ends_the_process() -> None:
    server = EmbeddedLlamaServer(small())
    base_url = server.start()
    pid = server.pid
    assert pid is not None
    assert alive(pid)
    assert base_url.startswith("http://127.0.0.1:")
    assert server.start_seconds is not None
    server.stop()
    assert not alive(pid)
    assert (server.pid, server.process) == (None, None)
    server.stop()  # idempotent


PARENT = """
import sys, time
from pathlib import Path
from mini_codex.models.local import EmbeddedLlamaServer, LlamaCppSettings
server = EmbeddedLlamaServer(LlamaCppSettings(model_path=Path(sys.argv[1]), n_ctx=256))
server.start()
print(server.pid, flush=True)
time.sleep(600)
"""


def test_the_server_dies_with_a_parent_killed_by_sigkill() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(bundled_model_path())],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert alive(child)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()
    assert wait_gone(child)


def test_a_file_that_is_not_a_model_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "broken.gguf"
    bogus.write_bytes(b"not a gguf file at all")
    server = EmbeddedLlamaServer(LlamaCppSettings(model_path=bogus, n_ctx=256))
    with pytest.raises(LocalModelError) as caught:
        server.start()
    assert str(caught.value).startswith(f"the embedded llama.cpp server could not load {bogus}: ")
    assert server.process is None


def test_a_missing_model_file_is_refused_before_starting(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(LocalModelError) as caught:
        EmbeddedLlamaServer(LlamaCppSettings(model_path=missing)).start()
    assert str(caught.value) == f"model file not found: {missing}"


def test_open_oss_with_a_gguf_path_serves_it_with_the_servers_context_window() -> None:
    path = bundled_model_path()
    request = OssRequest(model=str(path), llamacpp=LlamaCppConfig(n_ctx=512, max_tokens=16))
    with open_oss(request) as opened:
        base_url = opened.options.provider.base_url
        assert base_url is not None
        pids = [
            pid
            for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
            if alive(pid) and f"--parent-pid\0{os.getpid()}\0".encode() in cmdline(pid)
        ]
        assert len(pids) == 1
    assert opened == OssModel(
        provider="llamacpp",
        model=path.stem,
        options=ModelClientOptions(
            model=path.stem,
            provider_name="llamacpp",
            provider=ModelProviderConfig(
                name="llama.cpp (embedded)",
                base_url=base_url,
                wire_api="chat",
                tool_calling="envelope",
            ),
        ),
        context_window=512,
        native_tools=False,
        demo=False,
        server_start_s=opened.server_start_s,
    )
    assert opened.notice is None
    assert base_url.startswith("http://127.0.0.1:")
    assert not alive(pids[0])


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_a_server_started_from_a_worker_thread_outlives_that_thread() -> None:
    server = EmbeddedLlamaServer(small())
    worker = threading.Thread(target=server.start)
    worker.start()
    worker.join()
    try:
        pid = server.pid
        assert pid is not None
        time.sleep(0.5)  # a death signal tied to the finished thread would have fired by now
        assert alive(pid)
    finally:
        server.stop()
    assert not alive(pid)
