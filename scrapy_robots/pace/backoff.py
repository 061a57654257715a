"""A site that says "slow down" on a page: 429, or 503 with ``Retry-After``.

robots.txt is one way a site sets a crawler's pace; the answer to a page is the other:
``429 Too Many Requests`` (RFC 6585 4), or ``503 Service Unavailable`` with
``Retry-After`` (RFC 9110 15.6.4, 10.2.3). :class:`Backoff` turns those answers into
what the downloader slot of the site must do, the shape of TCP's congestion control:

- a **pause**: no request of the slot starts before the time the server asked
  (``Retry-After``, seconds or an HTTP date), bounded by ``ROBOTSTXT_BACKOFF_MAX_PAUSE``;
  without the header, ``ROBOTSTXT_BACKOFF_PAUSE`` doubled at each consecutive throttle,
  lengthened by a random quarter at most (so that crawlers paused together do not come
  back together), bounded the same way;
- a **raised floor** (multiplicative decrease of the rate): the slot's delay is
  multiplied by ``ROBOTSTXT_BACKOFF_FACTOR`` from at least ``MIN_DELAY``, and comes back
  to the configured pace (``DOWNLOAD_DELAY``, Crawl-delay) in ``ROBOTSTXT_BACKOFF_RECOVERY``
  equal steps, one per answer that is not a throttle (additive increase).

Answers in flight when a throttle came (several requests sent together, throttled
together) are one event: they may lengthen the pause, never raise the floor again.

Pure state, keyed by the downloader slot (Scrapy's per-host pace): the time is passed
in, the random draw too; :mod:`scrapy_robots.pace.slots` applies the result to the slot.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots.pace.slots import DOWNLOAD_SLOT
from scrapy_robots.policyfiles.fetch import FETCH_META, site_of
from scrapy_robots.policyfiles.retry_after import QUOTED, parse_retry_after

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_robots.pace.pacing import SitePacing
    from scrapy_robots.settings.parts import BackoffConfig

logger = logging.getLogger(__name__)

#: Statuses that pause a site with or without Retry-After; any other listed status
#: pauses only when it carries one.
ALWAYS = frozenset({429})
#: The least delay a raised floor starts from: a site crawled at no delay that throttles
#: is paced at 1 s, then 2 s, ...
MIN_DELAY = 1.0
#: The largest random lengthening of a pause without Retry-After, as a fraction of it.
JITTER = 0.25
#: What a request waiting for its slot's pause is waiting for (the close's reason).
PAUSED = "{site} had said slow down: its requests wait for the pause it asked"
#: Seconds between two reads of the fleet's pauses (a pace shared through Redis).
FLEET_POLL = 0.5
#: The file under JOBDIR that keeps the pauses of a stopped crawl.
JOBDIR_FILE = "robotstxt-backoff.json"
#: Slots whose state is kept at most (a broad crawl's throttling sites); the oldest
#: recovered one goes first.
MAX_SLOTS = 10_000


@dataclass(frozen=True)
class Pause:
    """A throttle's outcome, for the slot and the log line."""

    until: float  #: no request of the slot starts before (the caller's clock)
    seconds: float  #: the pause, from the answer
    asked: float | None  #: what Retry-After asked (before the bound), None without one
    floor: float  #: the slot's delay from now on
    first: bool  #: a new event, not an answer to a request sent before the last one (one INFO line each)


@dataclass
class _SlotState:
    throttles: int = 0  #: consecutive throttles (events, not answers)
    since: float = 0.0  #: when the last throttle event began
    until: float = 0.0
    floor: float = 0.0  #: the raised delay, 0 when none
    step: float = 0.0  #: what each answer that is not a throttle takes off the floor


