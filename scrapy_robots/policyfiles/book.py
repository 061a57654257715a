"""SiteBook: what is known of each site's robots.txt, and the one way to learn more.

A site's entry is looked up in the hot tier (ready to answer), then in the storage
(restored: made ready again, never fetched again within its lifetime), and only then
fetched, once, however many requests need it:

    ready(site)        hot tier | excluded | storage.load_now -> restore     (no wait)
    wait_for(site)     park on the site's single flight -> _refresh:
                       storage.load -> restore | storage.fetch_once(_fetch)
    _fetch             download -> decide (policyfiles/decision.py) -> ready (policyfiles/reader.py) -> count, log

Both lookups restore through :meth:`SiteBook._restore`, whichever tier or storage answers.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots.cache import RobotsEntry
from scrapy_robots.pace.waiting import CrawlClosing, timer
from scrapy_robots.policyfiles.decision import decide, describe, describe_restored, fetch_stats, worth_waiting
from scrapy_robots.policyfiles.fetch import site_of
from scrapy_robots.policyfiles.policy import Action
from scrapy_robots.record.version import ROBOTS_TXT
from scrapy_robots.usage import TDM_SOURCES

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsCache, RobotsStorage
    from scrapy_robots.pace.pacing import SitePacing
    from scrapy_robots.pace.waiting import WaitingRoom
    from scrapy_robots.parsers import RobotParser
    from scrapy_robots.policyfiles.fetch import RobotsFetcher
    from scrapy_robots.policyfiles.reader import RobotsReader
    from scrapy_robots.record.crawl import ComplianceRecord
    from scrapy_robots.settings.config import RobotsConfig
    from scrapy_robots.usage import Preference

logger = logging.getLogger(__name__)

#: (scheme, netloc) pairs remembered with their site key. The memo keeps the first it
#: meets and admits no more once full: a broad crawl's frontier interleaves its sites, so
#: a memo that started over (or forgot the oldest) when full would miss every time once
#: the crawl has more sites than this; one that keeps its first sites still hits for them.
SITE_MEMO = 10_000


class SiteBook:
    def __init__(
        self,
        crawler: Crawler,
        config: RobotsConfig,
        hot: RobotsCache,
        storage: RobotsStorage,
        reader: RobotsReader,
        fetcher: RobotsFetcher,
        room: WaitingRoom,
        pacing: SitePacing,
        record: ComplianceRecord | None = None,
    ):
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = config
        self.hot = hot
        self.storage = storage
        self.reader = reader
        self.fetcher = fetcher
        self.room = room
        self.pacing = pacing
        self.record = record  # the compliance record (ROBOTSTXT_RECORD), told of each fetch
        self.hits = 0  # hot-tier hits, counted here: a stats call per request costs more
        self.started = time.time()
        # Sites restored from a previous run and said so: once each, whatever the hot tier does.
        self._announced: set[str] = set()
        # Sites whose usage preference denied a request, and said so: once each.
        self._usage_denied: set[str] = set()
        self._sites: dict[tuple[str, str], str] = {}
        #: a one-shot run's (scrapy robots) line on each unreachable site, for its answer
        self.said: dict[str, str] = {}

    def site_of(self, request: Request) -> str:
        parts = urlparse_cached(request)
        key = (parts.scheme, parts.netloc)
        site = self._sites.get(key)
        if site is None:
            site = site_of(request)
            if len(self._sites) < SITE_MEMO:
                self._sites[key] = site
        return site

    def ready(self, site: str) -> RobotsEntry | None:
        """The site's entry if it can answer now: hot, excluded, or restored from a
        storage that answers at once (``load_now``). None: the site must be fetched or
        waited for (:meth:`wait_for`)."""
        entry = self.hot.get(site)
        if entry is not None:
            if entry.fresh(time.time()) and entry.action is not Action.UNREACHABLE:
                self.hits += 1
                return entry
            return None
        if self.config.excludes(site):
            return RobotsEntry(site=site, action=Action.EXCLUDED, fetched_at=0.0, expires_at=0.0)
        try:
            stored = self.storage.load_now(site)
        except Exception:
            self._storage_failed(site)
            return None
        entry = self._restore(stored)
        if entry is None or entry.action is Action.UNREACHABLE:
            return None
        return entry

    async def entry_for(self, request: Request) -> RobotsEntry:
        """What is known of the robots.txt of ``request``'s site: ready now, or fetched
        once (waiting for an unreachable site's retries, as configured)."""
        site = self.site_of(request)
        return self.ready(site) or await self.wait_for(site, request)

    async def wait_for(self, site: str, request: Request) -> RobotsEntry:
        """Park ``request`` until its site's entry is known. Raises CrawlClosing, RoomFull."""
        while True:
            entry = self.hot.get(site)
            if entry is not None and entry.fresh(time.time()):
                self.hits += 1
                if not worth_waiting(entry, self.config):
                    return entry
                # Unreachable for now, and another attempt is due: wait for it.
                await self.room.park(request, site, "unreachable", timer(entry.expires_at - time.time()))
                continue
            if self.room.closing:
                raise CrawlClosing(site, "not fetched yet")
            flight = self.room.join(site, partial(self._refresh, site, entry, request))
            entry = await self.room.park(request, site, "being fetched", flight)
            if not worth_waiting(entry, self.config):
                return entry

    async def _refresh(self, site: str, previous: RobotsEntry | None, request: Request) -> RobotsEntry:
        """The site's entry from the storage, or fetched and decided: never fetched twice
        within its lifetime, whichever tier it was in."""
        try:
            stored = await self.storage.load(site)
        except Exception:
            self._storage_failed(site)
            stored = None
        entry = self._restore(stored)
        if entry is not None:
            return entry
        # An expired entry carries the failure count and the last good rules.
        known = previous if previous is not None else stored
        if known is None:
            self.stats.inc_value("robotstxt/cache/miss")
        elif not known.failures:  # a new attempt at an unreachable site is a retry (_fetch)
            self.stats.inc_value("robotstxt/cache/expired")
        if previous is None and stored is not None:
            previous = self.reader.ready(stored)
        elif previous is not None and previous.body is None and stored is not None:
            # So that a stale copy kept in use is stored whole.
            previous.body, previous.agents = stored.body, stored.agents
        entry = await self.storage.fetch_once(site, partial(self._fetch, site, previous, request))
        # Fetched by another crawler of a fleet, it comes without a parser: made ready here.
        entry = self.reader.ready(entry) or entry
        entry.body = entry.agents = entry.content_type = None  # the storage keeps them; the hot tier the rules
        self.hot.put(entry)
        return entry

    def _restore(self, stored: RobotsEntry | None) -> RobotsEntry | None:
        """A fresh stored entry, made ready and put in the hot tier; None if it cannot be."""
        if stored is None or not stored.fresh(time.time()):
            return None
        kept = stored.agents is not None and self.reader.key in stored.agents
        entry = self.reader.ready(stored)
        if entry is None:
            return None
        if not kept and entry.agents and self.reader.key in entry.agents:
            self._keep_rules(entry)
        self.stats.inc_value("robotstxt/cache/restored")
        if entry.fetched_at < self.started and entry.site not in self._announced:
            self._announce(entry)
        entry.body = entry.agents = entry.content_type = None
        self.hot.put(entry)
        return entry

    async def learn_agent(self, entry: RobotsEntry, agent: str | bytes, request: Request) -> None:
        """Build what ``agent`` obeys at ``entry``'s site (a request with its own
        User-Agent), from the stored body, once: kept beside the crawl agent's rules."""
        stored = await self.stored(entry.site)
        if stored is not None and stored.body is not None:
            self.reader.read_other_agent(entry, stored.body, agent)
            return
        self.stats.inc_value("robotstxt/other_agent_without_body")
        logger.warning(
            "robots.txt for %(site)s: the storage no longer holds the body to read the rules of "
            "User-Agent %(agent)r; the crawl's agent's rules apply to it",
            {"site": entry.site, "agent": agent},
            extra={"spider": self.crawler.spider},
        )
        self.reader.keep_other_agent(entry, agent, entry.rules)

    async def stored(self, site: str) -> RobotsEntry | None:
        """The site's entry as the storage keeps it, body included (the hot tier keeps none)."""
        try:
            return self.storage.load_now(site) or await self.storage.load(site)
        except Exception:
            self._storage_failed(site)
            return None

    def _keep_rules(self, entry: RobotsEntry) -> None:
        """A stored entry whose body was parsed here (another parser, options or agent
        stored it): store this crawler's rules beside the others, so that its next
        restore needs no parse. In the background: the request does not wait for it."""
        saved = deferred_from_coro(self.storage.save(replace(entry, parser=None, rules=None, others=None)))
        saved.addErrback(
            lambda failure: logger.error(
                "%(storage)s failed to save %(site)s: %(error)s",
                {"storage": type(self.storage).__name__, "site": entry.site, "error": failure.value},
                extra={"spider": self.crawler.spider},
            )
        )

    def _announce(self, entry: RobotsEntry) -> None:
        """Say what a site restored from a previous run holds; count its delay as a fetch would."""
        self._announced.add(entry.site)
        logger.info(describe_restored(entry, time.time(), self.config), extra={"spider": self.crawler.spider})
        self._count_delay(entry)

    def _storage_failed(self, site: str) -> None:
        # A storage's own failures are its to absorb (see RobotsStorage): this is a bug.
        logger.exception(
            "%(storage)s failed to load %(site)s",
            {"storage": type(self.storage).__name__, "site": site},
            extra={"spider": self.crawler.spider},
        )
        self.stats.inc_value("robotstxt/cache/storage_errors")

    async def _fetch(self, site: str, previous: RobotsEntry | None, request: Request) -> RobotsEntry:
        if previous is not None and previous.failures:
            self.stats.inc_value("robotstxt/retry")
        self.stats.inc_value("robotstxt/request_count")
        result = await self.fetcher.fetch(site, via=request)
        if self.room.closing:
            # The fetch was cut short by the close: its outcome says nothing of the site.
            raise CrawlClosing(site, "being fetched")
        decision = decide(result, previous, time.time(), self.config)
        if self.record is not None:
            self.record.fetched(ROBOTS_TXT, site, result, decision)
        for stat in fetch_stats(decision, result, self.config):
            self.stats.inc_value(stat)
        entry = decision.entry
        if entry.action is Action.PARSE and entry.parser is None and entry.rules is None:  # not a stale copy
            parser = self.reader.read(entry)
            if parser is not None:
                await send_robots_parsed(self.crawler, parser, request)
                self._count_delay(entry)
        self.stats.inc_value(f"robotstxt/policy/{entry.action.value}")
        level, message = describe(decision, result, self.room.waiting_for(site), self.config)
        if self.config.one_shot and entry.action is Action.UNREACHABLE:
            # scrapy robots: said in the site's answer (commands/query.py), not as a log line
            # beside it at a level that depends on how many of its questions wait then.
            self.said[site] = message
        else:
            logger.log(level, message, extra={"spider": self.crawler.spider})
        shared = self.pacing.fetched(entry, result)
        if shared is not None:
            await shared
        return entry

    def denied_for_usage(self, site: str, preference: Preference) -> None:
        """A request of ``site`` was denied by its usage preference (ROBOTSTXT_USAGE): one
        INFO line per site says so, the requests themselves being DEBUG lines."""
        if site in self._usage_denied:
            return
        self._usage_denied.add(site)
        tdm = preference.source in TDM_SOURCES
        logger.info(
            "%(file)s for %(site)s: requests denied by its %(what)s, %(why)s (ROBOTSTXT_USAGE); logged once per site",
            {
                "file": "tdmrep.json" if tdm else "robots.txt",
                "site": site,
                "what": "TDM reservation" if tdm else "usage preference",
                "why": preference.reason,
            },
            extra={"spider": self.crawler.spider},
        )

    def _count_delay(self, entry: RobotsEntry) -> None:
        delay, stats = entry.delay, self.stats
        if delay is None:
            return
        stats.inc_value("robotstxt/crawl_delay/sites")
        if delay.applied is not None:  # a skipped site is paced at no delay: none of its requests go
            stats.max_value("robotstxt/crawl_delay/max", delay.applied)
        if delay.clamped or delay.skip:
            stats.inc_value(f"robotstxt/crawl_delay/{'clamped' if delay.clamped else 'skipped'}")
            logger.warning(
                "robots.txt for %(site)s asks a delay of %(asked)gs, above ROBOTSTXT_MAX_CRAWL_DELAY "
                "(%(max)gs): %(what)s",
                {
                    "site": entry.site,
                    "asked": delay.asked,
                    "max": self.config.max_crawl_delay,
                    "what": "clamped to the maximum" if delay.clamped else "the site is skipped",
                },
                extra={"spider": self.crawler.spider},
            )


async def send_robots_parsed(crawler: Crawler, parser: RobotParser, request: Request) -> None:
    """Scrapy's ``robots_parsed`` signal (2.18+), as its middleware sends it: the parser,
    and the request that needed it."""
    robots_parsed = getattr(signals, "robots_parsed", None)
    if robots_parsed is not None:
        await crawler.signals.send_catch_log_async(
            signal=robots_parsed, robotparser=getattr(parser, "wrapped", parser), request=request
        )
