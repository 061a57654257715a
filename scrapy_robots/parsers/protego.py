"""Protego, Scrapy's default parser: every directive."""

from __future__ import annotations

from protego import Protego

from scrapy_robots.parsers.base import (
    ALLOW,
    CRAWL_DELAY,
    HOST,
    REQUEST_RATE,
    SITEMAP,
    RequestRate,
    RobotParser,
)


class ProtegoParser(RobotParser):
    SUPPORTED = frozenset({ALLOW, CRAWL_DELAY, REQUEST_RATE, SITEMAP, HOST})

    def __init__(self, robotstxt_body: bytes | str, user_agent: str = "*"):
        super().__init__(robotstxt_body, user_agent)
        self.rp = Protego.parse(self._text(robotstxt_body))

    def allowed(self, url: str | bytes, user_agent: str | bytes | None = None) -> bool:
        return bool(self.rp.can_fetch(self._url(url), self._token(user_agent)))

    def crawl_delay(self, user_agent: str | bytes | None = None) -> float | None:
        return self._seconds(self.rp.crawl_delay(self._token(user_agent)))

    def request_rate(self, user_agent: str | bytes | None = None) -> RequestRate | None:
        return self._rate(self.rp.request_rate(self._token(user_agent)))

    def sitemaps(self) -> list[str]:
        return list(self.rp.sitemaps)

    def preferred_host(self) -> str | None:
        return self.rp.preferred_host or None
