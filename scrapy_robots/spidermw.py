"""UsageMiddleware: a response's ``Content-Usage`` header, its ``noai`` robots
directives and the license it links to, for the purposes a crawl declares.

robots.txt speaks for a site and is applied before download (RobotsTxtMiddleware);
the header and the page's directives (read by
:class:`scrapy_robots.directives.middleware.DirectivesMiddleware`, which runs first), and
an RSL license the page links to (its answer read by
:class:`scrapy_robots.policyfiles.page_links.PageLinksMiddleware`, in the downloader)
speak for one response and may be stricter. This spider middleware tags
``response.meta["robotstxt_usage"]`` with the strictest, and in ``deny`` mode drops the
items of a response whose header or directives deny a declared purpose (requests still go
through: they are about this page's content, not its links). With a compliance record
(``ROBOTSTXT_RECORD``), a page that denies a declared purpose is told to it once its items
have gone through: what it said, and what the crawl did (items dropped, or tagged).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots.compliance.crawl import compliance_record
from scrapy_robots.grounds import PAGE_SOURCES, PageReading
from scrapy_robots.policyfiles.page_links import META_KEY as LINKED_KEY
from scrapy_robots.settings.config import RobotsConfig
from scrapy_robots.settings.errors import starting
from scrapy_robots.status.result import site_of
from scrapy_robots.tdmrep import combine, header_reservation, meta_reservation
from scrapy_robots.tdmrep.reading import META_KEY as TDM_META_KEY
from scrapy_robots.tdmrep.reading import answer_from_meta
from scrapy_robots.tdmrep.reading import preferences as tdm_preferences
from scrapy_robots.usage import (
    META_KEY,
    Preference,
    directive_preference,
    header_preference,
    stricter,
)
from scrapy_robots.utils.once import OncePerSite

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: Where DirectivesMiddleware (run before this one) records a page's robots directives.
DIRECTIVES_KEY = "robotstxt_directives"
#: Meta key of ``(purpose, what denies it)``, a purpose the response's header or robots
#: directives deny (deny mode), for process_spider_output.
_DROP = "_robotstxt_usage_drop"
#: Meta key of the :class:`Preference` of the page's own (its header, meta tag or
#: directive) that denies a declared purpose, in either mode: the record's page row.
_DENIED = "_robotstxt_usage_page_denied"


class UsageMiddleware:
    """Enabled by ``ROBOTSTXT_USAGE``; ``NotConfigured`` without it."""

    def __init__(self, crawler: Crawler):
        robots = RobotsConfig.of(crawler)
        if robots.usage is None:
            raise NotConfigured
        self.config = robots.usage
        #: the declared purposes TDMRep speaks for: its header fields and meta tags are read
        self.tdmrep = robots.tdmrep
        self.crawler = crawler
        self.stats = crawler.stats
        self._warned: set[str] = set()  # sites whose malformed header was logged
        self._dropped = OncePerSite()  # (site, purpose): the first item dropped said at INFO
        # The crawl's one compliance record (the robots.txt middleware's), or None.
        self.record = compliance_record(crawler, robots)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        with starting("UsageMiddleware"):
            return cls(crawler)

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        try:
            meta = response.meta
        except AttributeError:  # a response built without a request
            return
        values = response.headers.getlist(b"Content-Usage")
        header = b", ".join(values).decode("latin-1") if values else None
        meta.pop(_DROP, None)  # a spider that passes meta=response.meta on: the last page's
        meta.pop(_DENIED, None)
        tags = meta.setdefault(META_KEY, {})
        directives = meta.get(DIRECTIVES_KEY)
        image = directives is not None and response.headers.get(b"Content-Type", b"").lower().startswith(b"image/")
        malformed = False
        tdm = self._tdmrep(response) if self.tdmrep else {}
        # The files the page links to (an RSL license: policyfiles/page_links.py), their answer for it.
        linked = meta.get(LINKED_KEY) or {}
        for purpose in self.config.purposes:
            found = header_preference(header, purpose)
            if found is None:
                malformed = True  # counted and logged once per response, not per purpose
                found = Preference(purpose, "allow", False, source="header")
            known = tags.get(purpose)
            # Only what robots.txt said for this request; a page's answer is this page's, and
            # TDMRep's file is read again beside the page's header fields and tags.
            from_robots = known is not None and known["source"] == "robots.txt"
            robots = Preference(purpose, **known) if from_robots else Preference(purpose, "allow", False)
            reserved = tdm.get(purpose)
            if reserved is not None:
                robots = stricter(robots, reserved)
            winner = stricter(robots, found)
            if found.denied:
                self.stats.inc_value(f"robotstxt/usage/header/denied/{purpose}")
            page = directive_preference(directives, purpose, image)
            if page is not None:
                self.stats.inc_value(f"robotstxt/usage/directive/denied/{purpose}")
                winner = stricter(winner, page)
            known = linked.get(purpose)
            link = Preference(purpose, **known) if known is not None else None
            if link is not None:
                winner = stricter(winner, link)
            tags[purpose] = winner.as_meta()
            # The first that denies in the order the tag's winner is chosen (stricter: the earlier
            # denial wins), so that the items' drop, the tag and the record name one source.
            denier = next((p for p in (reserved, found, page, link) if p is not None and p.denied), None)
            if denier is not None and self.config.mode == "deny" and _DROP not in meta:
                meta[_DROP] = (purpose, denier.text)
            if denier is not None and denier.source in PAGE_SOURCES and _DENIED not in meta:
                meta[_DENIED] = denier
        if malformed:
            self._malformed(response, header)

    def _tdmrep(self, response: Response) -> dict[str, Preference]:
        """TDMRep for this response: the site's file (as the verdict read it before the
        download), then the header fields, then the meta tags of an HTML page, each value
        stated superseding the one before; counted by the source that reserves."""
        file = answer_from_meta(response.meta.get(TDM_META_KEY))
        header = header_reservation(response.headers)
        page = meta_reservation(response.body) if isinstance(response, HtmlResponse) else None
        for source, answer in (("header", header), ("meta", page)):
            if answer is None:
                continue
            if answer.reserved:
                self.stats.inc_value(f"robotstxt/tdmrep/reserved/{source}")
            if answer.problems:
                self.stats.inc_value(f"robotstxt/tdmrep/malformed/{source}")
                logger.debug(
                    "TDMRep of %(url)s: %(problems)s", {"url": response.url, "problems": "; ".join(answer.problems)}
                )
        if file is None and not header.stated and (page is None or not page.stated):
            return {}
        return tdm_preferences(combine(file, header, page), self.tdmrep)

    def _malformed(self, response: Response, header: str | None) -> None:
        self.stats.inc_value("robotstxt/usage/header/malformed")
        site = urlparse_cached(response).netloc
        if site in self._warned:
            return
        if len(self._warned) < 10_000:
            self._warned.add(site)
        logger.warning(
            "Malformed Content-Usage header from %(site)s ignored: %(value)r (logged once per site)",
            {"site": site, "value": header},
            extra={"spider": self.crawler.spider},
        )

    def drops(self, response: Response) -> tuple[str, str] | None:
        """``(purpose, what denies it)`` when this response's items are dropped (deny mode),
        once :meth:`process_spider_input` has read it; None otherwise."""
        try:
            return response.meta.get(_DROP)
        except AttributeError:
            return None

    def reading(self, response: Response) -> PageReading:
        """The page as read (:meth:`process_spider_input`): the preferences tagged, what
        drops its items, what the page itself denies. The answer a crawl obeyed, for the
        record and for ``scrapy robots --page`` (:meth:`Grounds.on_page`)."""
        meta = response.meta
        return PageReading(dict(meta.get(META_KEY) or {}), meta.get(_DROP), meta.get(_DENIED))

    def _told(self, response: Response, items: int) -> None:
        """A page that denied a declared purpose, told to the record once its output is done
        (``items``: those dropped)."""
        if self.record is None:
            return
        try:
            denied = response.meta.get(_DENIED)
        except AttributeError:
            return
        if denied is not None:
            self.record.page(site_of(response), response.url, self.reading(response), items)

    def _keep(self, item: Any, denied: tuple[str, str], response: Response) -> bool:
        if isinstance(item, Request):
            return True
        purpose, text = denied
        stat = f"robotstxt/usage/items_dropped/{purpose}"
        self.stats.inc_value(stat)
        # The site's first drop for a purpose at INFO, as every other decision is said.
        level, suffix = self._dropped.level(urlparse_cached(response).netloc, purpose, stat)
        logger.log(
            level,
            "Item dropped: %(text)s of %(url)s denies %(purpose)s" + suffix,
            {"url": response.url, "purpose": purpose, "text": text},
            extra={"spider": self.crawler.spider},
        )
        return False

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterator[Any]:
        denied = self.drops(response)
        dropped = 0
        try:
            for item in result:
                if denied is None or self._keep(item, denied, response):
                    yield item
                else:
                    dropped += 1
        finally:  # the callback's end, or its error: what was dropped so far is what the crawl did
            self._told(response, dropped)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        denied = self.drops(response)
        dropped = 0
        try:
            async for item in result:
                if denied is None or self._keep(item, denied, response):
                    yield item
                else:
                    dropped += 1
        finally:
            self._told(response, dropped)
