"""A resumed history whose tool calls are not all answered (a session cut mid-command) is
normalized without building its items: the prompt is a lazy view equal to
``normalize_history`` of the built items, and its request bytes are the same.

Over rollouts the side-by-side benchmark generates, cut at every line of a turn (so the last
call is sometimes answered, sometimes not), and over the real Codex rollouts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mini_codex.context import ContextManager, PromptItems
from mini_codex.context.lazy import PatchedHistory
from mini_codex.context.normalize import ABORTED_OUTPUT, normalize_history
from mini_codex.models.base import Prompt
from mini_codex.models.openai_responses import OpenAIResponsesClient
from mini_codex.protocol.items import FunctionCall, FunctionCallOutput, ResponseItem
from mini_codex.rollout.resume import load_resume_state

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted((REPO / "tests" / "fixtures" / "rollouts" / "codex").glob("*.jsonl")) + sorted(
    Path("/work/shared/codex-rollouts").glob("*.jsonl")
)


def _bytes(items: Any) -> bytes:
    client = OpenAIResponsesClient.__new__(OpenAIResponsesClient)  # encodes only
    return client.request_bytes(Prompt(model="gpt-5.5", instructions="x", input=items))


def _managers(path: Path) -> tuple[ContextManager, ContextManager]:
    lazy = ContextManager()
    lazy.replace(load_resume_state(path).history)
    return lazy, ContextManager(list(load_resume_state(path).history))


def assert_prompts_equal(lazy: ContextManager, eager: ContextManager) -> Any:
    prompt, expected = lazy.for_prompt(), eager.for_prompt()
    assert tuple(prompt) == tuple(expected) == tuple(normalize_history(eager.items))
    assert _bytes(prompt) == _bytes(tuple(expected))
    return prompt


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    sys.path.insert(0, str(REPO / "benchmarks"))
    sys.path.insert(0, str(REPO / "tests" / "models"))
    from codex_side_by_side import make_rollout

    path = tmp_path_factory.mktemp("rollouts") / "generated.jsonl"
    make_rollout(path, 140)
    return path.read_bytes().splitlines(keepends=True)


def test_a_rollout_cut_anywhere_normalizes_lazily_like_its_built_items(
    generated: list[bytes], tmp_path: Path
) -> None:
    unbalanced = 0
    for cut in range(60, len(generated) + 1):
        path = tmp_path / f"cut-{cut}.jsonl"
        path.write_bytes(b"".join(generated[:cut]))
        lazy, eager = _managers(path)
        prompt = assert_prompts_equal(lazy, eager)
        assert isinstance(prompt, PromptItems)  # still lazy: no item built for the prompt
        if isinstance(prompt.prefix, PatchedHistory):
            unbalanced += 1
    assert unbalanced > 10


def test_the_view_is_kept_while_the_same_calls_are_unanswered(
    generated: list[bytes], tmp_path: Path
) -> None:
    cut = next(
        cut
        for cut in range(len(generated), 0, -1)
        if b'"type":"function_call",' in generated[cut - 1]
    )
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"".join(generated[:cut]))
    lazy, eager = _managers(path)
    first = assert_prompts_equal(lazy, eager)
    assert isinstance(first.prefix, PatchedHistory)
    step: list[ResponseItem] = [
        FunctionCall(name="exec_command", arguments="{}", call_id="new"),
        FunctionCallOutput(call_id="new", output="done"),
    ]
    lazy.record_items(step)
    eager.record_items(step)
    second = assert_prompts_equal(lazy, eager)
    assert second.prefix is first.prefix  # the provider reuses its encoded chunks
    orphan = FunctionCall(name="exec_command", arguments="{}", call_id="orphan")
    lazy.record_items([orphan])
    eager.record_items([orphan])
    # An orphan in the tail: the prefix's view is still the same.
    assert assert_prompts_equal(lazy, eager).prefix is first.prefix
    synthetic = first.prefix[len(first.prefix) - 1]  # the prefix's orphan call's output
    assert isinstance(synthetic, FunctionCallOutput)
    assert synthetic.output == ABORTED_OUTPUT
    late = FunctionCallOutput(call_id=synthetic.call_id, output="late")
    lazy.record_items([late])
    eager.record_items([late])
    fourth = assert_prompts_equal(lazy, eager)  # the prefix's orphan answered: a new view
    assert fourth.prefix is not first.prefix


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: path.name)
def test_a_real_rollout_cut_in_its_last_turn_normalizes_lazily(path: Path, tmp_path: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    for cut in range(max(len(lines) - 30, 1), len(lines) + 1):
        part = tmp_path / "cut.jsonl"
        part.write_bytes(b"".join(lines[:cut]))
        assert_prompts_equal(*_managers(part))
