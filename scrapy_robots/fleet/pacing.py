"""A downloader slot's delay enforced across every crawler of the fleet.

:class:`RedisPacer` keeps the pace in Redis; :class:`SharedPacing` is the middleware's
pacing call (:mod:`scrapy_robots.pace.pacing`) when the storage shares a pace.

The pace is one per downloader slot as Scrapy keys it (the host name, or the request's
``download_slot``), so sites on ports of one host share it, as they share the slot. Each
request reserves the slot's next start in one atomic Lua script that reads Redis's clock
(``TIME``), so the crawlers' own clocks never matter: a start is at least the slot's
interval after the last one reserved, the interval being the largest any crawler asked
for the slot lately (different crawlers may know different sites of one host).

A crawler lets one request per slot reserve at a time (the others wait in line behind
it, in this crawler), so it holds at most one reservation of a slot not yet started:
when the pace state is lost (a FLUSHALL, Redis restarted empty) or cannot be had (Redis
away), the reservations given before it all lie within a few delays, one per crawler.
A request waiting for its turn keeps its place in the downloader's
``CONCURRENT_REQUESTS``, as a request queued in a slot for its delay does in Scrapy: a
crawler takes no more requests out of a shared queue than it can download.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy_robots.cache.storage import SharedPauses
from scrapy_robots.fleet.link import RedisLink
from scrapy_robots.pace.pacing import PAUSED, SitePacing
from scrapy_robots.pace.slots import engine_closing
from scrapy_robots.pace.waiting import CrawlClosing

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsEntry, SitePacer
    from scrapy_robots.pace.slots import SlotPacer
    from scrapy_robots.pace.waiting import WaitingRoom
    from scrapy_robots.policyfiles.fetch import FetchResult

#: A slot's pace state outlives its last reserved start by this much (seconds): a key
#: found missing is then a lost state (FLUSHALL, empty restart), not an idle slot.
PACE_KEEP = 3600
#: A slot's interval comes down to a smaller one asked only after no crawler asked the
#: larger one for this long (seconds).
INTERVAL_KEEP = 600
#: A crawler counts as live while its last reservation is younger than this (seconds).
HEARTBEAT = 30
#: Seconds between two looks at the engine (is the crawl closing?) while a request waits.
WATCH_INTERVAL = 0.25
#: Seconds between two tries of a request held while Redis is away (ROBOTSTXT_FLEET_OUTAGE = "hold").
HOLD_RETRY = 0.25
TURN = "waiting for its turn in the fleet's pace"

# The fleet's clock and the state of a slot's pace, shared by both scripts.
# KEYS[1]: the slot's pace, a hash: last reserved start, interval, when the interval was
#          last asked (microseconds, Redis clock)
# KEYS[2]: the epoch: when this pace state began (a FLUSHALL or an empty restart begins a new one)
# ARGV[1]: the interval this crawler asks for the slot, in microseconds
# ARGV[2]: the wait when the slot's state is missing (microseconds after the epoch):
#          reservations given before the state was lost must have passed
_STATE = f"""
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local epoch = tonumber(redis.call('GET', KEYS[2]) or '0')
if epoch == 0 then
  epoch = now
  redis.call('SET', KEYS[2], string.format('%d', now))
end
local asked = tonumber(ARGV[1])
local state = redis.call('HMGET', KEYS[1], 'last', 'interval', 'asked_at')
local interval = tonumber(state[2] or '0')
local asked_at = tonumber(state[3] or '0')
if asked >= interval or now - asked_at > {INTERVAL_KEEP * 1_000_000} then
  interval = asked
  asked_at = now
end
local function save(last)
  redis.call('HSET', KEYS[1], 'last', string.format('%d', last), 'interval', string.format('%d', interval),
             'asked_at', string.format('%d', asked_at))
  redis.call('PEXPIRE', KEYS[1], math.floor(math.max(last - now, 0) / 1000) + {PACE_KEEP * 1000})
