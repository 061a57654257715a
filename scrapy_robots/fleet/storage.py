"""RedisRobotsStorage: one robots.txt cache for the whole fleet.

What is shared is data: one Redis string per site, ``<prefix>:site:{<site>}``, holding
the entry packed as the memory tier keeps it (:func:`~scrapy_robots.cache.entry.pack`: a
JSON record of the outcome, the stored rules and the robots.txt body, capped at
ROBOTSTXT_MAXSIZE and re-encoded as UTF-8, in one zlib stream), with a TTL of its
lifetime plus ROBOTSTXT_FLEET_KEEP_AFTER_EXPIRY. A record of an earlier version (the hash
``<prefix>:robots:<site>``, fields ``meta`` and ``body``) is read when a site has no new
one. Never pickle: a crawler must not execute what it reads from Redis. Each crawler
parses the body with its own ROBOTSTXT_PARSER (the middleware's hot tier) and keeps the
same compact tier as the embedded storage (:class:`~scrapy_robots.cache.MemoryRobotsStorage`,
``ROBOTSTXT_CACHE_SIZE`` sites) in front of Redis. While Redis is unreachable, the storage is that local tier alone.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import CloseSpider
from scrapy.utils.defer import deferred_from_coro

from scrapy_robots.cache import MemoryRobotsStorage, RobotsEntry, RobotsStorage
from scrapy_robots.cache.entry import entry_from_record, pack, unpack
from scrapy_robots.fleet.leases import RequestLeases
from scrapy_robots.fleet.link import MISCONFIGURED, FleetUnavailable, RedisLink
from scrapy_robots.fleet.lock import FetchLock
from scrapy_robots.fleet.pacing import FleetPacer
from scrapy_robots.fleet.reservations import RedisPacer
from scrapy_robots.fleet.writeback import RecordsWriteBack
from scrapy_robots.settings.config import RobotsConfig

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: ROBOTSTXT_FLEET_KEEP_AFTER_EXPIRY's default: a record outlives its expiry by this much
#: so that a failed refetch can keep using the last good body (RFC 9309 2.4) and the
#: failure count carries on.
KEEP_AFTER_EXPIRY = 2 * 24 * 3600.0


class LocalTier(MemoryRobotsStorage):
    """The compact tier in front of Redis, which can also list what it holds (for the
    write-back after Redis lost the records)."""

    def entries(self, sites: Iterable[str] | None = None) -> Iterator[RobotsEntry]:
        """Every entry held (or those of ``sites`` held), least recently used first,
        without touching their order."""
        if sites is None:
            blobs = list(self._packed.values())
        else:
            blobs = [blob for blob in map(self._packed.get, list(sites)) if blob is not None]
        for blob in blobs:
            try:
                yield unpack(blob)
            except ValueError:
                continue


class RedisRobotsStorage(RobotsStorage):
    """``ROBOTSTXT_CACHE_STORAGE = "scrapy_robots.fleet.RedisRobotsStorage"``."""

    shared_with = "the fleet"

    def __init__(
        self,
        link: RedisLink,
        prefix: str,
        max_entries: int = 100_000,
        lock_ttl: float = 10.0,
        lock_wait: float = 70.0,
        stats: Any = None,
        pacing: bool = True,
        pacing_margin: float = 0.05,
        pacing_outage: str = "spread",
        keep_after_expiry: float = KEEP_AFTER_EXPIRY,
    ):
        self.local = LocalTier(max_entries)
        self.link = link
        self.prefix = prefix
        self.stats = stats
        self.pacing = pacing
        self.pacing_margin = pacing_margin
        self.pacing_outage = pacing_outage
        self.keep_after_expiry = keep_after_expiry
        self.lock = FetchLock(link, lock_ttl, lock_wait, self._inc)
        self.write_back = RecordsWriteBack(link, prefix, self.local.entries, self._key, self._value, self._add)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisRobotsStorage:
        from scrapy.utils.reactor import is_asyncio_reactor_installed

        if not is_asyncio_reactor_installed():
            raise ValueError(
                "ROBOTSTXT_CACHE_STORAGE = RedisRobotsStorage needs Scrapy's asyncio reactor: set TWISTED_REACTOR = "
                "'twisted.internet.asyncioreactor.AsyncioSelectorReactor'"
            )
        config = RobotsConfig.of(crawler)
        fleet = config.fleet
        link = RedisLink.of(fleet, stats=crawler.stats, on_misconfigured=lambda _: _stop_crawl(crawler))
        storage = cls(
            link,
            fleet.prefix,
            config.cache_size,
            lock_ttl=fleet.lock_ttl,
            lock_wait=fleet.lock_wait,
            stats=crawler.stats,
            pacing=fleet.pacing,
            pacing_margin=fleet.pacing_margin,
            pacing_outage=fleet.outage,
            keep_after_expiry=fleet.keep_after_expiry,
        )
        if fleet.leases:  # a shared queue: another crawler gives back what this one held if it dies
            storage._leases = RequestLeases(crawler, link, fleet.prefix, fleet.lease_ttl)
        crawler.signals.connect(storage._verify_at_start, signal=signals.spider_opened)
        storage.where = fleet.where()
        return storage

    async def _verify_at_start(self) -> None:
        """A Redis of another kind than the settings say closes the crawl before its first
        request (the link said why); a Redis away now is asked when it answers."""
        if await self.link.verify() is not None:
            raise CloseSpider(MISCONFIGURED)

    #: The fleet's Redis as the start-up line names it, without a password (set by from_crawler).
    where = "Redis"
    #: The leases on this crawler's waiting requests (ROBOTSTXT_FLEET_LEASES; set by from_crawler).
    _leases: RequestLeases | None = None

    def describe(self) -> str:
        leased = ", the requests waiting in this crawler leased there" if self._leases is not None else ""
        return f"for the fleet in {self.where}, under the key prefix {self.prefix!r}{leased}"

    def leases(self) -> RequestLeases | None:
        return self._leases

    def pacer(self) -> FleetPacer | None:
        """The fleet's pace, unless ROBOTSTXT_FLEET_PACING is off."""
        if not self.pacing:
            return None
        pacer = RedisPacer(self.link, self.prefix, uuid.uuid4().hex)
        fleet = FleetPacer(pacer, self._inc, self.pacing_margin, self.pacing_outage)
        self.write_back.before_share = fleet.write_unmarked
        return fleet

    async def close(self) -> None:
        self.write_back.stop()
        await self.write_back.share_unshared()
        await self.lock.release_all()  # fetches cut short by the close leave no lock behind
        if self._leases is not None:
            await self._leases.close()
        await self.link.close()

    def _key(self, site: str) -> str:
        """The site's record; its fetch lock is this + ``:lock``. The site is the key's hash
        tag: a Redis Cluster keeps both on one node."""
        return f"{self.prefix}:site:{{{site}}}"

    def _old_key(self, site: str) -> str:
        """The site's record as earlier versions wrote it (a hash: ``meta``, ``body``): read, never written."""
        return f"{self.prefix}:robots:{site}"

    def _inc(self, key: str) -> None:
        self._add(key, 1)

    def _add(self, key: str, count: int) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"robotstxt/fleet/{key}", count)

    def __len__(self) -> int:
        return len(self.local)

    # -- reading ------------------------------------------------------------------

    def load_now(self, site: str) -> RobotsEntry | None:
        """The local tier's fresh entry; the fleet's needs a round trip (``load``)."""
        local = self.local.get(site)
        return local if local is not None and local.fresh(time.time()) else None

    async def load(self, site: str) -> RobotsEntry | None:
        self.write_back.start()
        local = self.local.get(site)
        if local is not None and local.fresh(time.time()):
            return local
        try:
            entry = await self._read(site)
        except FleetUnavailable:
            self._inc("fallback")
            return local
        if entry is None:
            return local
        if entry.fresh(time.time()):
            self._inc("hit")
            self.local.put(entry)
        return entry

    async def _read(self, site: str) -> RobotsEntry | None:
        """The fleet's entry for ``site``, fresh or not. Raises :class:`FleetUnavailable`."""
        # Both forms in one round trip (two commands): a miss, the first visit of every
        # site, costs no second round trip, and an earlier version's record is found.

        def build(pipe: Any) -> None:
            pipe.get(self._key(site))
            pipe.hgetall(self._old_key(site))

        packed, raw = await self.link.call(self.link.piped(build))
        try:
            if packed is not None:
                entry = unpack(packed)
            elif raw and b"meta" in raw:
                body = raw.get(b"body")
                entry = entry_from_record(raw[b"meta"], body if isinstance(body, bytes) else None)
            else:
                return None
        except ValueError:
            logger.warning("Ignoring a malformed robots.txt record for %(site)s in Redis", {"site": site})
            return None
        return entry if entry.site == site else None

    async def _load_fresh(self, site: str) -> RobotsEntry | None:
        entry = await self._read(site)
        if entry is None or not entry.fresh(time.time()):
            return None
        self._inc("hit")
        self.local.put(entry)
        return entry

    # -- writing ------------------------------------------------------------------

    async def save(self, entry: RobotsEntry) -> None:
        """Keep ``entry`` here and share it; while Redis is away, it is shared as soon as
        Redis answers again (the write-back of what could not be shared)."""
        await self._save(entry)

    async def _save(self, entry: RobotsEntry) -> bool:
        """``save``; whether the entry is shared now."""
        self.write_back.start()
        value = pack(entry)
        self.local.put_packed(entry.site, value)
        try:
            await self._publish(entry, value)
        except FleetUnavailable:
            self._inc("fallback")
            self.write_back.unshared(entry.site)
            return False
        return True

    def _value(self, entry: RobotsEntry, value: bytes | None = None) -> tuple[bytes, int]:
        """The record's value (the packed entry), and the key's TTL in ms."""
        ttl_ms = int((max(entry.expires_at - time.time(), 0) + self.keep_after_expiry) * 1000)
        return pack(entry) if value is None else value, ttl_ms

    async def _publish(self, entry: RobotsEntry, value: bytes | None = None) -> None:
        """Share ``entry`` (packed: ``value``) with the fleet. Raises :class:`FleetUnavailable`."""
        value, ttl_ms = self._value(entry, value)
        await self.link.call(self.link.client.set, self._key(entry.site), value, px=max(ttl_ms, 1))

    # -- one fetch per site for the fleet -------------------------------------------

    async def fetch_once(self, site: str, fetch: Callable[[], Awaitable[RobotsEntry]]) -> RobotsEntry:
        """Run ``fetch`` under the site's fleet lock (:mod:`scrapy_robots.fleet.lock`),
        or wait for the crawler that holds it and return its entry."""
        self.write_back.start()

        async def fetch_and_save() -> RobotsEntry:
            entry = await fetch()
            if not await self._save(entry):
                self.lock.keep(self._key(site))  # the waiters wait for the record, shared later
            return entry

        try:
            return await self.lock.run(site, self._key(site), fetch_and_save, self._load_fresh)
        except FleetUnavailable:
            self._inc("fallback")
            entry = await fetch()
            await self.save(entry)  # shared now, or when Redis answers again
            return entry


def _stop_crawl(crawler: Crawler) -> None:
    """Close the crawl once it runs (a mismatch found at start-up closes it from
    ``_verify_at_start``); the calls in flight meanwhile fall back to local behaviour."""
    engine = crawler.engine
    if engine is None or not engine.running or crawler.spider is None:
        return
    deferred_from_coro(engine.close_spider_async(reason=MISCONFIGURED))
