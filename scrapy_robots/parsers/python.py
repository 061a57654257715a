"""Python's :mod:`urllib.robotparser`: no ``Host``; first match wins, no wildcards."""

from __future__ import annotations

from urllib.robotparser import RobotFileParser

from scrapy_robots.parsers.base import (
    ALLOW,
    CRAWL_DELAY,
    REQUEST_RATE,
    SITEMAP,
    RequestRate,
    RobotParser,
)


class PythonParser(RobotParser):
    SUPPORTED = frozenset({ALLOW, CRAWL_DELAY, REQUEST_RATE, SITEMAP})

    def __init__(self, robotstxt_body: bytes | str, user_agent: str = "*"):
        super().__init__(robotstxt_body, user_agent)
        self.rp = RobotFileParser()
        self.rp.parse(self._text(robotstxt_body).splitlines())

    def allowed(self, url: str | bytes, user_agent: str | bytes | None = None) -> bool:
        return self.rp.can_fetch(self._token(user_agent), self._url(url))

    def crawl_delay(self, user_agent: str | bytes | None = None) -> float | None:
        return self._seconds(self.rp.crawl_delay(self._token(user_agent)))

    def request_rate(self, user_agent: str | bytes | None = None) -> RequestRate | None:
        return self._rate(self.rp.request_rate(self._token(user_agent)))

    def sitemaps(self) -> list[str]:
        return list(self.rp.site_maps() or ())
