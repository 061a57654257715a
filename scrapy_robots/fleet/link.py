"""RedisLink: one asyncio Redis client, short timeouts, and a circuit breaker.

While Redis is unreachable, every call fails fast with :class:`FleetUnavailable`
(the caller falls back to local behaviour); the link tries again after a backoff
that doubles up to ``MAX_BACKOFF`` seconds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")
FIRST_BACKOFF = 1.0
MAX_BACKOFF = 30.0


class FleetUnavailable(Exception):
    """Redis cannot be used right now; do the local thing."""


class RedisLink:
    def __init__(self, url: str, timeout: float, stats: Any = None, clock: Callable[[], float] = time.monotonic):
        try:
            import redis.asyncio
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "The Redis fleet storage needs the redis package: pip install 'scrapy-robots[redis]'"
            ) from exc
        self.url = url
        self.client = redis.asyncio.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, retry_on_timeout=False
        )
        self._errors: tuple[type[BaseException], ...] = (redis.exceptions.RedisError, OSError, asyncio.TimeoutError)
        self.stats = stats
        self.clock = clock
        self.retry_at = 0.0
        self.backoff = FIRST_BACKOFF
        self.down = False

    def available(self) -> bool:
        return self.clock() >= self.retry_at

    async def call(self, method: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        if not self.available():
            raise FleetUnavailable(f"Redis at {self.url} is unreachable")
        try:
            result = await method(*args, **kwargs)
        except self._errors as exc:
            self._failed(exc)
            raise FleetUnavailable(str(exc)) from exc
        if self.down:
            self.down = False
            self.backoff = FIRST_BACKOFF
            logger.warning("Redis at %(url)s is reachable again: the fleet cache and pacing resume", {"url": self.url})
        return result

    def _failed(self, exc: BaseException) -> None:
        if not self.down:
            logger.warning(
                "Redis at %(url)s is unreachable (%(error)s): this crawler uses its local robots.txt "
                "cache and local pacing until it returns",
                {"url": self.url, "error": exc or type(exc).__name__},
            )
            self.down = True
        else:
            self.backoff = min(self.backoff * 2, MAX_BACKOFF)
        self.retry_at = self.clock() + self.backoff
        if self.stats is not None:
            self.stats.inc_value("robotstxt/fleet/redis_errors")

    async def close(self) -> None:
        try:
            await self.client.aclose()
        except self._errors:
            pass
