"""A site's delay enforced across every crawler of the fleet.

:class:`RedisPacer` keeps the pace in Redis; :class:`SharedPacing` is the middleware's
pacing call (:mod:`scrapy_robots.pacing`) when the storage shares a pace.

Each request reserves the next start time of its site in one atomic Lua script that
reads Redis's clock (``TIME``), so the crawlers' own clocks never matter: a
reservation is ``max(now, next free time)``, and the next free time moves one delay
later. The crawler then waits until its reserved time, outside the downloader's
concurrency (see :mod:`scrapy_robots.slots`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import maybe_deferred_to_future

from scrapy_robots.fleet.link import RedisLink
from scrapy_robots.pacing import SitePacing
from scrapy_robots.waiting import timer

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsEntry, SitePacer
    from scrapy_robots.fetch import FetchResult
    from scrapy_robots.slots import SlotPacer
    from scrapy_robots.waiting import WaitingRoom

# KEYS[1]: the site's next free start time (microseconds, Redis clock)
# ARGV[1]: the delay in microseconds
# ARGV[2]: the least wait the crawler needs (microseconds, relative: no clock is compared)
# Returns the microseconds to wait before starting.
RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local free = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(now + tonumber(ARGV[2]), free)
local nxt = start + interval
redis.call('SET', KEYS[1], string.format('%d', nxt), 'PX', math.floor((nxt - now) / 1000) + 60000)
return start - now
"""


# A start that already happened (the robots.txt fetch) ARGV[2] microseconds ago:
# the next free start is at least one delay after it.
MARK = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nxt = now - tonumber(ARGV[2]) + tonumber(ARGV[1])
local free = tonumber(redis.call('GET', KEYS[1]) or '0')
if nxt > free then
  redis.call('SET', KEYS[1], string.format('%d', nxt), 'PX', math.floor(math.max(nxt - now, 0) / 1000) + 60000)
end
return 0
"""


class RedisPacer:
    def __init__(self, link: RedisLink, prefix: str):
        self.link = link
        self.prefix = prefix
        self._script: Any = link.client.register_script(RESERVE)
        self._mark: Any = link.client.register_script(MARK)

    async def reserve(self, site: str, delay: float, not_before: float = 0.0) -> float:
        """Reserve the site's next start, at least ``not_before`` seconds from now;
        return the seconds to wait for it. Raises
        :class:`~scrapy_robots.fleet.link.FleetUnavailable`."""
        waited = await self.link.call(
            self._script,
            keys=[f"{self.prefix}:pace:{site}"],
            args=[int(delay * 1_000_000), int(not_before * 1_000_000)],
        )
        return int(waited) / 1_000_000

    async def mark_start(self, site: str, delay: float, ago: float) -> None:
        """Count a request that started ``ago`` seconds ago (the robots.txt fetch, which
        the fleet did not reserve) in the site's pace. Raises FleetUnavailable."""
        await self.link.call(
            self._mark, keys=[f"{self.prefix}:pace:{site}"], args=[int(delay * 1_000_000), int(ago * 1_000_000)]
        )


class SharedPacing(SitePacing):
    """The pace of a site shared with other crawlers (a storage's
    :class:`~scrapy_robots.cache.SitePacer`, the fleet's Redis reservations): each
    request waits for its turn in the shared pace, outside the downloader's
    concurrency; the local slot paces alone while the shared pace cannot be had."""

    def __init__(self, crawler: Crawler, slots: SlotPacer, shared: SitePacer, room: WaitingRoom):
        super().__init__(crawler, slots)
        self.shared = shared
        self.room = room

    def pace(self, entry: RobotsEntry, request: Request) -> Awaitable[None]:
        return self._pace(entry, request)

    async def _pace(self, entry: RobotsEntry, request: Request) -> None:
        if not await self._take_turn(entry, request):
            super().pace(entry, request)

    async def _take_turn(self, entry: RobotsEntry, request: Request) -> bool:
        """Wait for the site's turn in the shared pace; False when it cannot be had now."""
        delay = entry.delay.applied if entry.delay is not None and entry.delay.applied is not None else 0.0
        floor = max(delay, self.slots.user_delay(request))
        if floor <= 0:
            return False
        # After an outage, requests paced locally meanwhile come first.
        not_before = self.slots.fleet_handover(request, floor)
        if not_before is None:
            return False
        wait = await self.shared.reserve(entry.site, floor, not_before)
        if wait is None:
            return False
        # The fleet's reservation is the site's pace; the local slot only keeps this
        # crawler's own starts a floor apart, without jitter (see slots.py).
        self.slots.apply_fleet_pacing(request, floor)
        if wait > 0:
            if self.room.full():
                await maybe_deferred_to_future(timer(wait))
            else:
                await self.room.wait(request, entry.site, "waiting for its turn in the fleet's pace", timer(wait))
        return True

    def fetched(self, entry: RobotsEntry, result: FetchResult) -> Awaitable[object] | None:
        if entry.delay is None or entry.delay.applied is None or result.response is None:
            return None  # no delay, or a skipped site (none of its requests go)
        # The robots.txt fetch was the site's first request: the shared pace counts it.
        return self.shared.mark_start(entry.site, entry.delay.applied, time.monotonic() - result.started)
