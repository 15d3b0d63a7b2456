"""Fakes shipped with the package, for tests and offline demos (``--model scripted:PATH``).

Imports only ``protocol`` and the ports (``models.base``, ...), never the runtime.
"""

from mini_codex.testing.script_file import ERROR_KINDS, load_script, scripted_model_from_options
from mini_codex.testing.scripted_model import (
    ScriptedFailure,
    ScriptedModel,
    ScriptedResponse,
    ScriptStep,
    assistant,
    custom_tool_call,
    function_call,
    reasoning,
    with_ids,
)

__all__ = [
    "ERROR_KINDS",
    "ScriptStep",
    "ScriptedFailure",
    "ScriptedModel",
    "ScriptedResponse",
    "assistant",
    "custom_tool_call",
    "function_call",
    "load_script",
    "reasoning",
    "scripted_model_from_options",
    "with_ids",
]
