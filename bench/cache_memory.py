"""Memory per cached site: what MemoryRobotsStorage holds for a broad crawl, measured
with tracemalloc on the robots.txt corpus.

    .venv/bin/python bench/cache_memory.py           # 4,096 and 20,000 sites (about 80 s)
    .venv/bin/python bench/cache_memory.py --quick   # 1,024 and 5,000 sites

Each site's entry is built as the middleware builds it after a 200: the body capped at
ROBOTSTXT_MAXSIZE and re-encoded (normalize_robotstxt), the parser class given the
crawl's agent, a RobotsEntry with its site key, URL and delay, put into a
MemoryRobotsStorage. Sites cycle through the corpus files (4,231 real robots.txt), so
20,000 sites hold each file about five times, each time parsed again, as 20,000
distinct sites would be.

Two states of an entry, for each parser:

- ``parsed only``: the parser built, nothing asked yet;
- ``after 1st check``: the site's delay read (the middleware does it at once) and one
  ``allowed()`` asked. RFC9309Parser selects and compiles the agent's rules lazily, on
  the first question, and keeps them: this is what a crawl holds for the rest of the TTL.

Per state: the total at the bound (traced bytes after the inserts, over a full GC, minus
before), bytes per site (total / sites), the median and p99 of one entry's own size (the
traced growth across building and storing it, for the first ``max_entries`` sites, before
any eviction), then 2 x max_entries inserts: the storage must stay at max_entries and the
memory flat.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import CORPUS, print_table  # noqa: E402

from scrapy.settings import Settings  # noqa: E402

from scrapy_robots.cache import MemoryRobotsStorage, RobotsEntry  # noqa: E402
from scrapy_robots.config import RobotsConfig  # noqa: E402
from scrapy_robots.decoding import normalize_robotstxt  # noqa: E402
from scrapy_robots.delay import read_site_delay  # noqa: E402
from scrapy_robots.fetch import robots_url  # noqa: E402
from scrapy_robots.parsers import ProtegoParser, RFC9309Parser, RobotParser, as_robot_parser  # noqa: E402
from scrapy_robots.policy import Action  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

# The crawl's agent as the middleware asks with it: at priority 100 it runs before
# UserAgentMiddleware (500), so requests carry no User-Agent header yet and the parser
# is asked with USER_AGENT, the full string (our parser keys its compiled rules by it).
USER_AGENT = "Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example/bot)"
CONFIG = RobotsConfig.from_settings(Settings({"USER_AGENT": USER_AGENT}))
PARSERS: dict[str, type[RobotParser]] = {"RFC9309Parser (default)": RFC9309Parser, "ProtegoParser": ProtegoParser}
STATES = ("parsed only", "after 1st check")
MiB = 1024 * 1024


@dataclass(frozen=True)
class Robots:
    name: str  #: the corpus file name, a domain name
    body: bytes  #: as the middleware hands it to the parser class


def load() -> list[Robots]:
    files = []
    for path in sorted(CORPUS.iterdir()):
        if not path.is_file():
            continue
        raw = path.read_bytes()
        if len(raw) > CONFIG.maxsize:
            # As RobotsFetcher.fetch does: a larger file is read up to ROBOTSTXT_MAXSIZE
            # and cut at its last complete line; the cache never holds more.
            raw = raw[: CONFIG.maxsize]
            raw = raw[: max(raw.rfind(b"\n"), raw.rfind(b"\r")) + 1]
        files.append(Robots(path.name, normalize_robotstxt(raw, b"text/plain")))
    return files


def site_key(corpus: list[Robots], index: int) -> tuple[str, Robots]:
    """The ``index``-th site: the corpus cycled, each lap under new host names."""
    robots = corpus[index % len(corpus)]
    lap = index // len(corpus)
    return f"https://{f'www{lap}.' if lap else ''}{robots.name}:443", robots


def build_entry(parser_class: type[RobotParser], site: str, robots: Robots, checked: bool, now: float) -> RobotsEntry:
    """What RobotsTxtMiddleware._decide stores for a 200 (default settings)."""
    parser = as_robot_parser(parser_class(robots.body, user_agent=USER_AGENT), USER_AGENT)
    entry = RobotsEntry(site=site, action=Action.PARSE, status=200, url=robots_url(site), fetched_at=now,
                        expires_at=now + CONFIG.cache_ttl, size=len(robots.body), parser=parser)  # fmt: skip
    if checked:
        entry.delay = read_site_delay(parser, USER_AGENT, CONFIG.max_crawl_delay, CONFIG.crawl_delay_exceeded)
        parser.allowed(f"{site.rsplit(':', 1)[0]}/some/page.html", USER_AGENT)
    return entry


def traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


@dataclass
class Filled:
    max_entries: int
    at_bound: int  #: bytes after max_entries inserts
    after_twice: int  #: bytes after 2 x max_entries inserts
    length_at_bound: int
    length_after_twice: int
    evicted: int
    per_entry: list[int]  #: each of the first max_entries entries' own growth

    @property
    def per_site(self) -> float:
        return self.at_bound / self.max_entries


def fill(parser_class: type[RobotParser], corpus: list[Robots], max_entries: int, checked: bool, twice: bool) -> Filled:
    """Insert max_entries sites (then as many again when ``twice``) into a fresh storage."""
    evicted: list[str] = []
    storage = MemoryRobotsStorage(max_entries, on_evict=evicted.append)
    per_entry = []
    now = time.time()
    tracemalloc.start()
    try:
        start = traced()
        get = tracemalloc.get_traced_memory
        for index in range(max_entries):
            before = get()[0]
            site, robots = site_key(corpus, index)
            storage.put(build_entry(parser_class, site, robots, checked, now))
            per_entry.append(get()[0] - before)
        at_bound, length_at_bound = traced() - start, len(storage)
        for index in range(max_entries, 2 * max_entries if twice else max_entries):
            site, robots = site_key(corpus, index)
            storage.put(build_entry(parser_class, site, robots, checked, now))
        after_twice = traced() - start
    finally:
        tracemalloc.stop()
    return Filled(max_entries, at_bound, after_twice, length_at_bound, len(storage), len(evicted), per_entry)


def percentile(values: list[int], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def kib(size: float) -> str:
    return f"{size / 1024:.1f}"


def timed(label: str, run: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = run()
    print(f"  {label}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=CONFIG.cache_size, help="the bound (ROBOTSTXT_CACHE_SIZE)")
    parser.add_argument("--broad", type=int, default=20_000, help="the broad crawl's bound")
    parser.add_argument("--quick", action="store_true", help="1,024 and 5,000 sites")
    args = parser.parse_args()
    if args.quick:
        args.sites, args.broad = 1024, 5000

    corpus = load()
    size = sum(len(robots.body) for robots in corpus)
    print(f"{len(corpus)} robots.txt files from {CORPUS} ({size / MiB:.1f} MiB after the "
          f"{CONFIG.maxsize // 1024} KiB cap; median {statistics.median(len(r.body) for r in corpus):.0f} bytes), "
          f"cycled over the sites.\nAgent {USER_AGENT!r}. Memory: tracemalloc, Python's allocations (all of both "
          f"parsers' are).\n")  # fmt: skip

    results: dict[tuple[str, str], Filled] = {}
    for name, parser_class in PARSERS.items():
        for state in STATES:
            results[name, state] = timed(
                f"{name}, {state}", lambda: fill(parser_class, corpus, args.sites, state != "parsed only", twice=True)
            )
    headers = ["parser", "state", "bytes/site", "entry median", "entry p99", f"total, {args.sites:,} sites",
               f"after {2 * args.sites:,} inserts", "flat", "len(storage)", "evicted"]  # fmt: skip
    rows = []
    for (name, state), filled in results.items():
        rows.append([
            name, state, f"{filled.per_site:,.0f}", f"{statistics.median(filled.per_entry):,.0f}",
            f"{percentile(filled.per_entry, 0.99):,.0f}", f"{filled.at_bound / MiB:.1f} MiB",
            f"{filled.after_twice / MiB:.1f} MiB", f"{filled.after_twice / filled.at_bound:.2f}x",
            f"{filled.length_after_twice:,}", f"{filled.evicted:,}",
        ])  # fmt: skip
    print(f"MemoryRobotsStorage({args.sites:,}): bytes per cached site (total / sites; the mean, the few "
          f"large files included), one entry's own bytes (median, p99);\nthen {args.sites:,} more sites: the "
          f"LRU bound holds (len(storage), evicted) and memory stays flat (after / at the bound)")
    print_table(headers, rows)
    for key, filled in results.items():
        assert filled.length_at_bound == filled.length_after_twice == args.sites, key
        assert filled.evicted == args.sites, key

    broad_rows = []
    for name, parser_class in PARSERS.items():
        broad = timed(f"{name}, {args.broad:,} sites", lambda: fill(parser_class, corpus, args.broad, True, twice=False))
        projected = results[name, "after 1st check"].per_site * args.broad
        broad_rows.append([
            name, f"{broad.at_bound / MiB:.1f} MiB", f"{broad.per_site:,.0f}", f"{projected / MiB:.1f} MiB",
            f"{broad.at_bound / projected:.2f}x", f"{broad.length_at_bound:,}",
        ])  # fmt: skip
    print(f"A broad crawl: ROBOTSTXT_CACHE_SIZE = {args.broad:,}, every entry after its 1st check; measured "
          f"next to the projection from {args.sites:,} sites (bytes/site x {args.broad:,})")
    print_table(["parser", "total", "bytes/site", "projected", "measured/projected", "len(storage)"], broad_rows)


if __name__ == "__main__":
    main()
