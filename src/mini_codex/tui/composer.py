"""The composer: a multi-line input (Enter sends, Ctrl+J / Shift+Enter a new line), prompt history
on Up/Down, large pastes collapsed to a placeholder, and the completion menu for ``/`` commands and
``@`` file mentions (the app fills the menu; the composer tells it what is being typed)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from mini_codex.tui.history import PromptHistory

PASTE_COLLAPSE_CHARS = 800
PASTE_COLLAPSE_LINES = 12
_MENTION = re.compile(r"(?:^|\s)@([^\s@]*)$")
_SKILL = re.compile(r"(?:^|\s)\$([A-Za-z0-9_:-]*)$")


@dataclass(frozen=True)
class Completion:
    """What is being completed: ``kind`` ``slash``, ``mention`` (``@`` files) or ``skill``
    (``$`` skill names), the partial word typed."""

    kind: str
    query: str


class Composer(TextArea):
    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class CompletionChanged(Message):
        def __init__(self, completion: Completion | None) -> None:
            super().__init__()
            self.completion = completion

    class MenuKey(Message):
        """Up/Down/Tab/Enter/Escape while the completion menu is open."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, history: PromptHistory, **kwargs: object) -> None:
        super().__init__(
            soft_wrap=True,
            show_line_numbers=False,
            highlight_cursor_line=False,
            compact=True,
            placeholder="Ask mini-codex to do something  (/ commands, @ files)",
            **kwargs,  # type: ignore[arg-type]
        )
        self.prompt_history = history
        self.pastes: dict[str, str] = {}
        self.menu_open = False

    # --- keys --------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if self.menu_open and key in ("up", "down", "tab", "enter", "escape"):
            event.prevent_default()
            event.stop()
            self.post_message(self.MenuKey(key))
            return
        if key == "enter":
            event.prevent_default()
            event.stop()
            self._submit()
            return
        if key in ("ctrl+j", "shift+enter"):
            event.prevent_default()
            event.stop()
            self.insert("\n")
            return
        if key == "up" and self.cursor_location[0] == 0:
            recalled = self.prompt_history.previous()
            if recalled is not None:
                event.prevent_default()
                event.stop()
                self._show(recalled)
            return
        if key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            recalled = self.prompt_history.next()
            if recalled is not None:
                event.prevent_default()
                event.stop()
                self._show(recalled)
            return
        await super()._on_key(event)

    def _show(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    def _submit(self) -> None:
        text = self.expanded_text().strip()
        if not text.strip():
            return
        self.prompt_history.add(self.text)
        self.clear_input()
        self.post_message(self.Submitted(text))

    def clear_input(self) -> None:
        self.text = ""
        self.pastes.clear()
        self.prompt_history.reset()

    # --- paste -------------------------------------------------------------------------------

    async def _on_paste(self, event: events.Paste) -> None:
        text = event.text
        if len(text) >= PASTE_COLLAPSE_CHARS or text.count("\n") >= PASTE_COLLAPSE_LINES:
            event.prevent_default()
            event.stop()
            label = f"[Pasted {len(text)} chars #{len(self.pastes) + 1}]"
            self.pastes[label] = text
            self.insert(label)
            return
        await super()._on_paste(event)

    def expanded_text(self) -> str:
        """The text to send: paste placeholders replaced by what was pasted."""
        text = self.text
        for label, pasted in self.pastes.items():
            text = text.replace(label, pasted)
        return text

    # --- completion --------------------------------------------------------------------------

    def completion(self) -> Completion | None:
        row, column = self.cursor_location
        line = self.document.get_line(row)[:column]
        if row == 0 and line.startswith("/") and " " not in line and self.document.line_count == 1:
            return Completion("slash", line[1:])
        match = _MENTION.search(line)
        if match is not None:
            return Completion("mention", match.group(1))
        match = _SKILL.search(line)
        if match is not None:
            return Completion("skill", match.group(1))
        return None

    def _on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.post_message(self.CompletionChanged(self.completion()))

    def accept(self, completion: Completion, choice: str) -> None:
        """Replace the partial word being completed by ``choice``."""
        row, column = self.cursor_location
        start = (row, column - len(completion.query) - 1)
        prefix = {"slash": "/", "skill": "$"}.get(completion.kind, "@")
        self.replace(f"{prefix}{choice} ", start, (row, column))
