"""RobotsCache: the ready tier, each site's robots.txt as the crawl asks it, ready to answer.

What a site's entry holds decides where it is kept:

- **light**: what the crawl's agent obeys, alone (``entry.rules``: a few hundred bytes,
  see :meth:`RobotParser.reduce <scrapy_robots.parsers.RobotParser.reduce>`), or no
  parser at all (404, 401/403, unreachable, allow): kept for as many sites as the
  storage holds (``ROBOTSTXT_CACHE_SIZE``), so a broad crawl never parses a file twice;
- **heavy**: a whole parser (a backend that cannot reduce), the usage preferences
  (``ROBOTSTXT_USAGE``), or more than :data:`LIGHT_RULES` rules for the agent: the last
  ``ROBOTSTXT_CACHE_PARSED`` sites, where a site with rules counts one per
  :data:`LIGHT_RULES` of them (a 1,000-rule file counts 15: memory, not sites, is what
  the bound keeps). A heavy site that leaves is made ready again from
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


def weight(entry: RobotsEntry) -> int:
    """0 for a light entry; else what it counts against ROBOTSTXT_CACHE_PARSED."""
    rules = getattr(entry.rules, "rules", 0)
    if entry.parser is None and entry.usage is None and rules <= LIGHT_RULES:
        return 0
    return max(1, rules // LIGHT_RULES)


class RobotsCache:
    def __init__(self, max_entries: int = 256, max_light: int = 100_000):
        #: heavy entries kept (ROBOTSTXT_CACHE_PARSED)
        self.max_entries = max_entries
        #: light entries kept (ROBOTSTXT_CACHE_SIZE)
        self.max_light = max_light
        self._heavy: OrderedDict[str, tuple[RobotsEntry, int]] = OrderedDict()
        self._light: OrderedDict[str, RobotsEntry] = OrderedDict()
        self._weight = 0  #: the heavy entries' weights, summed

    def get(self, site: str) -> RobotsEntry | None:
        entry = self._light.get(site)
        if entry is not None:
            self._light.move_to_end(site)
            return entry
        heavy = self._heavy.get(site)
        if heavy is None:
            return None
        self._heavy.move_to_end(site)
        return heavy[0]

    def put(self, entry: RobotsEntry) -> None:
        site = entry.site
        self._drop(site)
        heft = weight(entry)
        if not heft:
            self._light[site] = entry
            if len(self._light) > self.max_light:
                self._light.popitem(last=False)
            return
        self._heavy[site] = (entry, heft)
        self._weight += heft
        # The last one stays, whatever it weighs: a site crawled now is kept ready.
        while self._weight > self.max_entries and len(self._heavy) > 1:
            _, (_, gone) = self._heavy.popitem(last=False)
            self._weight -= gone

    def _drop(self, site: str) -> None:
        if self._light.pop(site, None) is None:
            heavy = self._heavy.pop(site, None)
            if heavy is not None:
                self._weight -= heavy[1]

    def __contains__(self, site: str) -> bool:
        return site in self._light or site in self._heavy

    def __len__(self) -> int:
        return len(self._light) + len(self._heavy)
