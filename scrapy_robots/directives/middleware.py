"""DirectivesMiddleware: what a page says of itself, obeyed for this crawler.

A spider middleware (the add-on enables it; ``ROBOTSTXT_DIRECTIVES = False`` turns it
off). For each response that reaches the spider, it reads the ``X-Robots-Tag`` and
``Robots-Tag`` headers (every response: PDFs carry them too) and, for HTML, the head's
robots meta tags, scoped to the crawler's product token (the one robots.txt matching
uses); records what applies in ``response.meta["robotstxt_directives"]``; and acts on
the spider's output:

- ``nofollow`` (or ``none``): every request the spider yields from that response is
  dropped (``ROBOTSTXT_DIRECTIVES_NOFOLLOW``), unless the response is a sitemap or a
  robots.txt (the site's own list of URLs to crawl);
- ``rel="nofollow"``: a request to a URL the page links to only that way is dropped
  (``ROBOTSTXT_DIRECTIVES_REL_NOFOLLOW``);
- ``noindex`` (or ``unavailable_after`` past its date): the page's items are marked with
  the ``ROBOTSTXT_DIRECTIVES_NOINDEX_FIELD`` field, or dropped
  (``ROBOTSTXT_DIRECTIVES_NOINDEX``);
- ``noai`` / ``noimageai``: read by :class:`scrapy_robots.spidermw.UsageMiddleware` from
  the meta key, as a page's usage preference (``ROBOTSTXT_USAGE``).

A request with ``dont_obey_robotstxt`` in its meta is never dropped. Each drop is a
DEBUG line and a stat; the first on each site is an INFO line too.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from typing import TYPE_CHECKING, Any, Final

from itemadapter import ItemAdapter
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots.compliance.crawl import compliance_record
from scrapy_robots.directives.head import meta_directives
from scrapy_robots.directives.headers import LEGACY, STRUCTURED, header_directives
from scrapy_robots.directives.links import key, nofollow_only
from scrapy_robots.directives.rules import NONE, Directives
from scrapy_robots.record import NAMED_AT_MOST
from scrapy_robots.settings.config import RobotsConfig
from scrapy_robots.settings.errors import starting
from scrapy_robots.settings.parts import NOINDEX_ACTIONS  # noqa: F401 - its import path before
from scrapy_robots.status.result import site_of
from scrapy_robots.utils.once import OncePerSite

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: The plain-data record of what applied: :meth:`Directives.as_meta`.
META_KEY: Final = "robotstxt_directives"
#: The :class:`Directives` object, for this middleware's output step.
_FOUND: Final = "_robotstxt_directives"
#: What the crawl did with a page's directives, as the compliance record counts it (``did``).
NOT_FOLLOWED: Final = "requests not followed (nofollow)"
NOT_FOLLOWED_REL: Final = 'requests not followed (rel="nofollow")'
NOINDEX_DROPPED: Final = "items dropped (noindex)"
NOINDEX_MARKED: Final = "items marked (noindex)"
#: A sitemap's root element, in its first bytes.
_SITEMAP: Final = re.compile(rb"<(?:[\w-]+:)?(?:urlset|sitemapindex)[\s>]")


def source_slug(source: str) -> str:
    """A source as a stat's last part: ``x-robots-tag``, ``robots-tag``, ``meta-robots``,
    ``meta-botname`` (a tag named for this crawler)."""
    if source == LEGACY:
        return "x-robots-tag"
    if source == STRUCTURED:
        return "robots-tag"
    if source == 'meta name="robots"':
        return "meta-robots"
    if source.startswith("meta"):
        return "meta-botname"
    return "unavailable_after"


def page_directives(response: Response, token: str, malformed: list[str] | None = None) -> Directives:
    """What ``response``'s headers (any response) and head (HTML) say to the crawler
    whose product token is ``token``; what is ignored as malformed goes to ``malformed``."""
    headers = response.headers
    found = NONE
    legacy, structured = headers.getlist(LEGACY), headers.getlist(STRUCTURED)
    if legacy or structured:
        found = header_directives(
            [v.decode("latin-1") for v in legacy], [v.decode("latin-1") for v in structured], token, malformed
        )
    if isinstance(response, HtmlResponse):
        found = found | meta_directives(response.body, token, malformed)
    return found


def is_sitemap(response: Response) -> bool:
    """Is ``response`` a sitemap or a robots.txt, whose URLs are the site's own list of what
    to crawl, not a page's links? (SEO plug-ins send ``X-Robots-Tag: noindex, nofollow``
    with sitemaps, to keep them out of search results.)"""
    if response.url.endswith("/robots.txt"):
        return True
    callback = getattr(response.request, "callback", None)
    if getattr(callback, "__name__", None) == "_parse_sitemap":  # SitemapSpider's
        return True
    return _SITEMAP.search(response.body, 0, 2048) is not None


class DirectivesMiddleware:
    """Enabled by the add-on; ``NotConfigured`` with ``ROBOTSTXT_DIRECTIVES = False``."""

    def __init__(self, crawler: Crawler):
        robots = RobotsConfig.of(crawler)
        config = robots.directives
        if not config.enabled:
            raise NotConfigured
        self.config = config
        self.crawler = crawler
        self.stats = crawler.stats
        self._logged = OncePerSite()  # (site, what): first drops logged at INFO
        # The crawl's one compliance record (ROBOTSTXT_RECORD), or None: told of each page
        # whose directives the crawl acted on.
        self.record = compliance_record(crawler, robots)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        with starting("DirectivesMiddleware"):
            return cls(crawler)

    # -- reading ---------------------------------------------------------------------

    def read(self, response: Response) -> Directives:
        """What ``response`` says to this crawler, now (``unavailable_after`` applied)."""
        malformed: list[str] = []
        found = page_directives(response, self.config.token(response), malformed)
        for reason in malformed:
            self.stats.inc_value("robotstxt/directives/malformed")
            logger.debug(
                "Robots directive of %(url)s ignored: %(reason)s",
                {"url": response.url, "reason": reason},
                extra={"spider": self.crawler.spider},
            )
        return found.at(time.time()) if found.unavailable_after is not None else found

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        try:
            meta = response.meta
        except AttributeError:  # a response built without a request
            return
        found = self.read(response)
        if not found:
            # A spider that passes meta=response.meta on carries the last page's record.
            if _FOUND in meta:
                del meta[_FOUND], meta[META_KEY]
            return
        meta[_FOUND] = found
        meta[META_KEY] = found.as_meta()
        self.stats.inc_value("robotstxt/directives/pages")
        for name, source in found.sources:
            self.stats.inc_value(f"robotstxt/directives/{name}/{source_slug(source)}")
        for name in found.names:
            self.stats.inc_value(f"robotstxt/directives/{name}")

    # -- acting on the spider's output --------------------------------------------------

    def _directives(self, response: Response) -> Directives:
        try:
            return response.meta.get(_FOUND, NONE)
        except AttributeError:
            return NONE

    def _filter(self, response: Response) -> _Filter | None:
        found = self._directives(response)
        config = self.config
        if not (found.nofollow and config.nofollow) and not (found.noindex and config.noindex != "ignore"):
            if not config.rel_nofollow or not isinstance(response, HtmlResponse):
                return None
        return _Filter(self, response, found)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterator[Any]:
        keep = self._filter(response)
        if keep is None:
            yield from result
            return
        try:
            for item in result:
                if keep(item):
                    yield item
        finally:  # the callback's end, or its error: what was done so far is what the crawl did
            self._told(keep)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        keep = self._filter(response)
        try:
            async for item in result:
                if keep is None or keep(item):
                    yield item
        finally:
            if keep is not None:
                self._told(keep)

    def _told(self, done: _Filter) -> None:
        """A page whose directives the crawl acted on, told to the compliance record."""
        if self.record is None or not done.did:
            return
        response = done.response
        self.record.directives(site_of(response), response.url, done.found.as_meta(), dict(done.did), done.not_followed)

    def tell(
        self, response: Response, what: str, stat: str, message: str, args: dict[str, Any], level: int = logging.INFO
    ) -> None:
        """Count what was done, say it at DEBUG, and at ``level`` the first time on its site."""
        self.stats.inc_value(stat)
        level, suffix = self._logged.level(urlparse_cached(response).netloc, what, stat, level)
        logger.log(level, message + suffix, args, extra={"spider": self.crawler.spider})


class _Filter:
    """One response's output: which requests are followed, how items are marked."""

    __slots__ = ("did", "found", "middleware", "not_followed", "response", "_rel")

    def __init__(self, middleware: DirectivesMiddleware, response: Response, found: Directives):
        self.middleware = middleware
        self.response = response
        self.found = found
        self._rel: frozenset[str] | None = None  # rel=nofollow URLs, read at the first request
        #: what was done, by what (the compliance record's ``did``), and the requests dropped
        self.did: Counter[str] = Counter()
        self.not_followed: list[str] = []

    def _done(self, what: str, request: Request | None = None) -> None:
        self.did[what] += 1
        if request is not None and len(self.not_followed) < NAMED_AT_MOST:
            self.not_followed.append(request.url)

    def __call__(self, item: Any) -> bool:
        if isinstance(item, Request):
            return self._follow(item)
        if item is None or not self.found.noindex:
            return True
        return self._index(item)

    def _follow(self, request: Request) -> bool:
        config = self.middleware.config
        if request.meta.get("dont_obey_robotstxt"):
            return True
        response = self.response
        if self.found.nofollow and config.nofollow and not is_sitemap(response):
            self.middleware.tell(
                response,
                "nofollow",
                "robotstxt/directives/nofollow/requests_dropped",
                "Not following %(request)s: %(url)s says nofollow (%(source)s)",
                {"request": request, "url": response.url, "source": self.found.source_of("nofollow")},
            )
            self._done(NOT_FOLLOWED, request)
            return False
        if not config.rel_nofollow:
            return True
        if self._rel is None:
            self._rel = nofollow_only(response)
        if self._rel and key(request.url) in self._rel:
            self.middleware.tell(
                response,
                "rel",
                "robotstxt/directives/rel_nofollow/requests_dropped",
                'Not following %(request)s: %(url)s links to it only with rel="nofollow"',
                {"request": request, "url": response.url},
            )
            self._done(NOT_FOLLOWED_REL, request)
            return False
        return True

    def _index(self, item: Any) -> bool:
        middleware = self.middleware
        config = middleware.config
        source = self.found.source_of("noindex")
        if config.noindex == "ignore":
            return True
        if config.noindex == "drop":
            middleware.stats.inc_value("robotstxt/directives/noindex/items_dropped")
            logger.debug(
                "Item dropped: %(url)s says noindex (%(source)s)",
                {"url": self.response.url, "source": source},
                extra={"spider": middleware.crawler.spider},
            )
            self._done(NOINDEX_DROPPED)
            return False
        try:
            ItemAdapter(item)[config.noindex_field] = True
        except (KeyError, TypeError):  # an item class without the field, or not an item
            middleware.tell(
                self.response,
                "unmarked",
                "robotstxt/directives/noindex/items_unmarked",
                "Item of %(url)s (noindex, %(source)s) not marked: its class has no %(field)r field; "
                "declare it, or set ROBOTSTXT_DIRECTIVES_NOINDEX = 'drop'",
                {"url": self.response.url, "source": source, "field": config.noindex_field},
                logging.WARNING,
            )
            return True
        middleware.stats.inc_value("robotstxt/directives/noindex/items_marked")
        self._done(NOINDEX_MARKED)
        return True
