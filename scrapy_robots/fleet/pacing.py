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

The keys are sharded so that a Redis Cluster can serve them (``ROBOTSTXT_REDIS_CLUSTER``):
every script's keys carry one hash tag, and no key is touched by every reservation.

- A slot's pace lives in one of ``PACE_SHARDS`` shards (CRC-32 of the slot), beside that
  shard's epoch (when its state began) and heartbeats (the crawlers live in it):
  ``<prefix>:pace:{k}:<slot>``, ``<prefix>:pace-epoch:{k}``, ``<prefix>:crawlers:{k}``. An
  epoch on the node of the paces it guards lives and dies with them: a node restarted
  empty resets exactly its shards, and the crawlers see it by the epoch each reservation
  returns (a new value is a reset; clocks are not compared, so a busy event loop is none).
  What a crawler knows of the fleet for its outage turns (the crawlers, its rank, Redis's
  clock) is per shard too: the crawlers that pace a slot are those that reserve in its shard.
- A "slow down" pauses the slot in its pace (every reservation obeys it), then is listed in
  one of ``PAUSE_SHARDS`` pause shards (``<prefix>:pauses:{j}``), its floor beside it, which
  every crawler reads in one pipeline (one round trip per node). The two writes are not
  atomic together: see :meth:`RedisPacer.pause`.

256 pace shards spread over a cluster's primaries (about 85 each on 3), few enough that an
epoch or a heartbeat set is shared by many slots (each crawler learns the fleet in every
shard it uses), many enough that no shard is hot. 16 pause shards keep the poll at one
small pipeline per crawler every half second. One Redis runs the same keys and scripts.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy_robots.cache.storage import SharedPauses
from scrapy_robots.fleet.link import FleetUnavailable, RedisLink
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

logger = logging.getLogger(__name__)

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
#: The pace shards: a slot's pace lives with its shard's epoch and heartbeats under one
#: hash tag (one hash slot of a Redis Cluster), and no key is read by every reservation.
PACE_SHARDS = 256
#: The pause shards, each read by every crawler once per poll (one pipelined round trip).
PAUSE_SHARDS = 16
#: Seconds between two WARNINGs of a lost pace state: one loss is found shard by shard,
#: as the crawler next reserves in each (the stat counts every shard).
RESET_QUIET = 10.0


def shard_of(slot: str, shards: int) -> int:
    """The shard of a downloader slot: the same in every crawler (CRC-32, not ``hash``)."""
    return zlib.crc32(slot.encode("utf-8", "backslashreplace")) % shards


