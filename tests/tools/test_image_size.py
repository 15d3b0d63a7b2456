"""``image_size``: width × height from the headers of PNG, GIF, JPEG and WebP files (the UI's
"[image: name WxH]" chip), and ``load_image`` giving the same data URL as ``image_data_url``."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from image_files import png
from mini_codex.tools.images import ImageError, ImageFile, image_data_url, image_size, load_image


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    dqt = b"\xff\xdb" + struct.pack(">H", 67) + bytes(65)
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + dqt + sof0 + b"\xff\xd9"


def webp(kind: bytes, payload: bytes) -> bytes:
    body = b"WEBP" + kind + struct.pack("<I", len(payload)) + payload
    return b"RIFF" + struct.pack("<I", len(body)) + body


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (png(7, 5), (7, 5)),
        (b"GIF89a" + struct.pack("<HH", 640, 480) + b"\x00\x00\x00;", (640, 480)),
        (jpeg(1920, 1080), (1920, 1080)),
        (webp(b"VP8 ", b"\x00" * 3 + b"\x9d\x01\x2a" + struct.pack("<HH", 300, 200)), (300, 200)),
        (webp(b"VP8L", b"\x2f" + ((99) | (49 << 14)).to_bytes(4, "little")), (100, 50)),
        (webp(b"VP8X", b"\x00" * 4 + (4095).to_bytes(3, "little") + (2).to_bytes(3, "little")),
         (4096, 3)),
        (b"\xff\xd8\xff\xe0\x00", None),  # a truncated JPEG: no size, no error
        (b"not an image", None),
    ],
)  # fmt: skip
def test_image_size_reads_the_header(data: bytes, size: tuple[int, int] | None) -> None:
    assert image_size(data) == size


def test_load_image_gives_the_data_url_and_the_size(tmp_path: Path) -> None:
    path = tmp_path / "shot.png"
    path.write_bytes(png(3, 2))
    assert load_image(path) == ImageFile(path=path, data_url=image_data_url(path), size=(3, 2))
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ImageError, match=r"notes.txt: unsupported format"):
        load_image(tmp_path / "notes.txt")
