"""The Textual app: transcript, composer, status line; session events in, Session calls out.

Every session event is turned into a cell of the transcript (``cells.py`` decides how it looks);
input goes out through ``Session.submit`` (a new turn, or steering while one runs), ``interrupt``
and the approval callback (``ApprovalScreen``). The session itself is opened by ``SessionHost``.

Start-up: the composer is painted first. This module imports only Textual and the UI's light
pieces; the protocol, the session runtime and the heavier widgets (Markdown, the overlays) are
imported after the first frame, when the host opens the session and events arrive
(``dispatch.py``). ``tests/tui/test_ui_startup_imports.py`` guards it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import anyio
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from mini_codex.tools.images import ImageFile
from mini_codex.tui import cells, mcp_prompts, slash
from mini_codex.tui.attachments import AttachmentBar, image_chip, user_input
from mini_codex.tui.composer import Completion, Composer
from mini_codex.tui.fuzzy import best_matches
from mini_codex.tui.history import PromptHistory
from mini_codex.tui.host import PICK, SessionHost
from mini_codex.tui.transcript import Transcript

if TYPE_CHECKING:
    from mini_codex.host import Session
    from mini_codex.mcp.elicitation import ElicitationAnswer, ElicitationRequest
    from mini_codex.protocol.approvals import ApprovalAnswer, ApprovalRequest
    from mini_codex.protocol.session_events import SessionEvent

QUIT_WINDOW_S = 2.0


def _warm_up() -> None:
    """What the first answer and the first approval need and the first frame did not: imported
    on a worker thread once a session is open, so that they do not wait for it."""
    import textual.widgets

    from mini_codex.tui import dispatch, screens

    _ = (textual.widgets.Markdown, dispatch, screens)


class MiniCodexApp(App[None]):
    CSS = """
    Screen { layout: vertical; height: auto; max-height: 100%; }
    Screen:inline { height: auto; max-height: 100%; border: none; }
    #transcript { height: 1fr; scrollbar-size-vertical: 1; }
    Screen:inline #transcript { height: auto; max-height: 80vh; }
    #transcript > * { margin: 0 0 1 0; }
    #transcript Markdown { margin: 0 0 1 0; padding: 0; }
    #queued { height: auto; display: none; }
    #attachments { height: auto; display: none; padding: 0 0 0 1; }
    #menu { height: auto; max-height: 8; display: none; border: none; }
    Composer { height: auto; max-height: 8; border: tall $primary; }
    #status { height: 1; color: $text-muted; }
    .tool { padding: 0 0 0 1; }
    ApprovalScreen { align: center bottom; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "escape", "interrupt", priority=False, show=False),
        Binding("ctrl+c", "ctrl_c", "clear / quit", priority=True, show=False),
        Binding("ctrl+d", "ctrl_d", "quit", priority=True, show=False),
    ]

    def __init__(
        self,
        host: SessionHost,
        *,
        history: PromptHistory | None = None,
        home: Path | None = None,
        initial_prompt: str | None = None,
        files: tuple[str, ...] | None = None,
        images: tuple[ImageFile, ...] = (),
    ) -> None:
        """``images`` go with ``initial_prompt`` (``-i``), or without one, with the first message
        the person sends."""
        super().__init__()
        self.host = host
        self.history = history or PromptHistory(None)
        self.home = home
        self.initial_prompt = initial_prompt
        self.session: Session | None = None
        self.mounted = anyio.Event()
        self.token_info: dict[str, object] | None = None
        self.turn_running = False
        self.queued: list[str] = []
        self.pending_prompts: list[tuple[str, list[ImageFile]]] = []
        """Sent before the session was open (with their images); sent when it opens."""
        self._initial_images = list(images) if initial_prompt else []
        self._first_attachments = [] if initial_prompt else list(images)
        self.chips_for: dict[str, list[str]] = {}
        """Image chips of sent messages, shown when the message enters the transcript."""
        self._files = files
        self._completion: Completion | None = None
        self._ui_ready = False
        self._last_ctrl_c = 0.0
        self.last_session_id = ""
        self._pending_events: list[SessionEvent] = []
        self._drain_scheduled = False
        self._warmed = False

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        yield Static(id="queued")
        yield AttachmentBar(self._first_attachments, id="attachments")
        yield OptionList(id="menu")
        yield Composer(self.history, id="composer")
        yield Static(id="status")

    def on_mount(self) -> None:
        self._ui_ready = True
        self.query_one(Composer).focus()
        self.transcript.anchor()  # stay at the newest output while it grows
        # The session opens after the first frame: the composer is usable at once.
        self.call_after_refresh(self.mounted.set)
        self.refresh_status()

    # --- the session -------------------------------------------------------------------------

    # The host and the session's tasks run outside the app's message loop: everything they ask
    # of the UI is posted to it (``call_later``), where widgets may be changed.

    def attach(self, session: Session | None) -> None:
        self.call_later(self._attach_session, session)

    def _attach_session(self, session: Session | None) -> None:
        if session is not None and not self._warmed:
            self._warmed = True
            self.run_worker(_warm_up, thread=True, group="warm-up")
        self.session = session
        self.turn_running = False
        self.refresh_status()
        if session is not None and self.initial_prompt:
            prompt, self.initial_prompt = self.initial_prompt, None
            images, self._initial_images = self._initial_images, []
            self._submit(prompt, images)
        while session is not None and self.pending_prompts:
            text, images = self.pending_prompts.pop(0)
            self.queued.remove(text)
            self.refresh_queued()
            self._submit(text, images)

    async def approval_callback(self, request: ApprovalRequest) -> ApprovalAnswer:
        from mini_codex.protocol.approvals import ApplyPatchApprovalRequest, ApprovalAnswer
        from mini_codex.tui.screens import ApprovalScreen

        patch = (
            self.transcript.patches.get(request.call_id)
            if isinstance(request, ApplyPatchApprovalRequest)
            else None
        )
        answered: anyio.Event = anyio.Event()
        result: list[ApprovalAnswer] = []

        def done(answer: ApprovalAnswer | None) -> None:
            result.append(answer or ApprovalAnswer(decision="denied"))
            answered.set()

        self.call_later(self.push_screen, ApprovalScreen(request, patch), done)
        await answered.wait()
        return result[0]

    async def elicitation_callback(self, request: ElicitationRequest) -> ElicitationAnswer:
        """An MCP server's elicitation, answered in the form overlay (``elicitation.py``)."""
        from mini_codex.tui.elicitation import ask_in_overlay

        return await ask_in_overlay(self, request)

    async def pick_session(self) -> Path | bool | None:
        from mini_codex.tui.screens import ResumePicker
        from mini_codex.tui.sessions import recent_sessions

        sessions = recent_sessions(self.home) if self.home is not None else []
        picked: list[Path | None] = []
        chosen = anyio.Event()

        def done(path: Path | None) -> None:
            picked.append(path)
            chosen.set()

        self.call_later(self.push_screen, ResumePicker(sessions, Path.home()), done)
        await chosen.wait()
        return picked[0] if picked[0] is not None else False

    # --- transcript --------------------------------------------------------------------------

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    def transcript_lines(self) -> list[str]:
        return self.transcript.lines()

    def note(self, text: Text | str) -> None:
        self.transcript.note(text)

    def show_error(self, message: str, next_step: str) -> None:
        self.call_later(self.transcript.error, message, next_step)

    def on_session_event(self, event: SessionEvent) -> None:
        self._pending_events.append(event)
        if not self._drain_scheduled:
            self._drain_scheduled = True
            self.call_later(self._drain_events)

    def _drain_events(self) -> None:
        self._drain_scheduled = False
        events, self._pending_events = self._pending_events, []
        for event in events:
            self.handle_event(event)

    def handle_event(self, event: SessionEvent) -> None:
        from mini_codex.tui.dispatch import handle_event

        handle_event(self, event)

    def refresh_status(self) -> None:
        session = self.session
        if session is None:
            text = Text("starting…", style="dim")
        else:
            parts = [session.model, f"approvals {session.approval_policy}", session.sandbox.mode]
            tokens = cells.token_status(self.token_info)
            if tokens:
                parts.append(tokens)
            text = Text(" · ".join(parts), style="dim")
            if self.turn_running:
                text = Text.assemble(("● working (esc interrupts) ", "yellow"), text)
        if self._ui_ready:
            self.query_one("#status", Static).update(text)

    def refresh_queued(self) -> None:
        widget = self.query_one("#queued", Static)
        widget.display = bool(self.queued)
        widget.update(Text("\n").join(cells.queued_text(text) for text in self.queued))

    # --- input -------------------------------------------------------------------------------

    def send(self, text: str) -> None:
        """Send ``text`` (with the attached images) as a new turn, or as steering input."""
        self._submit(text, self.query_one(AttachmentBar).take())

    def _submit(self, text: str, images: list[ImageFile]) -> None:
        session = self.session
        if session is None:  # still starting: sent as soon as the session is open
            self.pending_prompts.append((text, images))
            self.queued.append(text)
            self.refresh_queued()
            return
        if images:
            self.chips_for[text] = [image_chip(image) for image in images]
        if session.turn_active:
            self.queued.append(text)
            self.refresh_queued()
        else:
            self.turn_running = True
            self.refresh_status()
        session.submit(user_input(text, images))

    @property
    def attachments(self) -> list[ImageFile]:
        """Images attached (``-i`` without a prompt, ``/image PATH``) to the next message."""
        return self.query_one(AttachmentBar).images

    def attach_image(self, path: Path) -> None:
        """``/image PATH``: attach an image to the next message (a clear note when it cannot)."""
        problem = self.query_one(AttachmentBar).attach(path)
        if problem is not None:
            self.note(Text(f"/image: {problem}", style="red"))

    def drop_images(self) -> None:
        dropped = len(self.query_one(AttachmentBar).take())
        self.note(Text(f"/image: dropped {dropped} attached image(s)", style="dim"))

    async def on_composer_submitted(self, message: Composer.Submitted) -> None:
        text = message.text
        if text.startswith("/") and "\n" not in text.strip():
            await self.run_slash(text)
            return
        self.send(text)

    async def run_slash(self, text: str) -> None:
        command, arg, name = slash.parse(text)
        if command is None and name.startswith(mcp_prompts.PREFIX):
            await self.run_mcp_prompt(name, arg)
            return
        if command is None:
            self.note(Text(f"unknown command /{name} (type / to see the list)", style="red"))
            return
        if command.needs_session and self.session is None:
            self.note(Text(f"/{command.name}: no session is open", style="yellow"))
            return
        await command.run(self, arg)

    def prompt_commands(self) -> list[mcp_prompts.PromptCommand]:
        """The ``/mcp__server__prompt`` commands of the session's ready MCP servers."""
        return mcp_prompts.prompt_commands(self.session)

    async def run_mcp_prompt(self, name: str, arg: str) -> None:
        """``/mcp__server__prompt key=value …``: fetch the prompt, send it as a user message."""
        await mcp_prompts.run_prompt_command(self, self.prompt_commands(), name, arg)

    def on_composer_completion_changed(self, message: Composer.CompletionChanged) -> None:
        self._completion = message.completion
        menu = self.query_one("#menu", OptionList)
        menu.clear_options()
        options: list[Option] = []
        if message.completion is not None and message.completion.kind == "slash":
            query = message.completion.query
            options = [
                Option(Text.assemble((f"/{c.name}", "bold"), f"  {c.help}"), id=c.name)
                for c in slash.complete(query)
            ]
            options += [
                Option(Text.assemble((f"/{c.name}", "bold"), f"  {c.help}"), id=c.name)
                for c in self.prompt_commands()
                if c.name.startswith(query.lower())
            ]
        elif message.completion is not None and message.completion.kind == "skill":
            options = [
                Option(f"${name}", id=name)
                for name in best_matches(message.completion.query, self.skill_names())
            ]
        elif message.completion is not None:
            options = [
                Option(path, id=path)
                for path in best_matches(message.completion.query, self.workspace_files())
            ]
        menu.add_options(options)
        menu.display = bool(options)
        if options:
            menu.highlighted = 0
        self.query_one(Composer).menu_open = bool(options)

    def skill_names(self) -> tuple[str, ...]:
        """What ``$`` completes to: the session's skills (read again for every ``$`` word)."""
        return tuple(self.session.skill_names()) if self.session is not None else ()

    def workspace_files(self) -> tuple[str, ...]:
        if self._files is None:
            session = self.session
            if session is None:
                return ()
            self._files = session.caches.scanner.scan().sorted_paths()
        return self._files

    async def on_composer_menu_key(self, message: Composer.MenuKey) -> None:
        menu = self.query_one("#menu", OptionList)
        composer = self.query_one(Composer)
        if message.key == "escape":
            self._close_menu()
            return
        if message.key in ("up", "down"):
            menu.action_cursor_up() if message.key == "up" else menu.action_cursor_down()
            return
        index = menu.highlighted
        completion = self._completion
        if index is None or completion is None:
            self._close_menu()
            return
        choice = menu.get_option_at_index(index).id or ""
        self._close_menu()
        takes_arguments = any(c.name == choice and c.arguments for c in self.prompt_commands())
        if (
            completion.kind == "slash"
            and message.key == "enter"
            and not composer.text[1:].count(" ")
            and not takes_arguments
        ):
            composer.clear_input()
            await self.run_slash(f"/{choice}")
            return
        composer.accept(completion, choice)

    def _close_menu(self) -> None:
        menu = self.query_one("#menu", OptionList)
        menu.display = False
        self.query_one(Composer).menu_open = False

    # --- keys --------------------------------------------------------------------------------

    def action_escape(self) -> None:
        if self.session is not None and self.session.turn_active:
            self.session.interrupt()

    def action_ctrl_c(self) -> None:
        composer = self.query_one(Composer)
        if composer.text:
            composer.clear_input()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= QUIT_WINDOW_S:
            self.quit()
            return
        self._last_ctrl_c = now
        self.notify("press Ctrl+C again to quit", timeout=QUIT_WINDOW_S)

    def action_ctrl_d(self) -> None:
        if not self.query_one(Composer).text:
            self.quit()

    # --- slash-command context ---------------------------------------------------------------

    def new_session(self) -> None:
        self.host.switch(None)

    def resume_session(self) -> None:
        self.host.switch(PICK)

    def quit(self) -> None:
        self.host.stop()
        self.exit()
