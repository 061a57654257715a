"""RedisRobotsStorage: one robots.txt cache for the whole fleet.

What is shared is data: the robots.txt body (already capped at ROBOTSTXT_MAXSIZE and
re-encoded as UTF-8) and a JSON record of the outcome (status, action, URL after
redirects, fetch time, expiry, failures). Never pickle: a crawler must not execute
what it reads from Redis. Each crawler parses the body with its own ROBOTSTXT_PARSER
(the middleware's hot tier) and keeps the same compact tier as the embedded storage
(:class:`~scrapy_robots.cache.MemoryRobotsStorage`, ``ROBOTSTXT_CACHE_SIZE`` sites) in
front of Redis. While Redis is unreachable, the storage is that local tier alone.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy_robots.cache import MemoryRobotsStorage, RobotsEntry, RobotsStorage
from scrapy_robots.cache.entry import entry_from_record, record_of, unpack
from scrapy_robots.fleet.link import FleetUnavailable, RedisLink
from scrapy_robots.fleet.lock import FetchLock
from scrapy_robots.fleet.pacing import RedisPacer, Reservation
from scrapy_robots.fleet.writeback import RecordsWriteBack
from scrapy_robots.settings.config import RobotsConfig

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

# A record outlives its expiry by this much so that a failed refetch can keep using
# the last good body (RFC 9309 2.4) and the failure count carries on.
KEEP_AFTER_EXPIRY = 2 * 24 * 3600.0


class LocalTier(MemoryRobotsStorage):
    """The compact tier in front of Redis, which can also list what it holds (for the
    write-back after Redis lost the records)."""

    def entries(self) -> Iterator[RobotsEntry]:
        """Every entry held, least recently used first, without touching their order."""
        for blob in list(self._packed.values()):
            try:
                yield unpack(blob)
            except ValueError:
                continue


class RedisRobotsStorage(RobotsStorage):
    """``ROBOTSTXT_CACHE_STORAGE = "scrapy_robots.fleet.RedisRobotsStorage"``."""

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
    ):
        self.local = LocalTier(max_entries)
        self.link = link
        self.prefix = prefix
        self.stats = stats
        self.pacing = pacing
        self.pacing_margin = pacing_margin
        self.pacing_outage = pacing_outage
        self.lock = FetchLock(link, lock_ttl, lock_wait, self._inc)
        self.write_back = RecordsWriteBack(link, prefix, self.local.entries, self._key, self._fields, self._add)

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
        link = RedisLink(fleet.redis_url, fleet.timeout, stats=crawler.stats, connections=fleet.connections)
        return cls(
            link,
            fleet.prefix,
            config.cache_size,
            lock_ttl=fleet.lock_ttl,
            lock_wait=fleet.lock_wait,
            stats=crawler.stats,
            pacing=fleet.pacing,
            pacing_margin=fleet.pacing_margin,
            pacing_outage=fleet.outage,
        )

    def pacer(self) -> FleetPacer | None:
        """The fleet's pace, unless ROBOTSTXT_FLEET_PACING is off."""
        if not self.pacing:
            return None
        pacer = RedisPacer(self.link, self.prefix, uuid.uuid4().hex)
        return FleetPacer(pacer, self._inc, self.pacing_margin, self.pacing_outage)

    async def close(self) -> None:
        self.write_back.stop()
        await self.link.close()

    def _key(self, site: str) -> str:
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
        raw = await self.link.call(self.link.client.hgetall, self._key(site))
        if not raw or b"meta" not in raw:
            return None
        try:
            body = raw.get(b"body")
            entry = entry_from_record(raw[b"meta"], body if isinstance(body, bytes) else None)
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
        self.write_back.start()
        self.local.put(entry)
        try:
            await self._publish(entry)
        except FleetUnavailable:
            self._inc("fallback")

    def _fields(self, entry: RobotsEntry) -> tuple[dict[Any, Any], int]:
        """The record's hash fields, and the key's TTL in ms."""
        mapping: dict[Any, Any] = {"meta": record_of(entry)}
        if entry.body is not None:
            mapping["body"] = entry.body
        return mapping, int(max(entry.expires_at - time.time(), 0) + KEEP_AFTER_EXPIRY) * 1000

    async def _publish(self, entry: RobotsEntry) -> None:
        """Share ``entry`` with the fleet. Raises :class:`FleetUnavailable`."""
        mapping, ttl_ms = self._fields(entry)
        key = self._key(entry.site)
        pipe = self.link.client.pipeline(transaction=True)
        pipe.hset(key, mapping=mapping)
        pipe.pexpire(key, ttl_ms)
        await self.link.call(pipe.execute)

    # -- one fetch per site for the fleet -------------------------------------------

    async def fetch_once(self, site: str, fetch: Callable[[], Awaitable[RobotsEntry]]) -> RobotsEntry:
        """Run ``fetch`` under the site's fleet lock (:mod:`scrapy_robots.fleet.lock`),
        or wait for the crawler that holds it and return its entry."""
        self.write_back.start()

        async def fetch_and_save() -> RobotsEntry:
            entry = await fetch()
            await self.save(entry)
            return entry

        try:
            return await self.lock.run(site, self._key(site), fetch_and_save, self._load_fresh)
        except FleetUnavailable:
            self._inc("fallback")
            entry = await fetch()
            self.local.put(entry)
            return entry


