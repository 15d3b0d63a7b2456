"""The ``model`` section: model-switch notices from persisted or inferred previous models."""

from __future__ import annotations

import pytest

from mini_codex.jsonmerge import Json
from mini_codex.world_state.fragment import Fragment
from mini_codex.world_state.section import ABSENT, UNKNOWN, Known, Previous, SnapshotDecodeError
from mini_codex.world_state.sections.model import ModelSection


def switch(previous: str, current: str, instructions: str) -> Fragment:
    return Fragment(
        role="developer",
        start_marker="<model_switch>",
        end_marker="</model_switch>",
        body=(
            f"\nThe model for this conversation changed from `{previous}` to `{current}`. "
            "Keep working on the conversation so far, following these instructions for "
            f"`{current}`:\n\n{instructions}\n"
        ),
    )


def test_model_switch_text_is_exact() -> None:
    fragment = ModelSection("gpt-5", "Be brief.", previous_model="o3").render_diff(ABSENT)

    assert fragment is not None
    assert fragment.text == (
        "<model_switch>\n"
        "The model for this conversation changed from `o3` to `gpt-5`. Keep working on the "
        "conversation so far, following these instructions for `gpt-5`:\n"
        "\n"
        "Be brief.\n"
        "</model_switch>"
    )


def test_renders_when_the_persisted_model_changed() -> None:
    section = ModelSection("gpt-5", "Be brief.", previous_model=None)

    assert section.render_diff(Known("o3")) == switch("o3", "gpt-5", "Be brief.")


def test_persisted_model_takes_precedence_over_the_previous_turn_model() -> None:
    section = ModelSection("gpt-5", "Be brief.", previous_model="gpt-4.1")

    assert section.render_diff(Known("o3")) == switch("o3", "gpt-5", "Be brief.")


@pytest.mark.parametrize("previous", [ABSENT, UNKNOWN], ids=["absent", "unknown"])
def test_renders_when_the_change_is_inferred_from_the_previous_turn(
    previous: Previous[str],
) -> None:
    section = ModelSection("gpt-5", "Be brief.", previous_model="o3")

    assert section.render_diff(previous) == switch("o3", "gpt-5", "Be brief.")


@pytest.mark.parametrize("previous", [ABSENT, UNKNOWN], ids=["absent", "unknown"])
@pytest.mark.parametrize("previous_model", [None, "gpt-5"], ids=["no-previous", "same"])
def test_nothing_without_an_inferred_change(
    previous: Previous[str], previous_model: str | None
) -> None:
    section = ModelSection("gpt-5", "Be brief.", previous_model=previous_model)

    assert section.render_diff(previous) is None


def test_unchanged_persisted_model_renders_nothing_even_if_the_previous_turn_differs() -> None:
    section = ModelSection("gpt-5", "Be brief.", previous_model="o3")

    assert section.render_diff(Known(section.snapshot())) is None


@pytest.mark.parametrize(
    "previous", [ABSENT, UNKNOWN, Known("o3")], ids=["absent", "unknown", "known"]
)
def test_nothing_when_the_model_has_no_instructions(previous: Previous[str]) -> None:
    section = ModelSection("gpt-5", "", previous_model="o3")

    assert section.render_diff(previous) is None


def test_snapshot_is_the_slug() -> None:
    section = ModelSection("gpt-5", "Be brief.")

    assert section.encode_snapshot(section.snapshot()) == "gpt-5"
    assert ModelSection.decode_snapshot("o3") == "o3"


@pytest.mark.parametrize("raw", [None, 5, {"model": "o3"}, ["o3"]])
def test_a_non_string_snapshot_does_not_decode(raw: Json) -> None:
    with pytest.raises(SnapshotDecodeError):
        ModelSection.decode_snapshot(raw)


def test_instructions_with_template_characters_are_kept_verbatim() -> None:
    section = ModelSection("gpt-5", "Costs $5 or ${price}.", previous_model="o3")

    assert section.render_diff(ABSENT) == switch("o3", "gpt-5", "Costs $5 or ${price}.")


def test_legacy_and_retained_matchers_recognise_developer_model_switch_fragments() -> None:
    text = ModelSection("gpt-5", "Be brief.", previous_model="o3").render_diff(ABSENT)
    assert text is not None

    assert ModelSection.matches_legacy_fragment("developer", text.text)
    assert ModelSection.has_retained_fragment_matcher()
    assert ModelSection.matches_retained_fragment("developer", "  <MODEL_SWITCH>x</model_switch>\n")
    assert not ModelSection.matches_retained_fragment("user", text.text)
    assert not ModelSection.matches_legacy_fragment("developer", "<model_switch> unterminated")