# The fleet's clock and the state of a slot's pace, shared by the pace scripts.
# KEYS[1]: the slot's pace, a hash: last reserved start, interval, when the interval was
#          last asked (microseconds, Redis clock)
# KEYS[2]: the shard's epoch: when its pace state began (a FLUSHALL or an empty restart
#          of its node begins a new one)
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
# ARGV[4]: this crawler's id, for the shard's heartbeats (KEYS[3], a sorted set)
# Returns {microseconds to wait, live crawlers of the shard, this crawler's rank among them,
#          Redis time since the epoch (microseconds), 1 if the slot's state was missing, the epoch}
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
return {{start - now, #live, rank, now - epoch, missing, epoch}}
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

# A "slow down" (scrapy_robots.pace.backoff): no start of the slot before ARGV[3]
# microseconds from now, in the slot's pace (what every reservation of the slot reads).
PAUSE = (
    _STATE
    + """
save(math.max(tonumber(state[1] or '0'), now + tonumber(ARGV[3])))
return 0
"""
)

# The same pause listed in its pause shard (KEYS[1], a hash: slot -> "<end> <floor>", on
# this node's clock), which every crawler reads (PAUSES) for the slots it does not pace
# through the fleet. ARGV: the slot, microseconds from now, the pause's floor (microseconds).
LIST_PAUSE = f"""
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ends = now + tonumber(ARGV[2])
local found = redis.call('HGET', KEYS[1], ARGV[1])
if found then
  ends = math.max(ends, tonumber(string.match(found, '^(%d+)')) or 0)
end
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d %d', ends, tonumber(ARGV[3])))
local keep = math.floor((ends - now) / 1000) + {PACE_KEEP * 1000}
if redis.call('PTTL', KEYS[1]) < keep then
  redis.call('PEXPIRE', KEYS[1], keep)
end
return 0
"""

# A pause shard's slots paused now: {slot, microseconds left, the pause's floor, ...}; the
# pauses that ended are dropped. KEYS[1]: the shard's hash.
PAUSES = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local found = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #found, 2 do
  local ends, floor = string.match(found[i + 1], '^(%d+) (%d+)$')
  ends = tonumber(ends)
  if ends == nil or ends <= now then
    redis.call('HDEL', KEYS[1], found[i])
  else
    table.insert(out, found[i])
    table.insert(out, ends - now)
    table.insert(out, tonumber(floor))
  end
end
return out
"""


@dataclass(frozen=True)
class Reservation:
    wait: float  #: seconds until the reserved start
    crawlers: int  #: live crawlers of the slot's shard (this one included)
    rank: int  #: this crawler's place among them (0 to crawlers - 1), the same in every crawler's view
    fleet_time: float  #: Redis's clock, in seconds since the shard's epoch
    lost: bool  #: the slot's pace state was missing
    epoch: int = 0  #: the shard's epoch: another value than last time is a pace state lost


class RedisPacer:
    """The fleet's pace in Redis: a slot's keys live in one of ``PACE_SHARDS`` shards."""

    def __init__(self, link: RedisLink, prefix: str, crawler_id: str):
        self.link = link
        self.prefix = prefix
        self.crawler_id = crawler_id
        self._script: Any = link.client.register_script(RESERVE)
        self._mark: Any = link.client.register_script(MARK)
        self._pause: Any = link.client.register_script(PAUSE)
        self._list_pause: Any = link.client.register_script(LIST_PAUSE)

    @staticmethod
    def shard(slot: str) -> int:
        return shard_of(slot, PACE_SHARDS)

    def _keys(self, slot: str) -> list[str]:
        tag = f"{{{self.shard(slot)}}}"  # one hash slot for the shard's keys
        return [f"{self.prefix}:pace:{tag}:{slot}", f"{self.prefix}:pace-epoch:{tag}", f"{self.prefix}:crawlers:{tag}"]

    def _pauses_key(self, shard: int) -> str:
        return f"{self.prefix}:pauses:{{{shard}}}"

    async def reserve(
        self, slot: str, interval: float, not_before: float, unknown: float, raised: float = 0.0
    ) -> Reservation:
        """Reserve the slot's next start, at least ``not_before`` seconds from now, and at
        least ``unknown`` seconds after the epoch if the slot's state is missing; ``raised``:
        this crawler's "slow down" interval, which spaces this start only (not kept). Raises
        :class:`~scrapy_robots.fleet.link.FleetUnavailable`."""
        wait, crawlers, rank, fleet_time, lost, epoch = await self.link.call(
            self._script,
            keys=self._keys(slot),
            args=[_micro(interval), _micro(unknown), _micro(not_before), self.crawler_id, _micro(raised)],
        )
        return Reservation(int(wait) / 1e6, int(crawlers), int(rank), int(fleet_time) / 1e6, bool(lost), int(epoch))

    async def mark_start(self, slot: str, interval: float, ago: float, unknown: float) -> None:
        """Count a request that started ``ago`` seconds ago (the robots.txt fetch, which
        the fleet did not reserve) in the slot's pace. Raises FleetUnavailable."""
        await self.link.call(
            self._mark, keys=self._keys(slot)[:2], args=[_micro(interval), _micro(unknown), _micro(ago)]
        )

    async def pause(self, slot: str, interval: float, seconds: float) -> None:
        """No start of the slot for ``seconds`` (a "slow down"), for every crawler; its
        interval at least ``interval`` (the raised delay). Raises FleetUnavailable.

        Two calls: the pause in the slot's pace (every reservation of the slot obeys it),
        then in its pause shard, which the crawlers read for the slots they pace alone.
        Not atomic, and need not be: if the second is lost (its node away, this crawler
        killed in between), the slot's fleet pace still holds the pause, and a crawler
        that paces the slot alone hears the site's own "slow down" at its next request."""
        await self.link.call(self._pause, keys=self._keys(slot)[:2], args=[0, 0, _micro(seconds)])
        await self.link.call(
            self._list_pause,
            keys=[self._pauses_key(shard_of(slot, PAUSE_SHARDS))],
            args=[slot, _micro(seconds), _micro(interval)],
        )

    async def pauses(self) -> list[tuple[str, float, float]]:
        """The slots paused now: (slot, seconds left, interval), every pause shard read
        in one pipeline (on a cluster, one round trip per node, in parallel). Raises
        FleetUnavailable."""
        pipe = self.link.client.pipeline(transaction=False)
        for shard in range(PAUSE_SHARDS):
            # EVAL, not EVALSHA: a pipeline cannot load a script that a node lost (restarted).
            pipe.eval(PAUSES, 1, self._pauses_key(shard))
        shards = await self.link.call(pipe.execute)
        return [
            (_text(found[i]), int(found[i + 1]) / 1e6, int(found[i + 2]) / 1e6)
            for found in shards
            for i in range(0, len(found), 3)
        ]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _micro(seconds: float) -> int:
    return int(max(seconds, 0.0) * 1_000_000)


#: Seconds after Redis answers again during which this crawler still keeps to its own
#: turns of the outage (ROBOTSTXT_FLEET_OUTAGE = "spread"): the other crawlers may still
#: be on theirs until their own next try of Redis (the link's backoff, up to 30 s).
REJOIN = 30.0


@dataclass(frozen=True)
class Turns:
    """This crawler's share of a slot's time while the fleet cannot agree through Redis:
    turns one interval long on Redis's clock as last seen (``offset``: its seconds since
    the shard's epoch minus ours), every ``crawlers``-th one, at ``rank``."""

    offset: float
    crawlers: int
    rank: int

    def next(self, at: float, interval: float) -> float:
        """The first of this crawler's turns at or after ``at`` (our clock)."""
        period = self.crawlers * interval
        phase = self.rank * interval
        return math.ceil((at + self.offset - phase) / period - 1e-9) * period + phase - self.offset


@dataclass(frozen=True)
class ShardView:
    """What the last reservation in a pace shard said of the fleet: the crawlers live in
    the shard, this one's rank among them, Redis's clock (seconds since the shard's
    epoch) minus ours, and the epoch."""

    crawlers: int
    rank: int
    offset: float
    epoch: int

    def turns(self) -> Turns:
        return Turns(self.offset, self.crawlers, self.rank)


class FleetPacer:
    """The :class:`~scrapy_robots.cache.SitePacer` of the fleet: Redis reservations per
    downloader slot, and what this crawler does while Redis is away
    (ROBOTSTXT_FLEET_OUTAGE, :meth:`outage_wait`). Each delay is lengthened by ``margin``
    (ROBOTSTXT_FLEET_PACING_MARGIN): the crawlers' starts are reserved on Redis's clock
    but happen on theirs. What the fleet is (the crawlers, this one's rank, Redis's
    clock) is learnt per pace shard, from the reservations made there."""

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
        #: pace shard -> what its last reservation said
        self.shards: dict[int, ShardView] = {}
        #: When Redis was first found away in the current outage (our clock), else None.
        self.away_since: float | None = None
        #: This crawler's turns per pace shard during an outage and for REJOIN seconds after it ("spread").
        self.turns: dict[int, Turns] = {}
        self.turns_until = 0.0
        self._reset_said = -math.inf

    def crawlers(self, slot: str) -> int:
        """The live crawlers last seen in the slot's pace shard (1 before any)."""
        view = self.shards.get(self.redis.shard(slot))
        return view.crawlers if view is not None else 1

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
        shard = self.redis.shard(slot)
        turns = self.turns.get(shard) if self.clock() < self.turns_until else None
        step = max(interval, raised)
        for _ in range(4):
            if turns is not None:
                # Rejoining: a start on one of this crawler's turns, so that it cannot meet
                # the turns of a crawler that still paces without Redis.
                now = self.clock()
                not_before = turns.next(now + not_before, step) - now
            reservation = await self.redis.reserve(slot, interval, not_before, self.crawlers(slot) * step, raised)
            self._learn(shard, reservation)
            if turns is None or reservation.wait <= not_before + 1e-3:
                break
            not_before = reservation.wait  # another crawler holds that turn: the next one
        return reservation.wait

    def _learn(self, shard: int, reservation: Reservation) -> None:
        if self.away_since is not None:
            self.away_since = None
            if self.turns:
                self.turns_until = self.clock() + REJOIN
            logger.info("The fleet's pace resumes: each slot's turns are reserved in Redis again")
        known = self.shards.get(shard)
        # A new epoch is a new pace state: the shard's keys were lost (a FLUSHALL, or their
        # node restarted empty). Clocks are not compared: a busy event loop is no reset.
        if known is not None and reservation.epoch != known.epoch:
            self.count("pace_reset")
            if self.clock() - self._reset_said >= RESET_QUIET:
                self._reset_said = self.clock()
                logger.warning(
                    "The fleet's pace state in Redis is gone (FLUSHALL, or Redis or one of its cluster's nodes "
                    "restarted empty): each slot's next start waits %(crawlers)d x its delay after that, past the "
                    "reservations given before",
                    {"crawlers": known.crawlers},
                )
        self.shards[shard] = ShardView(
            reservation.crawlers, reservation.rank, reservation.fleet_time - self.clock(), reservation.epoch
        )

    def _away(self) -> None:
        if self.away_since is not None:
            return
        self.away_since = self.clock()
        if self.outage == "spread":
            if not self.turns or self.clock() >= self.turns_until:
                self.turns = {shard: view.turns() for shard, view in self.shards.items() if view.crawlers > 1}
            self.turns_until = math.inf
        what = {
            "spread": "paces each slot at its delay x the %(crawlers)d crawler(s) it last saw, on its own turns",
            "hold": "holds each slot's requests until Redis answers",
            "alone": "paces each slot alone, at its delay",
        }[self.outage]
        logger.warning(
            f"The fleet's pace cannot be reserved in Redis: this crawler {what} (ROBOTSTXT_FLEET_OUTAGE = %(outage)r)",
            {"crawlers": max((view.crawlers for view in self.shards.values()), default=1), "outage": self.outage},
        )

    def outage_wait(self, slot: str, delay: float, not_before: float) -> float | None:
        """While Redis is away: the seconds until this crawler may start its next request
        of ``slot`` (``not_before``: what its own slot still needs), or None to hold it.

        "spread": the slot's time is cut in turns of one interval, on Redis's clock as
        last seen, and this crawler takes every ``crawlers``-th one, at its rank: the
        crawlers that last saw each other in the slot's shard take turns apart without
        speaking, and the slot sees the fleet's rate. The first turn comes ``crawlers``
        intervals after Redis went away, past the reservations given before. "alone": the
        local pace."""
        if self.outage == "hold":
            self.count("held")
            return None
        self.count("outage_paced")
        away_since = self.away_since
        turns = self.turns.get(self.redis.shard(slot))
        if turns is None or away_since is None:
            # "alone", or no other crawler seen: the local pace, with the fleet's margin
            # (its starts reach the server as late as the reservations' do).
            return not_before + self.margin
        interval = delay + self.margin
        now = self.clock()
        earliest = max(now + not_before, away_since + turns.crawlers * interval)
        return max(turns.next(earliest, interval) - now, 0.0)

    async def mark_start(self, slot: str, delay: float, ago: float) -> bool | None:
        interval = delay + self.margin
        try:
            await self.redis.mark_start(slot, interval, ago, self.crawlers(slot) * interval)
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
        self._outage_wait: Callable[[str, float, float], float | None] | None = getattr(shared, "outage_wait", None)
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
            wait = self._outage_wait(key, floor, not_before)
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
