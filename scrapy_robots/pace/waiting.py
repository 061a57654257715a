"""Where requests wait for their site's robots.txt: one fetch shared by all of them
(:class:`SingleFlight`), and the room they wait in (:class:`WaitingRoom`).

A parked request leaves the downloader's ``CONCURRENT_REQUESTS`` count (see
:func:`scrapy_robots.pace.slots.concurrency_released`), so a slow or unreachable site does
not stall the others. Parking must never hold a crawl hostage:

- when the crawl starts closing (Ctrl-C, ``CLOSESPIDER_*``, ``engine.close_spider``),
  every parked request is released at once with :class:`CrawlClosing`, whatever the
  retry schedule. Scrapy sends no signal at that moment, so the room watches the
  engine while anything is parked (:func:`scrapy_robots.pace.slots.engine_closing`);
- the number parked is bounded (``ROBOTSTXT_MAX_WAITING``): a request beyond the
  bound goes back to the scheduler (:meth:`WaitingRoom.overflow`) rather than hold a
  download place.

A request released by the close goes back to a scheduler that keeps its queue
(``JOBDIR``), else it is ignored with the reason (:meth:`WaitingRoom.closing_exit`):
never lost without a word.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import CancelledError, Deferred
from twisted.internet.task import LoopingCall, deferLater
from twisted.python.failure import Failure

from scrapy_robots.pace.slots import concurrency_released, engine_closing

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots.cache.storage import RequestLeases

logger = logging.getLogger(__name__)

#: Seconds between two looks at the engine while requests are parked.
WATCH_INTERVAL = 0.25
#: Seconds a request beyond ROBOTSTXT_MAX_WAITING keeps its place before it is requeued.
OVERFLOW_PAUSE = 0.5
#: Meta key of a request sent back to the scheduler when the crawl closed: the run that
#: sent it. A persistent queue keeps it with the request, so it names the run rather than
#: saying "requeued once": a later run requeues the request again at its own close.
REQUEUED_ON_CLOSE = "_robotstxt_requeued_on_close"
#: Meta key of a request sent back beyond ROBOTSTXT_MAX_WAITING: its priority before the
#: first time, so that it goes one step lower however often it is sent back.
PRIORITY_BEFORE_OVERFLOW = "_robotstxt_priority"


class CrawlClosing(Exception):
    """The crawl began closing while a request waited for its site's robots.txt (``state``:
    what robots.txt was, "being fetched"), or for something else (a ``state`` that names
    ``{site}`` itself: "{site} had said slow down")."""

    def __init__(self, site: str, state: str):
        what = state.format(site=site) if "{site}" in state else f"robots.txt of {site} was {state}"
        super().__init__(f"crawl closing while {what}")
        self.site = site
        self.state = state


class RoomFull(Exception):
    """ROBOTSTXT_MAX_WAITING requests are parked already."""


def timer(seconds: float) -> Deferred[None]:
    # Imported here: importing it at module level installs Twisted's default reactor
    # when this module is loaded before Scrapy installs the asyncio one (Scrapy 2.13).
    from twisted.internet import reactor

    return deferLater(reactor, max(seconds, 0.0), lambda: None)


async def sleep(seconds: float) -> None:
    if seconds > 0:
        await maybe_deferred_to_future(timer(seconds))


def discard(source: Deferred[Any]) -> None:
    """Cancel a Deferred nobody will wait for, its outcome dropped (not logged as unhandled)."""
    source.addErrback(lambda _: None)
    source.cancel()


class SingleFlight:
    """At most one ``work()`` per key at a time; every caller that joins meanwhile gets
    the result through a Deferred of its own (which it may cancel without touching
    the work or the other callers)."""

    def __init__(self) -> None:
        self._flights: dict[str, tuple[Deferred[Any], list[Deferred[Any]]]] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._flights

    def __len__(self) -> int:
        return len(self._flights)

    def join(self, key: str, work: Callable[[], Awaitable[Any]]) -> Deferred[Any]:
        waiter: Deferred[Any] = Deferred()
        if key in self._flights:
            self._flights[key][1].append(waiter)
            return waiter
        running = deferred_from_coro(work())
        self._flights[key] = (running, [waiter])
        running.addBoth(self._land, key)
        return waiter

    def cancel_all(self) -> None:
        """Cancel every work in flight (its download included)."""
        for running, _ in list(self._flights.values()):
            running.cancel()

    def _land(self, result: Any, key: str) -> None:
        _, waiters = self._flights.pop(key)
        live = [waiter for waiter in waiters if not waiter.called]
        for waiter in live:
            if isinstance(result, Failure):
                waiter.errback(result)
            else:
                waiter.callback(result)
        if (
            isinstance(result, Failure)
            and not live
            and not result.check(CancelledError, asyncio.CancelledError, CrawlClosing)
        ):
            logger.error("robots.txt work for %(key)s failed", {"key": key}, exc_info=result.value)


class WaitingRoom:
    def __init__(
        self, crawler: Crawler, max_waiting: int, requeue_on_close: bool = False, leases: RequestLeases | None = None
    ):
        self.crawler = crawler
        #: While a request waits (here, or in the fleet's turn: fleet/shared_pacing.py), it is leased
        #: where the storage says (the fleet's Redis, fleet/leases.py), so that another
        #: crawler gives it back to the shared queue if this one dies; chosen once.
        self.leased: Callable[[Request], AbstractContextManager[None]] = (
            leases.held if leases is not None else _not_leased
        )
        self.stats = crawler.stats
        self.max_waiting = max_waiting
        self.requeue_on_close = requeue_on_close
        #: This run, as REQUEUED_ON_CLOSE records it.
        self.run = uuid.uuid4().hex
        self.closing = False
        self.per_site: Counter[str] = Counter()
        self.flights = SingleFlight()
        # release Deferred -> (site, what it waits for, the source to cancel on close)
        self._parked: dict[Deferred[Any], tuple[str, str, Deferred[Any]]] = {}
        #: requests that wait elsewhere and watch the close themselves (the fleet's turn,
        #: fleet/shared_pacing.py), per site: counted in the close line, released by their waiter
        self.held: Counter[str] = Counter()
        self._held_total = 0
        self._watch = LoopingCall(self._look_at_engine)

    def __len__(self) -> int:
        """Requests waiting outside the downloader: parked here, or held elsewhere."""
        return len(self._parked) + self._held_total

    def full(self) -> bool:
        """ROBOTSTXT_MAX_WAITING requests wait already."""
        return len(self) >= self.max_waiting

    def waiting_for(self, site: str) -> int:
        return self.per_site[site]

    async def park(self, request: Request, site: str, state: str, source: Deferred[Any]) -> Any:
        """:meth:`wait`, unless the room is full: then :class:`RoomFull`."""
        self.stats.inc_value("robotstxt/deferred")
        if self.full():
            discard(source)
            raise RoomFull
        return await self.wait(request, site, state, source)

    def closing_exit(self, request: Request, closing: CrawlClosing) -> Request:
        """The crawl is closing while ``request`` waits: back to a persistent scheduler
        (JOBDIR), else IgnoreRequest with the reason."""
        spider = self.crawler.spider
        # Once a run: a request this run sent back already and met again would loop
        # between the scheduler and here (the engine takes none once closing).
        if self.requeue_on_close and request.meta.get(REQUEUED_ON_CLOSE) != self.run:
            self.stats.inc_value("robotstxt/closing/requeued")
            logger.debug(
                "%(reason)s: %(request)s goes back to the scheduler",
                {"reason": closing, "request": request},
                extra={"spider": spider},
            )
            # It passed the dupefilter once already; the scheduler would drop it as seen.
            return request.replace(dont_filter=True, meta={**request.meta, REQUEUED_ON_CLOSE: self.run})
        self.stats.inc_value("robotstxt/closing/ignored")
        logger.debug(
            "%(reason)s: %(request)s ignored", {"reason": closing, "request": request}, extra={"spider": spider}
        )
        raise IgnoreRequest(str(closing))

    async def overflow(self, request: Request) -> Request:
        """ROBOTSTXT_MAX_WAITING requests are parked already: ``request`` goes back to the
        scheduler, one priority lower so that requests of other sites pass it, after a
        short pause in its download place (the engine would otherwise pull it straight
        back while nothing else is queued)."""
        self.stats.inc_value("robotstxt/waiting/requeued")
        with self.leased(request):  # it holds a download place, still the package's: leased too
            await sleep(OVERFLOW_PAUSE)
        # One step, not one per return: a JOBDIR queue keeps the priority (and opens a
        # queue on disk for each), a resumed crawl included.
        before = request.meta.get(PRIORITY_BEFORE_OVERFLOW, request.priority)
        return request.replace(
            dont_filter=True, priority=before - 1, meta={**request.meta, PRIORITY_BEFORE_OVERFLOW: before}
        )

    async def wait(self, request: Request, site: str, state: str, source: Deferred[Any]) -> Any:
        """Park ``request`` until ``source`` fires and return its result; raise
        :class:`CrawlClosing` as soon as the crawl starts closing. ``source`` must be
        this request's own Deferred: it is cancelled on close."""
        if self.closing or engine_closing(self.crawler):
            self._close_now()
            discard(source)
            raise CrawlClosing(site, state)
        release: Deferred[Any] = Deferred()

        def forward(result: Any) -> None:
            if not release.called:
                if isinstance(result, Failure):
                    release.errback(result)
                else:
                    release.callback(result)
            # else: the close released this request first; the late result is dropped.

        source.addBoth(forward)
        self._parked[release] = (site, state, source)
        self.per_site[site] += 1
        self._start_watching()
        try:
            with concurrency_released(self.crawler, request), self.leased(request):
                return await maybe_deferred_to_future(release)
        finally:
            del self._parked[release]
            self.per_site[site] -= 1
            if not self.per_site[site]:
                del self.per_site[site]
            self._stop_watching()

    @contextmanager
    def holding(self, site: str) -> Iterator[None]:
        """A request of ``site`` waits outside the room meanwhile (its waiter raises
        :class:`CrawlClosing` when :meth:`closing_now` says so): the close line counts it."""
        self.held[site] += 1
        self._held_total += 1
        try:
            yield
        finally:
            self._held_total -= 1
            self.held[site] -= 1
            if not self.held[site]:
                del self.held[site]

    def closing_now(self) -> bool:
        """Whether the crawl is closing; the first to see it closes the room (its one line,
        the held requests counted while they still wait)."""
        if not self.closing and engine_closing(self.crawler):
            self._close_now()
        return self.closing

    def join(self, site: str, work: Callable[[], Awaitable[Any]]) -> Deferred[Any]:
        """This caller's Deferred for the site's one ``work()`` in flight (started now
        if there is none). A fetch in flight is watched too: it is cancelled on close."""
        waiter = self.flights.join(site, work)
        self._start_watching()
        return waiter

    def _start_watching(self) -> None:
        if not self._watch.running:
            self._watch.start(WATCH_INTERVAL, now=False)

    def _stop_watching(self) -> None:
        if not self._parked and not self.flights and self._watch.running:
            self._watch.stop()

    def _look_at_engine(self) -> None:
        if engine_closing(self.crawler):
            self._close_now()
        self._stop_watching()

    def _close_now(self) -> None:
        if not self.closing:
            self.closing = True
            if self._parked or self.held:
                logger.info(
                    "Crawl closing: %(count)d request(s) of %(sites)d site(s) waiting for robots.txt or for "
                    "their site's turn %(fate)s",
                    {
                        "count": len(self._parked) + sum(self.held.values()),
                        "sites": len(self.per_site.keys() | self.held.keys()),
                        "fate": "go back to the job's queue (JOBDIR)"
                        if self.requeue_on_close
                        else "are not sent (stat robotstxt/closing/ignored)",
                    },
                    extra={"spider": self.crawler.spider},
                )
        for release, (site, state, source) in list(self._parked.items()):
            if not release.called:
                release.errback(CrawlClosing(site, state))
            source.cancel()
        # A robots.txt download in flight is in the engine's "in progress" set too:
        # it would hold the close up to ROBOTSTXT_TIMEOUT.
        self.flights.cancel_all()


def _not_leased(request: Request) -> AbstractContextManager[None]:
    return nullcontext()
