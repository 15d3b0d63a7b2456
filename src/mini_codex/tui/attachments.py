"""Images that go with a message (``mini-codex -i FILE``, ``/image PATH``): how they are shown
("[image: name WxH]" chips) and the input they become — one user message with the text and an
``input_image`` part per image, exactly as ``exec -i`` sends it."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from mini_codex.protocol import InputImage, InputText, Message, ResponseItem
from mini_codex.tools.images import ImageFile
from mini_codex.tui import cells

__all__ = ["image_chip", "pending_text", "user_input"]


def image_chip(image: ImageFile) -> str:
    return cells.image_chip(image.path.name, image.size)


def pending_text(images: Sequence[ImageFile]) -> Text:
    """The line above the composer while images wait for the next message."""
    chips = "  ".join(image_chip(image) for image in images)
    return Text.assemble(
        (chips, "magenta"), ("  goes with your next message (/image drops it)", "dim")
    )


def user_input(text: str, images: Sequence[ImageFile]) -> str | list[ResponseItem]:
    """The text alone, or one user message with the images after it."""
    if not images:
        return text
    parts: list[InputText | InputImage] = [InputText(text=text)]
    parts += [InputImage(image_url=image.data_url) for image in images]
    return [Message(role="user", content=parts)]
