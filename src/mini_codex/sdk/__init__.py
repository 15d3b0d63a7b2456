"""The Python SDK: Codex's TypeScript SDK (``@openai/codex-sdk``) shape, running in-process.

    codex = Codex(home=None, **config_overrides)
    thread = codex.start_thread(working_directory=..., model=..., sandbox_mode=...)
    turn = await thread.run("fix the test")            # Turn(final_response, items, usage)
    turn = thread.run_sync("and now the docs")          # scripts
    streamed = await thread.run_streamed("one more")    # streamed.events: exec --json events
    again = codex.resume_thread(thread.id)              # ours, or a Codex CLI rollout file
    codex.start_thread(elicitation_callback=answer)     # async (ElicitationRequest) -> Answer

Items and events are the ``exec --json`` objects of ``mini_codex.protocol.exec_events``, made
by the same mapper as the CLI (``runtime/exec_events.py``). Every failure (a failed turn, a bad
setting, a final message that does not match ``output_schema``) is raised as a ``CodexError``
subclass that is also the library error it stands for (``sdk/errors.py``): ``CodexConfigError``
is a ``ConfigError``, ``TurnFailedError`` a failed turn, and so on.
"""

from mini_codex.mcp.elicitation import ElicitationAnswer, ElicitationHandler, ElicitationRequest
from mini_codex.protocol.exec_events import ExecEvent, ExecItem, Usage
from mini_codex.sdk.codex import Codex
from mini_codex.sdk.errors import (
    CodexConfigError,
    CodexError,
    CodexImageError,
    CodexInputError,
    CodexMcpError,
    CodexOutputSchemaError,
    CodexResumeRefusedError,
    CodexRolloutError,
    TurnFailedError,
)
from mini_codex.sdk.thread import StreamedTurn, Thread, Turn

__all__ = [
    "Codex",
    "CodexConfigError",
    "CodexError",
    "CodexImageError",
    "CodexInputError",
    "CodexMcpError",
    "CodexOutputSchemaError",
    "CodexResumeRefusedError",
    "CodexRolloutError",
    "ElicitationAnswer",
    "ElicitationHandler",
    "ElicitationRequest",
    "ExecEvent",
    "ExecItem",
    "StreamedTurn",
    "Thread",
    "Turn",
    "TurnFailedError",
    "Usage",
]
