"""PageBackoff: the extension that hears a site say "slow down" on a page, as AutoThrottle
hears latencies.

Every answer leaves the downloader through Scrapy's ``response_downloaded`` signal, before
any middleware: RetryMiddleware retries a 429 at once, and its retry then waits for the
pause. This extension hears them, asks the rules (:mod:`scrapy_robots.pace.backoff_rules`:
a 429, or a 503 with Retry-After, pauses the slot and raises its delay) and tells the pace
(:class:`scrapy_robots.pace.pacing.SitePacing`), which holds the pause for the middleware's
requests and applies the delay to the slot. It keeps the pauses with a ``JOBDIR`` job and,
in a fleet, tells the other crawlers and hears theirs (:class:`FleetPauses`).

Enabled by the add-on (``EXTENSIONS``); ``NotConfigured`` with ``ROBOTSTXT_BACKOFF = False``
or ``ROBOTSTXT_OBEY = False``. Why it meets the middleware: the pause must hold the
requests of the slot before they reach the downloader, and only the middleware's pace
sees them there; the pace is the middleware's, built from its storage (the slot alone, or
the fleet's shared pace). So the middleware, once, in its ``__init__`` (Scrapy builds the
extensions first), finds this extension with ``crawler.get_extension`` and hands it its
pace (:func:`hear_slow_downs`); only then does the extension connect itself to the signals.
Without our middleware it hears nothing; without this extension the middleware says so.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots.pace.backoff_rules import (
    ANSWERS_AGAIN,
    SLOWED_DOWN,
    Backoff,
    slot_text,
    slowed_down,
)
from scrapy_robots.pace.slots import DOWNLOAD_SLOT
from scrapy_robots.settings.config import RobotsConfig
from scrapy_robots.settings.errors import starting
from scrapy_robots.status.result import FETCH_META, site_of

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_robots.cache.storage import SharedPauses
    from scrapy_robots.pace.pacing import SitePacing

logger = logging.getLogger(__name__)

#: Seconds between two reads of the fleet's pauses (a pace shared through Redis).
FLEET_POLL = 0.5
#: The file under JOBDIR that keeps the pauses of a stopped crawl.
JOBDIR_FILE = "robotstxt-backoff.json"
#: Meta key: when the request's download began (the pace's clock), stamped as its headers
#: come back. Read from the whole answer, ``now - download_latency`` would add the time its
#: body took (on a loaded machine, a 429 in flight came after the first one was heard, and
#: was taken for a second slow down).
SENT = "_robotstxt_sent"
#: Meta key: when the request reached the downloader (the pace's clock). Scrapy's slot hands
#: a request to a download task that starts later: one it handed over before a pause began
#: may start just after; it was on its way, and its answer says nothing new.
REACHED = "_robotstxt_reached"


class PageBackoff:
    """Hears every answer as it leaves the downloader and tells the pace of its slot.
    One INFO line when a site is paused and one when its first answer after the pause
    comes back; the requests themselves are not logged."""

    def __init__(self, crawler: Crawler):
        settings = RobotsConfig.of(crawler)
        if not settings.obey:
            raise NotConfigured  # no middleware of ours: no pace to tell
        config = settings.backoff
        if not config.enabled:
            raise NotConfigured
        self.crawler = crawler
        self.stats = crawler.stats
        self.rules = Backoff(config)
        self._paused: dict[str, float] = {}  #: slot key -> when its pause began (for the resume line)
        jobdir = crawler.settings.get("JOBDIR")
        #: a JOBDIR crawl keeps its pauses with the job: a resumed crawl still honours them
        self.path = Path(jobdir) / JOBDIR_FILE if jobdir else None
        self.pacing: SitePacing | None = None
        self.fleet: FleetPauses | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        with starting("PageBackoff"):
            return cls(crawler)

    def pace_with(self, pacing: SitePacing) -> None:
        """Tell ``pacing`` (the middleware's pace) of every "slow down" from now on."""
        self.pacing = pacing
        shared = pacing.pauses()
        #: the fleet's pauses, read each half second while the crawl runs (a pace shared through Redis)
        self.fleet = FleetPauses(self, shared) if shared is not None else None
        connect = self.crawler.signals.connect
        connect(self._reached, signal=signals.request_reached_downloader)
        connect(self._headers, signal=signals.headers_received)
        connect(self._downloaded, signal=signals.response_downloaded)
        connect(self._opened, signal=signals.spider_opened)
        connect(self._closed, signal=signals.spider_closed)

    def _opened(self, spider: Any) -> None:
        if self.fleet is not None:
            self.fleet.start()
        if self.path is not None:
            self._restore(spider)

    def adopt(self, key: str, floor: float, left: float, why: str) -> None:
        """Pause slot ``key`` for ``left`` seconds, then pace it at ``floor``: a pause kept
        with the job, or another crawler's of the fleet."""
        assert self.pacing is not None
        request = Request(f"http://{key}/", meta={DOWNLOAD_SLOT: key})
        now = self.pacing.now()
        floor = self.rules.adopt(key, self.pacing.configured_delay(request), floor, left, now)
        self.pacing.slow_down(request, floor, self.rules.paused_until(key))
        logger.info(
            "Slot %(key)s %(why)s: paused %(left).1fs more, then at a delay of %(floor)gs",
            {"key": key, "why": why, "left": left, "floor": floor or 0.0},
            extra={"spider": self.crawler.spider},
        )

    def _restore(self, spider: Any) -> None:
        assert self.path is not None
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            logger.warning("Ignoring %(path)s: %(error)s", {"path": self.path, "error": exc}, extra={"spider": spider})
            return
        if not isinstance(data, dict):
            return
        for key, floor, left in self.rules.exported(data, time.time()):
            self.adopt(key, floor, left, "restored from the job")
            self.stats.inc_value("robotstxt/backoff/restored")

    def _closed(self, spider: Any) -> None:
        if self.fleet is not None:
            self.fleet.stop()
        if self.path is None:
            return
        assert self.pacing is not None
        data = self.rules.export(self.pacing.now(), time.time())
        partial = self.path.with_suffix(".tmp")
        try:
            partial.write_text(json.dumps(data))
            partial.replace(self.path)
        except OSError as exc:
            logger.warning("Could not keep the pauses in %(path)s: %(error)s", {"path": self.path, "error": exc})

    def _reached(self, request: Request, **kwargs: Any) -> None:
        assert self.pacing is not None
        request.meta[REACHED] = self.pacing.now()

    def _headers(self, request: Request, **kwargs: Any) -> None:
        # Scrapy's download handlers set download_latency (from the download's start)
        # just before they send this signal: now less it is the start, whenever the body comes.
        meta = request.meta
        latency = meta.get("download_latency")
        if latency is not None:
            assert self.pacing is not None
            meta[SENT] = self.pacing.now() - float(latency)

    def _downloaded(self, response: Response, request: Request, **kwargs: Any) -> None:
        meta = request.meta
        # Popped: a retry copies the meta, and has a start of its own.
        sent = meta.pop(SENT, None)
        reached = meta.pop(REACHED, None)
        if meta.get(FETCH_META):
            return  # robots.txt has its own Retry-After handling (policyfiles/retry_after.py)
        key = meta.get("download_slot")
        if key is None:
            return
        rules = self.rules
        status = response.status
        # Most answers are neither a "slow down" nor from a slowed slot: they cost these
        # tests alone. Retry-After matters only for a status the rules may count.
        retry_after = response.headers.get(b"Retry-After") if status in rules.config.codes else None
        throttles = rules.throttles(status, retry_after)
        if not throttles and rules.floor(key) is None:
            return
        pacing = self.pacing
        assert pacing is not None
        now = pacing.now()
        if sent is None:  # a handler that sends no headers_received: the whole answer's latency
            sent = now - float(meta.get("download_latency") or 0.0)
        if reached is not None and sent < rules.paused_until(key):
            # Started before the slot's pause ended, so not held by it: on its way since it
            # reached the downloader (a request the pause held starts at its end or later).
            sent = min(sent, reached)
        base = pacing.configured_delay(request)
        if throttles:
            self._throttled(request, response, key, base, retry_after, sent, now)
        else:
            floor = rules.answered(key, base, sent)
            pacing.slow_down(request, floor)
            began = self._paused.pop(key, None) if sent >= self.rules.paused_until(key) else None
            if began is not None:
                logger.info(
                    ANSWERS_AGAIN,
                    {
                        "site": site_of(request),
                        "paused": now - began,
                        "floor": f"{floor:g}s" if floor is not None else "back",
                        "base": base,
                        "slot": _slot_text(key, request, "resumes"),
                    },
                    extra={"spider": self.crawler.spider},
                )

    def _throttled(
        self,
        request: Request,
        response: Response,
        key: str,
        base: float,
        retry_after: bytes | None,
        sent: float,
        now: float,
    ) -> None:
        assert self.pacing is not None
        pause = self.rules.throttled(key, base, retry_after, sent, now, time.time())
        self.pacing.slow_down(request, pause.floor, pause.until)
        if self.fleet is not None:
            self.fleet.tell(key, pause.floor, pause.until - now)
        self.stats.inc_value("robotstxt/backoff/throttled")
        self.stats.inc_value(f"robotstxt/backoff/throttled/{response.status}")
        if not pause.first:
            return
        self._paused.setdefault(key, now)
        self.stats.inc_value("robotstxt/backoff/paused")
        self.stats.max_value("robotstxt/backoff/max_pause", round(pause.seconds, 3))
        if pause.asked is not None:
            self.stats.inc_value("robotstxt/backoff/retry_after")
        logger.info(
            SLOWED_DOWN,
            slowed_down(site_of(request), response.status, pause, retry_after, _slot_text(key, request, "is paused")),
            extra={"spider": self.crawler.spider},
        )


def _slot_text(key: str, request: Request, what: str) -> str:
    return slot_text(key, urlparse_cached(request).hostname, what)


def hear_slow_downs(crawler: Crawler, pacing: SitePacing) -> None:
    """Hand ``pacing``, the middleware's pace, to the crawl's :class:`PageBackoff`, found
    once, at start-up. A crawl without one while ``ROBOTSTXT_BACKOFF`` is on is named by
    the start-up check (settings/startup.py), with the other components it lacks."""
    backoff = crawler.get_extension(PageBackoff)
    if backoff is not None:
        backoff.pace_with(pacing)


class FleetPauses:
    """A "slow down" heard by one crawler of a fleet pauses the slot for all of them:
    it is written to the slot's pace in Redis (which every reservation of a fleet-paced
    slot reads at once), and every crawler reads the fleet's pauses each
    ``FLEET_POLL`` seconds for its other slots (within that time, then)."""

    def __init__(self, backoff: PageBackoff, shared: SharedPauses):
        self.backoff = backoff
        self.shared = shared
        self._tasks: set[asyncio.Future[Any]] = set()
        self._poll: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._poll = asyncio.ensure_future(self._listen())

    def stop(self) -> None:
        if self._poll is not None:
            self._poll.cancel()
            self._poll = None

    def tell(self, key: str, floor: float, seconds: float) -> None:
        task = asyncio.ensure_future(self.shared.pause(key, floor, seconds))
        self._tasks.add(task)
        task.add_done_callback(self._told)

    def _told(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:  # a bug: an outage returns None
            logger.error("Could not tell the fleet of a pause", exc_info=task.exception())

    async def _listen(self) -> None:
        backoff = self.backoff
        assert backoff.pacing is not None
        while True:  # at once, then each FLEET_POLL: a crawler that joins hears the pauses before it starts
            try:
                found = await self.shared.pauses() or []
            except Exception:  # a bug, not an outage (those return None): said, never fatal
                logger.exception("Could not read the fleet's pauses")
                found = []
            now = backoff.pacing.now()
            for key, left, floor in found:
                if backoff.rules.paused_until(key) < now + left - FLEET_POLL / 10:
                    backoff.stats.inc_value("robotstxt/backoff/fleet_paused")
                    backoff.adopt(key, floor, left, "paused by another crawler of the fleet")
            await asyncio.sleep(FLEET_POLL)
