"""robots.txt as a policy file of the book: its handler, :class:`RobotsTxt`, and its book, :class:`SiteBook`.

The walk (hot tier, storage, single flight, fetch, status policy) is
:class:`~scrapy_robots.policyfiles.book.PolicyBook`'s, for every policy file. What only
robots.txt has is here:

- the handler: ``ROBOTSTXT_STATUS_POLICY``; the hot tier with its parsed-entry tiers
  (:class:`~scrapy_robots.cache.RobotsCache`); the reader (``ROBOTSTXT_PARSER``, the usage
  lines, the site's delay: :mod:`~scrapy_robots.policyfiles.reader`), whose rules in text
  form are stored back when a restore had to parse; excluded domains, never fetched; a site
  restored from an earlier run said once; the ``robots_parsed`` signal, the delay's stats
  and the pace's hand-off after a fetch; the stats under ``robotstxt/`` and the log line
  of :func:`~scrapy_robots.policyfiles.decision.describe`;
- the book: the request's site (memoised), the rules of other agents (a request with its own
  ``User-Agent``) built from the stored body, the usage denials said once per site.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.utils.defer import deferred_from_coro

from scrapy_robots.cache import RobotsEntry
from scrapy_robots.policyfiles.book import PolicyBook, PolicyFile, TellsFetches
from scrapy_robots.policyfiles.decision import describe, describe_restored, fetch_stats
from scrapy_robots.record.version import ROBOTS_TXT
from scrapy_robots.status.policy import Action
from scrapy_robots.status.result import ROBOTS_TXT as ROBOTS_PATH
from scrapy_robots.usage import TDM_SOURCES

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsCache, RobotsStorage
    from scrapy_robots.pace.pacing import SitePacing
    from scrapy_robots.pace.waiting import WaitingRoom
    from scrapy_robots.parsers import RobotParser
    from scrapy_robots.policyfiles.decision import Decision
    from scrapy_robots.policyfiles.fetch import RobotsFetcher
    from scrapy_robots.policyfiles.reader import RobotsReader
    from scrapy_robots.settings.config import RobotsConfig
    from scrapy_robots.status.result import FetchResult
    from scrapy_robots.usage import Preference

logger = logging.getLogger(__name__)


class RobotsTxt(PolicyFile):
    """robots.txt, the handler of :class:`SiteBook`."""

    name = "robots.txt"
    path = ROBOTS_PATH
    stats = "robotstxt"
    record = ROBOTS_TXT
    cache = "robotstxt/cache"
    waits = ""  # "robots.txt of <site> was being fetched": CrawlClosing names robots.txt itself
    suffix = ""  # a site's robots.txt is stored under the site itself

    def __init__(
        self,
        crawler: Crawler,
        config: RobotsConfig,
        hot: RobotsCache,
        reader: RobotsReader,
        storage: RobotsStorage,
        pacing: SitePacing,
    ):
        super().__init__(crawler, config)
        self.policy = config.status_policy
        self.hot = hot
        self.reader = reader
        self.storage = storage  # stores back the rules a restore had to parse
        self.pacing = pacing
        # Sites restored from a previous run and said so: once each, whatever the hot tier does.
        self._announced: set[str] = set()
        #: a one-shot run's (scrapy robots) line on each unreachable site, for its answer
        self.said: dict[str, str] = {}
        # An excluded domain's entry, never fetched: asked of each site only when some are.
        self.unfetched = self._excluded if config.excluded_domains else None

    def tier(self) -> RobotsCache:
        return self.hot

    def _excluded(self, site: str) -> RobotsEntry | None:
        if self.config.excludes(site):
            return RobotsEntry(site=site, action=Action.EXCLUDED, fetched_at=0.0, expires_at=0.0)
        return None

    def ready(self, entry: RobotsEntry) -> RobotsEntry | None:
        return self.reader.ready(entry)

    def restore(self, stored: RobotsEntry) -> RobotsEntry | None:
        kept = stored.agents is not None and self.reader.key in stored.agents
        entry = self.reader.ready(stored)
        if entry is not None and not kept and entry.agents and self.reader.key in entry.agents:
            self._keep_rules(entry)
        return entry

    def earlier(self, entry: RobotsEntry, shared: str | None = None, during: bool = False) -> None:
        """Say what a site restored from a previous run, or read from the fleet, holds, once;
        count its delay as a fetch would."""
        if entry.site in self._announced:
            return
        self._announced.add(entry.site)
        line = describe_restored(entry, time.time(), self.config, shared, during)
        logger.info(line, extra={"spider": self.crawler.spider})
        self._count_delay(entry)

    async def fetched(self, decision: Decision, result: FetchResult, request: Request, waiting: int) -> None:
        stats = self.crawler.stats
        for stat in fetch_stats(decision, result, self.config):
            stats.inc_value(stat)
        entry = decision.entry
        if entry.action is Action.PARSE and entry.parser is None and entry.rules is None:  # not a stale copy
            parser = self.reader.read(entry)
            if parser is not None:
                await send_robots_parsed(self.crawler, parser, request)
                self._count_delay(entry)
        stats.inc_value(f"robotstxt/policy/{entry.action.value}")
        if getattr(self.storage, "shared_with", None) is not None:
            self._announced.add(entry.site)  # said here: not again when read back from the fleet
        level, message = describe(decision, result, waiting, self.config)
        if self.config.one_shot and entry.action is Action.UNREACHABLE:
            # scrapy robots: said in the site's answer (commands/query.py), not as a log line
            # beside it at a level that depends on how many of its questions wait then.
            self.said[entry.site] = message
        else:
            logger.log(level, message, extra={"spider": self.crawler.spider})
        shared = self.pacing.fetched(entry, result)
        if shared is not None:
            await shared

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

    def _count_delay(self, entry: RobotsEntry) -> None:
        delay, stats = entry.delay, self.crawler.stats
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


class SiteBook(PolicyBook):
    """What is known of each site's robots.txt: the book's walk, and what only robots.txt is asked."""

    file: RobotsTxt

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
        record: TellsFetches | None = None,
    ):
        robots = RobotsTxt(crawler, config, hot, reader, storage, pacing)
        super().__init__(crawler, config, robots, storage, fetcher, room, record)
        self.reader = reader
        # Sites whose usage preference denied a request, and said so: once each.
        self._usage_denied: set[str] = set()

    @property
    def said(self) -> dict[str, str]:
        """A one-shot run's line on each unreachable site (:attr:`RobotsTxt.said`)."""
        return self.file.said

    async def entry_for(self, request: Request) -> RobotsEntry:
        """What is known of the robots.txt of ``request``'s site: ready now, or fetched
        once (waiting for an unreachable site's retries, as configured)."""
        return await self.entry(self.site_of(request), request)

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


async def send_robots_parsed(crawler: Crawler, parser: RobotParser, request: Request) -> None:
    """Scrapy's ``robots_parsed`` signal (2.18+), as its middleware sends it: the parser,
    and the request that needed it."""
    robots_parsed = getattr(signals, "robots_parsed", None)
    if robots_parsed is not None:
        await crawler.signals.send_catch_log_async(
            signal=robots_parsed, robotparser=getattr(parser, "wrapped", parser), request=request
        )
