"""RobotsStorage: where robots.txt outcomes are kept, as data, for their lifetime.

``ROBOTSTXT_CACHE_STORAGE`` names the class (built with ``build_from_crawler``, as
Scrapy's ``HTTPCACHE_STORAGE``). The middleware speaks only to this interface: a
storage keeps entries (their fields and body, never a parser), and may add a fleet-wide
single fetch (``fetch_once``), a shared pace (``pacer``) and leases on the requests
waiting in the crawler (``leases``). Memory, SQLite and Redis
are implementations; so can a user's own be.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from scrapy_robots.cache.entry import RobotsEntry, pack, unpack
from scrapy_robots.settings.errors import SettingError
from scrapy_robots.settings.readers import object_name

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request


class SitePacer(Protocol):
    """A site's pace shared beyond this crawler (the fleet's): the next start time of a
    site, reserved atomically. Both methods return None when the pace cannot be had
    right now (the caller paces locally)."""

    async def reserve(self, site: str, delay: float, not_before: float = 0.0, raised: float = 0.0) -> float | None:
        """Reserve the site's next start at least ``not_before`` s from now; the seconds to
        wait. ``raised``: this crawler's "slow down" floor (scrapy_robots.pace.backoff), which
        spaces this start from the last one but is not the site's kept delay."""

    async def mark_start(self, site: str, delay: float, ago: float) -> bool | None:
        """Count a start made ``ago`` seconds ago (the robots.txt fetch) in the pace."""


class RequestLeases(Protocol):
    """Where the requests waiting in this crawler (for robots.txt, for their turn) are
    leased, so that another crawler gives them back to a shared queue if this one dies
    (the fleet's: ``scrapy_robots.fleet.leases``)."""

    def held(self, request: Request) -> AbstractContextManager[None]:
        """``request`` is leased while the context lasts (never awaited: a lease is written later)."""
        ...


@runtime_checkable
class SharedPauses(Protocol):
    """A :class:`SitePacer` that shares "slow down" pauses (scrapy_robots.pace.backoff) with
    the other crawlers too, as the fleet's does. Both methods return None when the
    shared pace cannot be had right now (each crawler then pauses on its own)."""

    async def pause(self, slot: str, delay: float, seconds: float) -> bool | None:
        """No start of ``slot`` for ``seconds``, for every crawler; then ``delay``."""

    async def pauses(self) -> list[tuple[str, float, float]] | None:
        """The slots paused now: (slot, seconds left, delay)."""


class RobotsStorage:
    """The interface, with the defaults of a storage that only this crawler uses.

    ``load`` and ``save`` are the two a storage must implement. A storage never raises
    for want of its backend (a Redis outage, a corrupt file): it says so in the log and
    behaves as an empty one; the crawl goes on.
    """

    #: Who else writes the entries it keeps, as the log names them ("the fleet"); None
    #: when only this crawler does. A crawler says once per site what it read from them.
    shared_with: str | None = None

    async def load(self, site: str) -> RobotsEntry | None:
        """The site's entry, fresh or not (an expired one carries the failure count and
        the last good body), with ``body`` for a parsed robots.txt; or None."""
        raise NotImplementedError

    async def save(self, entry: RobotsEntry) -> None:
        """Keep ``entry`` (its fields and ``body``; ``parser`` and ``delay`` are not kept)."""
        raise NotImplementedError

    def load_now(self, site: str) -> RobotsEntry | None:
        """Optional: the site's entry when it can be read at once, without waiting (an
        entry held in memory), as ``load`` would return it; None otherwise, and the
        middleware awaits ``load``. A site that left the hot tier then comes back inside
        the request's own ``process_request``, with no wait."""
        return None

    async def fetch_once(self, site: str, fetch: Callable[[], Awaitable[RobotsEntry]]) -> RobotsEntry:
        """Run ``fetch`` (download and decide) and save its entry. A shared storage runs
        it unless another crawler does, and returns that crawler's entry (no parser) instead."""
        entry = await fetch()
        await self.save(entry)
        return entry

    def pacer(self) -> SitePacer | None:
        """A pace shared with other crawlers, or None: the downloader slot paces alone."""
        return None

    def leases(self) -> RequestLeases | None:
        """Leases on the requests waiting in this crawler, or None: what a crawler holds dies with it.
        Optional: a storage without it leases nothing."""
        return None

    def describe(self) -> str:
        """Where the entries are kept, for the crawl's start-up INFO line ("in memory (up
        to 100000 sites)"). Optional: a storage that does not say is named by its class."""
        return f"in {object_name(type(self))}"

    async def close(self) -> None:
        """The crawl is over (``spider_closed``)."""

    def __len__(self) -> int:
        return 0


