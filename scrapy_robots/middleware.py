"""RobotsTxtMiddleware: a request in, a verdict out.

request -> (cache hit | single fetch) -> status policy -> parser -> verdict + delay -> slot
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.task import deferLater

from scrapy_robots.cache import RobotsCache, RobotsEntry, RobotsStorage, lifetime_from_headers
from scrapy_robots.config import RobotsConfig
from scrapy_robots.decoding import normalize_robotstxt
from scrapy_robots.delay import read_site_delay
from scrapy_robots.fetch import FetchResult, RobotsFetcher, site_of
from scrapy_robots.parsers import RobotParser, as_robot_parser
from scrapy_robots.policy import Action
from scrapy_robots.slots import SlotPacer
from scrapy_robots.usage import DENIED_REASON as USAGE_DENIED, UsageConfig, check_request, site_preferences
from scrapy_robots.waiting import CrawlClosing, WaitingRoom, discard

if TYPE_CHECKING:
    from typing_extensions import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request

logger = logging.getLogger(__name__)

FORBIDDEN = "Forbidden by robots.txt"
#: Meta key of a request sent back to the scheduler when the crawl closed.
_REQUEUED_ON_CLOSE = "_robotstxt_requeued_on_close"
#: Seconds a request beyond ROBOTSTXT_MAX_WAITING keeps its place before it is requeued.
OVERFLOW_PAUSE = 0.5


class _RoomFull(Exception):
    """ROBOTSTXT_MAX_WAITING requests are parked already."""


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str | None = None  #: the IgnoreRequest message
    stat: str = ""  #: the stats key counting this kind of denial


ALLOWED = Verdict(True)


class RobotsTxtMiddleware:
    """Drop-in replacement for ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``."""

    def __init__(self, crawler: Crawler):
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = config = RobotsConfig.from_settings(crawler.settings)
        self.parser_name = getattr(config.parser_class, "__name__", str(config.parser_class))
        self._check_parser()
        # The hot tier (parsed, in memory) in front of the storage (every site, as data).
        self.cache = RobotsCache(config.cache_parsed)
        self.storage: RobotsStorage = build_from_crawler(config.storage_class, crawler)
        # A storage shared by a fleet may pace each site across the fleet.
        self.shared_pacer = self.storage.pacer() if config.fleet.pacing else None
        self.hits = 0  # hot-tier hits, counted here: a stats call per request costs more
        self._sites: dict[tuple[str, str], str] = {}  # (scheme, netloc) -> site key
        self.fetcher = RobotsFetcher(crawler, config)
        self.room = WaitingRoom(crawler, config.max_waiting)
        self.pacer = SlotPacer(crawler)
        # ROBOTSTXT_USAGE: None (the default) costs one test per allowed request.
        self.usage = UsageConfig.from_settings(crawler.settings)
        # On close, parked requests go back to a scheduler that keeps its queue.
        settings = crawler.settings
        self.requeue_on_close = bool(settings.get("JOBDIR")) or settings.getbool("SCHEDULER_PERSIST")
        crawler.signals.connect(self._spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _check_parser(self) -> None:
        # A backend that cannot import (reppy not built, say) fails here, at start-up.
        try:
            build_from_crawler(self.config.parser_class, self.crawler, b"")
        except Exception as exc:
            raise RuntimeError(
                f"ROBOTSTXT_PARSER = {self.parser_name} cannot be used: {exc}"
            ) from exc

    async def process_request(self, request: Request, spider: Spider | None = None) -> Request | None:
        if request.meta.get("dont_obey_robotstxt"):
            return None
        if request.url.startswith(("data:", "file:")):
            return None
        # The hot path, a parsed robots.txt in the hot tier, stays in this frame: each
        # coroutine awaited costs a microsecond or so. Excluded sites are never cached.
        site = self._site(request)
        entry = self.cache.get(site)
        hot = entry is not None
        if not hot and self.shared_pacer is None:
            entry = self._restore_now(site)  # back from the storage (robotstxt/cache/restored)
        if (
            entry is not None
            and entry.expires_at > time.time()
            and entry.action is not Action.UNREACHABLE
            and self.shared_pacer is None
        ):
            if hot:
                self.hits += 1
            verdict = self.verdict(entry, request)
            if not verdict.allowed:
                self._deny(verdict, request)
            self._pace(entry, request)
            return None
        return await self._process_slowly(request)

    def _site(self, request: Request) -> str:
        parts = urlparse_cached(request)
        key = (parts.scheme, parts.netloc)
        site = self._sites.get(key)
        if site is None:
            if len(self._sites) >= 10_000:
                self._sites.clear()
            site = self._sites[key] = site_of(request)
        return site

    def _deny(self, verdict: Verdict, request: Request) -> None:
        logger.debug("%(reason)s: %(request)s", {"reason": verdict.reason, "request": request},
                     extra={"spider": self.crawler.spider})  # fmt: skip
        self.stats.inc_value(verdict.stat)
        raise IgnoreRequest(verdict.reason)

    async def _process_slowly(self, request: Request) -> Request | None:
        try:
            entry = await self.robots_for(request)
            verdict = self.verdict(entry, request)
            if not verdict.allowed:
                self._deny(verdict, request)
            if self.shared_pacer is not None and await self._shared_pace(entry, request):
                return None
        except CrawlClosing as closing:
            return self._closing(request, closing)
        except _RoomFull:
            return await self._overflow(request)
        self._pace(entry, request)
        return None

    def _closing(self, request: Request, closing: CrawlClosing) -> Request:
        """The crawl is closing while ``request`` waits: back to a persistent scheduler
        (JOBDIR), else ignored with the reason. Never lost without a word."""
        if self.requeue_on_close and not request.meta.get(_REQUEUED_ON_CLOSE):
            self.stats.inc_value("robotstxt/closing/requeued")
            logger.debug("%(reason)s: %(request)s goes back to the scheduler", {"reason": closing, "request": request},
                         extra={"spider": self.crawler.spider})  # fmt: skip
            # It passed the dupefilter once already; the scheduler would drop it as seen.
            return request.replace(dont_filter=True, meta={**request.meta, _REQUEUED_ON_CLOSE: True})
        self.stats.inc_value("robotstxt/closing/ignored")
        logger.debug("%(reason)s: %(request)s ignored", {"reason": closing, "request": request},
                     extra={"spider": self.crawler.spider})  # fmt: skip
        raise IgnoreRequest(str(closing))

    async def _overflow(self, request: Request) -> Request:
        """ROBOTSTXT_MAX_WAITING requests are parked already: ``request`` goes back to the
        scheduler, one priority lower so that requests of other sites pass it, after a
        short pause in its download place (the engine would otherwise pull it straight
        back while nothing else is queued)."""
        self.stats.inc_value("robotstxt/waiting/requeued")
        await self._sleep(OVERFLOW_PAUSE)
        return request.replace(dont_filter=True, priority=request.priority - 1)

    async def _shared_pace(self, entry: RobotsEntry, request: Request) -> bool:
        """Wait for the site's turn in the pace the storage shares (the fleet's); False
        when it cannot be had now (the caller paces locally)."""
        assert self.shared_pacer is not None
        delay = entry.delay.applied if entry.delay is not None and self.config.crawl_delay else 0.0
        floor = max(delay, self.pacer.user_delay(request))
        if floor <= 0:
            return False
        # After an outage, requests paced locally meanwhile come first.
        not_before = self.pacer.fleet_handover(request, floor)
        if not_before is None:
            return False
        wait = await self.shared_pacer.reserve(entry.site, floor + self.config.fleet.pacing_margin, not_before)
        if wait is None:
            return False
        # The fleet's reservation is the site's pace; the local slot only keeps this
        # crawler's own starts a floor apart, without jitter (see slots.py).
        self.pacer.apply_fleet_pacing(request, floor)
        if wait > 0:
            timer = self._timer(wait)
            if self.room.full():
                await maybe_deferred_to_future(timer)
            else:
                await self.room.wait(request, entry.site, "waiting for its turn in the fleet's pace", timer)
        return True

    async def robots_for(self, request: Request) -> RobotsEntry:
        """What is known of the robots.txt of ``request``'s site: from the cache, or
        fetched once (waiting for an unreachable site's retries, as configured)."""
        site = self._site(request)
        if self._excluded(site):
            return RobotsEntry(site=site, action=Action.EXCLUDED, fetched_at=0.0, expires_at=0.0)
        return await self._entry_for(site, request)

    def _pace(self, entry: RobotsEntry, request: Request) -> None:
        if entry.delay is None and entry.site not in self.pacer.paced_sites:
            return
        if not self.config.crawl_delay:
            return
        try:
            # None: the site's robots.txt dropped its Crawl-delay since.
            self.pacer.apply_crawl_delay(request, entry.site, entry.delay.applied if entry.delay else None)
        except Exception:
            # Scrapy's downloader changed under us (see slots.py): say so loudly, but
            # do not turn a pacing failure into a lost request.
            logger.exception(
                "Could not set the download delay of %(site)s", {"site": entry.site}, extra={"spider": self.crawler.spider}
            )
            self.stats.inc_value("robotstxt/crawl_delay/error")

    # -- the verdict -----------------------------------------------------------

    def verdict(self, entry: RobotsEntry, request: Request) -> Verdict:
        """May ``request`` be downloaded, given its site's ``entry``? Never raises."""
        if entry.action is Action.ALLOW:
            return ALLOWED
        if entry.action is Action.EXCLUDED:
            return Verdict(False, f"{FORBIDDEN}: excluded domain (ROBOTSTXT_EXCLUDED_DOMAINS)", "robotstxt/denied/excluded")
        if entry.action is Action.DENY:
            return Verdict(
                False, f"{FORBIDDEN}: deny all (robots.txt answered HTTP {entry.status})", "robotstxt/denied/deny_all"
            )
        if entry.action is Action.UNREACHABLE:
            return Verdict(
                False,
                f"{FORBIDDEN}: robots.txt unreachable ({entry.error or f'HTTP {entry.status}'}) "
                f"after {entry.failures} attempt(s)",
                "robotstxt/denied/unreachable",
            )
        assert entry.parser is not None
        if entry.delay is not None and entry.delay.skip and self.config.crawl_delay:
            return Verdict(
                False,
                f"{FORBIDDEN}: Crawl-delay {entry.delay.asked:g}s exceeds ROBOTSTXT_MAX_CRAWL_DELAY "
                f"({self.config.max_crawl_delay:g}s)",
                "robotstxt/denied/crawl_delay",
            )
        if urlparse_cached(request).path == "/robots.txt":
            return ALLOWED  # RFC 9309 2.2.2: /robots.txt itself is always allowed
        try:
            allowed = entry.parser.allowed(request.url, self.user_agent(request))
        except Exception:
            logger.exception(
                "%(parser)s failed on %(url)s; the request is allowed",
                {"parser": self.parser_name, "url": request.url},
                extra={"spider": self.crawler.spider},
            )
            self.stats.inc_value("robotstxt/parser_error")
            return ALLOWED
        if not allowed:
            return Verdict(False, FORBIDDEN, "robotstxt/forbidden")
        if self.usage is not None and entry.usage is not None:
            return self._usage_verdict(entry, request)
        return ALLOWED

    def _usage_verdict(self, entry: RobotsEntry, request: Request) -> Verdict:
        assert self.usage is not None and entry.usage is not None
        agent = self.user_agent(request)
        agent = agent.decode("latin-1") if isinstance(agent, bytes) else agent
        denied = check_request(self.usage, entry.usage, request.url, agent, request.meta)
        if denied is None:
            return ALLOWED
        return Verdict(False, f"{USAGE_DENIED}: {denied.reason}", f"robotstxt/usage/denied/{denied.purpose}")

    def user_agent(self, request: Request) -> str | bytes:
        return self.config.user_agent or request.headers.get(b"User-Agent") or self.config.default_user_agent

    def _excluded(self, site: str) -> bool:
        if not self.config.excluded_domains:
            return False
        host = site.split("://", 1)[1].rsplit(":", 1)[0]
        return any(host == d or host.endswith("." + d) for d in self.config.excluded_domains)

    # -- cache, single fetch, waiting -------------------------------------------

    async def _entry_for(self, site: str, request: Request) -> RobotsEntry:
        while True:
            entry = self.cache.get(site)
            if entry is not None and entry.expires_at > time.time():
                self.hits += 1
                if not self._worth_waiting(entry):
                    return entry
                # Unreachable for now, and another attempt is due: wait for it.
                await self._park(request, site, "unreachable", self._timer(entry.expires_at - time.time()))
                continue
            if self.room.closing:
                raise CrawlClosing(site, "not fetched yet")
            flight = self.room.join(site, lambda: self._refresh(site, entry, request))
            entry = await self._park(request, site, "being fetched", flight)
            if not self._worth_waiting(entry):
                return entry

    def _worth_waiting(self, entry: RobotsEntry) -> bool:
        """An unreachable site's requests wait while its attempts are within
        ROBOTSTXT_UNREACHABLE_RETRY_TIMES retries; after that they are ignored at once
        (until the next attempt, which the next request to need the site makes)."""
        return entry.action is Action.UNREACHABLE and entry.failures <= self.config.retry_times

    async def _park(self, request: Request, site: str, state: str, source: Deferred[Any]) -> Any:
        self.stats.inc_value("robotstxt/deferred")
        if self.room.full():
            discard(source)
            raise _RoomFull
        return await self.room.wait(request, site, state, source)

    @staticmethod
    def _timer(seconds: float) -> Deferred[None]:
        return deferLater(reactor, max(seconds, 0.0), lambda: None)

    @classmethod
    async def _sleep(cls, seconds: float) -> None:
        if seconds > 0:
            await maybe_deferred_to_future(cls._timer(seconds))

    async def _spider_closed(self) -> None:
        self.stats.inc_value("robotstxt/cache/hit", self.hits)
        self.hits = 0
        await self.storage.close()

    def _spider_idle(self) -> None:
        if len(self.room) or self.room.flights:
            # Requests parked outside Downloader.active still belong to this crawl.
            raise DontCloseSpider

    async def _refresh(self, site: str, previous: RobotsEntry | None, request: Request) -> RobotsEntry:
        """The site's entry from the storage (parsed again), or fetched and decided:
        never fetched twice within its lifetime, whichever tier it was in."""
        stored = await self._load(site)
        if stored is not None and (entry := self._restore(stored)) is not None:
            return entry
        # An expired entry carries the failure count and the last good rules.
        self.stats.inc_value("robotstxt/cache/expired" if previous or stored else "robotstxt/cache/miss")
        if previous is None and stored is not None:
            previous = self._hydrate(stored)
        elif previous is not None and previous.body is None and stored is not None:
            previous.body = stored.body  # so that a stale copy kept in use is stored whole
        entry = await self.storage.fetch_once(site, lambda: self._fetch_and_decide(site, previous, request))
        if entry.parser is None and entry.action is Action.PARSE:
            # Another crawler of the fleet fetched it: parse its body ourselves.
            entry = self._hydrate(entry) or entry
        entry.body = None  # the storage keeps it; the hot tier keeps the parser
        self.cache.put(entry)
        return entry

    def _restore_now(self, site: str) -> RobotsEntry | None:
        """A site that left the hot tier, from a storage that can answer at once
        (``load_now``: memory, SQLite, the fleet's local tier), parsed again here: the
        request neither waits nor leaves its download place. None: the slow path decides
        (nothing stored, expired, unreachable, excluded, or a storage that must wait)."""
        try:
            stored = self.storage.load_now(site)
        except Exception:
            self._storage_failed(site)
            return None
        if stored is None or stored.action is Action.UNREACHABLE:
            return None
        if self._excluded(site):  # stored by an earlier crawl of the job, excluded since
            return None
        return self._restore(stored)

    def _restore(self, stored: RobotsEntry) -> RobotsEntry | None:
        """A fresh stored entry, parsed again into the hot tier; None if it cannot be."""
        if not stored.fresh(time.time()):
            return None
        entry = self._hydrate(stored)
        if entry is None:
            return None
        self.stats.inc_value("robotstxt/cache/restored")
        entry.body = None
        self.cache.put(entry)
        return entry

    def _storage_failed(self, site: str) -> None:
        # A storage's own failures are its to absorb (see RobotsStorage): this is a bug.
        logger.exception("%(storage)s failed to load %(site)s", {"storage": type(self.storage).__name__, "site": site},
                         extra={"spider": self.crawler.spider})  # fmt: skip
        self.stats.inc_value("robotstxt/cache/storage_errors")

    async def _load(self, site: str) -> RobotsEntry | None:
        try:
            return await self.storage.load(site)
        except Exception:
            self._storage_failed(site)
            return None

    def _hydrate(self, entry: RobotsEntry) -> RobotsEntry | None:
        """Rebuild what a stored entry does not carry: the parser and the delay. None
        when a parsed robots.txt comes without its body (it expired from the store)."""
        if entry.action is not Action.PARSE or entry.parser is not None:
            return entry
        if entry.body is None:
            return None
        entry.parser = self._build_parser(entry.body, entry.url)
        if self.usage is not None:  # read by our parser, whatever ROBOTSTXT_PARSER is
            entry.usage = site_preferences(entry.body)
        if entry.parser is None:
            entry.action = Action.ALLOW
        elif self.config.crawl_delay:
            entry.delay = self._site_delay(entry, quiet=True)
        return entry

    async def _fetch_and_decide(self, site: str, previous: RobotsEntry | None, request: Request) -> RobotsEntry:
        if previous is not None and previous.action is Action.UNREACHABLE:
            self.stats.inc_value("robotstxt/retry")
        self.stats.inc_value("robotstxt/request_count")
        result = await self.fetcher.fetch(site, via=request)
        if self.room.closing:
            # The fetch was cut short by the close: its outcome says nothing of the site.
            raise CrawlClosing(site, "being fetched")
        entry = await self._decide(site, result, previous, request)
        self.stats.inc_value(f"robotstxt/policy/{entry.action.value}")
        self._log_decision(entry, result)
        if self.shared_pacer is not None and entry.delay is not None and result.response is not None:
            # The robots.txt fetch was the site's first request: the shared pace counts it.
            await self.shared_pacer.mark_start(
                site, entry.delay.applied + self.config.fleet.pacing_margin, time.monotonic() - result.started
            )
        return entry

    async def _decide(
        self, site: str, result: FetchResult, previous: RobotsEntry | None, request: Request
    ) -> RobotsEntry:
        now = time.time()
        policy = self.config.status_policy
        response = result.response
        if response is None:
            exc = result.error
            name = type(exc).__name__
            self.stats.inc_value(f"robotstxt/exception_count/{type(exc)}")
            action, status, error = policy.action_for_failure(), None, f"{name}: {exc}" if str(exc) else name
            kind = failure_kind(exc)
            if kind == REDIRECT_LOOP:
                # Scrapy's RedirectMiddleware gave up (REDIRECT_MAX_TIMES): RFC 9309
                # 2.3.1.2 treats an endless redirect like the 3xx it is.
                action = policy.action_for_redirect_loop()
            elif kind == REFUSED:
                # Another downloader middleware refused the robots.txt request: that is
                # no network failure. As Scrapy's middleware does, the site is allowed.
                action = Action.ALLOW
                self.stats.inc_value("robotstxt/fetch_refused")
        else:
            self.stats.inc_value("robotstxt/response_count")
            self.stats.inc_value(f"robotstxt/response_status_count/{response.status}")
            action, status, error = policy.action_for_status(response.status), response.status, None
        entry = RobotsEntry(
            site=site, action=action, status=status, url=result.url, error=error, fetched_at=now,
            expires_at=now + self.config.cache_ttl, size=len(result.body), truncated=result.truncated,
            redirects=result.redirects,
        )
        if action is Action.UNREACHABLE:
            return self._unreachable(entry, previous, now)
        if response is not None:
            entry.expires_at = now + lifetime_from_headers(response.headers, self.config.cache_ttl, now)
        if action is Action.PARSE:
            if result.truncated:
                self.stats.inc_value("robotstxt/truncated")
            body = normalize_robotstxt(result.body, response.headers.get(b"Content-Type") if response else None)
            entry.body = body  # for the storage
            entry.parser = await self._parse(body, response, request)
            if self.usage is not None:  # read by our parser, whatever ROBOTSTXT_PARSER is
                entry.usage = site_preferences(body)
            if entry.parser is None:
                entry.action = Action.ALLOW
            elif self.config.crawl_delay:
                entry.delay = self._site_delay(entry)
        return entry

    def _site_delay(self, entry: RobotsEntry, quiet: bool = False) -> Any:
        assert entry.parser is not None
        delay = read_site_delay(
            entry.parser,
            self.config.user_agent or self.config.default_user_agent,
            self.config.max_crawl_delay,
            self.config.crawl_delay_exceeded,
        )
        if delay is None or quiet:  # quiet: parsed again, said and counted at the fetch
            return delay
        self.stats.inc_value("robotstxt/crawl_delay/sites")
        self.stats.max_value("robotstxt/crawl_delay/max", delay.applied)
        if delay.clamped or delay.skip:
            self.stats.inc_value(f"robotstxt/crawl_delay/{'clamped' if delay.clamped else 'skipped'}")
            logger.warning(
                "robots.txt for %(site)s asks a delay of %(asked)gs, above ROBOTSTXT_MAX_CRAWL_DELAY "
                "(%(max)gs): %(what)s",
                {
                    "site": entry.site, "asked": delay.asked, "max": self.config.max_crawl_delay,
                    "what": "clamped to the maximum" if delay.clamped else "the site is skipped",
                },
                extra={"spider": self.crawler.spider},
            )
        return delay

    def _unreachable(self, entry: RobotsEntry, previous: RobotsEntry | None, now: float) -> RobotsEntry:
        stale = previous is not None and previous.action is not Action.UNREACHABLE
        failures = (previous.failures if previous is not None else 0) + 1
        since = previous.unreachable_since if previous is not None and previous.unreachable_since else now
        entry.failures, entry.unreachable_since = failures, since
        backoff = min(self.config.retry_delay * 2 ** (failures - 1), self.config.retry_max_delay)
        entry.expires_at = now + backoff
        if now - since >= self.config.allow_after:
            # RFC 9309 2.3.1.4: after 30 days unreachable, crawl as if there were no robots.txt.
            entry.action = Action.ALLOW
            entry.expires_at = now + self.config.cache_ttl
        elif stale:
            # RFC 9309 2.4: a cached copy may outlive 24 hours while robots.txt is unreachable.
            assert previous is not None
            entry.action, entry.parser, entry.status = previous.action, previous.parser, previous.status
            entry.body, entry.delay = previous.body, previous.delay
            self.stats.inc_value("robotstxt/cache/stale_used")
        return entry

    async def _parse(self, body: bytes, response: Any, request: Request) -> RobotParser | None:
        parser = self._build_parser(body, getattr(response, "url", None))
        robots_parsed = getattr(signals, "robots_parsed", None)  # Scrapy 2.18+
        if parser is not None and robots_parsed is not None and response is not None:
            await self.crawler.signals.send_catch_log_async(
                # As Scrapy's middleware: the parser, and the request that needed it.
                signal=robots_parsed, robotparser=getattr(parser, "wrapped", parser), request=request
            )
        return parser

    def _build_parser(self, body: bytes, url: str | None) -> RobotParser | None:
        try:
            parser = build_from_crawler(self.config.parser_class, self.crawler, body)
        except Exception:
            logger.exception(
                "%(parser)s could not parse robots.txt from %(url)s; the site is allowed",
                {"parser": self.parser_name, "url": url or "?"},
                extra={"spider": self.crawler.spider},
            )
            self.stats.inc_value("robotstxt/parser_error")
            return None
        return as_robot_parser(parser, self.config.user_agent or self.config.default_user_agent)

    def _log_decision(self, entry: RobotsEntry, result: FetchResult) -> None:
        """One line per robots.txt outcome: INFO for a policy decision, WARNING for what
        keeps a site's requests out for want of an answer (a network error, a gzip bomb,
        an unreachable site: its first attempt, and when its waiting requests give up)."""
        response = result.response
        outcome = f"HTTP {response.status}" if response is not None else entry.error
        level = logging.INFO
        details = ""
        if entry.failures:  # this fetch failed: unreachable, or an older copy kept
            backoff = entry.expires_at - entry.fetched_at
            waiting = self.room.waiting_for(entry.site)
            if entry.action is not Action.UNREACHABLE:
                details = f" (previous copy kept), attempt {entry.failures}, next in {backoff:.0f}s"
            elif self._worth_waiting(entry):
                details = (
                    f", attempt {entry.failures} of {self.config.retry_times + 1}: {waiting} request(s) wait, "
                    f"next attempt in {backoff:.0f}s (ROBOTSTXT_UNREACHABLE_RETRY_DELAY, "
                    f"ROBOTSTXT_UNREACHABLE_RETRY_TIMES)"
                )
                if entry.failures == 1:
                    level = logging.WARNING
            else:
                details = (
                    f", attempt {entry.failures}: {waiting} waiting request(s) ignored; the site is tried again "
                    f"in {backoff:.0f}s if a request needs it"
                )
                if waiting:
                    level = logging.WARNING
        elif entry.action is Action.PARSE:
            details = f", {entry.size} bytes{' (truncated)' if entry.truncated else ''}, parser {self.parser_name}"
            if entry.delay is not None:
                details += f", crawl-delay {entry.delay.applied:g}s"
                if entry.delay.applied != entry.delay.asked:
                    details += f" (asked {entry.delay.asked:g}s)"
        elif response is None and failure_kind(result.error) == REFUSED:
            details = " (a downloader middleware refused the robots.txt request)"
        elif response is None:
            level = logging.WARNING  # a failure the policy turned into allow or deny
        redirected = f" (redirected to {result.url})" if result.url != result.requested_url else ""
        logger.log(
            level,
            "robots.txt for %(site)s: %(outcome)s -> %(action)s%(details)s%(redirected)s",
            {"site": entry.site, "outcome": outcome, "action": entry.action.value, "details": details, "redirected": redirected},
            extra={"spider": self.crawler.spider},
        )


#: How a robots.txt download failed (:func:`failure_kind`).
NETWORK_ERROR, REDIRECT_LOOP, REFUSED, TOO_LARGE = "network", "redirect_loop", "refused", "too_large"


def failure_kind(exc: BaseException | None) -> str:
    """What an exception from the robots.txt download means. ``IgnoreRequest`` is
    raised by downloader middlewares for very different reasons: Scrapy's redirect
    middleware giving up, its decompression bound (a gzip bomb), or a refusal."""
    if not isinstance(exc, IgnoreRequest):
        return NETWORK_ERROR
    message = str(exc)
    if "max redirections" in message:
        return REDIRECT_LOOP
    if "decompress" in message.lower() or "Decompression" in type(exc.__cause__).__name__:
        return TOO_LARGE
    return REFUSED
