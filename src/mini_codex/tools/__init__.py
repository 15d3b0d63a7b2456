"""Tools: the ``Tool`` contract and the built-ins ``shell``, ``apply_patch`` and ``update_plan``.

Model-visible descriptions and the apply_patch grammar are data files in ``prompts/``.
Routing, the parallel/serial lock and recording outputs belong to ``runtime/``.
"""

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
