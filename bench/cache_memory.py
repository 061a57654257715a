"""Memory per cached site in the two tiers of the robots.txt cache, and what a site that
left the hot tier costs when it comes back; tracemalloc and timings on the robots.txt
corpus.

    .venv/bin/python bench/cache_memory.py           # up to 100,000 sites (about 80 s of CPU)
    .venv/bin/python bench/cache_memory.py --quick   # up to 20,000 sites, 1,024 files (about 25 s)

Each site's entry is built as the middleware builds it after a 200: the body capped at
ROBOTSTXT_MAXSIZE and re-encoded (normalize_robotstxt), a RobotsEntry (action parse,
status 200, the site key, the robots.txt URL, the lifetime of ROBOTSTXT_CACHE_TTL). Sites
cycle through the corpus files (4,231 real robots.txt), each lap under new host names, so
that 100,000 sites are 100,000 distinct entries.

- ``storage``: the entries put into a MemoryRobotsStorage (``pack``: the record as a JSON
  list, then the body compressed). Traced bytes after 5,000, 20,000 and 100,000 puts
  (over a full GC, minus before), bytes per site (total / sites), the median and p99 of
  one put's own growth, next to ``bytes_held()`` (the packed bytes alone: the rest is the
  dict, its keys and the bytes objects' headers). Then a storage bounded at the first
  count gets twice as many puts: it must stay at its bound, and the memory flat.
- ``hot tier``: the entries as RobotsCache keeps them, for each parser: the parser built,
  the site's delay read (the middleware does it at once) and one ``allowed()`` asked
  (``after 1st check``: RFC9309Parser selects and compiles the agent's rules on the first
  question and keeps them), no body. One entry's own growth over the corpus (each file
  once: mean, median, p99); then a full tier, RobotsCache(ROBOTSTXT_CACHE_PARSED) at
  the default and at 1,024: the mean x its size, and the traced bytes after each of
  ``--fills`` fills from the corpus in a shuffled order, each fill with other files
  (the tier stays at its bound; a few large files make the spread between fills).
- ``hot-tier miss``: what a site that left the hot tier costs when it comes back, as
  PolicyBook._restore and RobotsReader.ready do it: ``unpack`` the stored bytes, build the
  parser and read the delay; then the first ``allowed()`` (the lazy compile a hot entry
  has behind it). Next to a fresh ``pack`` (a storage put after a fetch). Each file is
  timed ``--repeats`` times, in passes over the whole corpus (so that a shared machine's
  load falls on all files alike); a file's time is its median, and the table gives the
  median and p99 over the files.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
import tracemalloc
from array import array
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import CORPUS, print_table  # noqa: E402
from scrapy.settings import Settings  # noqa: E402

from scrapy_robots.cache import MemoryRobotsStorage, RobotsCache, RobotsEntry, pack, unpack  # noqa: E402
from scrapy_robots.decoding import normalize_robotstxt  # noqa: E402
from scrapy_robots.parsers import ProtegoParser, RFC9309Parser, RobotParser, as_robot_parser  # noqa: E402
from scrapy_robots.parsers.delay import read_site_delay  # noqa: E402
from scrapy_robots.settings.config import RobotsConfig  # noqa: E402
from scrapy_robots.status.policy import Action  # noqa: E402
from scrapy_robots.status.result import robots_url  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

# The crawl's agent as the middleware asks with it: at priority 100 it runs before
# UserAgentMiddleware (500), so requests carry no User-Agent header yet and the parser
# is asked with USER_AGENT, the full string (our parser keys its compiled rules by it).
USER_AGENT = "Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example/bot)"
CONFIG = RobotsConfig.from_settings(Settings({"USER_AGENT": USER_AGENT}))
PARSERS: dict[str, type[RobotParser]] = {"RFC9309Parser (default)": RFC9309Parser, "ProtegoParser": ProtegoParser}
MiB = 1024 * 1024


@dataclass(frozen=True)
class Robots:
    name: str  #: the corpus file name, a domain name
    body: bytes  #: as the middleware hands it to the parser class
    truncated: bool  #: cut at ROBOTSTXT_MAXSIZE


def load() -> list[Robots]:
    files = []
    for path in sorted(CORPUS.iterdir()):
        if not path.is_file():
            continue
        raw = path.read_bytes()
        truncated = len(raw) > CONFIG.maxsize
        if truncated:
            # As RobotsFetcher.fetch does: a larger file is read up to ROBOTSTXT_MAXSIZE
            # and cut at its last complete line; the cache never holds more.
            raw = raw[: CONFIG.maxsize]
            raw = raw[: max(raw.rfind(b"\n"), raw.rfind(b"\r")) + 1]
        files.append(Robots(path.name, normalize_robotstxt(raw, b"text/plain"), truncated))
    return files


def site_key(corpus: list[Robots], index: int) -> tuple[str, Robots]:
    """The ``index``-th site: the corpus cycled, each lap under new host names."""
    robots = corpus[index % len(corpus)]
    lap = index // len(corpus)
    return f"https://{f'www{lap}.' if lap else ''}{robots.name}:443", robots


def stored_entry(site: str, robots: Robots, now: float) -> RobotsEntry:
    """What a fetch saves for a 200 (decision.decide) (default settings): the data and
    the body; the parser is never stored."""
    return RobotsEntry(
        site=site,
        action=Action.PARSE,
        status=200,
        url=robots_url(site),
        fetched_at=now,
        expires_at=now + CONFIG.cache_ttl,
        size=len(robots.body),
        truncated=robots.truncated,
        body=robots.body,
    )


def hydrate(entry: RobotsEntry, parser_class: type[RobotParser]) -> RobotsEntry:
    """What RobotsReader.ready rebuilds: the parser and the delay."""
    assert entry.body is not None
    entry.parser = as_robot_parser(parser_class(entry.body, user_agent=USER_AGENT), USER_AGENT)
    entry.delay = read_site_delay(entry.parser, USER_AGENT, CONFIG.max_crawl_delay, CONFIG.crawl_delay_exceeded)
    return entry


def first_check(entry: RobotsEntry) -> None:
    assert entry.parser is not None
    entry.parser.allowed(f"{entry.site.rsplit(':', 1)[0]}/some/page.html", USER_AGENT)


def hot_entry(parser_class: type[RobotParser], site: str, robots: Robots, now: float) -> RobotsEntry:
    """What the hot tier keeps of a site after its 1st check: parsed, no body."""
    entry = hydrate(stored_entry(site, robots, now), parser_class)
    first_check(entry)
    entry.body = None  # the storage keeps it; the hot tier keeps the parser
    return entry


def traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def timed(label: str, run: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = run()
    print(f"  {label}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return result


# -- the storage tier -------------------------------------------------------------


@dataclass
class Stored:
    sites: int
    traced: int  #: bytes after ``sites`` puts
    held: int  #: MemoryRobotsStorage.bytes_held()
    length: int
    per_put: list[int]  #: each of the ``sites`` puts' own growth

    @property
    def per_site(self) -> float:
        return self.traced / self.sites


def fill_storage(corpus: list[Robots], counts: list[int]) -> list[Stored]:
    """Put max(counts) sites into one storage, large enough for all; measured at each count."""
    storage = MemoryRobotsStorage(max(counts))
    # Allocated before tracing: a list of ints would add its own 36 bytes a site.
    per_put = array("q", bytes(8 * max(counts)))
    at_count = []
    now = time.time()
    tracemalloc.start()
    try:
        start = traced()
        get = tracemalloc.get_traced_memory
        for index in range(max(counts)):
            before = get()[0]
            site, robots = site_key(corpus, index)
            storage.put(stored_entry(site, robots, now))
            per_put[index] = get()[0] - before
            if index + 1 in counts:
                at_count.append((index + 1, traced() - start, storage.bytes_held(), len(storage)))
    finally:
        tracemalloc.stop()
    return [Stored(sites, total, held, length, per_put[:sites].tolist()) for sites, total, held, length in at_count]


@dataclass
class Bounded:
    max_entries: int
    at_bound: int
    after_twice: int
    length: int
    evicted: int


def storage_bound(corpus: list[Robots], max_entries: int) -> Bounded:
    evicted: list[str] = []
    storage = MemoryRobotsStorage(max_entries, on_evict=evicted.append)
    now = time.time()
    tracemalloc.start()
    try:
        start = traced()
        for index in range(2 * max_entries):
            if index == max_entries:
                at_bound = traced() - start
            site, robots = site_key(corpus, index)
            storage.put(stored_entry(site, robots, now))
        evicted_sites = len(evicted)
        evicted.clear()  # the list of evicted keys is the bench's, not the storage's
        after_twice = traced() - start
    finally:
        tracemalloc.stop()
    return Bounded(max_entries, at_bound, after_twice, len(storage), evicted_sites)


# -- the hot tier -----------------------------------------------------------------


def hot_per_entry(parser_class: type[RobotParser], corpus: list[Robots]) -> tuple[int, list[int]]:
    """Every corpus file once into a RobotsCache that holds them all: the total, and each
    entry's own growth."""
    cache = RobotsCache(len(corpus))
    per_entry = array("q", bytes(8 * len(corpus)))  # allocated before tracing
    now = time.time()
    tracemalloc.start()
    try:
        start = traced()
        get = tracemalloc.get_traced_memory
        for index in range(len(corpus)):
            before = get()[0]
            site, robots = site_key(corpus, index)
            cache.put(hot_entry(parser_class, site, robots, now))
            per_entry[index] = get()[0] - before
        total = traced() - start
    finally:
        tracemalloc.stop()
    assert len(cache) == len(corpus)
    return total, per_entry.tolist()


