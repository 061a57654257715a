"""The fleet under load: 1, 2 and 4 real `scrapy crawl` processes sharing one Redis crawl
the same sites; robots.txt fetches and every gap are measured at the servers.

    .venv/bin/python bench/fleet.py            # 6 sites x 12 pages, fleets of 1, 2, 4 + anchor (about 45 s)
    .venv/bin/python bench/fleet.py --quick    # 6 sites x 6 pages

What it shows:

- fleet mode (tests/fleet_project: scrapy-redis's shared scheduler and dupefilter,
  ROBOTSTXT_CACHE_STORAGE = RedisRobotsStorage): each site's robots.txt is fetched once
  whatever the fleet size, and a Crawl-delay site is paced across all crawlers, so
  adding crawlers does not make it faster: the crawl time stays near the ideal;
- the anchor: 2 crawlers with the in-memory storage (what the fleet would do without
  scrapy_robots.fleet): one robots.txt fetch per crawler per site, each crawler paces
  only itself, gaps fall below the floor and the crawl time shrinks.

Every crawler brings its share of every site (the site's pages split round-robin among
the crawlers, as tests/test_fleet.py's test_crawl_delay_paced_across_the_fleet does),
so all crawlers really send requests to every site at once.

The bench process only serves the sites (tests/servers.py's SiteServer, on 127.0.0.40 and
up, clear of the tests and of bench/crawl_delay.py) and spawns the crawlers
(tests/fleet.py's start_crawler); it runs Twisted's default reactor, since nothing here
runs Scrapy in-process. redis-server is tests/redis_server.py's RedisServer, flushed
between runs and always stopped at the end.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # tests/servers.py, tests/redis_server.py
sys.path.insert(0, str(ROOT / "bench"))

from _common import print_table  # noqa: E402
from redis_server import RedisServer  # noqa: E402
from servers import SiteServer, body  # noqa: E402
from twisted.internet import reactor as _reactor  # noqa: E402
from twisted.internet import task  # noqa: E402
from twisted.internet.defer import Deferred, DeferredList  # noqa: E402
from twisted.internet.error import ProcessExitedAlready  # noqa: E402

reactor: Any = _reactor  # Twisted types the global reactor as a module, not a reactor


def _load_crawlers() -> ModuleType:
    """tests/fleet.py (start_crawler), by its path and under another name: to Python and to
    mypy, `import fleet` from here is this very file."""
    spec = importlib.util.spec_from_file_location("fleet_crawlers", ROOT / "tests" / "fleet.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_crawlers = _load_crawlers()
start_crawler: Any = _crawlers.start_crawler

TIMEOUT = 150.0  # the whole benchmark, every run
FIRST_HOST = 40  # 127.0.0.40 and up
DELAYS: list[float | None] = [0.2, 0.3, 0.5, None, None, None]  # None: no Crawl-delay
MEMORY_STORAGE = "scrapy_robots.cache.MemoryRobotsStorage"
# The robots.txt request opens the site's first connection, the first page reuses it or
# races it: the server sees robots.txt a little late, so robots -> first page is judged
# with bench/crawl_delay.py's 10 ms measurement slack. Page gaps are judged with none.
SLACK = 0.010
TICK = 0.005  # the stall monitor's period


@dataclass(frozen=True)
class RunSpec:
    name: str
    crawlers: int
    settings: dict[str, Any]
    title: str

    @property
    def fleet(self) -> bool:
        return not self.settings  # the fleet project's own settings: the Redis fleet


RUNS = [
    RunSpec("fleet x1", 1, {}, "Fleet of 1 crawler (RedisRobotsStorage, fleet pacing)"),
    RunSpec("fleet x2", 2, {}, "Fleet of 2 crawlers (RedisRobotsStorage, fleet pacing)"),
    RunSpec("fleet x4", 4, {}, "Fleet of 4 crawlers (RedisRobotsStorage, fleet pacing)"),
    RunSpec(
        "anchor x2",
        2,
        {"ROBOTSTXT_CACHE_STORAGE": MEMORY_STORAGE},
        f"Anchor: 2 crawlers, ROBOTSTXT_CACHE_STORAGE = {MEMORY_STORAGE} (no fleet: each crawler on its own)",
    ),
]


@dataclass(frozen=True)
class SitePlan:
    host: str
    floor: float | None  # the Crawl-delay it asks, None for none

    @property
    def robots(self) -> str:
        lines = "User-agent: *\nDisallow: /private\n"
        return lines + (f"Crawl-delay: {self.floor:g}\n" if self.floor is not None else "")

    @property
    def directive(self) -> str:
        return f"Crawl-delay: {self.floor:g}" if self.floor is not None else "(none)"


@dataclass
class SiteResult:
    plan: SitePlan
    robots: list[float]  # arrival times of its robots.txt requests
    pages: list[float]  # arrival times of its pages, sorted

    @property
    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.pages, self.pages[1:])]

    @property
    def below(self) -> int:
        # No slack: the fleet reserves floor + ROBOTSTXT_FLEET_PACING_MARGIN precisely
        # so that the server never sees less than the floor.
        assert self.plan.floor is not None
        return sum(gap < self.plan.floor for gap in self.gaps)


@dataclass
class RunResult:
    spec: RunSpec
    sites: list[SiteResult]
    crawlers: list[dict[str, Any]]  # what each crawler's spider wrote, plus exit code and log
    pages: int  # asked per site
    timed_out: bool = False
    stall: float = 0.0  # the longest stall of this process's reactor: how late a timestamp can be
    problems: list[str] = field(default_factory=list)

    @property
    def paced(self) -> list[SiteResult]:
        return [site for site in self.sites if site.plan.floor is not None]

    @property
    def span(self) -> float:
        """First request any server saw (a robots.txt) to the last page."""
        firsts = [min(s.robots + s.pages) for s in self.sites if s.robots or s.pages]
        lasts = [s.pages[-1] for s in self.sites if s.pages]
        return max(lasts) - min(firsts) if lasts else math.nan

    @property
    def ideal(self) -> float:
        # robots.txt counts as the site's first request: pages x floor after it.
        return max(self.pages * (s.plan.floor or 0.0) for s in self.sites)

    @property
    def below(self) -> int:
        return sum(site.below for site in self.paced)

    @property
    def min_excess(self) -> float:
        """min(gap - floor) over every Crawl-delay site: how close the pace came to the floor."""
        excess = [gap - s.plan.floor for s in self.paced for gap in s.gaps if s.plan.floor is not None]
        return min(excess, default=math.nan)

    @property
    def early_first_pages(self) -> list[SiteResult]:
        """Crawl-delay sites whose first page came less than a floor after their robots.txt
        (judged apart from the page gaps: whether the robots.txt request counts as the
        site's first is the ideal's definition, and the fleet's reservations start at the
        first page)."""
        return [
            s for s in self.paced if s.pages and s.robots and s.pages[0] - s.robots[0] < (s.plan.floor or 0.0) - SLACK
        ]

    @property
    def robots_fetches(self) -> list[int]:
        return [len(site.robots) for site in self.sites]


def plan_sites() -> list[SitePlan]:
    return [SitePlan(f"127.0.0.{FIRST_HOST + i}", delay) for i, delay in enumerate(DELAYS)]


def shares(servers: list[SiteServer], pages: int, crawlers: int) -> list[list[str]]:
    """Each site's pages dealt round-robin to the crawlers, sites interleaved in each list:
    every crawler has work on every site from its first requests (a plain urls[k::n] over
    the interleaved list would give some sites to only some crawlers)."""
    lists: list[list[str]] = [[] for _ in range(crawlers)]
    for i in range(pages):
        for server in servers:
            lists[i % crawlers].append(f"{server.url}/p{i}")
    return lists


class StallMonitor:
    """The arrival times are taken in this process's reactor: if it stalls (2 CPUs shared
    with the crawlers and redis-server), an arrival is stamped late and the next gap looks
    short. The longest stall bounds that error, to read next to any gap below the floor."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._last = time.monotonic()
        self._loop = task.LoopingCall(self._tick)

    def _tick(self) -> None:
        now = time.monotonic()
        self.longest = max(self.longest, now - self._last - TICK)
        self._last = now

    def start(self) -> None:
        self._last = time.monotonic()
        self._loop.start(TICK, now=False)

    def stop(self) -> None:
        self._loop.stop()


