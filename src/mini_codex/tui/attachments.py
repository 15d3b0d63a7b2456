"""Images that go with a message (``mini-codex -i FILE``, ``/image PATH``): how they are shown
("[image: name WxH]" chips) and the input they become — one user message with the text and an
``input_image`` part per image, exactly as ``exec -i`` sends it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import Static

from mini_codex.tools.images import ImageError, ImageFile, load_image
from mini_codex.tui import cells

if TYPE_CHECKING:  # the protocol (pydantic) loads after the UI's first frame
    from mini_codex.protocol import ResponseItem

__all__ = ["AttachmentBar", "image_chip", "pending_text", "user_input"]


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
    from mini_codex.protocol import InputImage, InputText, Message

    parts: list[InputText | InputImage] = [InputText(text=text)]
    parts += [InputImage(image_url=image.data_url) for image in images]
    return [Message(role="user", content=parts)]


class AttachmentBar(Static):
    """The line above the composer: the images that go with the next message (hidden if none)."""

    def __init__(self, images: Sequence[ImageFile] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.images = list(images)

    def on_mount(self) -> None:
        self._show()

    def attach(self, path: Path) -> str | None:
        """Read and attach the image at ``path``; the reason when it cannot be attached."""
        try:
            image = load_image(path)
        except ImageError as exc:
            return str(exc)
        self.images.append(image)
        self._show()
        return None

    def take(self) -> list[ImageFile]:
        """The attached images, removed from the bar (they go with a message, or are dropped)."""
        taken, self.images = self.images, []
        self._show()
        return taken

    def _show(self) -> None:
        self.display = bool(self.images)
        self.update(pending_text(self.images))
