"""Images as model input: a local file → an ``input_image`` data URL (``-i``, ``view_image``).

Formats are recognised by their magic bytes (PNG, JPEG, GIF, WebP), not by the file name. A file
that is not one of them, is empty, or is larger than ``MAX_IMAGE_BYTES`` is refused with an
``ImageError`` whose message names the file and the reason.
"""

from __future__ import annotations

import base64
from pathlib import Path

from mini_codex.errors import MiniCodexError

__all__ = ["MAX_IMAGE_BYTES", "ImageError", "image_data_url", "image_mime_type"]

MAX_IMAGE_BYTES = 20 * 1024 * 1024


class ImageError(MiniCodexError):
    """An image cannot be attached (missing, unsupported format, too large)."""


def image_mime_type(head: bytes) -> str | None:
    """The MIME type of an image from its first bytes, or None when not a supported format."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_data_url(path: Path, *, max_bytes: int = MAX_IMAGE_BYTES) -> str:
    """``data:<mime>;base64,...`` of the image at ``path``."""
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise ImageError(f"image {path}: not a file")
        if size > max_bytes:
            raise ImageError(
                f"image {path}: {size} bytes is larger than the {max_bytes}-byte limit"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise ImageError(f"image {path}: {exc.strerror or exc}") from None
    mime = image_mime_type(data[:16])
    if mime is None:
        raise ImageError(f"image {path}: unsupported format (expected PNG, JPEG, GIF or WebP)")
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
