"""The step-capture hook of skills: this turn's skills under the model's catalog budget.

Awaited by ``runtime/capture.py`` once per step (discovery itself runs once per turn, in a
worker thread, see ``service.py``); the budget is 2 % of the turn model's context window (the
built-in table or ``model_context_window``), or 8,000 characters when the window is unknown.
"""

from __future__ import annotations

import functools
from pathlib import Path

import anyio

from mini_codex.config import Config
from mini_codex.models.tokens import context_window_for_model
from mini_codex.skills.catalog import default_budget
from mini_codex.skills.service import SkillsService, StepSkills

__all__ = ["capture_skills"]


async def capture_skills(
    service: SkillsService, cwd: Path, turn_id: str, model: str, config: Config
) -> tuple[StepSkills, list[str]]:
    """The turn's skills; a turn's first call discovers them in a worker thread (file I/O)."""
    budget = default_budget(context_window_for_model(model, config.model_context_window))
    if service.is_current(turn_id):
        return service.for_turn(cwd, turn_id, budget)
    call = functools.partial(service.for_turn, cwd, turn_id, budget)
    return await anyio.to_thread.run_sync(call)