def kill(handle: Any) -> None:
    try:
        handle.kill()
    except ProcessExitedAlready:
        pass


# tests/fleet.py's CrawlerHandles not yet ended: killed by pid if the benchmark stops early.
LIVE: list[Any] = []


async def run(spec: RunSpec, redis: RedisServer, pages: int, timeout: float) -> RunResult:
    plans = plan_sites()
    # New servers each run: fresh hit logs and fresh ports, so nothing a previous run's
    # crawlers left (a connection, a cached robots.txt) can reach this one.
    servers = [SiteServer(host=p.host, robots=body(p.robots)).start() for p in plans]
    redis.flush()  # scrapy-redis's queue and dupefilter, our robots.txt records and pace keys
    timed_out = False
    handles = [start_crawler(urls, redis.url, **spec.settings) for urls in shares(servers, pages, spec.crawlers)]
    LIVE.extend(handles)

    def give_up() -> None:
        # Killing the crawlers fires their `done` (with "no result"): the run reports what
        # the servers saw until then, flagged TIMED OUT.
        nonlocal timed_out
        timed_out = True
        for handle in handles:
            kill(handle)

    watchdog = reactor.callLater(timeout, give_up)
    monitor = StallMonitor()
    monitor.start()
    try:
        outcomes = await DeferredList([h.done for h in handles], consumeErrors=True)
    finally:
        monitor.stop()
        if watchdog.active():
            watchdog.cancel()
        for handle in handles:
            LIVE.remove(handle)
        for server in servers:
            await server.stop()
    crawlers = [
        result if ok else {"exit": None, "downloaded": [], "failed": {}, "log": str(result)} for ok, result in outcomes
    ]
    sites = [
        SiteResult(p, [h.at for h in s.hits if h.path == "/robots.txt"], sorted(h.at for h in s.page_hits()))
        for p, s in zip(plans, servers)
    ]
    result = RunResult(spec, sites, crawlers, pages, timed_out, monitor.longest)
    if timed_out:
        result.problems.append("TIMED OUT")
    if any(c.get("exit") != 0 for c in crawlers):
        result.problems.append(f"exit codes {[c.get('exit') for c in crawlers]}")
    failed = sum(len(c.get("failed", {})) for c in crawlers)
    if failed:
        result.problems.append(f"{failed} requests failed")
    seen = sum(len(s.pages) for s in sites)
    if seen != pages * len(sites):
        result.problems.append(f"INCOMPLETE: {seen}/{pages * len(sites)} pages at the servers")
    return result


