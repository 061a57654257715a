"""The only module that touches Scrapy's downloader and engine internals (with
``slot_classes.py``, the subclasses of Scrapy's ``Slot`` it installs, and ``turns.py``,
when a slot may start its next request and the hold of its queue during a pause).

Scrapy is reworking its downloader (an open pull request would replace
``Downloader.slots``); when that lands, this module is the one to change.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from scrapy import signals
from scrapy.core import downloader as _downloader_module
from scrapy.core.downloader import Downloader
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from scrapy_robots.pace.slot_classes import count_starts, fleet_slot_class, floored_slot_class

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

logger = logging.getLogger(__name__)

DOWNLOAD_SLOT = getattr(Downloader, "DOWNLOAD_SLOT", "download_slot")
# The clock of Slot.lastseen: time.monotonic in newer Scrapy (2.16 on), time.time in 2.13 and 2.14.
_slot_clock: Callable[[], float] | None = getattr(_downloader_module, "monotonic", None) or getattr(
    _downloader_module, "time", None
)

# Scrapy 2.13's Downloader._get_slot(request, spider); later ones deprecate the spider.
_spider_parameter = (
    inspect.signature(Downloader._get_slot).parameters.get("spider") if hasattr(Downloader, "_get_slot") else None
)
_GET_SLOT_NEEDS_SPIDER = _spider_parameter is not None and _spider_parameter.default is inspect.Parameter.empty


def missing_slot_api(downloader: Any) -> list[str]:
    """What this module needs of Scrapy's downloader and is not there.

    Scrapy plans to replace download slots (scrapy/scrapy pull request 6931:
    throttling scopes; ``Downloader.slots``, ``DOWNLOAD_SLOTS`` and the
    ``download_slot`` meta key deprecated). Without them robots.txt's delay
    cannot reach the downloader; the crawl must say so, not lose it unseen.
    """
    missing = [
        f"Downloader.{name}"
        for name in ("slots", "per_slot_settings", "get_slot_key", "_get_slot")
        if not hasattr(downloader, name)
    ]
    slot_class = getattr(_downloader_module, "Slot", None)
    if slot_class is None or not callable(getattr(slot_class, "download_delay", None)):
        missing.append("Slot.download_delay")
    if _slot_clock is None:
        missing.append("the clock of Slot.lastseen (scrapy.core.downloader.monotonic or .time)")
    return missing


def warn_at_start_if_slots_missing(crawler: Crawler) -> None:
    """At start-up, once the engine has its downloader: a WARNING naming what
    :func:`missing_slot_api` finds missing (each site with a Crawl-delay then logs
    its own error when its delay cannot be set)."""

    def check() -> None:
        missing = missing_slot_api(getattr(crawler.engine, "downloader", None))
        if not missing:
            return
        from scrapy import __version__ as scrapy_version

        crawler.stats.set_value("robotstxt/crawl_delay/unsupported", 1)
        logger.warning(
            "Crawl-delay and Request-rate cannot be applied in this crawl: Scrapy %(version)s's downloader has no "
            "%(missing)s, through which scrapy_robots sets each site's download delay (scrapy_robots/slots.py). "
            "Use a Scrapy version scrapy-robots supports (see its README), or set ROBOTSTXT_CRAWL_DELAY = False "
            "to crawl without robots.txt's delays knowingly.",
            {"version": scrapy_version, "missing": ", ".join(missing)},
            extra={"spider": crawler.spider},
        )

    crawler.signals.connect(check, signal=signals.engine_started, weak=False)


@contextmanager
def concurrency_released(crawler: Crawler, request: Request) -> Iterator[None]:
    """Let ``request`` wait without holding one of the downloader's
    ``CONCURRENT_REQUESTS`` places.

    A request waiting in a downloader middleware counts in ``Downloader.active``,
    which the engine compares with ``CONCURRENT_REQUESTS`` before it sends anything
    else; requests waiting for a slow site's robots.txt would stall every other site.
    The request leaves the set while it waits and comes back before the
    middleware returns, so Scrapy's own bookkeeping is unchanged.
    """
    engine = crawler.engine
    active: set[Request] = getattr(getattr(engine, "downloader", None), "active", set())
    held = request in active
    if held:
        active.discard(request)
        # The place is free now: let the engine fill it at once, not at its next
        # heartbeat (5 s), as it does when a download ends.
        nextcall = getattr(getattr(engine, "_slot", None), "nextcall", None)
        if nextcall is not None and hasattr(nextcall, "schedule"):
            nextcall.schedule()
    try:
        yield
    finally:
        if held:
            active.add(request)


def engine_closing(crawler: Crawler) -> bool:
    """Has the crawl begun to close (or stop)?

    Scrapy 2.19 sends no signal when ``close_spider_async`` starts: it logs "Closing
    spider", marks its engine slot as closing and waits for every request in progress,
    parked ones included. ``engine.running`` turns false first on a stop (Ctrl-C).
    """
    engine = crawler.engine
    if engine is None:
        return False
    slot = getattr(engine, "_slot", None)
    if slot is None:
        # No engine slot: not opened yet (crawl starting) or already closed.
        return getattr(engine, "spider", None) is not None
    # Compared by type, not truth: a test's mock engine has mocks everywhere.
    return isinstance(getattr(slot, "closing", None), Deferred) or getattr(engine, "running", True) is False


def leave_redirecting_hosts_slot(request: Request) -> None:
    """Let a request redirected to another host go out in that host's slot.

    Scrapy's downloader writes the slot key in ``meta["download_slot"]`` and its
    redirect middleware copies the meta: the hop would be paced by the host it comes
    from, not the one it goes to, and reach a host that asks a Crawl-delay at any time.
    A slot the request was given (one that is not the previous hop's host) is kept. So is
    a robots.txt download's own slot (:func:`robots_txt_slot`) while the hop stays on the
    previous hop's host; a hop to another host goes out in that host's slot, at its pace.
    """
    meta = request.meta
    slot = meta.get(DOWNLOAD_SLOT)
    if slot is None:
        return
    previous = urlparse(meta["redirect_urls"][-1]).hostname
    if isinstance(slot, str) and slot.startswith(_ROBOTS_TXT_SLOT):
        if urlparse_cached(request).hostname != previous:
            del meta[DOWNLOAD_SLOT]
    elif slot == previous and urlparse_cached(request).hostname != slot:
        del meta[DOWNLOAD_SLOT]


_ROBOTS_TXT_SLOT = "robots.txt "


def robots_txt_slot(site: str) -> str:
    """The downloader slot of ``site``'s robots.txt download: its own, one per site.

    In the slot of the site's pages (Scrapy's: per host name, or the request's
    ``download_slot``) a robots.txt that hangs would hold one of its transfer places for
    ``ROBOTSTXT_TIMEOUT``, and every site sharing the slot (ports of one host, a user's
    ``download_slot``) would wait behind it; at ``CONCURRENT_REQUESTS_PER_DOMAIN = 1``,
    all of them. :func:`robots_txt_download` keeps the pages' pace counting from it.
    """
    return f"{_ROBOTS_TXT_SLOT}{site}"


@contextmanager
def robots_txt_download(slots: SlotPacer, robots: Request, request: Request) -> Iterator[None]:
    """While ``robots``, the robots.txt download that ``request`` needs, is in flight (in a
    slot of its own, :func:`robots_txt_slot`), ``request``'s slot sees it as its own: its
    delay counts from the download's start, so that the site's first page comes one delay
    after it, and it counts among the slot's active requests (not its transfers), so that
    Scrapy's downloader-aware queue still sees the site busy and hands out other sites'
    requests first, and its slot is not collected meanwhile. What a site and the scheduler
    see is what they saw when robots.txt went out in the slot; what the slot's other sites
    no longer see is a robots.txt that hangs holding one of its transfer places."""
    slot = slots.live_slot(request)
    if slot is not None:
        assert _slot_clock is not None
        slot.lastseen = max(slot.lastseen, _slot_clock())
    with _active_in(slot, robots):
        yield


def robots_txt_done(slots: SlotPacer, site: str) -> None:
    """``site``'s policy file download ended: its own slot (:func:`robots_txt_slot`) goes now
    if nothing else is in it, rather than at Scrapy's slot collector (a minute idle), so that
    a broad crawl keeps one slot per site it is crawling, not two per site seen."""
    held = getattr(slots.downloader(), "slots", None)
    if not isinstance(held, dict):
        return
    key = robots_txt_slot(site)
    slot = held.get(key)
    if slot is None or getattr(slot, "active", None) or getattr(slot, "queue", None):
        return
    if getattr(slot, "transferring", None):
        return
    del held[key]
    slot.close()


@contextmanager
def _active_in(slot: Any, request: Request) -> Iterator[None]:
    """``request`` among ``slot``'s active requests meanwhile (not its transfers); nothing
    without a slot (None) or one that keeps no such set."""
    active = getattr(slot, "active", None)
    if not isinstance(active, set):
        yield
        return
    active.add(request)
    try:
        yield
    finally:
        active.discard(request)


#: The "site" of a slot's floor raised by a "slow down" answer, among its sites' delays.
SLOWED_DOWN = "(slowed down)"


def slot_delay(user_delay: float, crawl_delay: float | None) -> float:
    """The delay a site's slot keeps: robots.txt's delay is a floor under the user's
    (DOWNLOAD_DELAY, DOWNLOAD_SLOTS), which it may lengthen, never shorten."""
    return user_delay if crawl_delay is None else max(user_delay, crawl_delay)


def user_delay(crawler: Crawler, request: Request) -> float:
    """The delay the user configured for ``request``'s slot (DOWNLOAD_SLOTS, else
    DOWNLOAD_DELAY), before any robots.txt delay."""
    return SlotPacer(crawler).user_delay(request)


class SlotPacer:
    """Sets the per-site floor of the downloader slot delay (``apply_crawl_delay``).

    The floor lives in two places, so that it survives Scrapy's slot garbage collection
    (idle slots are dropped after about a minute and recreated with default settings):
    on the live slot, and in ``Downloader.per_slot_settings`` (``DOWNLOAD_SLOTS``), which
    Scrapy reads when it recreates a slot.
    """

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self._original: dict[str, dict[str, Any] | None] = {}
        # slot key -> {site: its delay}: several sites may share a slot (meta
        # "download_slot"); the slot keeps the largest of their delays.
        self._delays: dict[str, dict[str, float]] = {}
        #: sites whose delay floors a slot (the middleware's fast path asks)
        self.paced_sites: set[str] = set()
        self._classes: dict[tuple[type, float, bool], type] = {}
        self._unsupported: bool | None = None  #: missing_slot_api(), once asked

    def user_delay(self, request: Request) -> float:
        """The delay the user configured for this request's slot (DOWNLOAD_SLOTS, else DOWNLOAD_DELAY)."""
        downloader = self.downloader()
        key = downloader.get_slot_key(request)
        settings = self._original[key] if key in self._original else downloader.per_slot_settings.get(key)
        return float((settings or {}).get("delay", self.crawler.settings.getfloat("DOWNLOAD_DELAY")))

    def configured_delay(self, request: Request) -> float:
        """The delay of ``request``'s slot before any "slow down" (scrapy_robots.pace.backoff):
        the user's, under the Crawl-delay of its sites."""
        delays = self._delays.get(self.downloader().get_slot_key(request), {})
        asked = [delay for site, delay in delays.items() if site != SLOWED_DOWN]
        return slot_delay(self.user_delay(request), max(asked) if asked else None)

    def slow_down(self, request: Request, floor: float | None, pause: float = 0.0) -> None:
        """``request``'s slot was told to slow down (scrapy_robots.pace.backoff): its delay
        floored at ``floor`` (None: back to its configured pace), and no request of it
        starts within ``pause`` seconds from now."""
        self.apply_crawl_delay(request, SLOWED_DOWN, floor)
        slot = self.live_slot(request)
        if slot is None:
            return
        if floor is not None and slot.delay > floor:
            # Coming back: the floor raised the slot's delay, which only ever goes up
            # for a Crawl-delay (AutoThrottle, if on, moves it again from there).
            slot.delay = floor
        if pause <= 0:
            return
        assert _slot_clock is not None
        # Scrapy waits ``download_delay() - now + lastseen`` before the slot's next
        # start, and the floored delay is at least ``floor``: at least ``pause``.
        slot.lastseen = max(slot.lastseen, _slot_clock() + pause - (floor or 0.0))

    def key(self, request: Request) -> str:
        """``request``'s slot key, as Scrapy's downloader makes it."""
        return self.downloader().get_slot_key(request)

    def now(self) -> float:
        """The clock of the slots' ``lastseen``."""
        assert _slot_clock is not None
        return _slot_clock()

    def steady(self, request: Request) -> None:
        """``request``'s slot keeps a delay of the user's own (``DOWNLOAD_DELAY``,
        ``DOWNLOAD_SLOTS``, AutoThrottle) and waits in the package's line: its class draws no
        jitter (the line draws each gap), so that Scrapy starts what the line hands it at once.
        A slot the package floors already, or the fleet paces, is left as it is."""
        slot = self.live_slot(request)
        if slot is not None and not hasattr(type(slot), "unfloored"):
            self._set_class(slot, 0.0)

    def slot(self, key: str) -> Any:
        """Slot ``key`` as Scrapy holds it now, None if it holds none (or has no such slots)."""
        slots = getattr(self.downloader(), "slots", None)
        return slots.get(key) if isinstance(slots, dict) else None

    def apply_crawl_delay(self, request: Request, site: str, delay: float | None) -> None:
        """Make ``site``'s ``delay`` a floor of the slot that will download ``request``;
        ``None`` withdraws the site's floor (its new robots.txt dropped its Crawl-delay).
        A slot shared by several sites keeps the largest of their delays."""
        downloader = self.downloader()
        key = downloader.get_slot_key(request)
        delays = self._delays.get(key)
        if delay is None:
            if delays is None or site not in delays:
                return
            del delays[site]
            self.paced_sites.discard(site)
            if not delays:
                del self._delays[key]
                self._restore(downloader, key)
                return
        else:
            if delays is None:
                delays = self._delays[key] = {}
            if delays.get(site) == delay and (getattr(downloader.slots.get(key), "floor", None) or 0.0) > 0.0:
                return  # nothing changed: the hot path of a paced site (a steady slot's floor is 0: not it)
            delays[site] = delay
            self.paced_sites.add(site)
        floor = slot_delay(self.user_delay(request), max(delays.values()))
        if key not in self._original:
            self._original[key] = downloader.per_slot_settings.get(key)
        downloader.per_slot_settings[key] = {**(self._original[key] or {}), "delay": floor}
        slot = downloader.slots.get(key)
        if slot is None:
            slot = self._new_slot(downloader, request)
        self._set_class(slot, floor)
        if slot.delay < floor:
            slot.delay = floor

    def live_slot(self, request: Request) -> Any:
        """``request``'s slot, made if need be; None when Scrapy's downloader has no such
        slots (said at start-up) or is not a real one (a test's mock)."""
        downloader = self.downloader()
        if self._unsupported is None:
            self._unsupported = bool(missing_slot_api(downloader)) or not isinstance(
                getattr(downloader, "slots", None), dict
            )
        if self._unsupported:  # warn_at_start_if_slots_missing said so
            return None
        slot = downloader.slots.get(downloader.get_slot_key(request))
        return count_starts(slot if slot is not None else self._new_slot(downloader, request))

    def holding_slot(self, request: Request) -> AbstractContextManager[None]:
        """While ``request`` waits for its turn before the downloader, its slot counts it
        among its active requests, as Scrapy counts a request queued in a slot for its
        delay: the downloader-aware queue sees the slot busy, and the slot is not collected."""
        return _active_in(self.live_slot(request), request)

    def _new_slot(self, downloader: Any, request: Request) -> Any:
        if _GET_SLOT_NEEDS_SPIDER:
            return count_starts(downloader._get_slot(request, self.crawler.spider)[1])
        return count_starts(downloader._get_slot(request)[1])

    def _set_class(self, slot: Any, floor: float, fleet: bool = False) -> None:
        cls = type(slot)
        if getattr(cls, "floor", None) == floor and getattr(cls, "fleet", False) == fleet:
            return
        base = getattr(cls, "unfloored", cls)
        if (base, floor, fleet) not in self._classes:
            factory = fleet_slot_class if fleet else floored_slot_class
            self._classes[(base, floor, fleet)] = factory(base, floor)
        slot.__class__ = self._classes[(base, floor, fleet)]

    def _restore(self, downloader: Any, key: str) -> None:
        if key not in self._original:  # its delays were the fleet's only: nothing set here
            return
        original = self._original.pop(key)
        if original is None:
            downloader.per_slot_settings.pop(key, None)
        else:
            downloader.per_slot_settings[key] = original
        slot = downloader.slots.get(key)
        if slot is not None and hasattr(type(slot), "unfloored"):
            slot.__class__ = type(slot).unfloored
            slot.delay = float((original or {}).get("delay", self.crawler.settings.getfloat("DOWNLOAD_DELAY")))

    def downloader(self) -> Any:
        assert self.crawler.engine is not None
        return self.crawler.engine.downloader


