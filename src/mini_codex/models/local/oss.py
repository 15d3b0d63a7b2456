"""``--oss``: a local model for one session, whichever server provides it.

``open_oss(request)`` is a context manager yielding an ``OssModel``: the Chat Completions client
options for the session, the context window the server reports, whether replies use native tool
calls or the JSON envelope (``models.tool_envelope``), and the notice to print once when the
model is the bundled demo model. Every front end (``exec``, ``resume``, the UI, ``batch``) calls
this one function; the CLI only maps its flags and config onto an ``OssRequest``.

* ``llamacpp``: starts the embedded server (``EmbeddedLlamaServer``) with ``model`` as a GGUF
  path, or the bundled SmolLM2 when no model is given, and stops it when the block ends.
* ``ollama`` / ``lmstudio``: use the user's running server (default ``127.0.0.1:11434`` and
  ``127.0.0.1:1234``, or the ``base_url`` of their ``[model_providers.NAME]`` table), checked
  with their own model-list endpoints (``models.local.servers``).

Native tool calling is used when the server reports it for the model; ``tool_calling`` forces
one way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from mini_codex.config import LlamaCppConfig, ModelProviderConfig
from mini_codex.models.base import ModelClientOptions
from mini_codex.models.local.errors import LocalModelError
from mini_codex.models.local.llamacpp import (
    BUNDLED_NAME,
    EmbeddedLlamaServer,
    LlamaCppSettings,
    bundled_model_path,
)
from mini_codex.models.local.servers import (
    ServerModel,
    api_root,
    probe_llamacpp,
    probe_lmstudio,
    probe_ollama,
)

if TYPE_CHECKING:
    from mini_codex.models.chat_completions import ChatCompletionsClient

OssProvider = Literal["llamacpp", "ollama", "lmstudio"]
OSS_PROVIDERS: tuple[OssProvider, ...] = ("llamacpp", "ollama", "lmstudio")
DEFAULT_BASE_URLS: dict[str, str] = {
    "ollama": "http://127.0.0.1:11434/v1",
    "lmstudio": "http://127.0.0.1:1234/v1",
}
DEFAULT_MODELS: dict[str, str] = {"ollama": "gpt-oss:20b", "lmstudio": "openai/gpt-oss-20b"}
"""The model used when none is given (Codex's defaults for these servers)."""
PROVIDER_LABELS: dict[str, str] = {
    "llamacpp": "llama.cpp (embedded)",
    "ollama": "Ollama",
    "lmstudio": "LM Studio",
}
DEMO_NOTICE = (
    f"note: {BUNDLED_NAME} is the bundled demo model: it runs anywhere and shows the agent loop "
    "working offline, but at 135M parameters it is far too weak for real coding work "
    "(use --model PATH.gguf, or --local-provider ollama|lmstudio)"
)


@dataclass(frozen=True, kw_only=True)
class OssRequest:
    """What a front end asks for (from its flags and the config)."""

    provider: OssProvider = "llamacpp"
    model: str | None = None
    """A GGUF path for ``llamacpp`` (None: the bundled model), else the server's model name."""
    provider_config: ModelProviderConfig | None = None
    """The user's ``[model_providers.<provider>]`` table, if any (``base_url``, timeouts)."""
    llamacpp: LlamaCppConfig = field(default_factory=LlamaCppConfig)
    tool_calling: Literal["auto", "native", "envelope"] = "auto"


@dataclass(frozen=True, kw_only=True)
class OssModel:
    """A local model ready for a session."""

    provider: OssProvider
    model: str
    """The model name sent in requests (and recorded as the session's model)."""
    options: ModelClientOptions
    context_window: int | None
    """As reported by the server (``n_ctx``, ``context_length``); None when it says nothing."""
    native_tools: bool
    demo: bool
    """True for the bundled demo model."""
    server_start_s: float | None = None
    """How long the embedded server took to start (None for an external server)."""

    @property
    def notice(self) -> str | None:
        return DEMO_NOTICE if self.demo else None

    def client(self) -> ChatCompletionsClient:
        from mini_codex.models.chat_completions import ChatCompletionsClient

        return ChatCompletionsClient.from_options(self.options)


def _provider_config(
    request: OssRequest, base_url: str, server: ServerModel
) -> ModelProviderConfig:
    tool_calling: Literal["native", "envelope"]
    if request.tool_calling == "auto":
        tool_calling = "native" if server.native_tools else "envelope"
    else:
        tool_calling = request.tool_calling
    base = request.provider_config or ModelProviderConfig()
    return base.model_copy(
        update={
            "name": base.name or PROVIDER_LABELS[request.provider],
            "base_url": base_url,
            "wire_api": "chat",
            "env_key": None,
            "tool_calling": tool_calling,
        }
    )


def _model(
    request: OssRequest,
    base_url: str,
    server: ServerModel,
    *,
    demo: bool = False,
    start_s: float | None = None,
) -> OssModel:
    provider = _provider_config(request, base_url, server)
    return OssModel(
        provider=request.provider,
        model=server.name,
        options=ModelClientOptions(
            model=server.name, provider_name=request.provider, provider=provider
        ),
        context_window=server.context_window,
        native_tools=provider.tool_calling == "native",
        demo=demo,
        server_start_s=start_s,
    )


def _gguf_path(model: str | None) -> tuple[Path, bool]:
    if model is None:
        return bundled_model_path(), True
    path = Path(model).expanduser()
    if path.suffix.lower() != ".gguf":
        raise LocalModelError(
            f"--oss with the embedded llama.cpp server takes --model PATH.gguf (got {model!r}); "
            "for a model served by Ollama or LM Studio use --local-provider ollama|lmstudio"
        )
    if not path.is_file():
        raise LocalModelError(f"model file not found: {path}")
    return path.resolve(), False


@contextmanager
def open_oss(request: OssRequest) -> Iterator[OssModel]:
    """The local model of ``request`` for the duration of the block (module docstring)."""
    match request.provider:
        case "llamacpp":
            path, demo = _gguf_path(request.model)
            settings = request.llamacpp
            server = EmbeddedLlamaServer(
                LlamaCppSettings(
                    model_path=path,
                    n_ctx=settings.n_ctx,
                    threads=settings.threads,
                    temperature=settings.temperature,
                    seed=settings.seed,
                    max_tokens=settings.max_tokens,
                )
            )
            with server:
                root = server.base_url
                assert root is not None
                name = BUNDLED_NAME if demo else path.stem
                info = probe_llamacpp(root, name)
                yield _model(request, root + "/v1", info, demo=demo, start_s=server.start_seconds)
        case "ollama" | "lmstudio":
            configured = request.provider_config.base_url if request.provider_config else None
            base_url = (configured or DEFAULT_BASE_URLS[request.provider]).rstrip("/")
            model = request.model or DEFAULT_MODELS[request.provider]
            probe = probe_ollama if request.provider == "ollama" else probe_lmstudio
            yield _model(request, base_url, probe(api_root(base_url), model))
        case _:
            known = ", ".join(OSS_PROVIDERS)
            raise LocalModelError(f"unknown local provider {request.provider!r} (known: {known})")
