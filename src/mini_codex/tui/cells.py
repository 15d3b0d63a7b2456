"""How each kind of transcript entry looks (pure: facts in, rich ``Text`` out).

The app turns session events into cells; this module decides their text and colours, so the
headless tests and snapshots exercise one place. Colours are styles only: with ``NO_COLOR`` the
terminal driver drops them and the text still carries the meaning (✓/✗ marks, +/- diff signs).
"""

from __future__ import annotations

import codecs
import json
import re
import shlex
from collections import deque
from typing import Any

from rich.text import Text

from mini_codex.tui import agent_cells

OUTPUT_TAIL_LINES = 8
MAX_LINE_CHARS = 500
COMMAND_TOOLS = frozenset({"shell", "exec_command"})
"""Tools whose cell is a command: ``$ command``, a live tail, exit code and duration."""
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")


def user_text(message: str) -> Text:
    return Text.assemble(("› ", "bold cyan"), (message, "bold"))


def image_chip(name: str, size: tuple[int, int] | None) -> str:
    """``[image: shot.png 640x480]`` (without the size when the header does not give it)."""
    return f"[image: {name} {size[0]}x{size[1]}]" if size is not None else f"[image: {name}]"


def user_text_with_images(message: str, chips: list[str]) -> Text:
    text = user_text(message)
    for chip in chips:
        text.append("\n  ")
        text.append(chip, style="magenta")
    return text


def queued_text(message: str) -> Text:
    return Text.assemble(("› ", "dim cyan"), (message, "dim"), ("  (queued)", "italic yellow"))


def _arguments(payload: str) -> dict[str, Any]:
    try:
        value = json.loads(payload)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def shell_command(payload: str) -> str:
    args = _arguments(payload)
    command = args.get("command", args.get("cmd", payload))
    if isinstance(command, list):
        return shlex.join(str(part) for part in command)
    return str(command)


def tool_title(name: str, payload: str) -> Text:
    if name.startswith(agent_cells.PREFIX):
        return agent_cells.agent_title(name, payload)
    if name in COMMAND_TOOLS:
        return Text.assemble(("$ ", "bold yellow"), (shell_command(payload), "bold"))
    if name == "write_stdin":
        stdin = _arguments(payload)
        session = stdin.get("session_id", "?")
        chars = stdin.get("chars") or ""
        if not isinstance(chars, str) or not chars:
            return Text.assemble(("↳ ", "bold yellow"), (f"poll session {session}", "bold"))
        typed = _clip_line(json.dumps(chars, ensure_ascii=False), 60)
        return Text.assemble(("↳ ", "bold yellow"), (f"session {session} ← ", "bold"), typed)
    if name.startswith("mcp__"):
        parts = name.split("__")
        server, tool = (parts[1], "__".join(parts[2:])) if len(parts) > 2 else (name, "")
        args = json.dumps(_arguments(payload), ensure_ascii=False)
        return Text.assemble(("⚙ mcp ", "bold magenta"), (f"{server}.{tool}", "bold"), f" {args}")
    if name == "apply_patch":
        return Text("✎ apply_patch", style="bold yellow")
    return Text.assemble(("⚙ ", "bold yellow"), (name, "bold"), " ", _clip_line(payload, 70))


