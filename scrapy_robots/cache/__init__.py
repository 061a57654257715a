"""What is known of each site's robots.txt, for how long, and where it is kept.

- :class:`RobotsEntry` (``entry.py``): one site's outcome, plain data plus the parser
  built from its body; its compact stored form; lifetimes from HTTP headers.
- :class:`RobotsCache` (``hot.py``): the hot tier, the sites crawled right now, parsed.
- :class:`RobotsStorage` (``storage.py``): the interface of ``ROBOTSTXT_CACHE_STORAGE``,
  and :class:`MemoryRobotsStorage`, the embedded default.
- :class:`SqliteRobotsStorage` (``sqlite.py``): on disk, under ``JOBDIR`` (a resumed crawl
  fetches nothing again) or at ``ROBOTSTXT_CACHE_PATH``.
- The Redis fleet storage lives in :mod:`scrapy_robots.fleet`.
"""

from __future__ import annotations

from scrapy_robots.cache.entry import RobotsEntry, lifetime_from_headers, pack, unpack
from scrapy_robots.cache.hot import RobotsCache
from scrapy_robots.cache.storage import MemoryRobotsStorage, RobotsStorage, SitePacer, check_storage_class

__all__ = [
    "MemoryRobotsStorage",
    "RobotsCache",
    "RobotsEntry",
    "RobotsStorage",
    "SitePacer",
    "SqliteRobotsStorage",
    "check_storage_class",
    "lifetime_from_headers",
    "pack",
    "unpack",
]


def __getattr__(name: str) -> object:
    # sqlite3 is imported only by the crawls that use it.
    if name == "SqliteRobotsStorage":
        from scrapy_robots.cache.sqlite import SqliteRobotsStorage

        return SqliteRobotsStorage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
