"""RedisRobotsStorage: one robots.txt cache for the whole fleet.

What is shared is data: the robots.txt body (already capped at ROBOTSTXT_MAXSIZE and
re-encoded as UTF-8) and a JSON record of the outcome (status, action, URL after
redirects, fetch time, expiry, failures). Never pickle: a crawler must not execute
what it reads from Redis. Each crawler parses the body with its own
ROBOTSTXT_PARSER and keeps a local LRU (ROBOTSTXT_CACHE_SIZE sites) in front of Redis.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from scrapy_robots.cache import MemoryRobotsStorage, RobotsEntry
from scrapy_robots.fleet.link import FleetUnavailable, RedisLink
from scrapy_robots.fleet.pacing import RedisPacer
from scrapy_robots.policy import Action

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

# The record's fields, as they travel through Redis.
_FIELDS = (
    "site", "action", "fetched_at", "expires_at", "status", "url", "redirects",
    "size", "truncated", "error", "failures", "unreachable_since",
)  # fmt: skip
# A record outlives its expiry by this much so that a failed refetch can keep using
# the last good body (RFC 9309 2.4) and the failure count carries on.
KEEP_AFTER_EXPIRY = 2 * 24 * 3600.0
POLL_INTERVAL = 0.1

# Delete the lock only if this crawler still holds it (it may have expired and been
# taken by another crawler meanwhile).
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

Hydrate = Callable[[RobotsEntry], RobotsEntry | None]


class RedisRobotsStorage(MemoryRobotsStorage):
    """``ROBOTSTXT_CACHE_STORAGE = "scrapy_robots.fleet.RedisRobotsStorage"``."""

    shared = True

    def __init__(
        self,
        link: RedisLink,
        prefix: str,
        max_entries: int = 4096,
        lock_ttl: float = 60.0,
        lock_wait: float = 60.0,
        stats: Any = None,
    ):
        super().__init__(max_entries)
        self.link = link
        self.prefix = prefix
        self.lock_ttl = lock_ttl
        self.lock_wait = lock_wait
        self.stats = stats
        self._release: Any = link.client.register_script(RELEASE)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisRobotsStorage:
        from scrapy.utils.reactor import is_asyncio_reactor_installed

        from scrapy_robots.config import RobotsConfig

        if not is_asyncio_reactor_installed():
            raise ValueError(
                "ROBOTSTXT_CACHE_STORAGE = RedisRobotsStorage needs Scrapy's asyncio reactor: set TWISTED_REACTOR = "
                "'twisted.internet.asyncioreactor.AsyncioSelectorReactor'"
            )
        config = RobotsConfig.from_settings(crawler.settings)
        fleet = config.fleet
        link = RedisLink(fleet.redis_url, fleet.timeout, stats=crawler.stats)
        storage = cls(
            link, fleet.prefix, config.cache_size, lock_ttl=fleet.lock_ttl, lock_wait=fleet.lock_wait,
            stats=crawler.stats,
        )  # fmt: skip
        from scrapy import signals

        crawler.signals.connect(storage.close, signal=signals.spider_closed)
        return storage

    def pacer(self) -> RedisPacer:
        return RedisPacer(self.link, self.prefix)

    async def close(self) -> None:
        await self.link.close()

    def _key(self, site: str) -> str:
        return f"{self.prefix}:robots:{site}"

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"robotstxt/fleet/{key}")

    # -- reading ------------------------------------------------------------------

    async def read(self, site: str, hydrate: Hydrate) -> RobotsEntry | None:
        """The fleet's entry for ``site``, fresh or not, parsed by this crawler.
        Raises :class:`FleetUnavailable`."""
        raw = await self.link.call(self.link.client.hgetall, self._key(site))
        entry = self._decode(site, raw)
        return None if entry is None else hydrate(entry)

    async def load(self, site: str, hydrate: Hydrate) -> RobotsEntry | None:
        """The fleet's fresh entry for ``site``, parsed by this crawler, or None.
        Raises :class:`FleetUnavailable`."""
        raw = await self.link.call(self.link.client.hgetall, self._key(site))
        entry = self._decode(site, raw)
        if entry is None or not entry.fresh(time.time()):
            return None
        entry = hydrate(entry)
        if entry is None:
            return None
        self.put(entry)
        self._inc("hit")
        return entry

    def _decode(self, site: str, raw: Any) -> RobotsEntry | None:
        if not raw or b"meta" not in raw:
            return None
        try:
            record = json.loads(raw[b"meta"])
            fields = {name: record[name] for name in _FIELDS}
            fields["action"] = Action(fields["action"])
            if fields["site"] != site:
                return None
            entry = RobotsEntry(**fields)
        except (ValueError, KeyError, TypeError):
            logger.warning("Ignoring a malformed robots.txt record for %(site)s in Redis", {"site": site})
            return None
        entry.body = raw.get(b"body")
        return entry

    # -- writing ------------------------------------------------------------------

    async def publish(self, entry: RobotsEntry) -> None:
        """Share ``entry`` with the fleet. Raises :class:`FleetUnavailable`."""
        record = {name: getattr(entry, name) for name in _FIELDS}
        record["action"] = entry.action.value
        mapping: dict[Any, Any] = {"meta": json.dumps(record)}
        if entry.body is not None:
            mapping["body"] = entry.body
        key = self._key(entry.site)
        ttl_ms = int(max(entry.expires_at - time.time(), 0) + KEEP_AFTER_EXPIRY) * 1000
        pipe = self.link.client.pipeline(transaction=True)
        pipe.hset(key, mapping=mapping)
        pipe.pexpire(key, ttl_ms)
        await self.link.call(pipe.execute)

    # -- one fetch per site for the fleet -------------------------------------------

    async def fetch_once(self, site: str, work: Callable[[], Awaitable[RobotsEntry]], hydrate: Hydrate) -> RobotsEntry:
        """Run ``work`` (fetch and decide) unless another crawler is doing it; then
        wait for its result, bounded by ``lock_wait``, and fetch ourselves after that."""
        lock = f"{self._key(site)}:lock"
        token = uuid.uuid4().hex
        deadline = time.monotonic() + self.lock_wait
        waited = False
        try:
            while True:
                if await self.link.call(self.link.client.set, lock, token, nx=True, px=int(self.lock_ttl * 1000)):
                    # Another crawler may have published and released the lock between
                    # our cache miss and this SET: look once more before fetching.
                    entry = await self.load(site, hydrate)
                    if entry is not None:
                        await self._release_lock(lock, token)
                        return entry
                    return await self._fetch_for_fleet(lock, token, work)
                if not waited:
                    waited = True
                    self._inc("lock_wait")
                # Another crawler is fetching: its result lands in Redis, or its lock
                # expires (it died) and we try to take the fetch over.
                while time.monotonic() < deadline:
                    await asyncio.sleep(POLL_INTERVAL)
                    entry = await self.load(site, hydrate)
                    if entry is not None:
                        return entry
                    if not await self.link.call(self.link.client.exists, lock):
                        break
                else:
                    self._inc("lock_timeout")
                    return await self._fetch_for_fleet(None, token, work)
        except FleetUnavailable:
            self._inc("fallback")
            return await work()

    async def _fetch_for_fleet(
        self, lock: str | None, token: str, work: Callable[[], Awaitable[RobotsEntry]]
    ) -> RobotsEntry:
        self._inc("fetch")
        try:
            entry = await work()
            try:
                await self.publish(entry)
            except FleetUnavailable:
                self._inc("fallback")
            return entry
        finally:
            if lock is not None:
                await self._release_lock(lock, token)

    async def _release_lock(self, lock: str, token: str) -> None:
        try:
            await self.link.call(self._release, keys=[lock], args=[token])
        except FleetUnavailable:
            pass  # the lock's expiry frees it

    def put(self, entry: RobotsEntry) -> None:
        # The body is Redis's to keep; the local LRU holds the parsed rules only.
        entry.body = None
        super().put(entry)