def hot_full(
    parser_class: type[RobotParser], corpus: list[Robots], max_entries: int, order: list[int], fills: int
) -> list[int]:
    """A RobotsCache(max_entries) filled ``fills`` times over from the shuffled corpus,
    each fill with other files: the traced bytes after each."""
    cache = RobotsCache(max_entries)
    totals = []
    now = time.time()
    tracemalloc.start()
    try:
        start = traced()
        for index in range(fills * max_entries):
            site, robots = site_key(corpus, order[index % len(order)] + index // len(order) * len(corpus))
            cache.put(hot_entry(parser_class, site, robots, now))
            if (index + 1) % max_entries == 0:
                totals.append(traced() - start)
                assert len(cache) == max_entries
    finally:
        tracemalloc.stop()
    return totals


# -- a hot-tier miss --------------------------------------------------------------


def time_miss(corpus: list[Robots], repeats: int) -> dict[str, list[float]]:
    """Seconds per file (its median over ``repeats`` passes) for each step."""
    names = ["pack", "unpack", *(f"{name}: {step}" for name in PARSERS for step in ("parse", "1st check"))]
    steps: dict[str, list[list[float]]] = {name: [[] for _ in corpus] for name in names}
    now = time.time()
    clock = time.perf_counter
    for _ in range(repeats):
        gc.collect()
        for index, robots in enumerate(corpus):
            site = site_key(corpus, index)[0]
            entry = stored_entry(site, robots, now)
            start = clock()
            blob = pack(entry)
            packed = clock()
            stored = unpack(blob)
            unpacked = clock()
            for step, seconds in (("pack", packed - start), ("unpack", unpacked - packed)):
                steps[step][index].append(seconds)
            for name, parser_class in PARSERS.items():
                restored = replace(stored)
                start = clock()
                hydrate(restored, parser_class)
                parsed = clock()
                first_check(restored)
                checked = clock()
                for step, seconds in ((f"{name}: parse", parsed - start), (f"{name}: 1st check", checked - parsed)):
                    steps[step][index].append(seconds)
    return {step: [statistics.median(times) for times in per_file] for step, per_file in steps.items()}


# -- the report -------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", default="5000,20000,100000", help="storage sites to measure at, comma-separated")
    parser.add_argument("--parsed", default=f"{CONFIG.cache_parsed},1024", help="hot-tier sizes, comma-separated")
    parser.add_argument("--fills", type=int, default=4, help="fills of each hot tier, each with other files")
    parser.add_argument("--repeats", type=int, default=5, help="timed passes over the corpus")
    parser.add_argument(
        "--quick", action="store_true", help="up to 20,000 sites; hot tier: 1,024 files, 2 fills, 3 passes"
    )
    args = parser.parse_args()
    counts = sorted({int(count) for count in args.sites.split(",")})
    sizes = sorted({int(size) for size in args.parsed.split(",")})
    corpus = load()
    sample = corpus
    if args.quick:
        counts = [count for count in counts if count <= 20_000] or [5000]
        sample = random.Random(0).sample(corpus, 1024)
        args.repeats, args.fills = min(args.repeats, 3), min(args.fills, 2)

    size = sum(len(robots.body) for robots in corpus)
    print(
        f"{len(corpus)} robots.txt files from {CORPUS} ({size / MiB:.1f} MiB after the "
        f"{CONFIG.maxsize // 1024} KiB cap; median {statistics.median(len(r.body) for r in corpus):.0f} bytes), "
        f"cycled over the sites.\nAgent {USER_AGENT!r}. Memory: tracemalloc, Python's allocations (all of both "
        f"parsers' and zlib's are).\n"
    )

    # The storage tier.
    stored = timed(f"storage, {counts[-1]:,} sites", lambda: fill_storage(corpus, counts))
    rows = []
    for result in stored:
        assert result.length == result.sites
        rows.append(
            [
                f"{result.sites:,}",
                f"{result.traced / MiB:.1f} MiB",
                f"{result.per_site:,.0f}",
                f"{statistics.median(result.per_put):,.0f}",
                f"{percentile(result.per_put, 0.99):,.0f}",
                f"{result.held / MiB:.1f} MiB",
                f"{result.held / result.sites:,.0f}",
                f"{(result.traced - result.held) / result.sites:,.0f}",
                f"{result.traced / result.held:.2f}x",
            ]
        )
    bound = timed(f"storage bound, {2 * counts[0]:,} puts", lambda: storage_bound(corpus, counts[0]))
    print(
        "Storage tier: MemoryRobotsStorage, every site packed (the record and the body compressed). Traced bytes "
        "(total, per site: the mean,\nthe few large files included; one put's own growth: median, p99) next to "
        "bytes_held() (the packed bytes alone); overhead: the dict, keys, headers"
    )
    print_table(
        [
            "sites",
            "traced",
            "bytes/site",
            "put median",
            "put p99",
            "bytes_held()",
            "held/site",
            "overhead/site",
            "traced/held",
        ],
        rows,
    )
    print(
        f"Bound: MemoryRobotsStorage({bound.max_entries:,}) after {2 * bound.max_entries:,} puts holds "
        f"{bound.length:,} sites ({bound.evicted:,} evicted), memory {bound.after_twice / bound.at_bound:.2f}x "
        f"the memory at the bound.\n"
    )
    assert bound.length == bound.max_entries and bound.evicted == bound.max_entries

    # The hot tier.
    order = list(range(len(corpus)))
    random.Random(1).shuffle(order)
    rows, tiers = [], []
    default = CONFIG.cache_parsed
    for name, parser_class in PARSERS.items():
        total, per_entry = timed(f"{name}, hot tier per entry", partial(hot_per_entry, parser_class, sample))
        mean = total / len(sample)
        median, p99 = statistics.median(per_entry), percentile(per_entry, 0.99)
        rows.append([name, f"{mean:,.0f}", f"{median:,.0f}", f"{p99:,.0f}"])
        for max_entries in sizes:
            totals = timed(
                f"{name}, RobotsCache({max_entries:,}) x {args.fills}",
                partial(hot_full, parser_class, corpus, max_entries, order, args.fills),
            )
            tiers.append(
                [
                    name,
                    f"{max_entries:,}{' (default)' if max_entries == default else ''}",
                    f"{mean * max_entries / MiB:.1f} MiB",
                    f"{statistics.median(totals) / MiB:.1f} MiB",
                    f"{min(totals) / MiB:.1f} MiB",
                    f"{max(totals) / MiB:.1f} MiB",
                ]
            )
    print(
        f"Hot tier: RobotsCache, entries parsed, after their 1st check, no body. Bytes per entry over "
        f"{len(sample):,} corpus files (the mean, the few large\nfiles included; median, p99)"
    )
    print_table(["parser", "bytes/entry", "entry median", "entry p99"], rows)
    print(
        f"A full hot tier (ROBOTSTXT_CACHE_PARSED, default {default:,}): bytes/entry x its size, and traced "
        f"after each of {args.fills} fills with other files\n(median, min, max: a few large files make the "
        f"spread)"
    )
    print_table(["parser", "ROBOTSTXT_CACHE_PARSED", "mean x size", "fills: median", "min", "max"], tiers)

    # A hot-tier miss.
    miss = timed(f"hot-tier miss, {len(sample):,} files x {args.repeats}", lambda: time_miss(sample, args.repeats))
    rows = [["pack (a fresh storage put)", *_micros(miss["pack"])], ["unpack", *_micros(miss["unpack"])]]
    for name in PARSERS:
        unpack_parse = [u + p for u, p in zip(miss["unpack"], miss[f"{name}: parse"])]
        with_check = [t + c for t, c in zip(unpack_parse, miss[f"{name}: 1st check"])]
        rows += [
            [f"{name}: parse + delay", *_micros(miss[f"{name}: parse"])],
            [f"{name}: miss = unpack + parse", *_micros(unpack_parse)],
            [f"{name}: miss + 1st check", *_micros(with_check)],
        ]
    print(
        f"A hot-tier miss: a site that left the hot tier comes back, parsed again from its stored bytes "
        f"(PolicyBook._restore), per file\n(its median of {args.repeats} passes), over {len(sample):,} corpus "
        f"files; the 1st check compiles the agent's rules (RFC9309Parser), as before the entry left"
    )
    print_table(["what is timed", "median µs", "p99 µs", "mean µs"], rows)


def _micros(seconds: list[float]) -> list[str]:
    return [
        f"{statistics.median(seconds) * 1e6:,.0f}",
        f"{percentile(seconds, 0.99) * 1e6:,.0f}",
        f"{statistics.fmean(seconds) * 1e6:,.0f}",
    ]


if __name__ == "__main__":
    main()
