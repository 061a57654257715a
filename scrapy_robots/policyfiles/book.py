"""PolicyBook: what is known of one policy file of every site, and the one way to learn more.

A site's policy files (robots.txt; with TDMRep, ``/.well-known/tdmrep.json``) share one
lifecycle, walked here once for any of them; each file is a small handler of the walk, a
:class:`PolicyFile` (its path, its status policy, its reader, its stats and its log line),
as Google's robotstxt walks a file once for many handlers (``ParseRobotsTxt(body, handler)``).
robots.txt's handler and book are :mod:`scrapy_robots.policyfiles.robotstxt`, TDMRep's
handler :mod:`scrapy_robots.tdmrep.crawl`.

A site's entry is looked up in the hot tier (ready to answer), then in the storage
(restored: made ready again, never fetched again within its lifetime), and only then
fetched, once, however many requests need it:

    ready(site)        hot tier | file.unfetched | storage.load_now -> _restore     (no wait)
    wait_for(site)     park on the file's single flight for the site -> _refresh:
                       storage.load -> _restore | storage.fetch_once(_fetch)
    _fetch             download -> decide (policyfiles/decision.py, the file's status policy)
                       -> the record -> file.fetched (read, count, log)

Both lookups restore through :meth:`PolicyBook._restore`, whichever tier or storage answers.
The files of a site are kept in the same storage, keyed by the site for robots.txt and by
the site and the path for the others (``http://a.example:80/.well-known/tdmrep.json``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import CancelledError

from scrapy_robots.cache.entry import conditional_headers
from scrapy_robots.pace.waiting import CrawlClosing, timer
from scrapy_robots.policyfiles.decision import decide, worth_waiting
from scrapy_robots.status.policy import NETWORK, Action
from scrapy_robots.status.result import site_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsEntry, RobotsStorage
    from scrapy_robots.pace.waiting import WaitingRoom
    from scrapy_robots.policyfiles.decision import Decision
    from scrapy_robots.policyfiles.fetch import RobotsFetcher
    from scrapy_robots.settings.config import RobotsConfig
    from scrapy_robots.status.policy import StatusPolicy
    from scrapy_robots.status.result import FetchResult

logger = logging.getLogger(__name__)

#: (scheme, netloc) pairs remembered with their site key. The memo keeps the first it
#: meets and admits no more once full: a broad crawl's frontier interleaves its sites, so
#: a memo that started over (or forgot the oldest) when full would miss every time once
#: the crawl has more sites than this; one that keeps its first sites still hits for them.
SITE_MEMO = 10_000
#: What a file's line says of a 304 to its refresh.
NOT_MODIFIED_TEXT = " (not modified: the copy kept, not read again)"


class TellsFetches(Protocol):
    """What the book tells of each download it decided: the compliance record
    (:class:`~scrapy_robots.compliance.crawl.ComplianceRecord`, which sits above the book,
    for it writes what the answer decided), or None when ``ROBOTSTXT_RECORD`` is off."""

    def fetched(self, file: str, site: str, result: FetchResult, decision: Decision) -> None: ...


class HotTier(Protocol):
    """The entries ready to answer, by site: robots.txt's :class:`~scrapy_robots.cache.RobotsCache`,
    or a :class:`FileTier`."""

    def get(self, site: str) -> RobotsEntry | None: ...

    def put(self, entry: RobotsEntry) -> None: ...


class FileTier(OrderedDict[str, "RobotsEntry"]):
    """The hot tier of a policy file other than robots.txt: the files of the last ``size``
    sites made ready, by site (their entries' ``site`` is their storage key, which ends
    with ``path``). A dict: ``get``, asked on every request, is the dict's own."""

    def __init__(self, path: str, size: int):
        super().__init__()
        self.path = path
        self.size = size

    def put(self, entry: RobotsEntry) -> None:
        site = entry.site.removesuffix(self.path)
        self[site] = entry
        self.move_to_end(site)
        while len(self) > self.size:
            self.popitem(last=False)


