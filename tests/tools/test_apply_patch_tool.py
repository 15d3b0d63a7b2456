"""The apply_patch tool in both forms: specs, success text, errors answered to the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_codex.protocol.policy import SandboxPolicy
from mini_codex.tools.apply_patch import APPLY_PATCH_PARAMETERS, ApplyPatchTool
from mini_codex.tools.base import Tool, ToolContext, ToolOutput

pytestmark = pytest.mark.anyio

PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+Hello, world!\n*** End Patch\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def listing(directory: Path) -> list[Path]:
    return list(directory.iterdir())


def context(cwd: Path, policy: SandboxPolicy | None = None) -> ToolContext:
    return ToolContext(
        cwd=cwd,
        sandbox=policy or SandboxPolicy.workspace_write(exclude_slash_tmp=True),
        call_id="c",
        turn_id="t",
        step_id="s",
        approval_policy="never",
    )


async def test_freeform_form_takes_the_patch_as_input(tmp_path: Path) -> None:
    result = await ApplyPatchTool(freeform=True).call(PATCH, context(tmp_path))
    assert result == ToolOutput("Success. Updated the following files:\nA hello.txt\n", True)
    assert (tmp_path / "hello.txt").read_text() == "Hello, world!\n"


async def test_function_form_takes_the_patch_in_input(tmp_path: Path) -> None:
    tool = ApplyPatchTool(freeform=False)
    result = await tool.call(json.dumps({"input": PATCH}), context(tmp_path))
    assert result == ToolOutput("Success. Updated the following files:\nA hello.txt\n", True)
    missing = await tool.call(json.dumps({"patch": PATCH}), context(tmp_path))
    assert missing == ToolOutput(
        "Invalid arguments for apply_patch:\n- input: Field required", False
    )


async def test_parse_errors_and_apply_errors_are_answered_with_no_changes(tmp_path: Path) -> None:
    tool = ApplyPatchTool(freeform=True)
    bad = await tool.call("*** Begin Patch\n*** Add File: a\n+x\n", context(tmp_path))
    assert bad == ToolOutput(
        "apply_patch failed: invalid patch at line 3: the last line of the patch must be "
        "'*** End Patch'\nNo files were changed.",
        False,
    )
    escape = "*** Begin Patch\n*** Add File: ../x\n+x\n*** End Patch"
    assert await tool.call(escape, context(tmp_path)) == ToolOutput(
        "apply_patch failed: '..' is not allowed in patch paths: '../x'\nNo files were changed.",
        False,
    )
    read_only = await tool.call(PATCH, context(tmp_path, SandboxPolicy.read_only()))
    assert read_only.success is False
    assert "read-only" in read_only.text
    assert sorted(path.name for path in listing(tmp_path)) == []


def test_specs_match_the_responses_api_shapes() -> None:
    freeform = ApplyPatchTool(freeform=True)
    function = ApplyPatchTool(freeform=False)
    assert isinstance(freeform, Tool)
    entry = freeform.spec.to_responses_tool()
    assert set(entry) == {"type", "name", "description", "format"}
    assert (entry["type"], entry["name"]) == ("custom", "apply_patch")
    assert entry["format"]["type"] == "grammar"
    assert entry["format"]["syntax"] == "lark"
    assert entry["format"]["definition"].startswith("start: begin_patch hunk+ end_patch\n")
    assert "*** Begin Patch" in entry["description"]
    assert function.spec.to_responses_tool() == {
        "type": "function",
        "name": "apply_patch",
        "description": function.spec.description,
        "strict": False,
        "parameters": APPLY_PATCH_PARAMETERS,
    }
    assert not freeform.spec.supports_parallel
    assert not function.spec.supports_parallel