class MemoryRobotsStorage(RobotsStorage):
    """The embedded default: every site's entry, packed (about 1 KB a site: the record
    and the body compressed), in a least-recently-used dict of ``ROBOTSTXT_CACHE_SIZE``
    sites. Nothing is written to disk."""

    def __init__(self, max_entries: int = 100_000, on_evict: Callable[[str], Any] | None = None):
        self.max_entries = max_entries
        self.on_evict = on_evict
        self._packed: OrderedDict[str, bytes] = OrderedDict()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MemoryRobotsStorage:
        from scrapy_robots.settings.config import RobotsConfig

        return cls(RobotsConfig.of(crawler).cache_size, _evictions(crawler))

    def get(self, site: str) -> RobotsEntry | None:
        blob = self._packed.get(site)
        if blob is None:
            return None
        self._packed.move_to_end(site)
        return unpack(blob)

    def put(self, entry: RobotsEntry) -> None:
        self.put_packed(entry.site, pack(entry))

    def put_packed(self, site: str, packed: bytes) -> None:
        """Keep ``site``'s entry as ``pack`` made it (a caller that has it packed already)."""
        self._packed[site] = packed
        self._packed.move_to_end(site)
        while len(self._packed) > self.max_entries:
            site, _ = self._packed.popitem(last=False)
            if self.on_evict is not None:
                self.on_evict(site)

    async def load(self, site: str) -> RobotsEntry | None:
        return self.get(site)

    def load_now(self, site: str) -> RobotsEntry | None:
        return self.get(site)

    async def save(self, entry: RobotsEntry) -> None:
        self.put(entry)

    def describe(self) -> str:
        return f"in memory (up to {self.max_entries} sites)"

    def bytes_held(self) -> int:
        """The packed entries' size (for the benchmarks)."""
        return sum(len(blob) for blob in self._packed.values())

    def __len__(self) -> int:
        return len(self._packed)


def _evictions(crawler: Crawler) -> Callable[[str], None]:
    stats = crawler.stats
    return lambda site: stats.inc_value("robotstxt/cache/evicted")


def check_storage_class(name: str, cls: Any) -> None:
    """Fail at start-up, naming the setting ``name``, unless ``cls`` is a storage: a
    RobotsStorage, or a class with the two methods a storage must have, ``async
    load(site)`` and ``async save(entry)``."""
    what = object_name(cls)
    fix = (
        "Use scrapy_robots.cache.MemoryRobotsStorage, scrapy_robots.fleet.RedisRobotsStorage, or a subclass of "
        "scrapy_robots.cache.RobotsStorage that implements async load(site) and async save(entry)."
    )
    if not isinstance(cls, type):
        raise SettingError(f"{name} = {what} is not a class. {fix}")
    subclass = issubclass(cls, RobotsStorage)
    for method in ("load", "save"):
        found = getattr(cls, method, None)
        if subclass and found is getattr(RobotsStorage, method):
            raise SettingError(f"{name} = {what} does not implement {method}(). {fix}")
        if not subclass and not inspect.iscoroutinefunction(found):
            raise SettingError(f"{name} = {what} has no async {method}() method. {fix}")
