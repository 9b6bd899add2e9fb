"""Per-juror request limits: how many calls at once (max_concurrency) and how often (rpm).

Concurrency is an asyncio.Semaphore; the request rate is aiolimiter's leaky bucket, sized to
one request per 60/rpm seconds so that requests are spaced evenly rather than sent in a burst
of rpm at the start of each minute. Both are bound to the running event loop and rebuilt when
the limiter is used from a new one (asyncio.run per run).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiolimiter import AsyncLimiter


class Limiter:
    """Per-juror limits: at most max_concurrency calls at once, requests spaced 60/rpm seconds apart.

    `async with limiter:` holds a concurrency slot (JurorPool holds it for a whole call, backoff
    included, so a throttled juror is not hammered by its other calls); `await limiter.pace()`
    before each request waits for the next rpm slot. `in_flight` counts the slots held.
    """

    def __init__(self, max_concurrency: int, rpm: int | None = None) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if rpm is not None and rpm < 1:
            raise ValueError("rpm must be at least 1")
        self.max_concurrency = max_concurrency
        self.rpm = rpm
        self._semaphore: asyncio.Semaphore | None = None
        self._rate: AsyncLimiter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.in_flight = 0

    def _bind(self) -> None:
        """Make the semaphore and the rate limiter for the running loop, once per loop."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
            self._rate = AsyncLimiter(1, 60.0 / self.rpm) if self.rpm else None
            self._loop = loop
            self.in_flight = 0

    async def __aenter__(self) -> Limiter:
        self._bind()
        assert self._semaphore is not None
        await self._semaphore.acquire()
        self.in_flight += 1
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.in_flight -= 1
        assert self._semaphore is not None
        self._semaphore.release()

    async def pace(self) -> None:
        """Wait for this request's rpm slot (at once without an rpm limit)."""
        self._bind()
        if self._rate is not None:
            await self._rate.acquire()


class SendGate:
    """Spaces the requests of one pool by what a call costs this process in CPU.

    A process turns a reply around (reading it, converting it, storing the vote, building and
    sending the next request) in a few milliseconds of CPU. When many calls are sent at once
    their replies come back at once, and the event loop works through the whole batch before
    most of the next requests leave: every round then lasts the latency plus the batch's CPU,
    and the calls stay in lockstep. Spacing the sends by the CPU one call costs spreads the
    replies, so each is turned around as it arrives.

    The spacing is the CPU time this process has spent since the pool's first request over the
    calls finished since, capped at ``max_gap_s``; zero until a call has finished.
    Spacing at the rate the process can turn calls around loses nothing: sending faster would
    only queue the replies. `clock`, `cpu` and `sleep` are injectable for tests.
    """

    def __init__(
        self,
        *,
        max_gap_s: float = 0.02,
        clock: Callable[[], float] = time.monotonic,
        cpu: Callable[[], float] = time.process_time,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.max_gap_s = max_gap_s
        self._clock, self._cpu, self._sleep = clock, cpu, sleep
        self._next_send = float("-inf")
        self._cpu_start: float | None = None
        self._finished = 0
        self.gap_s = 0.0

    async def wait(self) -> None:
        """Wait for this request's turn: at least ``gap_s`` after the previous request's."""
        if self._cpu_start is None:
            self._cpu_start = self._cpu()
        now = self._clock()
        at = max(now, self._next_send)
        self._next_send = at + self.gap_s
        if at > now:
            await self._sleep(at - now)

    def finished(self) -> None:
        """A call has come back: the spacing becomes this process's CPU time since its first
        request over the calls finished since (at most ``max_gap_s``)."""
        if self._cpu_start is None:
            return
        self._finished += 1
        self.gap_s = min(max(self._cpu() - self._cpu_start, 0.0) / self._finished, self.max_gap_s)
