"""RobotsCache: the ready tier, each site's robots.txt as the crawl asks it.

What a site's entry holds decides how it is kept:

- **rules** (``entry.rules``: what the crawl's agent obeys, alone, as text; see
  :meth:`RobotParser.reduce <scrapy_robots.parsers.RobotParser.reduce>`), or no parser
  at all (404, 401/403, unreachable, allow): kept for as many sites as the storage holds
  (``ROBOTSTXT_CACHE_SIZE``), so a broad crawl never parses a file twice;
- what is **compiled** to answer quickly: the rules of the sites crawled now, and whole
  parsers (a backend that cannot reduce; ``ROBOTSTXT_USAGE``'s preferences). They are
  bounded together by ``ROBOTSTXT_CACHE_PARSED`` (256) x :data:`RULES_PER_PARSER` (64)
  rules: a site's rules weigh their number, a whole parser 64. A site whose compiled
  rules leave keeps its rules as text, which answers a question by reading it (about
  5 µs for 10 rules; :class:`~scrapy_robots.rfc9309.AgentRules`), if it has at most
  :data:`TEXT_RULES`; a larger one, or a whole parser, leaves
  with its entry, made ready again from the storage when its site comes back (from the
  stored rules; a whole parser is parsed again), never fetched again within its lifetime.

A site's rules are **admitted** to the compiled ones when the site is asked again while
it is still among the last :data:`seen <RobotsCache.max_seen>` sites asked: a site crawled
now. A broad crawl's frontier visits every site before any site again; kept on their
first ask, compiled rules would be pushed out before their site came back, never used
twice, each one living long enough to reach the garbage collector's oldest generation
(and to make its full collections come sooner). Rules not admitted answer from their
text; those that cannot (a percent-encoded path) are compiled for the question that asks
them and released at the next one.
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
_NONE: Final = (None, 0)


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
        #: Sites asked whose rules are not compiled, oldest first: asked again while here, admitted.
        self._seen: dict[str, None] = {}
        #: as many sites as the compiled bound holds at most
        self.max_seen = max(self._budget // MIN_WEIGHT, 1)
        #: the entry whose rules answer one question, compiled, not admitted (released next)
        self._passing: RobotsEntry | None = None

    def get(self, site: str) -> RobotsEntry | None:
        entry = self._ready.get(site)
        if entry is not None:
            self._ready.move_to_end(site)
            if entry.rules is not None:
                try:
                    self._held.move_to_end(site)
                except KeyError:
                    self._ask(entry)
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
        rules = entry.rules
        compilable = rules is not None and getattr(rules, "compile", None) is not None
        admitted = compilable and self._admitted(site)
        if compilable and not admitted and rules.rules > TEXT_RULES:
            # Kept only while compiled: it answers the request that brought it and leaves
            # (the storage keeps the same text), until its site is crawled now.
            self._pass(entry)
            return
        self._ready[site] = entry
        if len(self._ready) > self.max_light:
            gone, _ = self._ready.popitem(last=False)
            self._unhold(gone)
        if admitted:
            self._compile(entry)
        elif compilable:
            self._pass(entry)

    def _ask(self, entry: RobotsEntry) -> None:
        """``entry``'s rules are asked and not compiled: compiled and held if admitted,
        else compiled by the question alone and released at the next."""
        if getattr(entry.rules, "compile", None) is None:  # a reduced form with nothing to release
            return
        if self._admitted(entry.site):
            self._compile(entry)
        else:
            self._pass(entry)

    def _admitted(self, site: str) -> bool:
        seen = self._seen
        if site in seen:
            del seen[site]
            return True
        seen[site] = None
        if len(seen) > self.max_seen:
            del seen[next(iter(seen))]
        return False

    def _pass(self, entry: RobotsEntry) -> None:
        passing = self._passing
        if passing is not None and passing is not entry and self._held.get(passing.site, _NONE)[0] is not passing:
            passing.rules.release()
        self._passing = entry

    def _compile(self, entry: RobotsEntry) -> None:
        rules = entry.rules
        rules.compile()
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
