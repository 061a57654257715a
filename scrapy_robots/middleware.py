"""RobotsTxtMiddleware: a request in, a verdict out.

request -> site entry (policyfiles/robotstxt.py, a book of policyfiles/book.py: hot tier | storage
                      | one fetch -> policyfiles/decision.py -> policyfiles/reader.py)
        -> the spider's own robots.txt answered (policyfiles/serving.py)
        -> the site's other policy files that state preferences (policyfiles/preference.py: tdmrep.json,
           RSL's license document; each another book of the same walk), when a purpose is declared
        -> verdict (verdict.py) -> pace: the slot's pause, then its delay (pace/pacing.py -> pace/slots.py);
           a request whose slot's turn has not come waits in the slot's line (pace/lines.py),
           outside Scrapy's downloader, and is judged again as it leaves

This module only wires the parts and sequences them; docs/flow.rst follows one request
through them.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet.defer import CancelledError

from scrapy_robots.addon import STOCK
from scrapy_robots.cache import RobotsCache, RobotsEntry, RobotsStorage, SitePacer, check_storage_class
from scrapy_robots.compliance.crawl import compliance_record
from scrapy_robots.pace.backoff import hear_slow_downs
from scrapy_robots.pace.pacing import PAUSED, SitePacing
from scrapy_robots.pace.slots import (
    FleetSlotPacer,
    SlotPacer,
    leave_redirecting_hosts_slot,
    warn_at_start_if_slots_missing,
)
from scrapy_robots.pace.turns import QueueReleased, SentBack
from scrapy_robots.pace.waiting import CrawlClosing, RoomFull, WaitingRoom
from scrapy_robots.policyfiles.fetch import RobotsFetcher
from scrapy_robots.policyfiles.page_links import register as register_page_links
from scrapy_robots.policyfiles.preference import PreferenceFile
from scrapy_robots.policyfiles.reader import RobotsReader
from scrapy_robots.policyfiles.robotstxt import SiteBook
from scrapy_robots.policyfiles.serving import ROBOTS_PATH, RobotsServer
from scrapy_robots.settings.config import RobotsConfig
from scrapy_robots.settings.errors import SettingError, starting
from scrapy_robots.settings.startup import check_at_start
from scrapy_robots.verdict import ALLOWED, FORBIDDEN, OtherAgent, Verdict, verdict

if TYPE_CHECKING:
    from collections.abc import Awaitable
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from scrapy_robots.policyfiles.book import PolicyBook
    from scrapy_robots.policyfiles.stated import Heard

logger = logging.getLogger(__name__)

#: What a request cancelled by the close was doing (the close's reason names it).
CUT = "{site}: its request was cancelled on its way by the crawl's stop"

__all__ = ["FORBIDDEN", "RobotsTxtMiddleware", "Verdict"]


class RobotsTxtMiddleware:
    """Drop-in replacement for ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``."""

    def __init__(self, crawler: Crawler):
        self.config = config = RobotsConfig.of(crawler)
        if not config.obey:
            check_at_start(crawler, config)  # a misspelt name is named even so (settings/startup.py)
            raise NotConfigured
        self.crawler = crawler
        self.stats = crawler.stats
        self.parser_name = config.parser_name
        reader = RobotsReader(crawler, config)
        # The hot tier (ready to answer, in memory) in front of the storage (every site, as data).
        self.cache = RobotsCache(config.cache_parsed, config.cache_size)
        check_storage_class("ROBOTSTXT_CACHE_STORAGE", config.storage_class)
        self.storage: RobotsStorage = build_from_crawler(config.storage_class, crawler)
        # Optional on a storage (a user's own predates it): None, no leases.
        leases = getattr(self.storage, "leases", None)
        self.room = WaitingRoom(crawler, config.max_waiting, config.requeue_on_close, leases() if leases else None)
        shared = self.storage.pacer()
        self.pacing = self._pacing(crawler, shared, self.room)
        # "Slow down" answers to pages pause their slot: the backoff extension hears them
        # (pace/backoff.py, as AutoThrottle does) and tells this pace, which holds the pause.
        hear_slow_downs(crawler, self.pacing)
        if config.crawl_delay:
            warn_at_start_if_slots_missing(crawler)
        fetcher = RobotsFetcher(crawler, config)
        # Every policy file version and every verdict, when ROBOTSTXT_RECORD names a folder (record/).
        self.record = compliance_record(crawler, config)
        self.sites = SiteBook(
            crawler, config, self.cache, self.storage, reader, fetcher, self.room, self.pacing, self.record
        )
        # The optional parts are chosen here, once: the request path has no branch per feature.
        # The spider's own robots.txt requests, answered from the fetch (policyfiles/serving.py):
        # the URL endings that ask, none when ROBOTSTXT_SERVE is off.
        self.serving = RobotsServer(crawler, self.sites)
        self.served: tuple[str, ...] = (ROBOTS_PATH,) if config.serve else ()
        # The site's other policy files that state preferences (ROBOTSTXT_POLICY_FILES: TDMRep's,
        # RSL's), each a book beside robots.txt's (the same walk, storage, fetcher and waiting
        # room), those the declared purposes need: none, an empty tuple, without ROBOTSTXT_USAGE.
        self.files: tuple[PolicyBook, ...] = tuple(
            self.sites.beside(_preference_file(cls)(crawler, config))
            for cls in config.policy_files
            if _preference_file(cls).wanted(config)
        )
        register_page_links(crawler, self.files)  # the books a page may name a file of (policyfiles/page_links.py)
        #: every file, none read: what a request of a site that needs none is judged with
        self.unheard: Heard = tuple((book.file, None) for book in self.files)  # type: ignore[misc]
        _warn_if_stock_enabled(crawler)
        # Every setting obeyed or named: unknown names, missing components, a fleet's
        # settings without the fleet; and where robots.txt is kept (settings/startup.py).
        check_at_start(crawler, config, self.storage, shared is not None)
        crawler.signals.connect(self._spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        with starting("RobotsTxtMiddleware"):
            return cls(crawler)

    @staticmethod
    def _pacing(crawler: Crawler, shared: SitePacer | None, room: WaitingRoom) -> SitePacing:
        """The slot's pace alone, or a pace the storage shares with other crawlers (``shared``)."""
        if shared is None:
            return SitePacing(crawler, SlotPacer(crawler), room)
        from scrapy_robots.fleet.shared_pacing import SharedPacing

        return SharedPacing(crawler, FleetSlotPacer(crawler), shared, room)

    async def process_request(self, request: Request, spider: Spider | None = None) -> Request | Response | None:
        meta = request.meta
        if "redirect_urls" in meta:  # robots.txt fetches too: a hop keeps its host's pace
            leave_redirecting_hosts_slot(request)
        url = request.url  # a property: read once
        if meta.get("dont_obey_robotstxt") or url.startswith(("data:", "file:")):
            return None
        # The hot path, a site whose entry is ready, stays in this frame: each
        # coroutine awaited costs a microsecond or so.
        site = self.sites.site_of(request)
        entry = self.sites.ready(site)
        if entry is None or url.endswith(self.served):
            return await self._process_slowly(request, site, entry)
        heard = self.unheard
        if heard:  # another policy file states preferences: its entry, if ready
            heard = self._heard(entry, site)
            if heard is None:
                return await self._process_slowly(request, site, entry)
        try:
            answer = self._judge(entry, request, heard)
        except OtherAgent as other:  # a request with its own User-Agent: its rules, once
            await self.sites.learn_agent(entry, other.agent, request)
            return await self._process_slowly(request, site)
        turn = self._turn(entry, request)
        if turn is not None:  # its slot's turn has not come, or a pace shared with other crawlers
            return await self._wait(request, site, turn)
        if self.record is not None:
            self.record.decided(entry, request, answer, heard)
        return None

    def _heard(self, entry: RobotsEntry, site: str) -> Heard | None:
        """The site's other policy files, each with its entry if the request needs it; None
        when one it needs is not ready (then it is waited for)."""
        found = []
        for book in self.files:
            file = book.file
            if file.needed(entry):  # type: ignore[attr-defined]
                ready = book.ready(site)
                if ready is None:
                    return None
                found.append((file, ready))
            else:
                found.append((file, None))
        return tuple(found)  # type: ignore[return-value]

    async def _process_slowly(
        self, request: Request, site: str, entry: RobotsEntry | None = None, waited: bool = False
    ) -> Request | Response | None:
        """``waited``: the request's turn has come; it is judged again as it leaves."""
        try:
            if entry is None:
                entry = await self.sites.wait_for(site, request)
            if not waited and request.url.endswith(self.served):
                # The spider's own robots.txt request: the site's status and file, from the fetch.
                served = await self.serving.answer(entry, request)
                if served is not None:
                    return served
            heard = self.unheard
            if heard:
                heard = await self.heard_for(request, entry)
        except CrawlClosing as closing:
            return self.room.closing_exit(request, closing)
        except RoomFull:
            return await self.room.overflow(request)
        except (CancelledError, asyncio.CancelledError) as cancelled:
            return self._cancelled(request, site, cancelled)
        try:
            answer = self._judge(entry, request, heard)
        except OtherAgent as other:
            await self.sites.learn_agent(entry, other.agent, request)
            answer = self._judge(entry, request, heard)
        if not waited:
            turn = self._turn(entry, request)
            if turn is not None:
                return await self._wait(request, site, turn)
        if self.record is not None:
            self.record.decided(entry, request, answer, heard)
        return None

    def _turn(self, entry: RobotsEntry, request: Request) -> Awaitable[None] | None:
        """What ``request`` waits for before the downloader, None for nothing: its slot's
        turn (after its pause if the site said slow down) in the site's pace (pace/pacing.py)."""
        return self.pacing.pace(entry, request)

    async def _wait(self, request: Request, site: str, turn: Awaitable[None]) -> Request | Response | None:
        """Wait for ``turn``, then judge ``request`` again with what its site says now: it
        is obeyed as it leaves for the site, not as it was when it began to wait."""
        try:
            await turn
        except CrawlClosing as closing:
            return self.room.closing_exit(request, closing)
        except RoomFull:
            return await self.room.overflow(request)
        except (CancelledError, asyncio.CancelledError) as cancelled:
            return self._cancelled(request, site, cancelled)
        return await self._process_slowly(request, site, self.sites.ready(site), waited=True)

    def _judge(self, entry: RobotsEntry, request: Request, heard: Heard = ()) -> Verdict:
        """The verdict on ``request``; IgnoreRequest (the denial recorded) unless it may be downloaded."""
        answer = verdict(entry, request, self.config, heard)
        if answer is ALLOWED:
            return answer
        self.stats.inc_value(answer.stat)
        if answer.allowed:  # allowed, for want of an answer (a parser that failed)
            return answer
        if self.record is not None:
            self.record.decided(entry, request, answer, heard)
        if answer.usage is not None:
            self.sites.denied_for_usage(entry.site, answer.usage)
        logger.debug(
            "%(reason)s: %(request)s",
            {"reason": answer.reason, "request": request},
            extra={"spider": self.crawler.spider},
        )
        raise IgnoreRequest(answer.reason)

    def process_exception(self, request: Request, exception: Exception, spider: Spider | None = None) -> Request | None:
        """A request that waited in Scrapy's slot queue for a pause, let go by the close
        (pace/turns.py, SlotTurns.release_held): back to a JOBDIR's queue, or ignored with the
        reason. One sent back by a fleet's pause (SlotTurns.send_back): back to the scheduler."""
        if isinstance(exception, QueueReleased):
            return self.room.closing_exit(request, CrawlClosing(exception.key, PAUSED))
        if isinstance(exception, SentBack):
            # It passed the dupefilter once already; the scheduler would drop it as seen.
            return request.replace(dont_filter=True)
        return None

    def _cancelled(self, request: Request, site: str, cancelled: BaseException) -> Request:
        """What ``request`` waited for (its robots.txt's download, its turn) was cancelled. By
        the close (Scrapy's fast stop, a second Ctrl-C once Scrapy PR 7455 is released, cancels
        every download before the room looks at the engine): back to a JOBDIR's queue, or
        ignored with the reason, not lost as a bare CancelledError. Outside a close, the
        cancellation goes on."""
        if not self.room.closing_now():
            raise cancelled
        return self.room.closing_exit(request, CrawlClosing(site, CUT))

    async def robots_for(self, request: Request) -> RobotsEntry:
        """What is known of the robots.txt of ``request``'s site: from the cache, or
        fetched once (waiting for an unreachable site's retries, as configured)."""
        return await self.sites.entry_for(request)

    async def heard_for(self, request: Request, entry: RobotsEntry) -> Heard:
        """The other policy files of ``request``'s site (``entry``: its robots.txt's), each
        fetched once when the request needs it, else None. Raises CrawlClosing, RoomFull."""
        found = []
        for book in self.files:
            file = book.file
            needed = file.needed(entry)  # type: ignore[attr-defined]
            found.append((file, await book.entry(entry.site, request) if needed else None))
        return tuple(found)  # type: ignore[return-value]

    async def _spider_closed(self) -> None:
        self.pacing.close()
        self.stats.inc_value("robotstxt/cache/hit", self.sites.hits)
        self.sites.hits = 0
        await self.storage.close()

    def _spider_idle(self) -> None:
        if len(self.room) or self.room.flights:
            # Requests waiting outside Downloader.active (for robots.txt, for their turn,
            # the fleet's included) still belong to this crawl.
            raise DontCloseSpider


