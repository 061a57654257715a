"""reppy (C++ through Cython): no ``Request-rate`` nor ``Host``.

reppy 0.4.14 does not build from PyPI on Python 3.11; ``make reppy`` carries the recipe.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from scrapy_robots.parsers.base import ALLOW, CRAWL_DELAY, SITEMAP, RobotParser

REPPY_MISSING = (
    "ReppyParser needs reppy, which does not install from PyPI on Python 3.11 as "
    "published. Build it with `make reppy` in a scrapy-robots checkout (see the "
    "'Install' page of the docs for the recipe), or choose another ROBOTSTXT_PARSER."
)

# reppy wants the robots.txt URL, and its Robots.allowed() denies any URL of another
# host; we ask its per-agent rules with the path instead, so any base will do.
_BASE = "http://robots.invalid/robots.txt"


class ReppyParser(RobotParser):
    SUPPORTED = frozenset({ALLOW, CRAWL_DELAY, SITEMAP})

    def __init__(self, robotstxt_body: bytes | str, user_agent: str = "*"):
        super().__init__(robotstxt_body, user_agent)
        try:
            from reppy.robots import Robots
        except ImportError as exc:
            raise ImportError(REPPY_MISSING) from exc
        self.rp = Robots.parse(_BASE, self._text(robotstxt_body))

    def allowed(self, url: str | bytes, user_agent: str | bytes | None = None) -> bool:
        parts = urlsplit(self._url(url))
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return bool(self.rp.agent(self._token(user_agent)).allowed(path))

    def crawl_delay(self, user_agent: str | bytes | None = None) -> float | None:
        return self._seconds(self.rp.agent(self._token(user_agent)).delay)

    def sitemaps(self) -> list[str]:
        return list(self.rp.sitemaps)