class PolicyFile:
    """A policy file of every site, as :class:`PolicyBook` walks it: a subclass names it
    (``name``, ``path``, ``stats``, ``record``, ``policy``) and reads it (:meth:`read`).

    The defaults suit a file other than robots.txt: its body read as sent, once per
    version; its downloads counted by status (``<stats>/status/<code>``); one INFO line
    per download; a hot tier of ``ROBOTSTXT_CACHE_PARSED`` sites. robots.txt's handler
    (:class:`~scrapy_robots.policyfiles.robotstxt.RobotsTxt`) overrides most of them.

    What does not change during a crawl is an attribute, read once by the book when it is
    made (``cache``, ``waits``, ``suffix``, ``unfetched``, ``tier()``); the hooks it calls per site
    are those that act on an entry (``ready``, ``restore``, ``earlier``, ``fetched``).
    """

    #: what the file is called in its log lines ("tdmrep.json")
    name: str
    #: where it is on every site ("/.well-known/tdmrep.json")
    path: str
    #: the prefix of its stats: ``<stats>/request_count``, ``/retry``, ``/status/<code>``
    stats: str
    #: its name in the compliance record (:mod:`scrapy_robots.record.version`)
    record: str
    #: what a download's status (or failure) means for the file (``decide``'s table)
    policy: StatusPolicy
    #: an entry ``site`` has without a fetch (robots.txt: an excluded domain), or None;
    #: None here: every site's file is fetched (the book then asks nothing)
    unfetched: Callable[[str], RobotsEntry | None] | None = None

    def __init__(self, crawler: Crawler, config: RobotsConfig):
        self.crawler = crawler
        self.config = config

    @property
    def cache(self) -> str:
        """The prefix of its storage stats: ``<cache>/restored``, ``/miss``, ``/expired``."""
        return self.stats

    @property
    def waits(self) -> str:
        """What a request parked on it waits for is said after this ("tdmrep.json being fetched")."""
        return f"{self.name} "

    @property
    def suffix(self) -> str:
        """What follows the site in the file's storage key (``site + suffix``, beside its
        robots.txt's, ``site``): its path."""
        return self.path

    def key(self, site: str) -> str:
        """The storage key of ``site``'s file."""
        return site + self.suffix

    def tier(self) -> HotTier:
        return FileTier(self.path, self.config.cache_parsed)

    def where(self, site: str) -> str:
        """Where ``site``'s file is fetched from: its path at the site, or an absolute URL
        (a file another one names: RSL's license document, robots.txt's ``License`` line)."""
        return self.path

    def read(self, entry: RobotsEntry) -> Any:
        """The rules of ``entry``'s body (``entry.body``, ``entry.truncated`` when cut at
        ``ROBOTSTXT_MAXSIZE``): kept in ``entry.rules``, what the crawl asks of the file."""
        raise NotImplementedError

    def ready(self, entry: RobotsEntry) -> RobotsEntry | None:
        """``entry`` (fetched here or by a fleet's other crawler, or stored) with its rules,
        read once; None if it cannot be (a parsed file whose body the storage lost)."""
        if entry.action is Action.PARSE and entry.rules is None:
            if entry.body is None:
                return None
            entry.rules = self.read(entry)
        return entry

    def restore(self, stored: RobotsEntry) -> RobotsEntry | None:
        """A fresh stored entry made ready: :meth:`ready`."""
        return self.ready(stored)

    def earlier(self, entry: RobotsEntry, shared: str | None = None, during: bool = False) -> None:
        """``entry`` came from the storage, not from this crawler's own download: fetched
        before this crawl began (a resumed or persisted crawl), or by another crawler of a
        fleet (``shared``: the storage's ``shared_with``, "the fleet"; ``during``: fetched
        during this crawl)."""
        logger.debug(
            "%(file)s for %(site)s from %(where)s",
            {"file": self.name, "site": entry.site, "where": shared or "storage"},
        )

    async def fetched(self, decision: Decision, result: FetchResult, request: Request, waiting: int) -> None:
        """A download became ``decision.entry``: its body read, counted and said."""
        entry = decision.entry
        status = result.response.status if result.response is not None else NETWORK
        self.crawler.stats.inc_value(f"{self.stats}/status/{status}")
        if entry.action is Action.PARSE and not decision.kept:
            entry.body = result.body  # the bytes as sent (decide's are robots.txt's decoding)
            entry.rules = self.read(entry)
        self.log(decision, result)

    def log(self, decision: Decision, result: FetchResult) -> None:
        """The one line said per download."""
        entry = decision.entry
        response = result.response
        logger.info(
            "%(file)s for %(site)s: %(outcome)s -> %(action)s%(kept)s%(redirected)s",
            {
                "file": self.name,
                "site": entry.site.removesuffix(self.path),
                "outcome": f"HTTP {response.status}" if response is not None else entry.error,
                "action": entry.action.value,
                "kept": NOT_MODIFIED_TEXT if decision.revalidated else "",
                "redirected": f" (redirected to {result.url})" if result.url != result.requested_url else "",
            },
            extra={"spider": self.crawler.spider},
        )