end
"""

# ARGV[3]: the least wait this crawler needs (microseconds, relative: no clock is compared)
# ARGV[4]: this crawler's id, for the heartbeats (KEYS[3], a sorted set)
# Returns {microseconds to wait, live crawlers, this crawler's rank among them,
#          Redis time since the epoch (microseconds), 1 if the slot's state was missing}
RESERVE = (
    _STATE
    + f"""
local start = now + tonumber(ARGV[3])
local missing = 0
-- ARGV[5]: this crawler's "slow down" floor, not kept: its start comes that long after the last
local step = math.max(interval, tonumber(ARGV[5] or '0'))
if state[1] then
  start = math.max(start, tonumber(state[1]) + step)
else
  start = math.max(start, epoch + tonumber(ARGV[2]))
  missing = 1
end
save(start)
redis.call('ZADD', KEYS[3], now, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - {HEARTBEAT * 1_000_000})
redis.call('PEXPIRE', KEYS[3], {HEARTBEAT * 1000})
local live = redis.call('ZRANGE', KEYS[3], 0, -1)
table.sort(live)
local rank = 0
for i, id in ipairs(live) do
  if id == ARGV[4] then rank = i - 1 end
end
return {{start - now, #live, rank, now - epoch, missing}}
"""
)

# A start that already happened (the robots.txt fetch) ARGV[3] microseconds ago.
MARK = (
    _STATE
    + """
local started = now - tonumber(ARGV[3])
if state[1] then
  save(math.max(started, tonumber(state[1])))
else
  save(math.max(started, epoch + tonumber(ARGV[2]) - interval))
end
return 0
"""
)


# A "slow down" (scrapy_robots.pace.backoff): no start of the slot before ARGV[3] microseconds
# from now; the slot is listed in KEYS[3] (a sorted set: slot -> end of its pause, Redis
# clock), which every crawler reads each second (PAUSES) for the slots it does not pace
# through the fleet.
PAUSE = (
    _STATE
    + f"""
local ends = now + tonumber(ARGV[3])
save(math.max(tonumber(state[1] or '0'), ends))
redis.call('HSET', KEYS[1], 'paused_floor', ARGV[5])
if ends > tonumber(redis.call('ZSCORE', KEYS[3], ARGV[4]) or '0') then
  redis.call('ZADD', KEYS[3], ends, ARGV[4])
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('PEXPIRE', KEYS[3], math.floor((ends - now) / 1000) + {PACE_KEEP * 1000})
return 0
"""
)

# The slots paused now: {slot, microseconds left, the pause's floor, ...}. KEYS[1]: the set of
# pauses; ARGV[1]: the prefix of the slots' pace hashes.
PAUSES = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local found = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local out = {}
for i = 1, #found, 2 do
  local interval = redis.call('HGET', ARGV[1] .. found[i], 'paused_floor') or '0'
  table.insert(out, found[i])
  table.insert(out, tonumber(found[i + 1]) - now)
  table.insert(out, tonumber(interval))
end
return out
"""


@dataclass(frozen=True)
class Reservation:
    wait: float  #: seconds until the reserved start
    crawlers: int  #: live crawlers of the fleet (this one included)
    rank: int  #: this crawler's place among them (0 to crawlers - 1), the same in every crawler's view
    fleet_time: float  #: Redis's clock, in seconds since the pace state's epoch
    lost: bool  #: the slot's pace state was missing


class RedisPacer:
    def __init__(self, link: RedisLink, prefix: str, crawler_id: str):
        self.link = link
        self.prefix = prefix
        self.crawler_id = crawler_id
        self._script: Any = link.client.register_script(RESERVE)
        self._mark: Any = link.client.register_script(MARK)
        self._pause: Any = link.client.register_script(PAUSE)
        self._pauses: Any = link.client.register_script(PAUSES)

    def _keys(self, slot: str) -> list[str]:
        return [f"{self.prefix}:slotpace:{slot}", f"{self.prefix}:pace-epoch", f"{self.prefix}:crawlers"]

    async def reserve(
        self, slot: str, interval: float, not_before: float, unknown: float, raised: float = 0.0
    ) -> Reservation:
        """Reserve the slot's next start, at least ``not_before`` seconds from now, and at
        least ``unknown`` seconds after the epoch if the slot's state is missing; ``raised``:
        this crawler's "slow down" interval, which spaces this start only (not kept). Raises
        :class:`~scrapy_robots.fleet.link.FleetUnavailable`."""
        wait, crawlers, rank, fleet_time, lost = await self.link.call(
            self._script,
            keys=self._keys(slot),
            args=[_micro(interval), _micro(unknown), _micro(not_before), self.crawler_id, _micro(raised)],
        )
        return Reservation(int(wait) / 1e6, int(crawlers), int(rank), int(fleet_time) / 1e6, bool(lost))

    async def mark_start(self, slot: str, interval: float, ago: float, unknown: float) -> None:
        """Count a request that started ``ago`` seconds ago (the robots.txt fetch, which
        the fleet did not reserve) in the slot's pace. Raises FleetUnavailable."""
        await self.link.call(
            self._mark, keys=self._keys(slot)[:2], args=[_micro(interval), _micro(unknown), _micro(ago)]
        )

    async def pause(self, slot: str, interval: float, seconds: float) -> None:
        """No start of the slot for ``seconds`` (a "slow down"), for every crawler; its
        interval at least ``interval`` (the raised delay). Raises FleetUnavailable."""
        keys = [*self._keys(slot)[:2], f"{self.prefix}:pauses"]
        # Asking no interval: the pause's floor is not the slot's kept interval (it comes back in steps).
        await self.link.call(self._pause, keys=keys, args=[0, 0, _micro(seconds), slot, _micro(interval)])

    async def pauses(self) -> list[tuple[str, float, float]]:
        """The slots paused now: (slot, seconds left, interval). Raises FleetUnavailable."""
        found = await self.link.call(self._pauses, keys=[f"{self.prefix}:pauses"], args=[f"{self.prefix}:slotpace:"])
        return [(_text(found[i]), int(found[i + 1]) / 1e6, int(found[i + 2]) / 1e6) for i in range(0, len(found), 3)]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _micro(seconds: float) -> int:
    return int(max(seconds, 0.0) * 1_000_000)


class SharedPacing(SitePacing):
    """The pace of a downloader slot shared with other crawlers (a storage's
    :class:`~scrapy_robots.cache.SitePacer`, the fleet's Redis reservations): each
    request waits for its turn in the shared pace, one request per slot at a time,
    keeping its download place; while the shared pace cannot be had, the pacer says
    when the request may start (``outage_wait``), or the local slot paces alone."""

    def __init__(self, crawler: Crawler, slots: SlotPacer, shared: SitePacer, room: WaitingRoom):
        super().__init__(crawler, slots, room)
        self.shared = shared
        # A pacer that shares the slots' "slow down" pauses too (the fleet's Redis pacer).
        self._pauses = shared if isinstance(shared, SharedPauses) else None
        # A pacer without an outage schedule: the local slot paces alone meanwhile.
        self._outage_wait: Callable[[float, float], float | None] | None = getattr(shared, "outage_wait", None)
        # slot key -> [the lock of its line, requests in it]
        self._lines: dict[str, list[Any]] = {}

    def pace(self, entry: RobotsEntry, request: Request) -> Awaitable[None]:
        if self.paused and self.pause_left(request) > 0:  # as SitePacing.pace
            return self._after_pause(entry, request)
        return self._turn(entry, request)

    async def _after_pause(self, entry: RobotsEntry, request: Request) -> None:
        """The slot's pause, in its line outside the downloader, then the fleet's turn."""
        paused = self.lines.turn(request, entry.site, PAUSED)
        if paused is not None:
            await paused
        await self._turn(entry, request)

    async def _local_turn(self, entry: RobotsEntry, request: Request) -> None:
        """The local slot paces this request (the fleet's pace unknown or not needed)."""
        turn = super()._turn(entry, request)
        if turn is not None:
            await turn

    async def _turn(self, entry: RobotsEntry, request: Request) -> None:
        delay = entry.delay.applied if entry.delay is not None and entry.delay.applied is not None else 0.0
        key, base = self.slots.fleet_floor(request, entry.site, delay)
        raised = self.slots.slowed_floor(key)  # a "slow down": reserved apart, coming back in steps
        floor = max(base, raised)
        if floor <= 0:
            await self._local_turn(entry, request)
            return
        with self.slots.holding_slot(request):
            line = self._lines.setdefault(key, [asyncio.Lock(), 0])
            line[1] += 1
            try:
                await self._enter(line[0], entry.site)
                try:
                    await self._take_turn(key, delay, entry, request)
                finally:
                    line[0].release()
            finally:
                line[1] -= 1
                if not line[1]:
                    del self._lines[key]

    async def _take_turn(self, key: str, delay: float, entry: RobotsEntry, request: Request) -> None:
        # Read at the head of the line, not when the request joined it: a "slow down"
        # floor comes back in steps meanwhile.
        _, base = self.slots.fleet_floor(request, entry.site, delay)
        raised = self.slots.slowed_floor(key)
        floor = max(base, raised)
        # After an outage paced by the local slot, its queued requests come first.
        not_before = self.slots.fleet_handover(request, floor)
        if not_before is None:
            await self._local_turn(entry, request)
            return
        wait = await self.shared.reserve(key, base, not_before, raised)
        if wait is None and self._outage_wait is not None:
            wait = self._outage_wait(floor, not_before)
            while wait is None:  # held until Redis answers (ROBOTSTXT_FLEET_OUTAGE = "hold")
                await self._sleep(HOLD_RETRY, entry.site)
                not_before = self.slots.fleet_handover(request, floor) or 0.0
                wait = await self.shared.reserve(key, base, not_before, raised)
        if wait is None:
            await self._local_turn(entry, request)
            return
        # The fleet's reservation is the slot's pace; the local slot only keeps this
        # crawler's own starts a floor apart, without jitter (see pace/slots.py).
        self.slots.apply_fleet_pacing(request, floor)
        await self._sleep(wait, entry.site)

    async def _sleep(self, seconds: float, site: str) -> None:
        end = time.monotonic() + seconds
        while True:
            self._check_closing(site)
            left = end - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(left, WATCH_INTERVAL))

    async def _enter(self, lock: asyncio.Lock, site: str) -> None:
        """Take the slot's line ``lock``, unless the crawl starts closing first."""
        acquire = asyncio.ensure_future(lock.acquire())
        try:
            while not acquire.done():
                self._check_closing(site)
                await asyncio.wait({acquire}, timeout=WATCH_INTERVAL)
        except BaseException:
            if acquire.done() and not acquire.cancelled() and acquire.exception() is None:
                lock.release()
            else:
                acquire.cancel()
            raise

    def _check_closing(self, site: str) -> None:
        if self.room.closing or engine_closing(self.crawler):
            raise CrawlClosing(site, TURN)

    def pauses(self) -> SharedPauses | None:
        return self._pauses

    def fetched(self, entry: RobotsEntry, result: FetchResult) -> Awaitable[object] | None:
        if entry.delay is None or entry.delay.applied is None or result.response is None:
            return None  # no delay, or a skipped site (none of its requests go)
        # The robots.txt fetch was the site's first request: the shared pace counts it.
        key = self.slots.site_slot_key(entry.site)
        return self.shared.mark_start(key, entry.delay.applied, time.monotonic() - result.started)
