"""A downloader slot's delay enforced across every crawler of the fleet.

:class:`~scrapy_robots.fleet.reservations.RedisPacer` keeps the pace in Redis;
:class:`FleetPacer` is what a crawler does with it; the middleware's pacing call over it
is :class:`~scrapy_robots.fleet.shared_pacing.SharedPacing`.

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

The Redis side (the keys, their shards, the scripts) is :mod:`scrapy_robots.fleet.reservations`;
here is what a crawler does with it: :class:`FleetPacer`, the fleet's
:class:`~scrapy_robots.cache.SitePacer` (and what this crawler does while Redis is away).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy_robots.fleet.link import FleetUnavailable
from scrapy_robots.fleet.reservations import RedisPacer, Reservation

if TYPE_CHECKING:
    pass

logger = logging.getLogger(__name__)

#: Seconds between two WARNINGs of a lost pace state: one loss is found shard by shard,
#: as the crawler next reserves in each (the stat counts every shard).
RESET_QUIET = 10.0


#: Seconds after Redis answers again during which this crawler still keeps to its own
#: turns of the outage (ROBOTSTXT_FLEET_OUTAGE = "spread"): the other crawlers may still
#: be on theirs until their own next try of Redis (the link's backoff, up to 30 s).
REJOIN = 30.0
#: Seconds into a rejoining crawler's turn that a start is still on it. The rejoining
#: crawlers' turns are placed on Redis's clock by the reservation script, exactly, so the
#: previous turn's start ends at most a rounding into this one; a crawler still on its
#: outage turns keeps them by its estimate of that clock, which a start this far into a turn
#: shortens its gap by (the whole margin, as it was, left 20 ms for that estimate and a
#: loaded machine's lateness at Crawl-delay 0.4).
TURN_TOLERANCE = 0.005
#: Seconds a second by which the best estimate of Redis's clock is let go (see
#: :meth:`FleetPacer._learn`): a clock that drifts or steps back is followed at this rate.
OFFSET_FORGET = 0.001


@dataclass(frozen=True)
class Turns:
    """This crawler's share of a slot's time while the fleet cannot agree through Redis:
    turns one interval long on Redis's clock as last seen (``offset``: its seconds since
    the shard's epoch minus ours), every ``crawlers``-th one, at ``rank``."""

    offset: float
    crawlers: int
    rank: int
    epoch: int = 0  #: the shard's epoch the turns count from (Redis's clock, microseconds)

    def next(self, at: float, interval: float) -> float:
        """The first of this crawler's turns at or after ``at`` (our clock)."""
        period = self.crawlers * interval
        phase = self.rank * interval
        return math.ceil((at + self.offset - phase) / period - 1e-9) * period + phase - self.offset


