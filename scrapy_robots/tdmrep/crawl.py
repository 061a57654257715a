"""TDMRep in a crawl: the site's ``/.well-known/tdmrep.json``, fetched once per site as
robots.txt is, and what it and a response say for the purposes a crawl declares.

:class:`TdmRepBook` is robots.txt's :class:`~scrapy_robots.policyfiles.book.SiteBook` for this one
file: the same fetcher (Scrapy's downloader, the size cap, redirects, the robots.txt
slot), the same single flight and waiting room, the same storage (memory, SQLite under
``JOBDIR``, Redis for a fleet), where the file is a second record of the site, keyed
``<site>/.well-known/tdmrep.json``, with its own lifetime (``ROBOTSTXT_CACHE_TTL``), and
the same decision (:func:`~scrapy_robots.policyfiles.decision.decide`) under TDMRep's status policy:

- 2xx: the file is parsed (:func:`~scrapy_robots.tdmrep.parse_tdmrep`); an unusable one
  (not JSON, not an array, over its size cap) reads unset, and is counted and said;
- any 4xx, and a 3xx not followed: "the origin server does not implement this protocol",
  every URL unset;
- 5xx, 429, a network error: unknown. The requests of a crawl declaring a purpose TDM
  covers wait for the retries of robots.txt's schedule (``ROBOTSTXT_UNREACHABLE_RETRY_*``),
  then read as reserved until the file answers (a stale copy, if one is known, is used
  meanwhile; after ``ROBOTSTXT_UNREACHABLE_ALLOW_AFTER``, unset).

What a fetched file says of a URL is :mod:`scrapy_robots.tdmrep.reading`'s, pure, for
the crawl, the command and the record alike.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Final

from scrapy_robots.cache import RobotsEntry
from scrapy_robots.pace.waiting import CrawlClosing, timer
from scrapy_robots.policyfiles.decision import decide, worth_waiting
from scrapy_robots.policyfiles.policy import NETWORK, Action, StatusPolicy
from scrapy_robots.record.version import TDMREP_JSON
from scrapy_robots.tdmrep.file import TOO_LARGE, TdmRepError, TdmRepFile, parse_tdmrep

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsStorage
    from scrapy_robots.pace.waiting import WaitingRoom
    from scrapy_robots.policyfiles.fetch import FetchResult, RobotsFetcher
    from scrapy_robots.record.crawl import ComplianceRecord
    from scrapy_robots.settings.config import RobotsConfig

logger = logging.getLogger(__name__)

WELL_KNOWN: Final = "/.well-known/tdmrep.json"

#: TDMRep's reading of a status: the file, or "not implemented" (unset), or unknown.
STATUS_POLICY: Final = StatusPolicy(
    {
        "1xx": Action.UNREACHABLE,
        "2xx": Action.PARSE,
        "3xx": Action.ALLOW,
        "4xx": Action.ALLOW,
        429: Action.UNREACHABLE,
        "5xx": Action.UNREACHABLE,
        NETWORK: Action.UNREACHABLE,
    }
)


def tdmrep_key(site: str) -> str:
    """The storage key of a site's ``tdmrep.json``, beside its robots.txt's (``site``)."""
    return site + WELL_KNOWN


class TdmRepBook:
    """What is known of each site's ``tdmrep.json``, and the one way to learn more."""

    def __init__(
        self,
        crawler: Crawler,
        config: RobotsConfig,
        storage: RobotsStorage,
        fetcher: RobotsFetcher,
        room: WaitingRoom,
        record: ComplianceRecord | None = None,
    ):
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = replace(config, status_policy=STATUS_POLICY)
        self.storage = storage
        self.fetcher = fetcher
        self.room = room
        self.record = record  # the compliance record (ROBOTSTXT_RECORD), told of each fetch
        self.started = time.time()
        # The files of the sites crawled now, parsed (entry.rules is the TdmRepFile).
        self.hot: OrderedDict[str, RobotsEntry] = OrderedDict()

    @staticmethod
    def needed(robots: RobotsEntry) -> bool:
        """Does a site with this robots.txt outcome need its ``tdmrep.json``? Not when
        robots.txt keeps every request out (denied, unreachable, excluded)."""
        return robots.action is Action.PARSE or robots.action is Action.ALLOW

    def ready(self, site: str) -> RobotsEntry | None:
        """The site's file if it can answer now (hot, or restored from a storage that
        answers at once); None: :meth:`wait_for` it."""
        key = tdmrep_key(site)
        entry = self.hot.get(key)
        if entry is not None:
            return entry if entry.fresh(time.time()) and entry.action is not Action.UNREACHABLE else None
        try:
            entry = self._restore(self.storage.load_now(key))
        except Exception:
            self._storage_failed(key)
            return None
        return None if entry is None or entry.action is Action.UNREACHABLE else entry

    async def wait_for(self, site: str, request: Request) -> RobotsEntry:
        """Park ``request`` until its site's file is known. Raises CrawlClosing, RoomFull."""
        key = tdmrep_key(site)
        while True:
            entry = self.hot.get(key)
            if entry is not None and entry.fresh(time.time()):
                if not worth_waiting(entry, self.config):
                    return entry
                await self.room.park(request, site, "tdmrep.json unreachable", timer(entry.expires_at - time.time()))
                continue
            if self.room.closing:
                raise CrawlClosing(site, "tdmrep.json not fetched yet")
            flight = self.room.join(key, partial(self._refresh, site, entry, request))
            entry = await self.room.park(request, site, "tdmrep.json being fetched", flight)
            if not worth_waiting(entry, self.config):
                return entry

    async def _refresh(self, site: str, previous: RobotsEntry | None, request: Request) -> RobotsEntry:
        key = tdmrep_key(site)
        try:
            stored = await self.storage.load(key)
        except Exception:
            self._storage_failed(key)
            stored = None
        entry = self._restore(stored)
        if entry is not None:
            return entry
        # The stored entry carries the failure count and the last good file's body.
        known = stored if stored is not None else previous
        entry = await self.storage.fetch_once(key, partial(self._fetch, site, known, request))
        return self._keep(entry)

    def _restore(self, stored: RobotsEntry | None) -> RobotsEntry | None:
        if stored is None or not stored.fresh(time.time()):
            return None
        self.stats.inc_value("robotstxt/tdmrep/restored")
        if stored.fetched_at < self.started:
            logger.debug("tdmrep.json for %(site)s restored from storage", {"site": stored.site})
        return self._keep(stored)

    def _keep(self, entry: RobotsEntry) -> RobotsEntry:
        """``entry`` parsed (a fleet's crawler or a storage gives it as data) and hot."""
        if entry.action is Action.PARSE and entry.rules is None:
            entry.rules = self._parse(entry)
        entry.body = None  # the storage keeps it; the hot tier the rules
        self.hot[entry.site] = entry
        self.hot.move_to_end(entry.site)
        while len(self.hot) > self.config.cache_parsed:
            self.hot.popitem(last=False)
        return entry

    async def _fetch(self, site: str, previous: RobotsEntry | None, request: Request) -> RobotsEntry:
        if previous is not None and previous.failures:
            self.stats.inc_value("robotstxt/tdmrep/retry")
        self.stats.inc_value("robotstxt/tdmrep/request_count")
        result = await self.fetcher.fetch(site, via=request, path=WELL_KNOWN)
        if self.room.closing:
            raise CrawlClosing(site, "tdmrep.json being fetched")
        result.site = tdmrep_key(site)
        decision = decide(result, previous, time.time(), self.config)
        if self.record is not None:
            self.record.fetched(TDMREP_JSON, site, result, decision)
        entry = decision.entry
        status = result.response.status if result.response is not None else "network"
        self.stats.inc_value(f"robotstxt/tdmrep/status/{status}")
        if entry.action is Action.PARSE and not decision.stale:
            # The bytes as sent: JSON must be UTF-8, which the parser checks itself.
            entry.body = result.body
            entry.rules = self._parse(entry)
        self._log(entry, result, decision.stale)
        return entry

    def _parse(self, entry: RobotsEntry) -> TdmRepFile:
        if entry.truncated:  # JSON cut short is no JSON: said as what it is
            maxsize = self.config.maxsize
            return TdmRepFile(error=TdmRepError(TOO_LARGE, f"over the {maxsize:,} bytes read (ROBOTSTXT_MAXSIZE)"))
        return parse_tdmrep(entry.body or b"", self.config.maxsize)

    def _log(self, entry: RobotsEntry, result: FetchResult, stale: bool) -> None:
        response = result.response
        outcome = f"HTTP {response.status}" if response is not None else entry.error
        level, details = logging.INFO, ""
        if entry.action is Action.UNREACHABLE:
            level = logging.WARNING if entry.failures == 1 else logging.INFO
            details = (
                f", attempt {entry.failures} of {self.config.retry_times + 1}, next in "
                f"{entry.expires_at - entry.fetched_at:.0f}s: TDM rights read as reserved until it answers"
            )
        elif stale:
            details = f" (previous copy kept), attempt {entry.failures}"
        elif entry.action is Action.PARSE:
            parsed = entry.rules
            details = f", {len(parsed.rules)} rule(s)"
            if parsed.error is not None:
                self.stats.inc_value("robotstxt/tdmrep/malformed")
                level, details = logging.WARNING, f", unusable ({parsed.error}): every URL reads unset"
        else:
            details = ": the site does not implement TDMRep, every URL reads unset"
        redirected = f" (redirected to {result.url})" if result.url != result.requested_url else ""
        logger.log(
            level,
            "tdmrep.json for %(site)s: %(outcome)s -> %(action)s%(details)s%(redirected)s",
            {
                "site": entry.site[: -len(WELL_KNOWN)],
                "outcome": outcome,
                "action": entry.action.value,
                "details": details,
                "redirected": redirected,
            },
            extra={"spider": self.crawler.spider},
        )

    def _storage_failed(self, key: str) -> None:
        logger.exception(
            "%(storage)s failed to load %(key)s",
            {"storage": type(self.storage).__name__, "key": key},
            extra={"spider": self.crawler.spider},
        )
        self.stats.inc_value("robotstxt/cache/storage_errors")
