"""Google's own robots.txt library (google/robotstxt, C++), through the ``jwm-robotstxt``
wheel: ``Allow``/``Disallow`` and ``Sitemap`` only, as Googlebot reads them.

Google ignores ``Crawl-delay``, ``Request-rate`` and ``Host``, so this backend says it
cannot read them rather than answer "not set".
"""

from __future__ import annotations

from scrapy_robots.parsers.base import ALLOW, SITEMAP, RobotParser

try:
    from jwm.robotstxt import googlebot
except ImportError as exc:  # an optional extra: name the fix where it fails, at start-up
    raise ImportError("GoogleParser needs Google's robots.txt library: pip install scrapy-robots[google]") from exc


class _SitemapCollector(googlebot.RobotsParseHandler):
    # The C++ parser reports Sitemap lines to a handler; the matcher has no accessor.
    def __init__(self) -> None:
        super().__init__()
        self.sitemaps: list[str] = []

    def HandleRobotsStart(self) -> None: ...

    def HandleRobotsEnd(self) -> None: ...

    def HandleUserAgent(self, line_num: int, value: str) -> None: ...

    def HandleAllow(self, line_num: int, value: str) -> None: ...

    def HandleDisallow(self, line_num: int, value: str) -> None: ...

    def HandleSitemap(self, line_num: int, value: str) -> None:
        self.sitemaps.append(value)

    def HandleUnknownAction(self, line_num: int, action: str, value: str) -> None: ...

    def ReportLineMetadata(self, line_num: str, metadata: object) -> None: ...


class GoogleParser(RobotParser):
    SUPPORTED = frozenset({ALLOW, SITEMAP})

    def __init__(self, robotstxt_body: bytes | str, user_agent: str = "*"):
        super().__init__(robotstxt_body, user_agent)
        self.text = self._text(robotstxt_body)
        self._sitemaps: list[str] | None = None

    def allowed(self, url: str | bytes, user_agent: str | bytes | None = None) -> bool:
        # Google's matcher takes the body with each question (it parses as it
        # matches) and keeps per-call state, so each question gets its own matcher.
        matcher = googlebot.RobotsMatcher()
        return bool(matcher.OneAgentAllowedByRobots(self.text, self._token(user_agent), self._url(url)))

    def sitemaps(self) -> list[str]:
        if self._sitemaps is None:
            collector = _SitemapCollector()
            googlebot.ParseRobotsTxt(self.text, collector)
            self._sitemaps = [url for url in collector.sitemaps if url]
        return list(self._sitemaps)
