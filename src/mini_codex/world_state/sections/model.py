"""The ``model`` section: tells the model when the model slug changed (spec §2.1, row ``model``).

Snapshot: the model slug (a JSON string). The rendering is a developer "model switch" fragment
(``<model_switch>`` … ``</model_switch>``) naming the previous and the current model and carrying
the new model's instructions; it is only ever rendered when those instructions are non-empty.

* ``Known(previous)``: render when ``previous`` differs from the current slug.
* ``Absent`` / ``Unknown``: the persisted state says nothing, so fall back to the host-supplied
  ``previous_model`` (previous-turn settings): render only if it exists and differs.

The legacy and retained matchers both recognise the model-switch markers in a developer message.
What does not belong here: deciding *whether* a model switch needs compaction (runtime's job).
"""

from __future__ import annotations

from typing import ClassVar, Final, assert_never

from mini_codex.world_state.fragment import Fragment, markers_match
from mini_codex.world_state.section import Absent, Known, Previous, Section, Unknown
from mini_codex.world_state.sections._text import render_prompt

__all__ = ["MODEL_SWITCH_END", "MODEL_SWITCH_START", "ModelSection"]

MODEL_SWITCH_START: Final = "<model_switch>"
MODEL_SWITCH_END: Final = "</model_switch>"


class ModelSection(Section[str]):
    """The current model slug, with its instructions and the previous turn's model."""

    ID: ClassVar[str] = "model"
    snapshot_type: ClassVar[object] = str

    def __init__(self, model: str, instructions: str, previous_model: str | None = None) -> None:
        self.model = model
        """The model slug used for the coming request."""
        self.instructions = instructions
        """The model's instructions, repeated in the switch notice (empty: never render)."""
        self.previous_model = previous_model
        """The previous turn's model, used when the persisted state is Absent or Unknown."""

    def snapshot(self) -> str:
        return self.model

    def render_diff(self, previous: Previous[str]) -> Fragment | None:
        previous_model: str | None
        match previous:
            case Known(snapshot=known_model):
                previous_model = known_model
            case Absent() | Unknown():
                previous_model = self.previous_model
            case _:
                assert_never(previous)
        if previous_model is None or previous_model == self.model or not self.instructions:
            return None
        body = render_prompt(
            "model_switch",
            previous_model=previous_model,
            model=self.model,
            instructions=self.instructions,
        )
        return Fragment(
            role="developer",
            start_marker=MODEL_SWITCH_START,
            end_marker=MODEL_SWITCH_END,
            body="\n" + body + "\n",
        )

    @classmethod
    def matches_legacy_fragment(cls, role: str, text: str) -> bool:
        return _is_model_switch(role, text)

    @classmethod
    def has_retained_fragment_matcher(cls) -> bool:
        return True

    @classmethod
    def matches_retained_fragment(cls, role: str, text: str) -> bool:
        return _is_model_switch(role, text)


def _is_model_switch(role: str, text: str) -> bool:
    return role == "developer" and markers_match(MODEL_SWITCH_START, MODEL_SWITCH_END, text)
