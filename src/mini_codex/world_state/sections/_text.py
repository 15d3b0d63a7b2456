"""Text helpers shared by the built-in sections: prompt files and XML escaping.

What belongs here: loading model-visible prose from ``world_state/prompts/*.md`` (package data read
with ``importlib.resources``, never a filesystem path), strict ``string.Template`` substitution
(a missing placeholder is an error, like jinja's ``StrictUndefined``), and the five-character XML
escape the fragments use. Nothing section-specific.
"""

from __future__ import annotations

import functools
import string
from importlib.resources import files

__all__ = ["load_prompt", "render_prompt", "xml_escape"]

_PROMPTS_PACKAGE = "mini_codex.world_state"
_PROMPTS_DIR = "prompts"

_XML_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"},
)


@functools.cache
def load_prompt(name: str) -> str:
    """The text of ``prompts/<name>.md`` without its final newline (files end with one)."""
    resource = files(_PROMPTS_PACKAGE) / _PROMPTS_DIR / f"{name}.md"
    text = resource.read_text(encoding="utf-8")
    return text.removesuffix("\n")


def render_prompt(name: str, /, **values: str) -> str:
    """Substitute ``$placeholders`` in a prompt file; a missing value raises ``KeyError``.

    Substituted values are inserted verbatim (never re-scanned), so ``$`` in them is harmless.
    """
    return string.Template(load_prompt(name)).substitute(values)


def xml_escape(text: str) -> str:
    """Escape ``& < > " '`` for XML text and attribute values."""
    return text.translate(_XML_ESCAPES)
