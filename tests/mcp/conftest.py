"""Shared fixtures of the MCP tests (helpers live in ``mcp_harness.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
