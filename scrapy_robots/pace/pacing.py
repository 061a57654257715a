"""SitePacing: what a request waits for in its site's pace, before the downloader.

The middleware makes one call per allowed request, ``pace(entry, request)``, whatever
paces the site: this class (the slot alone), or the fleet's
(:class:`scrapy_robots.fleet.shared_pacing.SharedPacing`, chosen when the storage shares a
pace). A call returns None when the request may go on at once (the hot path awaits
nothing), else an awaitable to wait for first.

The pace has two parts. A slot told to slow down (a 429, a 503 with Retry-After: the
backoff extension, :mod:`scrapy_robots.pace.backoff`, hears the answers and tells the
pace, :meth:`SitePacing.slow_down`) is paused. The site's delay (robots.txt's
Crawl-delay, a floor raised by a slow down) becomes the floor of its downloader slot
(:mod:`scrapy_robots.pace.slots`), or a turn reserved in the fleet's pace. Either way a
request waits for its slot's turn in the slot's line (:mod:`scrapy_robots.pace.lines`),
outside the downloader's concurrency, and Scrapy receives it when it may start.
While no slot is paused, the pause costs the hot path one test of an empty dict.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from scrapy_robots.pace.lines import TURN, SlotLines
from scrapy_robots.pace.turns import SlotTurns

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.cache.storage import SharedPauses
    from scrapy_robots.pace.slots import SlotPacer
    from scrapy_robots.pace.waiting import WaitingRoom
    from scrapy_robots.status.result import FetchResult

logger = logging.getLogger(__name__)

#: What a request waiting for its slot's pause is waiting for (the close's reason).
PAUSED = "{site} had said slow down: its requests wait for the pause it asked"


class SitePacing:
    def __init__(self, crawler: Crawler, slots: SlotPacer, room: WaitingRoom):
        self.crawler = crawler
        self.slots = slots
        self.room = room
        #: when a slot may start next, and the hold of its queue during a pause (pace/turns.py)
        self.turns = SlotTurns(slots)
        #: requests waiting for their slot's turn, outside the downloader (pace/lines.py)
        self.lines = SlotLines(slots, self.turns, room)
        #: slot key -> when its pause ends (the slots' clock): the slots told to slow down,
        #: an entry dropped once a request finds its pause over.
        self.paused: dict[str, float] = {}
        #: the user paces slots too (DOWNLOAD_DELAY, DOWNLOAD_SLOTS delays, AutoThrottle): every
        #: request then waits for its slot's turn in the line, so that a stop is at once there too
        self.user_paced = _user_paces(crawler)

    def pace(self, entry: RobotsEntry, request: Request) -> Awaitable[None] | None:
        if self.paused and self.pause_left(request) > 0:  # some slot was told to slow down: this one
            return self._turn(entry, request, PAUSED)
        if entry.delay is None and entry.site not in self.slots.paced_sites and not self.user_paced:
            return None  # the hot path: a site without a delay, in a slot not slowed down
        return self._turn(entry, request)

    def _turn(self, entry: RobotsEntry, request: Request, state: str = TURN) -> Awaitable[None] | None:
        """The request's turn in its slot's pace: the site's delay set as the slot's floor,
        then its place in the slot's line (None: it goes now). ``state``: what it waits for."""
        if entry.delay is not None or entry.site in self.slots.paced_sites:
            try:
                # None: the site's robots.txt dropped its Crawl-delay since.
                self.slots.apply_crawl_delay(request, entry.site, entry.delay.applied if entry.delay else None)
            except Exception:
                # Scrapy's downloader changed under us (see pace/slots.py): say so loudly, but
                # do not turn a pacing failure into a lost request.
                logger.exception(
                    "Could not set the download delay of %(site)s",
                    {"site": entry.site},
                    extra={"spider": self.crawler.spider},
                )
                self.crawler.stats.inc_value("robotstxt/crawl_delay/error")
                if state is TURN:
                    return None
        elif self.user_paced:
            self.slots.steady(request)
        elif state is TURN:
            return None
        return self.lines.turn(request, entry.site, state)

    def pause_left(self, request: Request) -> float:
        """Seconds before ``request``'s slot may start a request again (0 or less: none)."""
        key = self.slots.key(request)
        until = self.paused.get(key)
        if until is None:
            return 0.0
        left = until - self.slots.now()
        if left <= 0:
            del self.paused[key]  # over: once every pause is, the hot path is one test again
        return left

    def slow_down(self, request: Request, floor: float | None, until: float = 0.0) -> None:
        """``request``'s slot was told to slow down (scrapy_robots.pace.backoff): its delay
        floored at ``floor`` (None: back to its configured pace), and, ``until`` later than
        now (the slots' clock), none of its requests starts before then."""
        now = self.slots.now()
        pause = until - now
        self.slots.slow_down(request, floor, pause)
        if pause > 0:
            # A slot without a delay does not wait at all: what its queue holds already waits too.
            self.turns.hold(request, until)
        if pause > 0:
            key = self.slots.key(request)
            self.paused[key] = max(self.paused.get(key, 0.0), until)

    def close(self) -> None:
        """The crawl closed: no timer of the pace left behind."""
        self.lines.close()
        self.turns.close()

    def configured_delay(self, request: Request) -> float:
        """The delay of ``request``'s slot before any "slow down": the user's, under the
        Crawl-delay of its sites."""
        return self.slots.configured_delay(request)

    def now(self) -> float:
        """The clock of the pace (the slots')."""
        return self.slots.now()

    def pauses(self) -> SharedPauses | None:
        """Where a "slow down" is shared with other crawlers (the fleet's store of pauses),
        None when this crawler paces alone."""
        return None

    def fetched(self, entry: RobotsEntry, result: FetchResult) -> Awaitable[object] | None:
        """The site's robots.txt was just downloaded: a start in its pace, which a pace
        shared with other crawlers counts (the local slot counted it already)."""
        return None


def _user_paces(crawler: Crawler) -> bool:
    """Does the user give slots a delay of their own (``DOWNLOAD_DELAY``, a ``DOWNLOAD_SLOTS``
    delay, AutoThrottle, which sets every slot's)?"""
    settings = crawler.settings
    if settings.getfloat("DOWNLOAD_DELAY") > 0 or settings.getbool("AUTOTHROTTLE_ENABLED"):
        return True
    slots = settings.getdict("DOWNLOAD_SLOTS")
    return any(float((value or {}).get("delay", 0) or 0) > 0 for value in slots.values() if isinstance(value, dict))
