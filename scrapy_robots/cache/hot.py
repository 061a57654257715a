"""RobotsCache: the ready tier, each site's robots.txt as the crawl asks it.

What a site's entry holds decides how it is kept:

- **rules** (``entry.rules``: what the crawl's agent obeys, alone, as text; see
  :meth:`RobotParser.reduce <scrapy_robots.parsers.RobotParser.reduce>`), or no parser
  at all (404, 401/403, unreachable, allow): kept for as many sites as the storage holds
  (``ROBOTSTXT_CACHE_SIZE``), so a broad crawl never parses a file twice;
- what is **compiled** to answer quickly: the rules of the sites asked last, and whole
  parsers (a backend that cannot reduce; ``ROBOTSTXT_USAGE``'s preferences). They are
  bounded together by ``ROBOTSTXT_CACHE_PARSED`` (256) x :data:`RULES_PER_PARSER` (64)
  rules: a site's rules weigh their number, a whole parser 64. A site whose compiled
  rules leave keeps its rules as text, compiled again when asked (about 20 µs for 10
  rules), if it has at most :data:`TEXT_RULES`; a larger one, or a whole parser, leaves
  with its entry, made ready again from the storage when its site comes back (from the
  stored rules; a whole parser is parsed again), never fetched again within its lifetime.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from scrapy_robots.cache.entry import RobotsEntry

#: What a whole parser (about 14 KB) weighs against the compiled bound, in rules.
RULES_PER_PARSER: Final = 64
#: The least a site's compiled rules weigh (the structure has a fixed cost).
MIN_WEIGHT: Final = 8
#: A site with at most this many rules (9 in 10 on the corpus) keeps them as text when
#: they leave the compiled ones; a larger one leaves the tier, and comes back from the
#: storage's copy of the same text (the text of 1 site in 10 is most of the text).
TEXT_RULES: Final = 64


class RobotsCache:
    def __init__(self, max_entries: int = 256, max_light: int = 100_000):
        #: ROBOTSTXT_CACHE_PARSED: whole parsers kept, or this many x RULES_PER_PARSER rules compiled
        self.max_entries = max_entries
        #: ROBOTSTXT_CACHE_SIZE: entries without a whole parser kept
        self.max_light = max_light
        self._budget = max_entries * RULES_PER_PARSER
        #: every entry without a whole parser
        self._ready: OrderedDict[str, RobotsEntry] = OrderedDict()
        #: what is compiled or parsed: (entry, weight), least recently used first
        self._held: OrderedDict[str, tuple[RobotsEntry, int]] = OrderedDict()
        self._weight = 0

    def get(self, site: str) -> RobotsEntry | None:
        entry = self._ready.get(site)
        if entry is not None:
            self._ready.move_to_end(site)
            if entry.rules is not None:
                try:
                    self._held.move_to_end(site)
                except KeyError:
                    self._compile(entry)
            return entry
        held = self._held.get(site)
        if held is None:
            return None
        self._held.move_to_end(site)
        return held[0]

    def put(self, entry: RobotsEntry) -> None:
        site = entry.site
        self._drop(site)
        if entry.parser is not None or entry.usage is not None:
            self._hold(entry, RULES_PER_PARSER)
            return
        self._ready[site] = entry
        if len(self._ready) > self.max_light:
            gone, _ = self._ready.popitem(last=False)
            self._unhold(gone)
        if entry.rules is not None:
            self._compile(entry)

    def _compile(self, entry: RobotsEntry) -> None:
        rules = entry.rules
        compile_ = getattr(rules, "compile", None)
        if compile_ is None:  # a reduced form with nothing to release: kept as it is
            return
        compile_()
        self._hold(entry, max(rules.rules, MIN_WEIGHT))

    def _hold(self, entry: RobotsEntry, weight: int) -> None:
        self._held[entry.site] = (entry, weight)
        self._weight += weight
        # The last one stays, whatever it weighs: a site crawled now is kept ready.
        while self._weight > self._budget and len(self._held) > 1:
            site, (gone, heft) = self._held.popitem(last=False)
            self._weight -= heft
            if gone.parser is None and gone.rules.rules <= TEXT_RULES:
                gone.rules.release()  # still ready, as text
            else:  # made ready again from the storage, from its stored rules
                self._ready.pop(site, None)

    def _unhold(self, site: str) -> None:
        held = self._held.pop(site, None)
        if held is not None:
            self._weight -= held[1]

    def _drop(self, site: str) -> None:
        self._ready.pop(site, None)
        self._unhold(site)

    def __contains__(self, site: str) -> bool:
        return site in self._ready or site in self._held

    def __len__(self) -> int:
        return len(self._ready) + sum(1 for site in self._held if site not in self._ready)