# -- the report ------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{seconds * 1000:.0f}"


def report(result: RunResult) -> None:
    print(result.spec.title)
    headers = [
        "site",
        "robots.txt",
        "robots fetches",
        "pages",
        "min gap ms",
        "median ms",
        "below floor",
        "min gap-floor ms",
        "min gap at",
        "robots->page0 ms",
        "site s",
        "ideal s",
    ]
    table = []
    for site in result.sites:
        floor = site.plan.floor
        gaps = site.gaps
        paced = floor is not None and bool(gaps)
        table.append(
            [
                site.plan.host,
                site.plan.directive,
                len(site.robots),
                f"{len(site.pages)}/{result.pages}",
                ms(min(gaps)) if paced else "-",
                ms(statistics.median(gaps)) if paced else "-",
                site.below if paced else "-",
                ms(min(gaps) - floor) if paced and floor is not None else "-",
                # Which pages the shortest gap lay between (arrival order at the server).
                f"{gaps.index(min(gaps))}->{gaps.index(min(gaps)) + 1}" if paced else "-",
                ms(site.pages[0] - site.robots[0]) if site.pages and site.robots else "-",
                f"{site.pages[-1] - min(site.robots + site.pages):.2f}" if site.pages else "-",
                f"{result.pages * floor:.2f}" if floor is not None else "-",
            ]
        )
    print_table(headers, table)
    per_crawler = [len(c.get("downloaded", [])) for c in result.crawlers]
    # The crawlers' own account of the single fetch, to read next to the servers' count.
    stat = {
        k: sum(c.get("stats", {}).get(f"robotstxt/fleet/{k}", 0) for c in result.crawlers)
        for k in ("fetch", "lock_wait", "hit", "paced", "fallback")
    }
    print(
        f"  pages downloaded by each crawler: {per_crawler} "
        f"(total {sum(per_crawler)}/{result.pages * len(result.sites)})"
        f"; crawl time {result.span:.2f} s / ideal {result.ideal:.2f} s = {result.span / result.ideal:.3f}"
        f"; longest stall of the servers' reactor {ms(result.stall)} ms"
        f"{''.join(f'; {p}' for p in result.problems)}"
    )
    if result.spec.fleet:
        print(f"  crawlers' robotstxt/fleet/* stats, summed: {', '.join(f'{k} {v}' for k, v in stat.items())}")
    print()


