"""Local models for ``--oss``: the embedded llama.cpp server, Ollama and LM Studio.

``open_oss(OssRequest(...))`` gives an ``OssModel`` for one session (``oss``); the embedded
server's process lives in ``llamacpp`` / ``llamacpp_child``; what a running server reports
(models, context window, tool support) is read in ``servers``. Nothing here imports xllamacpp in
the mini-codex process: the server runs in a child process.
"""

from mini_codex.models.local.errors import LocalModelError
from mini_codex.models.local.llamacpp import (
    BUNDLED_NAME,
    EmbeddedLlamaServer,
    LlamaCppSettings,
    bundled_model_path,
)
from mini_codex.models.local.oss import (
    DEFAULT_BASE_URLS,
    DEFAULT_MODELS,
    DEMO_NOTICE,
    OSS_PROVIDERS,
    OssModel,
    OssProvider,
    OssRequest,
    open_oss,
)
from mini_codex.models.local.servers import (
    ServerModel,
    probe_llamacpp,
    probe_lmstudio,
    probe_ollama,
)

__all__ = [
    "BUNDLED_NAME",
    "DEFAULT_BASE_URLS",
    "DEFAULT_MODELS",
    "DEMO_NOTICE",
    "OSS_PROVIDERS",
    "EmbeddedLlamaServer",
    "LlamaCppSettings",
    "LocalModelError",
    "OssModel",
    "OssProvider",
    "OssRequest",
    "ServerModel",
    "bundled_model_path",
    "open_oss",
    "probe_llamacpp",
    "probe_lmstudio",
    "probe_ollama",
]