class Backoff:
    """What the throttling answers of each slot ask of it."""

    def __init__(self, config: BackoffConfig, draw: Callable[[], float] = random.random):
        self.config = config
        self.draw = draw
        self._slots: OrderedDict[str, _SlotState] = OrderedDict()

    def throttles(self, status: int, retry_after: bytes | None) -> bool:
        """Is this answer a "slow down"? A 429 (and any status of ALWAYS), or another
        status of ROBOTSTXT_BACKOFF_HTTP_CODES that carries Retry-After."""
        if status not in self.config.codes:
            return False
        return status in ALWAYS or retry_after is not None

    def throttled(
        self, key: str, base: float, retry_after: bytes | None, sent: float, now: float, wall: float
    ) -> Pause:
        """A throttling answer for slot ``key``, whose configured delay is ``base``, to a
        request sent at ``sent`` (``now``'s clock); ``wall`` is ``time.time()``, which an
        HTTP-date Retry-After is read against."""
        config = self.config
        state = self._slots.get(key)
        if state is None:
            state = self._slots[key] = _SlotState()
            self._trim()
        asked = None
        if retry_after is not None:
            asked = parse_retry_after(retry_after.decode("latin-1"), wall)
        same_event = state.throttles and sent < state.since
        if not same_event:
            state.throttles += 1
            state.since = now
            raised = max(base, state.floor, MIN_DELAY) * config.factor
            state.floor = min(raised, max(config.max_pause, base))
            state.step = (state.floor - base) / config.recovery
        if asked is not None:
            seconds = asked
        else:
            seconds = config.pause * 2 ** (state.throttles - 1) * (1 + JITTER * self.draw())
        seconds = min(seconds, config.max_pause)
        state.until = max(state.until, now + seconds)
        return Pause(state.until, seconds, asked, state.floor, not same_event)

    def answered(self, key: str, base: float, sent: float) -> float | None:
        """An answer of slot ``key`` that is not a throttle, to a request sent at
        ``sent``: one step back toward the configured delay ``base``. The floor left (None
        when back at the pace). An answer to a request sent before the last throttle
        says nothing of the site now: it changes nothing."""
        state = self._slots.get(key)
        if state is None:
            return None
        if sent < state.since:
            return state.floor or None
        state.throttles = 0
        state.floor -= state.step
        if state.floor <= base:
            del self._slots[key]
            return None
        return state.floor

    def paused_until(self, key: str) -> float:
        state = self._slots.get(key)
        return state.until if state is not None else 0.0

    def floor(self, key: str) -> float | None:
        state = self._slots.get(key)
        return state.floor if state is not None and state.floor else None

    def __len__(self) -> int:
        return len(self._slots)

    def export(self, now: float, wall: float) -> dict[str, dict[str, float]]:
        """Every slot still paused or slowed, as JSON data: the pause's end in wall time
        (``wall`` is ``now`` on the wall clock) and the floor (its steps back are counted
        again from the configured delay when restored: :meth:`adopt`)."""
        return {
            key: {"until": wall + state.until - now, "floor": state.floor}
            for key, state in self._slots.items()
            if state.until > now or state.floor
        }

    def exported(self, data: dict[str, Any], wall: float) -> list[tuple[str, float, float]]:
        """The slots of :meth:`export` (another run's), as (key, floor, seconds of pause
        left, within ROBOTSTXT_BACKOFF_MAX_PAUSE). A malformed item is skipped."""
        found = []
        for key, item in data.items():
            try:
                left = float(item["until"]) - wall
                floor = float(item["floor"])
            except (KeyError, TypeError, ValueError):
                continue
            if isinstance(key, str) and floor >= 0:
                found.append((key, floor, min(max(left, 0.0), self.config.max_pause)))
        return found

    def adopt(self, key: str, base: float, floor: float, left: float, now: float) -> float | None:
        """Slot ``key`` paused ``left`` seconds, then paced at ``floor`` (back to ``base`` in
        the usual steps), unless it is paused longer or slower already: the floor now."""
        state = self._slots.get(key)
        if state is None:
            state = self._slots[key] = _SlotState()
            self._trim()
        state.throttles = max(state.throttles, 1)
        state.since = max(state.since, now)
        state.until = max(state.until, now + min(left, self.config.max_pause))
        if floor > max(state.floor, base):
            state.floor = floor
            state.step = (floor - base) / self.config.recovery
        return state.floor or None

    def _trim(self) -> None:
        while len(self._slots) > MAX_SLOTS:
            self._slots.popitem(last=False)


