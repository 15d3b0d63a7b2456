"""The elicitation overlay: an MCP server's request for input as a form (``mcp/elicitation.py``).

The form is built from the requested JSON schema: one line of input per property, labelled with
its title (or name), type, choices and description; required fields are marked. Enter moves to
the next field, and on the last one to the answer choices: **accept** (the typed answers,
converted to each field's type and checked against the schema — a problem is shown and the form
stays open), **decline** or **cancel**; Esc cancels from anywhere. An empty field is left out,
so the server's default applies. A URL request shows the URL and the same three choices.

As in Codex's overlay, booleans are answered yes/no, enum fields by a value or its title, and
multi-select (array) fields by comma-separated choices.
"""

from __future__ import annotations

from typing import Any

import anyio
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from mini_codex.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    answer_problem,
    convert_field,
    field_choices,
)

__all__ = ["ElicitationScreen", "ask_in_overlay", "field_label"]

ACTIONS = (
    ("accept", "Accept: send these answers"),
    ("decline", "Decline: answer nothing"),
    ("cancel", "Cancel: dismiss the request"),
)
FIELD_KEYS = "field {n} of {total}  ·  enter next field  ·  tab moves  ·  esc cancels"
CHOICE_KEYS = "↑/↓ choose  ·  enter confirms  ·  tab back to the fields  ·  esc cancels"


def _spec(schema: dict[str, Any], name: str) -> dict[str, Any]:
    spec = (schema.get("properties") or {}).get(name)
    return spec if isinstance(spec, dict) else {}


def field_label(name: str, spec: dict[str, Any], required: bool) -> Text:
    """``Title (type, required): description`` with the choices of an enum field."""
    kind = str(spec.get("type", "string"))
    choices = field_choices(spec)
    if choices:
        titles = [title if title == value else f"{title}={value}" for value, title in choices]
        kind = ("several of " if kind == "array" else "one of ") + ", ".join(titles)
    elif kind == "boolean":
        kind = "yes/no"
    elif kind == "array":
        kind = "comma-separated list"
    text = Text(str(spec.get("title") or name), style="bold")
    text.append(f"  ({kind}{', required' if required else ''})", style="dim")
    about = spec.get("description")
    if about:
        text.append(f"\n{about}")
    return text


class ElicitationScreen(ModalScreen[ElicitationAnswer]):
    DEFAULT_CSS = """
    ElicitationScreen { align: center bottom; }
    ElicitationScreen > Vertical {
        width: 100%; height: auto;
        border: round $warning; padding: 0 1; background: $surface;
    }
    ElicitationScreen VerticalScroll { height: auto; max-height: 20; }
    ElicitationScreen Input { margin: 0 0 1 0; }
    ElicitationScreen .field-label { height: auto; }
    ElicitationScreen OptionList { height: auto; }
    ElicitationScreen #elicitation-error { color: $error; }
    """
    BINDINGS = [Binding("escape", "cancel", "cancel")]  # noqa: RUF012 (Textual's table)
    AUTO_FOCUS = "Input, OptionList"
    """The first field (the choices when there is none) has the focus."""

    def __init__(self, request: ElicitationRequest) -> None:
        super().__init__()
        self.request = request
        schema = request.requested_schema if request.mode == "form" else {}
        self.schema = schema
        self.fields = list((schema.get("properties") or {}) if isinstance(schema, dict) else ())
        self.required = set(schema.get("required") or ()) if isinstance(schema, dict) else set()

    def compose(self) -> ComposeResult:
        head = Text(f"MCP server {self.request.server} asks:\n", style="bold")
        head.append(self.request.message, style="")
        if self.request.mode == "url" and self.request.url:
            head.append(f"\nopen: {self.request.url}", style="bold yellow")
        with Vertical():
            yield Static(head, id="elicitation-message")
            with VerticalScroll(can_focus=False):
                for index, name in enumerate(self.fields):
                    label = field_label(name, _spec(self.schema, name), name in self.required)
                    yield Static(label, classes="field-label")
                    optional = "" if name in self.required else " (optional)"
                    placeholder = f"Type your answer{optional}"
                    yield Input(placeholder=placeholder, id=f"field-{index}", compact=True)
                yield OptionList(*[Option(text, id=key) for key, text in ACTIONS], id="actions")
            yield Static("", id="elicitation-error")
            yield Static(Text(CHOICE_KEYS, style="bold cyan"), id="elicitation-keys")

    def on_mount(self) -> None:
        self.query_one(OptionList).highlighted = 0

    # --- input -------------------------------------------------------------------------------

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """The key line says what Enter does where the focus is."""
        widget = event.widget
        keys = CHOICE_KEYS
        if isinstance(widget, Input) and widget.id:
            index = int(widget.id.removeprefix("field-"))
            keys = FIELD_KEYS.format(n=index + 1, total=len(self.fields))
        self.query_one("#elicitation-keys", Static).update(Text(keys, style="bold cyan"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        index = int((event.input.id or "field-0").removeprefix("field-"))
        if index + 1 < len(self.fields):
            self.query_one(f"#field-{index + 1}", Input).focus()
        else:
            self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        match event.option.id:
            case "accept":
                self._accept()
            case "decline":
                self.dismiss(ElicitationAnswer.decline())
            case _:
                self.action_cancel()

    def action_cancel(self) -> None:
        self.dismiss(ElicitationAnswer("cancel"))

    def _accept(self) -> None:
        if self.request.mode == "url":
            self.dismiss(ElicitationAnswer("accept"))
            return
        content: dict[str, Any] = {}
        for index, name in enumerate(self.fields):
            typed = self.query_one(f"#field-{index}", Input).value.strip()
            if not typed:
                continue
            try:
                content[name] = convert_field(_spec(self.schema, name), typed)
            except ValueError as exc:
                self._problem(f"{name}: {exc}", index)
                return
        answer = ElicitationAnswer("accept", content)
        problem = answer_problem(self.request, answer)
        if problem is not None:
            where = problem.partition(":")[0]
            self._problem(problem, self.fields.index(where) if where in self.fields else None)
            return
        self.dismiss(answer)

    def _problem(self, text: str, index: int | None) -> None:
        self.query_one("#elicitation-error", Static).update(Text(f"not accepted: {text}"))
        if index is not None:
            self.query_one(f"#field-{index}", Input).focus()


async def ask_in_overlay(app: App[Any], request: ElicitationRequest) -> ElicitationAnswer:
    """Show ``request`` over ``app`` and wait for the answer; a note in the transcript says it.

    Called from the session's tasks, outside the app's message loop: the screen is pushed, and
    the note written, through ``call_later``."""
    answered = anyio.Event()
    result: list[ElicitationAnswer] = []

    def done(answer: ElicitationAnswer | None) -> None:
        result.append(answer or ElicitationAnswer("cancel"))
        answered.set()

    app.call_later(app.push_screen, ElicitationScreen(request), done)
    await answered.wait()
    note = getattr(app, "note", None)
    if note is not None:
        said = Text(f"MCP server {request.server}: elicitation {result[0].action}", style="dim")
        app.call_later(note, said)
    return result[0]