class PolicyBook:
    """What is known of ``file`` at every site, and the one way to learn more."""

    def __init__(
        self,
        crawler: Crawler,
        config: RobotsConfig,
        file: PolicyFile,
        storage: RobotsStorage,
        fetcher: RobotsFetcher,
        room: WaitingRoom,
        record: TellsFetches | None = None,
    ):
        self.crawler = crawler
        self.stats = crawler.stats
        # decide() reads the status policy from the configuration: the file's own.
        self.config = config if file.policy is config.status_policy else replace(config, status_policy=file.policy)
        self.file = file
        # The handler's attributes, read once: the walk below asks them per site.
        self.hot = file.tier()
        self._suffix = file.suffix
        self._unfetched = file.unfetched
        self._cache = file.cache
        self._waits = file.waits
        self.storage = storage
        # Who else writes the storage ("the fleet"): its entries are said as theirs. A user's
        # own storage need not say (the interface's attribute is optional).
        self._shared: str | None = getattr(storage, "shared_with", None)
        self.fetcher = fetcher
        self.room = room
        self.record = record  # the compliance record (ROBOTSTXT_RECORD), told of each fetch
        self._revalidate = config.revalidate
        self.hits = 0  # hot-tier hits, counted here: a stats call per request costs more
        self.started = time.time()
        self._sites: dict[tuple[str, str], str] = {}

    def beside(self, file: PolicyFile) -> PolicyBook:
        """A book of another policy file of the same sites: the same storage, fetcher,
        waiting room and record."""
        return PolicyBook(self.crawler, file.config, file, self.storage, self.fetcher, self.room, self.record)

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
        """The site's entry if it can answer now: hot, known without a fetch, or restored
        from a storage that answers at once (``load_now``). None: the site must be fetched
        or waited for (:meth:`wait_for`)."""
        entry = self.hot.get(site)
        if entry is not None:
            if entry.fresh(time.time()) and entry.action is not Action.UNREACHABLE:
                self.hits += 1
                return entry
            return None
        if self._unfetched is not None:
            entry = self._unfetched(site)
            if entry is not None:
                return entry
        key = site + self._suffix
        try:
            stored = self.storage.load_now(key)
        except Exception:
            self._storage_failed(key)
            return None
        entry = self._restore(stored)
        if entry is None or entry.action is Action.UNREACHABLE:
            return None
        return entry

    async def entry(self, site: str, request: Request) -> RobotsEntry:
        """The site's entry: ready now, or fetched once (waiting for an unreachable
        site's retries, as configured). Raises CrawlClosing, RoomFull."""
        return self.ready(site) or await self.wait_for(site, request)

    async def wait_for(self, site: str, request: Request) -> RobotsEntry:
        """Park ``request`` until its site's entry is known. Raises CrawlClosing, RoomFull."""
        waits = self._waits
        while True:
            entry = self.hot.get(site)
            if entry is not None and entry.fresh(time.time()):
                self.hits += 1
                if not worth_waiting(entry, self.config):
                    return entry
                # Unreachable for now, and another attempt is due: wait for it.
                await self.room.park(request, site, f"{waits}unreachable", timer(entry.expires_at - time.time()))
                continue
            if self.room.closing:
                raise CrawlClosing(site, f"{waits}not fetched yet")
            flight = self.room.join(site + self._suffix, partial(self._refresh, site, entry, request))
            entry = await self.room.park(request, site, f"{waits}being fetched", flight)
            if not worth_waiting(entry, self.config):
                return entry

    async def stored(self, site: str) -> RobotsEntry | None:
        """The site's entry as the storage keeps it, body included (the hot tier keeps none)."""
        key = site + self._suffix
        try:
            return self.storage.load_now(key) or await self.storage.load(key)
        except Exception:
            self._storage_failed(key)
            return None

    async def _refresh(self, site: str, previous: RobotsEntry | None, request: Request) -> RobotsEntry:
        """The site's entry from the storage, or fetched and decided: never fetched twice
        within its lifetime, whichever tier it was in."""
        key = site + self._suffix
        try:
            stored = await self.storage.load(key)
        except Exception:
            self._storage_failed(key)
            stored = None
        entry = self._restore(stored)
        if entry is not None:
            return entry
        # An expired entry carries the failure count and the last good rules.
        known = previous if previous is not None else stored
        if known is None:
            self.stats.inc_value(f"{self._cache}/miss")
        elif not known.failures:  # a new attempt at an unreachable site is a retry (_fetch)
            self.stats.inc_value(f"{self._cache}/expired")
        if previous is None and stored is not None:
            previous = self.file.ready(stored)
        elif previous is not None and previous.body is None and stored is not None:
            # So that a stale or revalidated copy kept in use is stored whole: the hot tier
            # keeps neither the body, the Content-Type that serving the file needs, nor the
            # validators that the refresh sends.
            previous.body, previous.agents, previous.content_type = stored.body, stored.agents, stored.content_type
            previous.etag, previous.last_modified = stored.etag, stored.last_modified
        fetched: list[bool] = []

        async def fetch() -> RobotsEntry:
            fetched.append(True)
            return await self._fetch(site, previous, request)

        entry = await self.storage.fetch_once(key, fetch)
        # Fetched by another crawler of a fleet, it comes without its rules: made ready here.
        entry = self.file.ready(entry) or entry
        if not fetched:
            self._said(entry)
        # The storage keeps them; the hot tier the rules (every site's entry: no bytes it need not hold).
        entry.body = entry.agents = entry.content_type = entry.etag = entry.last_modified = None
        self.hot.put(entry)
        return entry

    def _restore(self, stored: RobotsEntry | None) -> RobotsEntry | None:
        """A fresh stored entry, made ready and put in the hot tier; None if it cannot be."""
        if stored is None or not stored.fresh(time.time()):
            return None
        entry = self.file.restore(stored)
        if entry is None:
            return None
        self.stats.inc_value(f"{self._cache}/restored")
        if entry.fetched_at < self.started or self._shared is not None:
            self._said(entry)
        entry.body = entry.agents = entry.content_type = entry.etag = entry.last_modified = None
        self.hot.put(entry)
        return entry

    def _said(self, entry: RobotsEntry) -> None:
        """The file's handler says where ``entry``, not downloaded here, came from."""
        self.file.earlier(entry, self._shared, entry.fetched_at >= self.started)

    def _storage_failed(self, key: str) -> None:
        # A storage's own failures are its to absorb (see RobotsStorage): this is a bug.
        logger.exception(
            "%(storage)s failed to load %(key)s",
            {"storage": type(self.storage).__name__, "key": key},
            extra={"spider": self.crawler.spider},
        )
        self.stats.inc_value("robotstxt/cache/storage_errors")

    async def _fetch(self, site: str, previous: RobotsEntry | None, request: Request) -> RobotsEntry:
        file = self.file
        if previous is not None and previous.failures:
            self.stats.inc_value(f"{file.stats}/retry")
        self.stats.inc_value(f"{file.stats}/request_count")
        # A known copy's validators (ROBOTSTXT_REVALIDATE): a 304 keeps it, with no parse. A
        # crawl that records asks for the whole file when the copy's version is unknown (stored
        # by a crawler that does not record): a 304 would leave it obeying a version it cannot name.
        conditional = (
            conditional_headers(previous)
            if self._revalidate and previous is not None and (self.record is None or previous.version is not None)
            else None
        )
        if conditional:
            self.stats.inc_value(f"{file.stats}/conditional")
        result = await self.fetcher.fetch(site, via=request, path=file.where(site), conditional=conditional)
        if isinstance(result.error, (CancelledError, asyncio.CancelledError)) or self.room.closing_now():
            # The fetch was cut short by the close (the room's cancel, or Scrapy's fast stop,
            # which cancels downloads before the room looks at the engine): its outcome says
            # nothing of the site. Neither kept (a JOBDIR's storage would deny the site's pages
            # at the resume) nor given to the requests that wait (they go back to the job's queue).
            raise CrawlClosing(site, f"{self._waits}being fetched")
        result.site = site + self._suffix
        decision = decide(result, previous, time.time(), self.config)
        if decision.revalidated:
            self.stats.inc_value(f"{file.stats}/revalidated")
        if self.record is not None:
            self.record.fetched(file.record, site, result, decision)
        await file.fetched(decision, result, request, self.room.waiting_for(site))
        return decision.entry
