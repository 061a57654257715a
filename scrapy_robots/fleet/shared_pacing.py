"""The middleware's pacing call when the storage shares a pace (the fleet's Redis
reservations, :class:`~scrapy_robots.fleet.pacing.FleetPacer`): :class:`SharedPacing`,
chosen over :class:`~scrapy_robots.pace.pacing.SitePacing` at start-up.

A request waiting for its turn waits outside the downloader's ``CONCURRENT_REQUESTS``,
as one in the local pace's line does (:mod:`scrapy_robots.pace.lines`), counted in the
waiting room's bound (``ROBOTSTXT_MAX_WAITING``): beyond it, a request goes back to the
scheduler (a shared queue, with scrapy-redis), so a crawler takes at most that many
requests out of a shared queue to wait for their turn.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from scrapy_robots.cache.storage import SharedPauses
from scrapy_robots.pace.pacing import PAUSED, SitePacing
from scrapy_robots.pace.slots import concurrency_released
from scrapy_robots.pace.waiting import CrawlClosing, RoomFull

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsEntry, SitePacer
    from scrapy_robots.pace.slots import FleetSlotPacer
    from scrapy_robots.pace.waiting import WaitingRoom
    from scrapy_robots.status.result import FetchResult

logger = logging.getLogger(__name__)

#: Seconds between two looks at the engine (is the crawl closing?) while a request waits.
WATCH_INTERVAL = 0.25
#: Times a request woken late from its reservation reserves anew before it goes anyway.
LATE_TRIES = 3
#: Seconds between two tries of a request held while Redis is away (ROBOTSTXT_FLEET_OUTAGE = "hold").
HOLD_RETRY = 0.25
TURN = "waiting for its turn in the fleet's pace"


class SharedPacing(SitePacing):
    """The pace of a downloader slot shared with other crawlers (a storage's
    :class:`~scrapy_robots.cache.SitePacer`, the fleet's Redis reservations): each
    request waits for its turn in the shared pace, one request per slot at a time,
    outside the downloader's concurrency and within ``ROBOTSTXT_MAX_WAITING``; while the
    shared pace cannot be had, the pacer says when the request may start
    (``outage_wait``), or the local slot paces alone."""

    def __init__(self, crawler: Crawler, slots: FleetSlotPacer, shared: SitePacer, room: WaitingRoom):
        super().__init__(crawler, slots, room)
        self.slots: FleetSlotPacer = slots
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
        queued = self._lines.get(key)
        if queued is not None and queued[1] and self.room.full():
            # ROBOTSTXT_MAX_WAITING: back to the scheduler (the middleware's overflow). The
            # head of each slot's line is let in over it, as a local slot's next start is:
            # else a bound of 0 would keep every paced site from ever starting.
            raise RoomFull
        # It waits outside the downloader's CONCURRENT_REQUESTS, as a request in the local
        # pace's line does (pace/lines.py): a site handed out meanwhile goes at once (#49:
        # 54 fleet-paced requests had sat in `active` at CONCURRENT_REQUESTS 16).
        with (
            self.slots.holding_slot(request),
            concurrency_released(self.crawler, request),
            self.room.leased(request),  # the fleet gives it back if this crawler dies meanwhile
        ):
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
        with self.room.holding(entry.site):  # a close meanwhile counts it (the Redis call is short)
            wait = await self.shared.reserve(key, base, not_before, raised)
        if wait is None and self._outage_wait is not None:
            wait = self._outage_wait(key, floor, not_before)
            while wait is None:  # held until Redis answers (ROBOTSTXT_FLEET_OUTAGE = "hold")
                await self._sleep(HOLD_RETRY, entry.site)
                not_before = self.slots.fleet_handover(request, floor) or 0.0
                with self.room.holding(entry.site):
                    wait = await self.shared.reserve(key, base, not_before, raised)
        if wait is None:
            await self._local_turn(entry, request)
            return
        # The fleet's reservation is the slot's pace; the local slot only keeps this
        # crawler's own starts a floor apart, without jitter (see pace/slots.py).
        self.slots.apply_fleet_pacing(request, floor)
        late_by = getattr(self.shared, "margin", 0.0) / 2
        for _ in range(LATE_TRIES):
            due = time.monotonic() + wait
            await self._sleep(wait, entry.site)
            if wait is None or time.monotonic() - due <= late_by:
                return
            # Woken later than half the margin (a busy event loop, a loaded machine): the
            # next crawler's reserved start may now come less than the delay after this
            # one's. A start reserved anew comes an interval after the last one reserved
            # (#49: a start 86 ms late left a 0.37 s gap at Crawl-delay 0.4 behind it).
            self.crawler.stats.inc_value("robotstxt/fleet/late")
            with self.room.holding(entry.site):
                wait = await self.shared.reserve(key, base, 0.0, raised)
            if wait is None:  # Redis away meanwhile: this start is as good as the outage's
                return

    async def _sleep(self, seconds: float, site: str) -> None:
        end = time.monotonic() + seconds
        with self.room.holding(site):
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
            with self.room.holding(site):
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
        if self.room.closing_now():  # the room's close line counts the requests held here
            raise CrawlClosing(site, TURN)

    def pauses(self) -> SharedPauses | None:
        return self._pauses

    def slow_down(self, request: Request, floor: float | None, until: float = 0.0) -> None:
        """As :meth:`SitePacing.slow_down`; a pause also sends the requests Scrapy had queued
        in the slot back to the scheduler: they come again through the fleet's pace, where
        the pause is shared, instead of leaving at its end on the local slot's pace alone."""
        super().slow_down(request, floor, until)
        if until > self.slots.now():
            sent = self.turns.send_back(request)
            if sent:
                self.crawler.stats.inc_value("robotstxt/fleet/sent_back", sent)

    def fetched(self, entry: RobotsEntry, result: FetchResult) -> Awaitable[object] | None:
        if entry.delay is None or entry.delay.applied is None or result.response is None:
            return None  # no delay, or a skipped site (none of its requests go)
        # The robots.txt fetch was the site's first request: the shared pace counts it.
        key = self.slots.site_slot_key(entry.site)
        return self.shared.mark_start(key, entry.delay.applied, time.monotonic() - result.started)
