"""RobotsCache: the hot tier, the robots.txt of the sites crawled right now, parsed.

A parsed robots.txt costs about 14 KB (more for a large file), its stored form about
1 KB: the crawler keeps the last ``ROBOTSTXT_CACHE_PARSED`` sites parsed and ready, and
every site's entry in the storage (:mod:`scrapy_robots.cache.storage`). A site that
leaves this tier is parsed again from the stored body when it comes back, never
fetched again within its lifetime.
"""

from __future__ import annotations

from collections import OrderedDict

from scrapy_robots.cache.entry import RobotsEntry


class RobotsCache:
    def __init__(self, max_entries: int = 256):
        self.max_entries = max_entries
        self._entries: OrderedDict[str, RobotsEntry] = OrderedDict()

    def get(self, site: str) -> RobotsEntry | None:
        entry = self._entries.get(site)
        if entry is not None:
            self._entries.move_to_end(site)
        return entry

    def put(self, entry: RobotsEntry) -> None:
        self._entries[entry.site] = entry
        self._entries.move_to_end(entry.site)
        if len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def __contains__(self, site: str) -> bool:
        return site in self._entries

    def __len__(self) -> int:
        return len(self._entries)
