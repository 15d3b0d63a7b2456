"""Shared fixtures of the skills tests; the session helpers of ``tests/runtime`` are reused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "runtime"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
