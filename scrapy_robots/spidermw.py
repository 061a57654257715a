"""UsageMiddleware: a response's ``Content-Usage`` header, for the purposes a crawl declares.

robots.txt speaks for a site and is applied before download (RobotsTxtMiddleware);
the header speaks for one response and may be stricter. This spider middleware reads
it, tags ``response.meta["robotstxt_usage"]`` with the stricter of the two, and in
``deny`` mode drops the items of a response whose header denies a declared purpose
(requests still go through: the header is about this page's content, not its links).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots.usage import META_KEY, Preference, UsageConfig, header_preference, stricter

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator
    from typing import Self

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: Meta key of the purpose a response's header denies (deny mode), for process_spider_output.
_DROP = "_robotstxt_usage_drop"


class UsageMiddleware:
    """Enabled by ``ROBOTSTXT_USAGE``; ``NotConfigured`` without it."""

    def __init__(self, crawler: Crawler):
        config = UsageConfig.from_settings(crawler.settings)
        if config is None:
            raise NotConfigured
        self.config = config
        self.crawler = crawler
        self.stats = crawler.stats
        self._warned: set[str] = set()  # sites whose malformed header was logged

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        try:
            meta = response.meta
        except AttributeError:  # a response built without a request
            return
        values = response.headers.getlist(b"Content-Usage")
        header = b", ".join(values).decode("latin-1") if values else None
        tags = meta.setdefault(META_KEY, {})
        malformed = False
        for purpose in self.config.purposes:
            found = header_preference(header, purpose)
            if found is None:
                malformed = True  # counted and logged once per response, not per purpose
                found = Preference(purpose, "allow", False, source="header")
            known = tags.get(purpose)
            robots = Preference(purpose, **known) if known else Preference(purpose, "allow", False)
            winner = stricter(robots, found)
            tags[purpose] = winner.as_meta()
            if found.denied:
                self.stats.inc_value(f"robotstxt/usage/header/denied/{purpose}")
                if self.config.mode == "deny" and _DROP not in meta:
                    meta[_DROP] = purpose
        if malformed:
            self._malformed(response, header)

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

    def _drops(self, response: Response) -> str | None:
        try:
            return response.meta.get(_DROP)
        except AttributeError:
            return None

    def _keep(self, item: Any, purpose: str, response: Response) -> bool:
        if isinstance(item, Request):
            return True
        self.stats.inc_value(f"robotstxt/usage/items_dropped/{purpose}")
        logger.debug(
            "Item dropped: the Content-Usage header of %(url)s denies %(purpose)s",
            {"url": response.url, "purpose": purpose},
            extra={"spider": self.crawler.spider},
        )
        return False

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterator[Any]:
        purpose = self._drops(response)
        for item in result:
            if purpose is None or self._keep(item, purpose, response):
                yield item

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        purpose = self._drops(response)
        async for item in result:
            if purpose is None or self._keep(item, purpose, response):
                yield item
