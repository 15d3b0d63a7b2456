"""``--oss`` with Ollama and LM Studio, against stand-ins speaking their model-list APIs."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from standin_servers import stand_in
from typer.testing import CliRunner

from mini_codex.cli.main import app
from mini_codex.config import ModelProviderConfig
from mini_codex.models import ModelClientOptions
from mini_codex.models.local import LocalModelError, OssModel, OssRequest, open_oss

OLLAMA_MODELS = [
    {"name": "qwen3:8b", "model": "qwen3:8b", "size": 1, "capabilities": ["completion", "tools"],
     "context_length": 40960},
    {"name": "gemma2:2b", "model": "gemma2:2b", "size": 1, "capabilities": ["completion"],
     "context_length": 8192},
    {"name": "llama3.2:latest", "model": "llama3.2:latest", "size": 1,
     "capabilities": ["completion", "tools"], "context_length": 131072},
]  # fmt: skip
LMSTUDIO_MODELS = [
    {"id": "qwen2.5-coder-7b-instruct", "object": "model", "type": "llm", "state": "loaded",
     "max_context_length": 32768, "loaded_context_length": 8192, "capabilities": ["tool_use"]},
    {"id": "smollm2-135m", "object": "model", "type": "llm", "state": "not-loaded",
     "max_context_length": 8192},
    {"id": "text-embedding-nomic", "object": "model", "type": "embeddings", "state": "loaded",
     "max_context_length": 2048},
]  # fmt: skip


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def expected(provider: Any, name: str, base_url: str, window: int, tools: str) -> OssModel:
    labels = {"ollama": "Ollama", "lmstudio": "LM Studio"}
    config = ModelProviderConfig(
        name=labels[provider], base_url=base_url, wire_api="chat", tool_calling=tools
    )
    return OssModel(
        provider=provider,
        model=name,
        options=ModelClientOptions(model=name, provider_name=provider, provider=config),
        context_window=window,
        native_tools=tools == "native",
        demo=False,
    )


def open_model(provider: Any, model: str | None, base_url: str) -> OssModel:
    request = OssRequest(
        provider=provider, model=model, provider_config=ModelProviderConfig(base_url=base_url)
    )
    with open_oss(request) as opened:
        return opened


@pytest.mark.parametrize(
    ("model", "name", "window", "tools"),
    [
        ("qwen3:8b", "qwen3:8b", 40960, "native"),
        ("gemma2:2b", "gemma2:2b", 8192, "envelope"),
        ("llama3.2", "llama3.2:latest", 131072, "native"),
    ],
)
def test_ollama_model_list_context_window_and_tool_support(
    model: str, name: str, window: int, tools: str
) -> None:
    with stand_in("ollama", OLLAMA_MODELS) as server:
        opened = open_model("ollama", model, server.base_url)
        requests = server.requests
    assert opened == expected("ollama", name, server.base_url, window, tools)
    assert requests == [("GET", "/api/tags", None), ("POST", "/api/show", {"model": name})]


def test_ollama_missing_model_and_server_not_running() -> None:
    with stand_in("ollama", OLLAMA_MODELS) as server:
        with pytest.raises(LocalModelError) as missing:
            open_model("ollama", None, server.base_url)
    assert str(missing.value) == (
        f"model 'gpt-oss:20b' is not available in Ollama at {server.root} (available: qwen3:8b, "
        "gemma2:2b, llama3.2:latest); pull it with `ollama pull gpt-oss:20b`"
    )
    port = closed_port()
    with pytest.raises(LocalModelError) as down:
        open_model("ollama", "qwen3:8b", f"http://127.0.0.1:{port}/v1")
    assert str(down.value).startswith(f"Ollama is not running at http://127.0.0.1:{port} (")
    assert str(down.value).endswith(
        "start it with `ollama serve`, or set its base_url in [model_providers]"
    )


@pytest.mark.parametrize(
    ("model", "window", "tools"),
    [("qwen2.5-coder-7b-instruct", 8192, "native"), ("smollm2-135m", 8192, "envelope")],
)
def test_lmstudio_model_list_context_window_and_tool_support(
    model: str, window: int, tools: str
) -> None:
    with stand_in("lmstudio", LMSTUDIO_MODELS) as server:
        opened = open_model("lmstudio", model, server.base_url)
        requests = server.requests
    assert opened == expected("lmstudio", model, server.base_url, window, tools)
    assert requests == [("GET", "/api/v0/models", None)]


def test_lmstudio_missing_model_and_server_not_running() -> None:
    with stand_in("lmstudio", LMSTUDIO_MODELS) as server:
        with pytest.raises(LocalModelError) as missing:
            open_model("lmstudio", "text-embedding-nomic", server.base_url)
    assert str(missing.value) == (
        f"model 'text-embedding-nomic' is not available in LM Studio at {server.root} "
        "(available: qwen2.5-coder-7b-instruct, smollm2-135m); download it with "
        "`lms get text-embedding-nomic` (or in the app)"
    )
    port = closed_port()
    with pytest.raises(LocalModelError) as down:
        open_model("lmstudio", None, f"http://127.0.0.1:{port}/v1")
    assert str(down.value).startswith(f"LM Studio is not running at http://127.0.0.1:{port} (")
    assert "`lms server start`" in str(down.value)


def test_a_server_that_is_not_ollama_is_named() -> None:
    with stand_in("lmstudio", LMSTUDIO_MODELS) as server:
        with pytest.raises(LocalModelError) as caught:
            open_model("ollama", "qwen3:8b", server.base_url)
    assert str(caught.value).startswith(f"Ollama at {server.root}: GET /api/tags answered HTTP 404")


# --- through the CLI ----------------------------------------------------------------------------

runner = CliRunner()


def run_cli(tmp_path: Path, config: str, *args: str) -> Result:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(config)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {"MINI_CODEX_HOME": str(home), "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    return runner.invoke(app, ["exec", "--cd", str(work), *args], env=env)


def test_exec_oss_with_ollama_runs_a_turn_on_the_users_server(tmp_path: Path) -> None:
    with stand_in("ollama", OLLAMA_MODELS, reply="hello from ollama") as server:
        config = (
            f'oss_provider = "ollama"\n[model_providers.ollama]\nbase_url = "{server.base_url}"\n'
        )
        result = run_cli(
            tmp_path, config, "--oss", "-m", "qwen3:8b", "--json-events=mini-codex", "say hi"
        )
        chat = [body for method, path, body in server.requests if path == "/v1/chat/completions"]
    assert (result.exit_code, result.stderr) == (0, "")
    assert "note:" not in result.output  # no demo-model notice for the user's own model
    assert [body["model"] for body in chat] == ["qwen3:8b"]
    assert "tools" in chat[0]  # native tool calling: the server reports "tools"
    messages = [line for line in result.stdout.splitlines() if "hello from ollama" in line]
    assert messages


def test_exec_oss_errors_are_one_line(tmp_path: Path) -> None:
    port = closed_port()
    config = f'[model_providers.lmstudio]\nbase_url = "http://127.0.0.1:{port}/v1"\n'
    down = run_cli(tmp_path, config, "--oss", "--local-provider", "lmstudio", "hi")
    assert down.exit_code == 2
    assert down.stderr.startswith(f"error: LM Studio is not running at http://127.0.0.1:{port} (")
    assert down.stderr.count("\n") == 1
    unknown = run_cli(tmp_path, "", "--oss", "--local-provider", "vllm", "hi")
    assert (unknown.exit_code, unknown.stderr) == (
        2,
        "error: unknown --local-provider 'vllm' (known: llamacpp, ollama, lmstudio)\n",
    )
    alone = run_cli(tmp_path, "", "--local-provider", "ollama", "hi")
    assert (alone.exit_code, alone.stderr) == (2, "error: --local-provider needs --oss\n")
    not_gguf = run_cli(tmp_path, "", "--oss", "-m", "qwen3:8b", "hi")
    assert not_gguf.exit_code == 2
    assert not_gguf.stderr.startswith(
        "error: --oss with the embedded llama.cpp server takes --model PATH.gguf (got 'qwen3:8b')"
    )


def test_resume_oss_continues_the_session_on_the_same_local_server(tmp_path: Path) -> None:
    with stand_in("lmstudio", LMSTUDIO_MODELS, reply="hi again") as server:
        config = (
            'oss_provider = "lmstudio"\n'
            f'[model_providers.lmstudio]\nbase_url = "{server.base_url}"\n'
        )
        first = run_cli(tmp_path, config, "--oss", "-m", "smollm2-135m", "one")
        home = tmp_path / "home"
        work = tmp_path / "work"
        env = {"MINI_CODEX_HOME": str(home), "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
        args = ["resume", "--last", "--cd", str(work), "--oss", "-m", "smollm2-135m", "two"]
        second = runner.invoke(app, args, env=env)
        chat = [body for method, path, body in server.requests if path == "/v1/chat/completions"]
    assert (first.exit_code, second.exit_code) == (0, 0), second.output
    assert len(chat) == 2
    # envelope mode (no "tool_use" capability): the second request carries the first exchange
    assert "response_format" in chat[1]
    texts = [message["content"] for message in chat[1]["messages"]]
    assert texts[-3:] == ["one", '{"message": "hi again"}', "two"]
