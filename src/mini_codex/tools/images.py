"""Images as model input: a local file → an ``input_image`` data URL (``-i``, ``view_image``).

Formats are recognised by their magic bytes (PNG, JPEG, GIF, WebP), not by the file name. A file
that is not one of them, is empty, or is larger than ``MAX_IMAGE_BYTES`` is refused with an
``ImageError`` whose message names the file and the reason.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass
from pathlib import Path

from mini_codex.errors import MiniCodexError

__all__ = [
    "MAX_IMAGE_BYTES",
    "ImageError",
    "ImageFile",
    "image_data_url",
    "image_mime_type",
    "image_size",
    "load_image",
]

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


@dataclass(frozen=True)
class ImageFile:
    """An image read for attaching: its ``input_image`` data URL and its size (for display).

    A dataclass, not a msgspec struct: the UI imports it before its first frame, where msgspec
    is not loaded yet (``tests/tui/test_ui_startup_imports.py``)."""

    path: Path
    data_url: str
    size: tuple[int, int] | None
    """Width × height in pixels, None when the header does not say (a damaged file)."""


def load_image(path: Path, *, max_bytes: int = MAX_IMAGE_BYTES) -> ImageFile:
    """Read the image at ``path`` (see the module docstring for what is refused)."""
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
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return ImageFile(path=path, data_url=url, size=image_size(data))


def image_data_url(path: Path, *, max_bytes: int = MAX_IMAGE_BYTES) -> str:
    """``data:<mime>;base64,...`` of the image at ``path``."""
    return load_image(path, max_bytes=max_bytes).data_url


def image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG, GIF, JPEG or WebP header; None when it cannot be read."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return width, height
    if data.startswith((b"GIF87a", b"GIF89a")) and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return width, height
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    return None


_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    index = 2
    while index + 9 <= len(data):
        if data[index] != 0xFF:
            return None
        marker = data[index + 1]
        if marker == 0xFF:  # fill byte
            index += 1
            continue
        (length,) = struct.unpack(">H", data[index + 2 : index + 4])
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return width, height
        index += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    kind = data[12:16]
    if kind == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if kind == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if kind == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None