def _preference_file(cls: Any) -> type[PreferenceFile]:
    """A class ROBOTSTXT_POLICY_FILES names, checked beside its interface."""
    if not (isinstance(cls, type) and issubclass(cls, PreferenceFile)):
        raise SettingError(
            f"ROBOTSTXT_POLICY_FILES: {cls!r} is not a scrapy_robots.policyfiles.preference.PreferenceFile "
            "subclass; list the import paths of such classes"
        )
    return cls


def _warn_if_stock_enabled(crawler: Crawler) -> None:
    """A drop-in replacement never runs beside the one it replaces: the add-on disables
    Scrapy's, whatever the priority it was listed with; listed by hand, ours cannot."""
    enabled = crawler.settings.getwithbase("DOWNLOADER_MIDDLEWARES")
    if enabled.get(STOCK) is None or load_object(STOCK) is RobotsTxtMiddleware:  # the path may name ours
        return
    logger.warning(
        "Scrapy's own %(stock)s is enabled beside this one (DOWNLOADER_MIDDLEWARES, DOWNLOADER_MIDDLEWARES_BASE): "
        "every robots.txt is fetched twice and a request must pass both. Set DOWNLOADER_MIDDLEWARES = "
        "{'%(stock)s': None, ...}, or enable ours with ADDONS = {'scrapy_robots.Addon': 0}, which does it.",
        {"stock": STOCK},
    )
