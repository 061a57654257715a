"""RobotsCache: what is known about each site's robots.txt, for how long.

The cache keeps :class:`RobotsEntry` objects in a storage chosen by
``ROBOTSTXT_CACHE_STORAGE`` (as Scrapy's ``HTTPCACHE_STORAGE``): the in-memory LRU
below is the embedded default; a shared storage (Redis, for a fleet) implements the
same four methods.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Protocol

from scrapy_robots.policy import Action

if TYPE_CHECKING:
    from scrapy_robots.delay import SiteDelay
    from scrapy_robots.parsers import RobotParser


@dataclass
class RobotsEntry:
    """One site's robots.txt outcome. Plain data but for ``parser``, which a shared
    storage rebuilds from ``body`` with the crawler's own parser class."""

    site: str  #: "scheme://host:port", the key
    action: Action
    fetched_at: float
    expires_at: float
    status: int | None = None  #: final HTTP status, None for a network error
    url: str | None = None  #: the robots.txt URL after redirects
    redirects: int = 0  #: redirects followed to reach ``url``
    size: int = 0  #: bytes parsed (after the ROBOTSTXT_MAXSIZE cap)
    truncated: bool = False
    error: str | None = None  #: the network error, for "unreachable"
    failures: int = 0  #: consecutive unreachable outcomes
    unreachable_since: float | None = None
    delay: SiteDelay | None = None  #: Crawl-delay / Request-rate, when the file sets one
    parser: RobotParser | None = field(default=None, repr=False, compare=False)
    #: the UTF-8 body, kept only until a shared storage has published it
    body: bytes | None = field(default=None, repr=False, compare=False)

    def fresh(self, now: float) -> bool:
        return now < self.expires_at


class RobotsStorage(Protocol):
    """Where :class:`RobotsCache` keeps entries. ``ROBOTSTXT_CACHE_STORAGE`` names a
    class built with ``build_from_crawler``."""

    def get(self, site: str) -> RobotsEntry | None: ...

    def put(self, entry: RobotsEntry) -> None: ...

    def delete(self, site: str) -> None: ...

    def __len__(self) -> int: ...


class MemoryRobotsStorage:
    """A least-recently-used dict bounded by ``ROBOTSTXT_CACHE_SIZE`` sites."""

    def __init__(self, max_entries: int = 4096, on_evict: Any = None):
        self.max_entries = max_entries
        self.on_evict = on_evict
        self._entries: OrderedDict[str, RobotsEntry] = OrderedDict()

    @classmethod
    def from_crawler(cls, crawler: Any) -> MemoryRobotsStorage:
        from scrapy_robots.config import RobotsConfig

        return cls(RobotsConfig.from_settings(crawler.settings).cache_size)

    def get(self, site: str) -> RobotsEntry | None:
        entry = self._entries.get(site)
        if entry is not None:
            self._entries.move_to_end(site)
        return entry

    def put(self, entry: RobotsEntry) -> None:
        self._entries[entry.site] = entry
        self._entries.move_to_end(entry.site)
        while len(self._entries) > self.max_entries:
            site, _ = self._entries.popitem(last=False)
            if self.on_evict is not None:
                self.on_evict(site)

    def delete(self, site: str) -> None:
        self._entries.pop(site, None)

    def __len__(self) -> int:
        return len(self._entries)


class RobotsCache:
    """TTL on top of a storage: ``lookup`` answers hit, miss or expired."""

    HIT, MISS, EXPIRED = "hit", "miss", "expired"

    def __init__(self, storage: RobotsStorage, clock: Any = time.time):
        self.storage = storage
        self.clock = clock

    def lookup(self, site: str) -> tuple[str, RobotsEntry | None]:
        entry = self.storage.get(site)
        if entry is None:
            return self.MISS, None
        if entry.fresh(self.clock()):
            return self.HIT, entry
        return self.EXPIRED, entry

    def put(self, entry: RobotsEntry) -> None:
        self.storage.put(entry)

    def __len__(self) -> int:
        return len(self.storage)


# Below this, a server's Cache-Control/Expires would make us refetch robots.txt
# for almost every request; RFC 9309 asks crawlers not to.
MIN_HEADER_LIFETIME = 60.0


def lifetime_from_headers(headers: Any, ttl: float, now: float) -> float:
    """The cached copy's lifetime: ``Cache-Control: max-age`` or ``Expires`` when the
    server sends one, never above ``ttl`` (RFC 9309: at most 24 hours) nor below a minute."""
    header_lifetime = None
    cache_control = _header(headers, b"Cache-Control")
    if cache_control:
        for part in cache_control.split(","):
            name, _, value = part.strip().partition("=")
            if name.lower() == "max-age" and value.strip().isdigit():
                header_lifetime = float(value.strip())
    if header_lifetime is None:
        expires = _header(headers, b"Expires")
        if expires:
            try:
                header_lifetime = parsedate_to_datetime(expires).timestamp() - now
            except (TypeError, ValueError, IndexError, OverflowError):
                header_lifetime = None
    if header_lifetime is None:
        return ttl
    return min(ttl, max(header_lifetime, MIN_HEADER_LIFETIME))


def _header(headers: Any, name: bytes) -> str | None:
    if headers is None:
        return None
    value = headers.get(name)
    if not value:
        return None
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)