@dataclass(frozen=True)
class ShardView:
    """What the last reservation in a pace shard said of the fleet: the crawlers live in
    the shard, this one's rank among them, Redis's clock (seconds since the shard's
    epoch) minus ours (the best estimate so far, made at ``seen`` on our clock), and the
    epoch."""

    crawlers: int
    rank: int
    offset: float
    epoch: int
    seen: float = 0.0

    def turns(self) -> Turns:
        return Turns(self.offset, self.crawlers, self.rank, self.epoch)


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
        #: pace shard -> (its epoch, Redis's clock at this crawler's first reservation in it
        #: after the outage): once every other live crawler of the shard has reserved since,
        #: all are back on Redis and the shard's turns end (see :meth:`_rejoined`)
        self.back_at: dict[int, tuple[int, float]] = {}
        self._reset_said = -math.inf
        #: slot -> (the last start of it this crawler made that the fleet's pace does not
        #: know, on our clock; its interval): a robots.txt fetch whose start could not be
        #: written, the starts paced by this crawler while Redis was away. Written at the
        #: slot's next reservation, and before the records fetched meanwhile are shared
        #: (:meth:`write_unmarked`): the crawlers that waited for such a record then
        #: reserve after this crawler's starts, not beside them (#49).
        self.unmarked: dict[str, tuple[float, float]] = {}

    def crawlers(self, slot: str) -> int:
        """The live crawlers last seen in the slot's pace shard (1 before any)."""
        view = self.shards.get(self.redis.shard(slot))
        return view.crawlers if view is not None else 1

    async def reserve(self, slot: str, delay: float, not_before: float = 0.0, raised: float = 0.0) -> float | None:
        """The seconds to wait for the slot's next start (None while Redis is away);
        ``raised``: this crawler's "slow down" floor (scrapy_robots.pace.backoff)."""
        interval = delay + self.margin
        try:
            if self.unmarked:
                # Every start of the shard the fleet does not know, not only this slot's:
                # this reservation's heartbeat tells the shard's other crawlers that this
                # one is back on Redis, and they end their outage turns on it (_rejoined),
                # so its outage starts of every slot of the shard must be in Redis first.
                shard = self.redis.shard(slot)
                for unknown in [name for name in self.unmarked if self.redis.shard(name) == shard]:
                    await self._write_unmarked(unknown)
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
        grid = None
        if turns is not None:
            # Rejoining: a start on one of this crawler's turns, so that it cannot meet the
            # turns of a crawler that still paces without Redis. The script puts the start
            # on the turn (one reservation): reserving a turn, then the next when another
            # crawler held it, left each missed reservation unused in the slot's pace, and
            # the slot saw one start every 4 intervals for the whole rejoin (#49). A start
            # up to TURN_TOLERANCE into a turn is still on it.
            grid = (turns.epoch + turns.rank * step * 1e6, turns.crawlers * step, TURN_TOLERANCE)
        reservation = await self.redis.reserve(slot, interval, not_before, self.crawlers(slot) * step, raised, grid)
        self._learn(shard, reservation)
        return reservation.wait

    def _unmarked(self, slot: str, at: float, interval: float) -> None:
        """A start of ``slot`` at ``at`` (our clock) that the fleet's pace does not know."""
        known = self.unmarked.get(slot)
        if known is None or at >= known[0]:
            self.unmarked[slot] = (at, interval)

    async def _write_unmarked(self, slot: str) -> None:
        at, interval = found = self.unmarked[slot]
        # A start still to come (an outage turn) is written as one: the script keeps the later.
        await self.redis.mark_start(slot, interval, self.clock() - at, self.crawlers(slot) * interval)
        if self.unmarked.get(slot) == found:
            del self.unmarked[slot]

    async def write_unmarked(self) -> None:
        """Write every start the fleet's pace does not know (the write-back calls this
        before sharing the records saved while Redis was away). Raises
        :class:`~scrapy_robots.fleet.link.FleetUnavailable`."""
        for slot in list(self.unmarked):
            if slot in self.unmarked:
                await self._write_unmarked(slot)

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
        # Redis's clock is read when the script ran and ours when its answer is seen here, so
        # each offset falls short by the answer's way back (a busy loop, a loaded machine),
        # never over: the largest one is the closest, and the crawlers' turns of an outage
        # meet on it. It is let go at OFFSET_FORGET a second (clocks drift), and anew at a
        # new epoch (the times count from another start).
        now = self.clock()
        offset = reservation.fleet_time - now
        if known is not None and reservation.epoch == known.epoch:
            offset = max(offset, known.offset - OFFSET_FORGET * (now - known.seen))
        self.shards[shard] = ShardView(reservation.crawlers, reservation.rank, offset, reservation.epoch, now)
        if shard in self.turns and now < self.turns_until:
            self._rejoined(shard, reservation)

    def _rejoined(self, shard: int, reservation: Reservation) -> None:
        """End the shard's outage turns once every other live crawler of it has reserved in
        Redis since this one came back: none of them paces on its own turns any longer.
        Kept for REJOIN seconds at most otherwise (a crawler that has not tried Redis again,
        or has nothing to reserve in the shard). On turns, a start that misses its turn by
        more than the margin (a loaded machine) waits for this crawler's next one, N
        intervals on: kept for the whole REJOIN, the slot saw a start every 4 intervals
        with 3 crawlers (#49)."""
        epoch, back = self.back_at.get(shard, (None, 0.0))
        if epoch != reservation.epoch:  # the first reservation since (or a new pace state)
            self.back_at[shard] = (reservation.epoch, reservation.fleet_time)
            return
        # As many crawlers live as the turns were cut for: a node restarted empty lost the
        # shard's heartbeats with its paces, and a crawler still on its turns is not in them
        # (the turns ended at once there, and a crawler's start met another's turn).
        if reservation.crawlers < self.turns[shard].crawlers or reservation.others_since <= back:
            return
        del self.turns[shard]
        self.back_at.pop(shard, None)
        self.count("rejoined")

    def _away(self) -> None:
        if self.away_since is not None:
            return
        self.away_since = self.clock()
        if self.outage == "spread":
            fresh = {shard: view.turns() for shard, view in self.shards.items() if view.crawlers > 1}
            if self.clock() < self.turns_until:
                # Away again while rejoining: a shard still on its turns keeps them (its view
                # may count fewer crawlers since, heartbeats lost with an emptied node); a
                # shard whose turns had ended takes them anew from its view (it was left
                # without any, and its slots paced alone: N crawlers, N times the rate).
                fresh.update(self.turns)
            self.turns = fresh
            self.turns_until = math.inf
            self.back_at.clear()
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
            wait = not_before + self.margin
        else:
            interval = delay + self.margin
            earliest = max(self.clock() + not_before, away_since + turns.crawlers * interval)
            wait = max(turns.next(earliest, interval) - self.clock(), 0.0)
        self._unmarked(slot, self.clock() + wait, delay + self.margin)
        return wait

    async def mark_start(self, slot: str, delay: float, ago: float) -> bool | None:
        interval = delay + self.margin
        try:
            await self.redis.mark_start(slot, interval, ago, self.crawlers(slot) * interval)
        except FleetUnavailable:
            self.count("fallback")
            self._unmarked(slot, self.clock() - ago, interval)  # written when Redis answers
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
