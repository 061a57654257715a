"""robotexclusionrulesparser ("rerp"): no ``Request-rate`` nor ``Host``."""

from __future__ import annotations

from robotexclusionrulesparser import RobotExclusionRulesParser

from scrapy_robots.parsers.base import ALLOW, CRAWL_DELAY, SITEMAP, RobotParser


class RerpParser(RobotParser):
    SUPPORTED = frozenset({ALLOW, CRAWL_DELAY, SITEMAP})

    def __init__(self, robotstxt_body: bytes | str, user_agent: str = "*"):
        super().__init__(robotstxt_body, user_agent)
        self.rp = RobotExclusionRulesParser()
        self.rp.parse(self._text(robotstxt_body))

    def allowed(self, url: str | bytes, user_agent: str | bytes | None = None) -> bool:
        return bool(self.rp.is_allowed(self._token(user_agent), self._url(url)))

    def crawl_delay(self, user_agent: str | bytes | None = None) -> float | None:
        return self._seconds(self.rp.get_crawl_delay(self._token(user_agent)))

    def sitemaps(self) -> list[str]:
        return list(self.rp.sitemaps)