class PageBackoff:
    """Hears every answer as it leaves the downloader (Scrapy's ``response_downloaded``
    signal, before any middleware: RetryMiddleware retries a 429 at once, and its retry
    then waits in the slot for the pause) and tells the slot (``SlotPacer.slow_down``).
    One INFO line when a site is paused and one when its first answer after the pause
    comes back; the requests themselves are not logged."""

    def __init__(self, crawler: Crawler, pacing: SitePacing, config: BackoffConfig):
        self.crawler = crawler
        self.stats = crawler.stats
        self.pacing = pacing
        self.slots = pacing.slots
        self.rules = Backoff(config)
        self._paused: dict[str, float] = {}  #: slot key -> when its pause began (for the resume line)
        crawler.signals.connect(self._downloaded, signal=signals.response_downloaded)
        jobdir = crawler.settings.get("JOBDIR")
        #: a JOBDIR crawl keeps its pauses with the job: a resumed crawl still honours them
        self.path = Path(jobdir) / JOBDIR_FILE if jobdir else None
        #: the fleet's pauses, read each second while the crawl runs (a pace shared through Redis)
        shares = getattr(getattr(pacing, "shared", None), "pauses", None) is not None
        self.fleet = FleetPauses(self) if shares else None
        crawler.signals.connect(self._opened, signal=signals.spider_opened)
        crawler.signals.connect(self._closed, signal=signals.spider_closed)

    def _opened(self, spider: Any) -> None:
        if self.fleet is not None:
            self.fleet.start()
        if self.path is not None:
            self._restore(spider)

    def adopt(self, key: str, floor: float, left: float, why: str) -> None:
        """Pause slot ``key`` for ``left`` seconds, then pace it at ``floor``: a pause kept
        with the job, or another crawler's of the fleet."""
        request = Request(f"http://{key}/", meta={DOWNLOAD_SLOT: key})
        now = self.slots.now()
        floor = self.rules.adopt(key, self.slots.configured_delay(request), floor, left, now)
        self.slots.slow_down(request, floor, left)
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
        data = self.rules.export(self.slots.now(), time.time())
        partial = self.path.with_suffix(".tmp")
        try:
            partial.write_text(json.dumps(data))
            partial.replace(self.path)
        except OSError as exc:
            logger.warning("Could not keep the pauses in %(path)s: %(error)s", {"path": self.path, "error": exc})

    def pause_left(self, request: Request) -> float:
        """Seconds before ``request``'s slot may start a request again (0: none)."""
        return self.rules.paused_until(self.slots.key(request)) - self.slots.now()

    def _downloaded(self, response: Response, request: Request, **kwargs: Any) -> None:
        if request.meta.get(FETCH_META):
            return  # robots.txt has its own Retry-After handling (policyfiles/retry_after.py)
        key = request.meta.get("download_slot")
        if key is None:
            return
        now = self.slots.now()
        sent = now - float(request.meta.get("download_latency") or 0.0)
        base = self.slots.configured_delay(request)
        retry_after = response.headers.get(b"Retry-After")
        if self.rules.throttles(response.status, retry_after):
            self._throttled(request, response, key, base, retry_after, sent, now)
        elif self.rules.floor(key) is not None:
            floor = self.rules.answered(key, base, sent)
            self.slots.slow_down(request, floor)
            began = self._paused.pop(key, None) if sent >= self.rules.paused_until(key) else None
            if began is not None:
                logger.info(
                    "%(site)s answers again after its pause (%(paused).1fs since the first slow down): its delay "
                    "is %(floor)s, back to %(base)gs in equal steps (ROBOTSTXT_BACKOFF_RECOVERY); %(slot)s",
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
        pause = self.rules.throttled(key, base, retry_after, sent, now, time.time())
        self.slots.slow_down(request, pause.floor, pause.until - now)
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
        doubled = "ROBOTSTXT_BACKOFF_PAUSE, doubled per consecutive slow down"
        if pause.asked is None and retry_after is not None:
            value = retry_after.decode("latin-1")[:QUOTED]
            source = f"Retry-After {value!r} ignored: neither seconds nor an HTTP date; {doubled}"
        elif pause.asked is None:
            source = f"no Retry-After: {doubled}"
        elif pause.asked > pause.seconds:
            source = f"Retry-After asks {pause.asked:g}s, bounded by ROBOTSTXT_BACKOFF_MAX_PAUSE"
        else:
            source = "Retry-After"
        logger.info(
            "%(site)s says slow down (HTTP %(status)d): its requests paused %(seconds).1fs (%(source)s), "
            "then at a delay of %(floor)gs (was %(base)gs); %(slot)s",
            {
                "site": site_of(request),
                "status": response.status,
                "seconds": pause.seconds,
                "source": source,
                "floor": pause.floor,
                "base": base,
                "slot": _slot_text(key, request, "is paused"),
            },
            extra={"spider": self.crawler.spider},
        )


def _slot_text(key: str, request: Request, what: str) -> str:
    """The pause holds the downloader slot, not one site: say which, and what it spans
    (Scrapy's default slot is the host: every port and scheme of it)."""
    host = urlparse_cached(request).hostname
    spans = "every port of the host" if key == host else "every request Scrapy puts in it"
    return f"the slot {key!r} {what} ({spans})"


class FleetPauses:
    """A "slow down" heard by one crawler of a fleet pauses the slot for all of them:
    it is written to the slot's pace in Redis (which every reservation of a fleet-paced
    slot reads at once), and every crawler reads the fleet's pauses each
    ``FLEET_POLL`` seconds for its other slots (within that time, then)."""

    def __init__(self, backoff: PageBackoff):
        self.backoff = backoff
        self._tasks: set[asyncio.Future[Any]] = set()
        self._poll: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._poll = asyncio.ensure_future(self._listen())

    def stop(self) -> None:
        if self._poll is not None:
            self._poll.cancel()
            self._poll = None

    def tell(self, key: str, floor: float, seconds: float) -> None:
        told = self.backoff.pacing.slowed_down(key, floor, seconds)
        if told is not None:
            task = asyncio.ensure_future(told)
            self._tasks.add(task)
            task.add_done_callback(self._told)

    def _told(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:  # a bug: an outage returns None
            logger.error("Could not tell the fleet of a pause", exc_info=task.exception())

    async def _listen(self) -> None:
        backoff = self.backoff
        while True:  # at once, then each FLEET_POLL: a crawler that joins hears the pauses before it starts
            try:
                found = await backoff.pacing.shared_pauses() or []
            except Exception:  # a bug, not an outage (those return None): said, never fatal
                logger.exception("Could not read the fleet's pauses")
                found = []
            now = backoff.slots.now()
            for key, left, floor in found:
                if backoff.rules.paused_until(key) < now + left - FLEET_POLL / 10:
                    backoff.stats.inc_value("robotstxt/backoff/fleet_paused")
                    backoff.adopt(key, floor, left, "paused by another crawler of the fleet")
            await asyncio.sleep(FLEET_POLL)
