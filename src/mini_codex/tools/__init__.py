"""Tools: the ``Tool`` contract and the built-ins ``shell``, ``apply_patch`` and ``update_plan``.

Model-visible descriptions and the apply_patch grammar are data files in ``prompts/``.
Routing, the parallel/serial lock and recording outputs belong to ``runtime/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_codex._lazy import lazy_exports

if TYPE_CHECKING:
    from mini_codex.tools.apply_patch import ApplyPatchTool
    from mini_codex.tools.base import (
        Tool,
        ToolContext,
        ToolOutput,
        ToolSpec,
        format_validation_error,
        load_tool_prompt,
        parse_arguments,
    )
    from mini_codex.tools.shell import ShellArgs, ShellTool, format_exec_output
    from mini_codex.tools.truncate import DEFAULT_OUTPUT_LIMIT_BYTES, truncate_middle
    from mini_codex.tools.update_plan import PlanItem, PlanUpdate, UpdatePlanTool

__all__ = [
    "DEFAULT_OUTPUT_LIMIT_BYTES",
    "ApplyPatchTool",
    "PlanItem",
    "PlanUpdate",
    "ShellArgs",
    "ShellTool",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "ToolSpec",
    "UpdatePlanTool",
    "format_exec_output",
    "format_validation_error",
    "load_tool_prompt",
    "parse_arguments",
    "truncate_middle",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "ApplyPatchTool": "mini_codex.tools.apply_patch",
        "Tool": "mini_codex.tools.base",
        "ToolContext": "mini_codex.tools.base",
        "ToolOutput": "mini_codex.tools.base",
        "ToolSpec": "mini_codex.tools.base",
        "format_validation_error": "mini_codex.tools.base",
        "load_tool_prompt": "mini_codex.tools.base",
        "parse_arguments": "mini_codex.tools.base",
        "ShellArgs": "mini_codex.tools.shell",
        "ShellTool": "mini_codex.tools.shell",
        "format_exec_output": "mini_codex.tools.shell",
        "DEFAULT_OUTPUT_LIMIT_BYTES": "mini_codex.tools.truncate",
        "truncate_middle": "mini_codex.tools.truncate",
        "PlanItem": "mini_codex.tools.update_plan",
        "PlanUpdate": "mini_codex.tools.update_plan",
        "UpdatePlanTool": "mini_codex.tools.update_plan",
    },
)
