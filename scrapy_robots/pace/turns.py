"""When a downloader slot may start its next request, and the hold of its queue during a pause.

:class:`SlotTurns` reads Scrapy's slot (its last start, the least delay it keeps, a gap
drawn as Scrapy draws it) for the lines (:mod:`scrapy_robots.pace.lines`), and holds a
slot's queue while a site's pause runs: requests Scrapy had queued before the site said
slow down wait for the pause too, and go back (:class:`QueueReleased`) if the crawl closes
meanwhile. With ``slots.py`` and ``slot_classes.py``, the code that knows Scrapy's slots.
"""

from __future__ import annotations

import inspect
import random
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader import Downloader

from scrapy_robots.pace.slot_classes import jitter_of, least_delay, take_queued
from scrapy_robots.pace.slots import engine_closing

if TYPE_CHECKING:
    from scrapy.http import Request

    from scrapy_robots.pace.slots import SlotPacer

# Scrapy 2.13's Downloader._process_queue(spider, slot); later ones take the slot alone.
_PROCESS_QUEUE_NEEDS_SPIDER = "spider" in inspect.signature(Downloader._process_queue).parameters


class QueueReleased(Exception):
    """A request that waited in Scrapy's slot queue for a pause (:meth:`SlotTurns.hold`) was
    let go because the crawl began closing; ``key``: its slot."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


class SentBack(Exception):
    """A request Scrapy had queued in a slot that was told to slow down, in a crawl whose pace
    is shared with other crawlers (:meth:`SlotTurns.send_back`): it goes back to the scheduler
    and comes again through the fleet's pace; ``key``: its slot."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


class SlotTurns:
    def __init__(self, slots: SlotPacer):
        self.slots = slots
        #: slot key -> (until when its queue is held, the timer that lets it go): see hold()
        self._held: dict[str, tuple[float, Any]] = {}
        self._watch: Any = None  #: a LoopingCall while slots are held (see _watch_closing)

    def next_start(self, key: str, gap: float = 0.0) -> float:
        """The earliest time (the slots' clock) at which slot ``key`` lets a request start: its
        last start plus the least delay it keeps (its floor, or its delay less the jitter) or
        ``gap`` if longer, and not while it is held (:meth:`hold`); 0 for a slot Scrapy does
        not hold now."""
        slot = self.slots.slot(key)
        if slot is None:
            return 0.0
        held = self._held.get(key)
        start = slot.lastseen + max(gap, least_delay(slot))
        return start if held is None else max(start, held[0])

    def drawn_gap(self, key: str) -> float:
        """The gap between slot ``key``'s next two starts: its delay with Scrapy's jitter
        drawn, never under its floor (what Scrapy's own ``download_delay`` draws)."""
        slot = self.slots.slot(key)
        if slot is None:
            return 0.0
        delay = float(slot.delay)
        jitter = jitter_of(slot)
        if jitter and delay:
            delay = max(0.0, delay * (1.0 + random.uniform(-jitter, jitter)))
        return max(getattr(type(slot), "floor", 0.0), delay)

    def hold(self, request: Request, until: float) -> None:
        """No request of ``request``'s slot leaves Scrapy's slot queue before ``until`` (the
        slots' clock), whatever its delay: requests queued there before the slot was told to
        slow down wait for the pause too (Scrapy's downloader processes a slot's queue only
        when its timer, ``latercall``, is not pending: the slot's timer becomes the pause's)."""
        slot = self.slots.live_slot(request)
        if slot is None:
            return
        key = self.slots.key(request)
        held = self._held.get(key)
        if held is not None and held[0] >= until:
            return
        from twisted.internet import reactor

        if held is not None and held[1].active():
            held[1].cancel()
        pending = slot.latercall
        if pending is not None and (held is None or pending is not held[1]):
            cancel = getattr(pending, "cancel", None)
            active = getattr(pending, "active", None)
            if cancel is not None and (active is None or active()):
                cancel()
        call = reactor.callLater(max(0.0, until - self.slots.now()), self._unhold, key)
        self._held[key] = (until, call)
        slot.latercall = call
        self._watch_closing()

    def send_back(self, request: Request) -> int:
        """Every request Scrapy's queue of ``request``'s slot holds fails with
        :class:`SentBack` (the middleware sends it back to the scheduler); returns how many.
        In a fleet, the local slot would start them at the pause's end on its own pace, beside
        the other crawlers' (#49: two crawlers each started their queued requests at the end
        of one pause, 15 ms apart, then again a second later)."""
        slot = self.slots.live_slot(request)
        if slot is None:
            return 0
        key = self.slots.key(request)
        sent = 0
        while slot.queue:
            _, waiting = take_queued(slot)
            waiting.errback(SentBack(key))
            sent += 1
        return sent

    def _watch_closing(self) -> None:
        """While a slot is held, look at the engine four times a second: a close lets the held
        requests go back (:meth:`release_held`) instead of waiting for the pause to end."""
        if self._watch is None:
            from twisted.internet.task import LoopingCall

            self._watch = LoopingCall(self._look_at_engine)
        if not self._watch.running:
            self._watch.start(0.25, now=False)

    def _look_at_engine(self) -> None:
        if self._held and engine_closing(self.slots.crawler):
            self.release_held()
        if not self._held and self._watch is not None and self._watch.running:
            self._watch.stop()

    def release_held(self) -> None:
        """The crawl is closing: every request a held slot's queue keeps fails with
        :class:`QueueReleased` (the middleware sends it back to a ``JOBDIR``'s queue, or
        ignores it with the reason), and no slot is held any more. Scrapy's close would
        otherwise wait for them until the pause ends, and then send them."""
        held, self._held = self._held, {}
        for key, (_, call) in held.items():
            if call.active():
                call.cancel()
            slot = self.slots.slot(key)
            if slot is None:
                continue
            if slot.latercall is call:
                slot.latercall = None
            while slot.queue:
                _, waiting = take_queued(slot)
                waiting.errback(QueueReleased(key))

    def _unhold(self, key: str) -> None:
        held = self._held.pop(key, None)
        slot = self.slots.slot(key)
        if held is None or slot is None or slot.latercall is not held[1]:
            return
        slot.latercall = None
        downloader = self.slots.downloader()
        if _PROCESS_QUEUE_NEEDS_SPIDER:
            downloader._process_queue(self.slots.crawler.spider, slot)
        else:
            downloader._process_queue(slot)

    def close(self) -> None:
        """The crawl closed: no slot is held any more."""
        for _, call in self._held.values():
            if call.active():
                call.cancel()
        self._held.clear()
        if self._watch is not None and self._watch.running:
            self._watch.stop()
