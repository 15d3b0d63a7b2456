"""What a resumed (lazy) history answers without building its items equals what its built items
say: ``input_texts`` (what the world-state diff reads), ``line_at`` (what the request encodes),
``kinds`` (what the pairing index reads). Over the real Codex rollouts, mini-codex's fixtures and
a rollout the side-by-side benchmark generates; whole lists compared.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from mini_codex.protocol import parse_response_item
from mini_codex.rollout.replay.history import History
from mini_codex.rollout.resume import replay_file
from mini_codex.world_state.state import input_texts

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "rollouts"
CORPUS = sorted((FIXTURES / "codex").glob("*.jsonl")) + sorted(
    Path("/work/shared/codex-rollouts").glob("*.jsonl")
)


def _generated(tmp_path: Path) -> Path:
    sys.path.insert(0, str(REPO / "benchmarks"))
    sys.path.insert(0, str(REPO / "tests" / "models"))
    from codex_side_by_side import make_rollout

    path = tmp_path / "generated.jsonl"
    make_rollout(path, 3000)
    return path


def assert_reads_equal_the_built_items(path: Path) -> None:
    lazy, built = replay_file(path).history, list(replay_file(path).history)
    assert isinstance(lazy, History)
    assert len(lazy) == len(built) > 0
    everything = range(len(lazy))
    assert lazy.input_texts(everything) == input_texts(built)
    messages = [index for index, item in enumerate(built) if item.type == "message"]
    assert lazy.input_texts(messages) == input_texts(built)
    assert lazy.kinds() == [(item.type, getattr(item, "call_id", None)) for item in built]
    payloads: list[Any] = []
    for index in everything:
        line = lazy.line_at(index)
        payloads.append(orjson.loads(line)["payload"] if line is not None else None)
    assert payloads == [
        item.to_json() if payload is not None else None
        for item, payload in zip(built, payloads, strict=True)
    ]
    assert any(payload is not None for payload in payloads)


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_a_real_rollout_reads_like_its_built_items(path: Path) -> None:
    assert_reads_equal_the_built_items(path)


def test_a_generated_long_rollout_reads_like_its_built_items(tmp_path: Path) -> None:
    assert_reads_equal_the_built_items(_generated(tmp_path))


def test_a_read_item_still_gives_its_line_and_texts(tmp_path: Path) -> None:
    history = replay_file(_generated(tmp_path)).history
    expected = input_texts(list(replay_file(_generated(tmp_path)).history))
    lines = [history.line_at(index) for index in range(len(history))]
    for index in range(0, len(history), 3):
        history[index]  # built and cached
    assert [history.line_at(index) for index in range(len(history))] == lines
    assert history.input_texts(range(len(history))) == expected


def test_kinds_of_mixed_sources_equal_each_items_kind(tmp_path: Path) -> None:
    """Lines, sources that are not lines (a parsed item, a typed one) and a line whose
    ``call_id`` is a number: ``kinds()`` gives every item's own kind."""
    lines = [
        line
        for line in (
            replay_file(_generated(tmp_path)).history.line_at(index) for index in range(40)
        )
        if line is not None
    ]
    call = {"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c9"}
    big_call_id = b'{"timestamp":"t","type":"response_item","payload":{"type":"x","call_id":1e5}}'
    sources: list[Any] = [*lines[:5], call, *lines[5:9], parse_response_item(call), *lines[9:]]
    sources.insert(7, big_call_id)
    history = History(sources)
    assert history.kinds() == [History(sources).kind_at(index) for index in range(len(sources))]
    assert History(lines).kinds() == [
        (item.type, getattr(item, "call_id", None)) for item in History(lines)
    ]
