"""A small readers-writer lock on anyio primitives.

Parallel-capable tools share the read side; every other tool takes the write side, so at most one
serial tool runs at a time and never together with parallel ones (spec/codex-runtime.md §5.4).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio


class RWLock:
    def __init__(self) -> None:
        self._cond = anyio.Condition()
        self._readers = 0
        self._writer = False

    @asynccontextmanager
    async def read(self) -> AsyncIterator[None]:
        async with self._cond:
            while self._writer:
                await self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                async with self._cond:
                    self._readers -= 1
                    self._cond.notify_all()

    @asynccontextmanager
    async def write(self) -> AsyncIterator[None]:
        async with self._cond:
            while self._writer or self._readers:
                await self._cond.wait()
            self._writer = True
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                async with self._cond:
                    self._writer = False
                    self._cond.notify_all()