def default_margin() -> float:
    # Read from the code rather than restated here, so the report follows the default.
    # (scrapy_robots.settings.config imports Scrapy's settings only: no reactor is installed.)
    from scrapy.settings import Settings

    from scrapy_robots.settings.config import FleetConfig

    return FleetConfig.from_settings(Settings(), 30.0).pacing_margin


def summary(results: list[RunResult], margin: float) -> None:
    print("Summary")
    headers = [
        "run",
        "crawlers",
        "robots fetches/site",
        "gaps below floor",
        "min gap-floor ms",
        "median/floor",
        "robots->page0 short",
        "server stall ms",
        "pages per crawler",
        "crawl s",
        "ideal s",
        "crawl/ideal",
        "problems",
    ]
    table = []
    for r in results:
        fetches = sorted(set(r.robots_fetches))
        # The median gap over floor of the slowest site, the one the ideal is made of.
        slowest = max(r.paced, key=lambda s: s.plan.floor or 0.0)
        median_ratio = statistics.median(slowest.gaps) / (slowest.plan.floor or 1.0) if slowest.gaps else math.nan
        table.append(
            [
                r.spec.name,
                r.spec.crawlers,
                "/".join(map(str, fetches)),
                f"{r.below}/{sum(len(s.gaps) for s in r.paced)}",
                ms(r.min_excess),
                f"{median_ratio:.3f}",
                f"{len(r.early_first_pages)}/{len(r.paced)}",
                ms(r.stall),
                "/".join(str(len(c.get("downloaded", []))) for c in r.crawlers),
                f"{r.span:.2f}",
                f"{r.ideal:.2f}",
                f"{r.span / r.ideal:.3f}",
                "; ".join(r.problems) or "-",
            ]
        )
    print_table(headers, table)

    fleet = [r for r in results if r.spec.fleet]
    anchors = [r for r in results if not r.spec.fleet]
    once = all(r.robots_fetches == [1] * len(r.sites) for r in fleet)
    never_below = all(r.below == 0 for r in fleet)
    tolerance = min((r.min_excess for r in fleet), default=math.nan)
    shared = all(all(c.get("downloaded") for c in r.crawlers) for r in fleet)
    ratios = ", ".join(f"{r.spec.crawlers}: {r.span / r.ideal:.3f}" for r in fleet)
    twice = [(r.spec.name, s.plan.host, len(s.robots)) for r in fleet for s in r.sites if len(s.robots) != 1]
    print(
        f"  robots.txt fetched once per site for every fleet size: {verdict(once)}"
        + "".join(f"\n    {name} {host}: {n} robots.txt fetches" for name, host, n in twice)
    )
    print(
        f"  no gap below the floor in any fleet run: {verdict(never_below)} "
        f"({sum(r.below for r in fleet)} of {sum(len(s.gaps) for r in fleet for s in r.paced)})"
    )
    print(
        f"  measured tolerance, min(gap - floor) over every Crawl-delay site and fleet run: {ms(tolerance)} ms "
        f"(ROBOTSTXT_FLEET_PACING_MARGIN = {margin:g} s, the default)"
    )
    early = [(r.spec.name, s.plan.host, s.pages[0] - s.robots[0]) for r in fleet for s in r.early_first_pages]
    print(
        f"  first page at least a floor (- {ms(SLACK)} ms slack) after robots.txt on every Crawl-delay site, "
        f"fleet runs: {verdict(not early)}"
        + "".join(f"\n    {name} {host}: robots.txt -> first page {ms(gap)} ms" for name, host, gap in early)
    )
    print(f"  every crawler downloaded pages in every fleet run (the work was shared): {verdict(shared)}")
    print(f"  crawl time / ideal by fleet size ({ratios}): adding crawlers must not make a Crawl-delay site faster")
    for a in anchors:
        base = next((r for r in fleet if r.spec.crawlers == 1), None)
        speedup = f", {base.span / a.span:.2f}x faster than the fleet of 1" if base and a.span > 0 else ""
        print(
            f"  anchor ({a.spec.name}, no fleet): robots.txt fetches per site {sorted(set(a.robots_fetches))}, "
            f"{a.below} of {sum(len(s.gaps) for s in a.paced)} gaps below the floor (min gap-floor "
            f"{ms(a.min_excess)} ms), crawl time / ideal {a.span / a.ideal:.3f}{speedup}: "
            f"what the fleet storage and pacing prevent"
        )


