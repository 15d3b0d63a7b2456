"""Writing skill folders for the tests (real files in temporary directories)."""

from __future__ import annotations

from pathlib import Path


def write_skill(
    root: Path, name: str, description: str = "", *, folder: str | None = None, body: str = ""
) -> Path:
    """``root/<folder or name>/SKILL.md`` with frontmatter; returns the file's path."""
    path = root / (folder or name) / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\n{body or f'Do {name}.'}\n"
    )
    return path