class FleetSlotPacer(SlotPacer):
    """A :class:`SlotPacer` whose sites the fleet paces (``scrapy_robots.fleet.pacing``,
    ``SharedPacing``): the slot's interval reserved across the crawlers, applied here.

    The fleet's side of the slots lives in this module, beside the local pace, because
    this module stays the only one that touches Scrapy's downloader internals (with
    ``slot_classes.py`` and ``turns.py``); a crawl without a fleet never builds one.
    """

    def fleet_floor(self, request: Request, site: str, delay: float) -> tuple[str, float]:
        """The fleet paces ``request``'s slot: record ``site``'s ``delay`` among the slot's
        sites and return the slot's key (Scrapy's: the host name, or ``download_slot``) and
        its floor, the largest delay of its sites and the user's, as the local pace keeps."""
        downloader = self.downloader()
        key = downloader.get_slot_key(request)
        if delay > 0:
            delays = self._delays.setdefault(key, {})
            delays[site] = delay
            self.paced_sites.add(site)
        else:  # no delay of its own, or no longer (its robots.txt dropped it)
            delays = self._delays.get(key, {})
            if delays.pop(site, None) is not None:
                self.paced_sites.discard(site)
                if not delays:
                    del self._delays[key]
                    self._restore(downloader, key)
        # A "slow down" floor is not the slot's interval in the fleet: it comes back in
        # steps (slowed_floor, reserved apart).
        asked = [value for name, value in delays.items() if name != SLOWED_DOWN]
        return key, slot_delay(self.user_delay(request), max(asked, default=None))

    def slowed_floor(self, key: str) -> float:
        """Slot ``key``'s floor raised by a "slow down" (scrapy_robots.pace.backoff), 0 for none."""
        return self._delays.get(key, {}).get(SLOWED_DOWN, 0.0)

    def site_slot_key(self, site: str) -> str:
        """The slot key of ``site``'s pages (unless a request names its own ``download_slot``)."""
        from scrapy import Request

        return self.downloader().get_slot_key(Request(f"{site}/"))

    def fleet_handover(self, request: Request, floor: float) -> float | None:
        """Before the fleet paces this request's site: the seconds its local slot still
        needs after its last start (the fleet's reservation must not come sooner), or
        None while the slot holds requests queued at the local pace (pace locally until
        they are gone, or they would lose their delay)."""
        downloader = self.downloader()
        slot = downloader.slots.get(downloader.get_slot_key(request))
        if slot is None:
            return 0.0
        if slot.queue and not getattr(type(slot), "fleet", False):
            return None
        assert _slot_clock is not None  # missing_slot_api() said so at start-up
        return max(0.0, slot.lastseen + floor - _slot_clock())

    def apply_fleet_pacing(self, request: Request, floor: float) -> None:
        """The fleet paces this request's site (scrapy_robots.fleet): its local slot
        starts requests when the fleet says, a constant ``floor`` apart at least."""
        downloader = self.downloader()
        key = downloader.get_slot_key(request)
        if key not in self._original:
            self._original[key] = downloader.per_slot_settings.get(key)
        downloader.per_slot_settings[key] = {**(self._original[key] or {}), "delay": floor, "jitter": 0}
        slot = downloader.slots.get(key)
        if slot is None:
            slot = self._new_slot(downloader, request)
        self._set_class(slot, floor, fleet=True)