#: Seconds after Redis answers again during which this crawler still keeps to its own
#: turns of the outage (ROBOTSTXT_FLEET_OUTAGE = "spread"): the other crawlers may still
#: be on theirs until their own next try of Redis (the link's backoff, up to 30 s).
REJOIN = 30.0


@dataclass(frozen=True)
class Turns:
    """This crawler's share of a slot's time while the fleet cannot agree through Redis:
    turns one interval long on Redis's clock as last seen (``offset``: its seconds since
    the pace's epoch minus ours), every ``crawlers``-th one, at ``rank``."""

    offset: float
    crawlers: int
    rank: int

    def next(self, at: float, interval: float) -> float:
        """The first of this crawler's turns at or after ``at`` (our clock)."""
        period = self.crawlers * interval
        phase = self.rank * interval
        return math.ceil((at + self.offset - phase) / period - 1e-9) * period + phase - self.offset


class FleetPacer:
    """The :class:`~scrapy_robots.cache.SitePacer` of the fleet: Redis reservations per
    downloader slot, and what this crawler does while Redis is away
    (ROBOTSTXT_FLEET_OUTAGE, :meth:`outage_wait`). Each delay is lengthened by ``margin``
    (ROBOTSTXT_FLEET_PACING_MARGIN): the crawlers' starts are reserved on Redis's clock
    but happen on theirs."""

    def __init__(
        self,
        redis: RedisPacer,
        count: Callable[[str], None],
        margin: float = 0.0,
        outage: str = "spread",
        clock: Callable[[], float] = time.monotonic,
    ):
        self.redis = redis
        self.count = count
        self.margin = margin
        self.outage = outage
        self.clock = clock
        #: What the last reservation said of the fleet: the live crawlers, this one's
        #: rank among them, and Redis's clock (seconds since the epoch) minus ours.
        self.crawlers = 1
        self.rank = 0
        self.offset: float | None = None
        #: When Redis was first found away in the current outage (our clock), else None.
        self.away_since: float | None = None
        #: This crawler's turns during an outage and for REJOIN seconds after it ("spread").
        self.turns: Turns | None = None
        self.turns_until = 0.0

    async def reserve(self, slot: str, delay: float, not_before: float = 0.0, raised: float = 0.0) -> float | None:
        """The seconds to wait for the slot's next start (None while Redis is away);
        ``raised``: this crawler's "slow down" floor (scrapy_robots.pace.backoff)."""
        interval = delay + self.margin
        try:
            wait = await self._reserve(slot, interval, not_before, raised + self.margin if raised > 0 else 0.0)
        except FleetUnavailable:
            self.count("fallback")
            self._away()
            return None
        self.count("paced")
        return wait

    async def _reserve(self, slot: str, interval: float, not_before: float, raised: float = 0.0) -> float:
        turns = self.turns if self.turns is not None and self.clock() < self.turns_until else None
        step = max(interval, raised)
        for _ in range(4):
            if turns is not None:
                # Rejoining: a start on one of this crawler's turns, so that it cannot meet
                # the turns of a crawler that still paces without Redis.
                now = self.clock()
                not_before = turns.next(now + not_before, step) - now
            reservation = await self.redis.reserve(slot, interval, not_before, self.crawlers * step, raised)
            self._learn(reservation)
            if turns is None or reservation.wait <= not_before + 1e-3:
                break
            not_before = reservation.wait  # another crawler holds that turn: the next one
        return reservation.wait

    def _learn(self, reservation: Reservation) -> None:
        offset = reservation.fleet_time - self.clock()
        if self.away_since is not None:
            self.away_since = None
            if self.turns is not None:
                self.turns_until = self.clock() + REJOIN
            logger.info("The fleet's pace resumes: each slot's turns are reserved in Redis again")
        if self.offset is not None and offset < self.offset - 1.0:
            # Redis's clock since the epoch went back: the pace state began anew.
            self.count("pace_reset")
            logger.warning(
                "The fleet's pace state in Redis is gone (FLUSHALL, or Redis restarted empty): each slot's next "
                "start waits %(crawlers)d x its delay after that, past the reservations given before",
                {"crawlers": self.crawlers},
            )
        self.crawlers, self.rank, self.offset = reservation.crawlers, reservation.rank, offset

    def _away(self) -> None:
        if self.away_since is not None:
            return
        self.away_since = self.clock()
        if self.outage == "spread" and self.offset is not None and self.crawlers > 1:
            if self.turns is None or self.clock() >= self.turns_until:
                self.turns = Turns(self.offset, self.crawlers, self.rank)
            self.turns_until = math.inf
        what = {
            "spread": "paces each slot at its delay x the %(crawlers)d crawler(s) it last saw, on its own turns",
            "hold": "holds each slot's requests until Redis answers",
            "alone": "paces each slot alone, at its delay",
        }[self.outage]
        logger.warning(
            f"The fleet's pace cannot be reserved in Redis: this crawler {what} (ROBOTSTXT_FLEET_OUTAGE = %(outage)r)",
            {"crawlers": self.crawlers, "outage": self.outage},
        )

    def outage_wait(self, delay: float, not_before: float) -> float | None:
        """While Redis is away: the seconds until this crawler may start its next request
        of a slot (``not_before``: what its own slot still needs), or None to hold it.

        "spread": the slot's time is cut in turns of one interval, on Redis's clock as
        last seen, and this crawler takes every ``crawlers``-th one, at its rank: the
        crawlers that last saw each other take turns apart without speaking, and the
        slot sees the fleet's rate. The first turn comes ``crawlers`` intervals after
        Redis went away, past the reservations given before. "alone": the local pace."""
        if self.outage == "hold":
            self.count("held")
            return None
        self.count("outage_paced")
        if self.turns is None or self.away_since is None:
            # "alone", or no other crawler seen: the local pace, with the fleet's margin
            # (its starts reach the server as late as the reservations' do).
            return not_before + self.margin
        interval = delay + self.margin
        now = self.clock()
        earliest = max(now + not_before, self.away_since + self.turns.crawlers * interval)
        return max(self.turns.next(earliest, interval) - now, 0.0)

    async def mark_start(self, slot: str, delay: float, ago: float) -> bool | None:
        interval = delay + self.margin
        try:
            await self.redis.mark_start(slot, interval, ago, self.crawlers * interval)
        except FleetUnavailable:
            self.count("fallback")
            return None
        return True

    async def pause(self, slot: str, delay: float, seconds: float) -> bool | None:
        """A "slow down" for every crawler of the fleet (scrapy_robots.pace.backoff)."""
        try:
            await self.redis.pause(slot, delay + self.margin, seconds)
        except FleetUnavailable:
            self.count("fallback")
            return None
        self.count("paused")
        return True

    async def pauses(self) -> list[tuple[str, float, float]] | None:
        """The slots paused now, fleet-wide: (slot, seconds left, delay); None while Redis is away."""
        try:
            found = await self.redis.pauses()
        except FleetUnavailable:
            return None
        return [(slot, left, max(interval - self.margin, 0.0)) for slot, left, interval in found]
