"""Shared fixtures of the runtime tests (helpers live in ``runtime_harness.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