def verdict(ok: bool) -> str:
    return "yes" if ok else "NO"


async def bench(args: argparse.Namespace, redis: RedisServer) -> None:
    deadline = time.monotonic() + TIMEOUT
    margin = default_margin()
    print(
        f"{len(DELAYS)} sites x {args.pages} pages (Crawl-delay {', '.join(f'{d:g}' for d in DELAYS if d)} s on 3 of "
        f"them), tests/fleet_project crawlers sharing one redis-server, global timeout {TIMEOUT:g} s.\n"
        f"Gaps: between consecutive page requests of a site, at its server; 'below floor': gaps < the Crawl-delay, "
        f"no slack (the fleet reserves\nfloor + ROBOTSTXT_FLEET_PACING_MARGIN = {margin:g} s). Crawl time: first "
        f"request any server saw to the last page; ideal: pages x floor\nof the slowest site (its robots.txt counts "
        f"as its first request). site s: the site's first request to its last page. robots->page0 short: the first\n"
        f"page came less than floor - {ms(SLACK)} ms after robots.txt. server stall: the longest stall of the reactor "
        f"that stamps the arrivals\n(an arrival stamped late makes the next gap look short by up to that much).\n"
    )
    results = []
    for i, spec in enumerate(RUNS):
        # Each run gets its share of what is left of the global timeout.
        budget = (deadline - time.monotonic()) / (len(RUNS) - i)
        result = await run(spec, redis, args.pages, max(budget, 5.0))
        report(result)
        results.append(result)
    summary(results, margin)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=12, help="pages per site (default 12)")
    parser.add_argument("--quick", action="store_true", help="6 pages per site")
    args = parser.parse_args()
    if args.quick:
        args.pages = 6
    if args.pages < 4:
        parser.error("need at least 4 pages per site (one per crawler of the largest fleet)")

    redis = RedisServer().start()
    try:
        task.react(lambda _: Deferred.fromCoroutine(bench(args, redis)))
    finally:
        # task.react exits through SystemExit; a crawler can only outlive the reactor if
        # the benchmark stopped early (an error, Ctrl-C): kill it by its own pid.
        for handle in LIVE:
            pid = getattr(handle.transport, "pid", None)
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        redis.stop()


if __name__ == "__main__":
    main()
