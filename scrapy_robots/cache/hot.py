"""RobotsCache: the ready tier, each site's robots.txt as the crawl asks it, ready to answer.

What a site's entry holds decides where it is kept:

- **light**: what the crawl's agent obeys, alone (``entry.rules``: a few hundred bytes,
  see :meth:`RobotParser.reduce <scrapy_robots.parsers.RobotParser.reduce>`), or no
  parser at all (404, 401/403, unreachable, allow): kept for as many sites as the
  storage holds (``ROBOTSTXT_CACHE_SIZE``), so a broad crawl never parses a file twice;
- **heavy**: a whole parser (a backend that cannot reduce), the usage preferences
  (``ROBOTSTXT_USAGE``), or more than :data:`LIGHT_RULES` rules for the agent: the last
  ``ROBOTSTXT_CACHE_PARSED`` sites. A heavy site that leaves is made ready again from
  the storage when it comes back: from its rules' text form where the parser reduces,
  else by parsing the stored body; never fetched again within its lifetime.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from scrapy_robots.cache.entry import RobotsEntry

#: Above this many rules for the agent (1 site in 10 on the corpus, half its rules), a
#: site's compiled rules weigh several KB: kept among the heavy ones.
LIGHT_RULES: Final = 64


def is_light(entry: RobotsEntry) -> bool:
    return entry.parser is None and entry.usage is None and getattr(entry.rules, "rules", 0) <= LIGHT_RULES


class RobotsCache:
    def __init__(self, max_entries: int = 256, max_light: int = 100_000):
        #: heavy entries kept (ROBOTSTXT_CACHE_PARSED)
        self.max_entries = max_entries
        #: light entries kept (ROBOTSTXT_CACHE_SIZE)
        self.max_light = max_light
        self._heavy: OrderedDict[str, RobotsEntry] = OrderedDict()
        self._light: OrderedDict[str, RobotsEntry] = OrderedDict()

    def get(self, site: str) -> RobotsEntry | None:
        entry = self._light.get(site)
        if entry is not None:
            self._light.move_to_end(site)
            return entry
        entry = self._heavy.get(site)
        if entry is not None:
            self._heavy.move_to_end(site)
        return entry

    def put(self, entry: RobotsEntry) -> None:
        site = entry.site
        if is_light(entry):
            tier, other, bound = self._light, self._heavy, self.max_light
        else:
            tier, other, bound = self._heavy, self._light, self.max_entries
        other.pop(site, None)
        tier[site] = entry
        tier.move_to_end(site)
        if len(tier) > bound:
            tier.popitem(last=False)

    def __contains__(self, site: str) -> bool:
        return site in self._light or site in self._heavy

    def __len__(self) -> int:
        return len(self._light) + len(self._heavy)
