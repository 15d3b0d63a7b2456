"""The pure pieces of the MCP prompt commands and the elicitation form: argument words, the
message a fetched prompt becomes, field labels; and the form of a URL request, headless."""

from __future__ import annotations

import mcp_types
import pytest
from textual.app import App, ComposeResult
from textual.widgets import OptionList, Static

from mini_codex.mcp.elicitation import ElicitationAnswer, ElicitationRequest
from mini_codex.tui.elicitation import ElicitationScreen, field_label
from mini_codex.tui.mcp_prompts import (
    PromptArgumentError,
    PromptCommand,
    parse_arguments,
    prompt_text,
)

ARGS = mcp_types.Prompt(
    name="args-prompt",
    description="two arguments",
    arguments=[
        mcp_types.PromptArgument(name="city", required=True),
        mcp_types.PromptArgument(name="state"),
    ],
)


def test_arguments_are_shell_words_of_name_value() -> None:
    command = PromptCommand("everything", ARGS)
    assert command.name == "mcp__everything__args-prompt"
    assert command.help == "city=… [state=…]  two arguments"
    assert parse_arguments(command, "city='New York' state=") == {"city": "New York", "state": ""}
    cases = {
        "Paris": "/mcp__everything__args-prompt: expected name=value, got 'Paris' "
        "(quote values with spaces)",
        'city="Paris': "/mcp__everything__args-prompt: cannot split the arguments: "
        "No closing quotation",
        "state=TX": "/mcp__everything__args-prompt: missing required argument(s) city "
        "(give them as name=value)",
    }
    for rest, message in cases.items():
        with pytest.raises(PromptArgumentError) as raised:
            parse_arguments(command, rest)
        assert str(raised.value) == message


def test_a_prompt_becomes_one_message_with_placeholders_for_binary_parts() -> None:
    result = mcp_types.GetPromptResult(
        messages=[
            mcp_types.PromptMessage(
                role="user", content=mcp_types.TextContent(type="text", text="Look at:")
            ),
            mcp_types.PromptMessage(
                role="user",
                content=mcp_types.EmbeddedResource(
                    type="resource",
                    resource=mcp_types.TextResourceContents(uri="demo://a", text="alpha"),
                ),
            ),
            mcp_types.PromptMessage(
                role="assistant",
                content=mcp_types.EmbeddedResource(
                    type="resource",
                    resource=mcp_types.BlobResourceContents(
                        uri="demo://b", blob="AAAA", mime_type="application/octet-stream"
                    ),
                ),
            ),
            mcp_types.PromptMessage(
                role="user",
                content=mcp_types.ImageContent(type="image", data="AAAA", mime_type="image/png"),
            ),
        ]
    )
    assert prompt_text(result) == (
        "Look at:\n\nalpha\n\n[binary resource demo://b (application/octet-stream)]\n\n"
        "[image content (image/png)]"
    )


def test_field_labels_name_the_type_choices_and_requirement() -> None:
    titled = {
        "type": "string",
        "title": "Hero",
        "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "h2"}],
    }
    assert field_label("hero", titled, True).plain == "Hero  (one of Superman=h1, h2, required)"
    flag = {"type": "boolean", "description": "Agree?"}
    assert field_label("ok", flag, False).plain == "ok  (yes/no)\nAgree?"


class Host(App[None]):
    def __init__(self, request: ElicitationRequest) -> None:
        super().__init__()
        self.request = request
        self.answers: list[ElicitationAnswer | None] = []

    def compose(self) -> ComposeResult:
        yield Static("base")

    def on_mount(self) -> None:
        self.push_screen(ElicitationScreen(self.request), self.answers.append)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("keys", "action"), [(["enter"], "accept"), (["down", "enter"], "decline")]
)
async def test_a_url_request_offers_the_three_choices(keys: list[str], action: str) -> None:
    request = ElicitationRequest(
        server="docs", message="Sign in", mode="url", url="https://example.test/login"
    )
    app = Host(request)
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ElicitationScreen)
        assert screen.focused is screen.query_one(OptionList)
        message = str(screen.query_one("#elicitation-message", Static).render())
        assert message == "MCP server docs asks:\nSign in\nopen: https://example.test/login"
        await pilot.press(*keys)
        await pilot.pause()
    assert app.answers == [ElicitationAnswer(action)]