def _clip_line(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def patch_input(payload: str) -> str:
    """The patch of an apply_patch call: freeform input, or the ``input`` of JSON arguments."""
    value = _arguments(payload).get("input")
    return value if isinstance(value, str) else payload


def patch_text(patch: str) -> Text:
    """An apply_patch input as a coloured diff (+ green, - red, headers bold)."""
    text = Text()
    for line in patch.splitlines():
        if line.startswith("*** "):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = "dim"
        text.append(line + "\n", style=style)
    text.rstrip()
    return text


def shell_output(output: str) -> tuple[int | None, str]:
    """Exit code and the command's own output from a shell tool's result text."""
    code: int | None = None
    body = output
    head, sep, rest = output.partition("Output:\n")
    for line in head.splitlines():
        if line.startswith("Exit code: "):
            try:
                code = int(line.removeprefix("Exit code: ").strip())
            except ValueError:
                code = None
    if sep:
        body = rest
    return code, body


def tail(text: str, lines: int = OUTPUT_TAIL_LINES) -> str:
    parts = text.rstrip("\n").splitlines()
    if len(parts) <= lines:
        return "\n".join(parts)
    return "\n".join([f"… {len(parts) - lines} earlier lines", *parts[-lines:]])


class LiveTail:
    """The last lines of a running command's output, from raw chunks (bounded memory).

    Bytes are decoded incrementally (a chunk may split a UTF-8 sequence), terminal escapes are
    dropped, and a carriage return starts the line over (progress bars show their last state).
    """

    def __init__(self, lines: int = OUTPUT_TAIL_LINES, max_line_chars: int = MAX_LINE_CHARS):
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._lines: deque[str] = deque(maxlen=lines)
        self._partial = ""
        self._max_line_chars = max_line_chars
        self.earlier = 0
        """Complete lines no longer kept."""

    def feed(self, data: bytes) -> None:
        text = _ANSI.sub("", self._decoder.decode(data)).replace("\r\n", "\n")
        parts = (self._partial + text).split("\n")
        partial = parts.pop()
        for line in parts:
            if len(self._lines) == self._lines.maxlen:
                self.earlier += 1
            self._lines.append(self._line(line))
        self._partial = self._line(partial)

    def _line(self, line: str) -> str:
        return line.rsplit("\r", 1)[-1][: self._max_line_chars]

    def text(self) -> str:
        lines = list(self._lines) + ([self._partial] if self._partial else [])
        earlier = self.earlier
        if self._lines.maxlen is not None and len(lines) > self._lines.maxlen:
            earlier += 1
            lines = lines[1:]
        if earlier:
            lines.insert(0, f"… {earlier} earlier lines")
        return "\n".join(lines)


def running_text(title: Text, live: LiveTail | None) -> Text:
    """A tool cell while its call runs: the title, the output so far (if any), "running"."""
    text = Text.assemble(title)
    shown = live.text() if live is not None else ""
    if shown:
        text.append("\n" + shown, style="dim")
    text.append("\n⋯ running", style="dim")
    return text


def _exec_result(
    output: str, success: bool | None, duration_s: float, details: dict[str, Any]
) -> Text:
    """An ``exec_command`` / ``write_stdin`` result: its output, then the exit code or the
    session that keeps running."""
    text = Text()
    body = details.get("output")
    if isinstance(body, str) and body.strip():
        text.append(tail(body) + "\n", style="dim")
    code = details.get("exit_code")
    session = details.get("session_id")
    if isinstance(code, int):
        ok = code == 0
        text.append(
            f"{'✓' if ok else '✗'} exit {code} · {duration_s:.1f}s", style="green" if ok else "red"
        )
    elif session is not None:
        text.append(f"● still running · session {session} · {duration_s:.1f}s", style="yellow")
    else:
        text.append(f"✗ {_clip_line(output, 60) or 'failed'}", style="red")
    return text


def tool_result(
    name: str, output: str, success: bool | None, duration_s: float, details: dict[str, Any] | None
) -> Text:
    text = Text()
    if name.startswith(agent_cells.PREFIX):
        return agent_cells.agent_result(output, success, details)
    if name in ("exec_command", "write_stdin") and details is not None:
        return _exec_result(output, success, duration_s, details)
    if name == "shell":
        code, body = shell_output(output)
        if details is not None and isinstance(details.get("exit_code"), int):
            code = details["exit_code"]
        if body.strip():
            text.append(tail(body) + "\n", style="dim")
        ok = code == 0 if code is not None else success is not False
        mark = "✓" if ok else "✗"
        exit_part = f"exit {code}" if code is not None else "no exit code"
        text.append(f"{mark} {exit_part} · {duration_s:.1f}s", style="green" if ok else "red")
        return text
    if output.strip() and name != "apply_patch":
        text.append(tail(output, 4) + "\n", style="dim")
    ok = success is not False
    verdict = "done" if ok else _clip_line(output, 60) or "failed"
    text.append(
        f"{'✓' if ok else '✗'} {verdict} · {duration_s:.1f}s", style="green" if ok else "red"
    )
    return text


_PLAN_MARKS = {"completed": ("☑", "green"), "in_progress": ("◐", "yellow"), "pending": ("☐", "")}


def plan_text(payload: str) -> Text | None:
    plan = _arguments(payload).get("plan")
    if not isinstance(plan, list):
        return None
    text = Text("plan\n", style="bold")
    for entry in plan:
        if not isinstance(entry, dict):
            continue
        mark, style = _PLAN_MARKS.get(str(entry.get("status")), ("☐", ""))
        text.append(f"  {mark} {entry.get('step', '')}\n", style=style)
    text.rstrip()
    return text


def workspace_note(added: list[str], removed: list[str], limit: int = 6) -> Text | None:
    changes = [f"+{path}" for path in added] + [f"-{path}" for path in removed]
    if not changes:
        return None
    shown = " ".join(changes[:limit])
    more = f" (+{len(changes) - limit} more)" if len(changes) > limit else ""
    return Text(f"workspace: {shown}{more}", style="dim italic")


def error_text(message: str, next_step: str) -> Text:
    return Text.assemble(("✗ error: ", "bold red"), (message, "red"), (f"\n  → {next_step}", ""))


def next_step_for(message: str) -> str:
    """What a person can do after a failed turn (the session stays usable)."""
    lowered = message.lower()
    if "api key" in lowered or "auth" in lowered or "401" in lowered:
        return "set OPENAI_API_KEY (or the provider's env_key) and restart, or /model another"
    if "context" in lowered and "window" in lowered:
        return "/compact or /new to start a fresh conversation"
    if "rate" in lowered or "quota" in lowered or "usage limit" in lowered:
        return "wait a moment and send the prompt again"
    return "send another prompt to retry, or /new to start over"


def token_status(info: dict[str, Any] | None) -> str:
    if not info:
        return ""
    total = info.get("total_token_usage", {}).get("total_tokens")
    last = info.get("last_token_usage", {}).get("total_tokens")
    window = info.get("model_context_window")
    parts = []
    if isinstance(total, int):
        parts.append(f"{total:,} tokens")
    if isinstance(window, int) and window > 0 and isinstance(last, int):
        left = max(0, 100 - round(100 * last / window))
        parts.append(f"{left}% context left")
    return " · ".join(parts)
