"""The fleet under faults: 3 real `scrapy crawl` processes sharing one redis-server crawl 6
loopback sites at Crawl-delay 1 while the harness kills, stops and flushes Redis or kills a
crawler mid-crawl; every request is counted at the sites, with its arrival time.

    .venv/bin/python bench/fleet_faults.py                       # every scenario, each fault twice (about 4 min)
    .venv/bin/python bench/fleet_faults.py --quick               # shorter, each fault once (about 1.5 min)
    .venv/bin/python bench/fleet_faults.py --scenario redis-kill # one scenario (and its anchor)

Each scenario is a sequence: the crawl runs, a fault is injected, the harness recovers from
it, and (unless --quick) the same fault comes again. The windows between those instants
(before, fault N, after N) are judged apart: per host, the gaps between consecutive requests
to it, how many are under 95 % of the delay, the smallest. The goal, per window: at most 3 %
of its gaps under 95 % of the delay (issue #31). Then what the crawl did: allowed pages
fetched (duplicates counted), disallowed pages fetched (each site has a `Disallow: /private`
and a few /private URLs in the crawl), robots.txt downloads per site, pages never fetched,
the crawlers' exit codes, the wall time. The anchors are the same crawl with
ROBOTSTXT_FLEET_PACING = False and no fault (each crawler paces alone its share): the
summary gives each scenario's share of short gaps and wall time as ratios against its anchor.

The crawlers are tests/fleet_project's (scrapy-redis's scheduler and dupefilter, the Redis
robots.txt storage and pace), started by tests/fleet.py's start_crawler; each sends its own
User-Agent suffix (crawler-N) so the sites know who fetched what. The Redis faults run with
Scrapy's own in-memory scheduler (each crawler has its share of every site; --queue redis
for scrapy-redis's, whose queue lives in Redis and dies with it) and ROBOTSTXT_MAX_WAITING = 0
(see FLOWING). --set NAME=VALUE gives every crawler a setting, over the scenario's. Sites are
tests/servers.py's SiteServer on 127.0.0.40 and up; redis-server is tests/redis_server.py's,
always stopped at the end. Every crawl has a hard deadline (3 x its planned length, at least
30 s more), past which its crawlers are killed and the run is reported TIMED OUT. The output
is documented in docs/benchmarks.rst ("The fleet under faults"): keep the two together.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fleet as fleet_bench  # bench/fleet.py: it also puts tests/ on the path
from _faults_report import Outcome, report, summary
from redis_server import RedisServer
from servers import SiteServer, body
from twisted.internet import task
from twisted.internet.defer import Deferred, DeferredList
from twisted.web.server import Request

reactor: Any = fleet_bench.reactor
start_crawler = fleet_bench.start_crawler

CRAWLERS = 3
SITES = 6
FIRST_HOST = 40  # 127.0.0.40 and up, as bench/fleet.py
DISALLOWED = 2  # /private URLs per site, in the crawl: none may reach a server
AGENT = "Mozilla/5.0 (compatible; FleetBot/1.0; +https://example.com/fleetbot) crawler-{}"
MEMORY_QUEUE = {"SCHEDULER": "scrapy.core.scheduler.Scheduler", "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter"}
NO_FLEET_PACING = {"ROBOTSTXT_FLEET_PACING": False}
# The Redis faults are about the link and the pace: with parking unbounded (the default,
# 10,000), every request of today's crawl reserves its turn in the first second and an
# outage later touches no Redis call at all. With no parking, each crawler holds what
# its CONCURRENT_REQUESTS allows and requests meet Redis all through the crawl, as
# tests/test_fleet.py's Redis test does.
FLOWING = {"ROBOTSTXT_MAX_WAITING": 0}


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    fault: str  # none | redis-kill | redis-stop | flushall | crawler-kill
    queue: str  # redis: scrapy-redis's shared queue (tests/fleet_project); memory: each crawler its share
    anchor: str | None = None  # the scenario its ratios are against
    one_host: bool = False  # the sites on ports of one host
    settings: dict[str, Any] = field(default_factory=dict)


# One scenario per entry, read as a table: hence the `fmt: skip` at its end.
SCENARIOS = [
    Scenario("anchor", "No fault, ROBOTSTXT_FLEET_PACING = False: each crawler paces alone its share", "none",
             "memory", settings=NO_FLEET_PACING),
    Scenario("no-fault", "No fault: the fleet as deployed", "none", "redis", "anchor"),
    Scenario("redis-kill", "redis-server SIGKILLed, restarted empty on the same port", "redis-kill", "memory",
             "anchor", settings=FLOWING),
    Scenario("redis-stop", "redis-server stopped (SIGSTOP), then continued (SIGCONT)", "redis-stop", "memory",
             "anchor", settings=FLOWING),
    Scenario("flushall", "FLUSHALL mid-crawl", "flushall", "memory", "anchor", settings=FLOWING),
    Scenario("crawler-kill", "The busiest crawler SIGKILLed, a replacement started with its URLs "
             "(scrapy-redis's shared queue and dupefilter)", "crawler-kill", "redis", "anchor"),
    Scenario("crawler-kill-plain", "The busiest crawler SIGKILLed, a replacement started with what it had not "
             "fetched (Scrapy's in-memory scheduler, each crawler its share)", "crawler-kill", "memory", "anchor"),
    Scenario("one-host-anchor", "Sites on 6 ports of one host, no fault, ROBOTSTXT_FLEET_PACING = False: each "
             "crawler paces alone its share", "none", "memory", one_host=True, settings=NO_FLEET_PACING),
    Scenario("one-host", "Sites on 6 ports of one host, no fault: one downloader slot, one pace",
             "none", "redis", "one-host-anchor", one_host=True),
]  # fmt: skip
BY_NAME = {s.name: s for s in SCENARIOS}


@dataclass(frozen=True)
class Timeline:
    """Seconds from the first page any site saw: the first fault at `before`, the harness's
    recovery `during` later, the next fault `after` that."""

    before: float
    during: float
    after: float
    repeat: bool

    @property
    def length(self) -> float:
        return self.before + (self.during + self.after) * (2 if self.repeat else 1)


FULL = Timeline(before=6, during=3, after=8, repeat=True)
QUICK = Timeline(before=2, during=2, after=3, repeat=False)


class CountingSite(SiteServer):
    """A SiteServer that also keeps each request's User-Agent (which crawler sent it)."""

    def __init__(self, host: str, robots: Any) -> None:
        super().__init__(host=host, robots=robots)
        self.agents: list[str] = []

    def render(self, request: Request) -> Any:
        agent = (request.getHeader("user-agent") or "").rsplit(" ", 1)[-1]
        result = super().render(request)
        self.agents.append(agent)
        return result


@dataclass
class Crawler:
    label: str  # crawler-N, as its User-Agent ends
    urls: list[str]
    handle: Any
    note: str = ""  # "killed" by the harness, "replaces crawler-N", "TIMED OUT"
    result: dict[str, Any] | None = None


LIVE: list[Crawler] = []  # killed by pid if the benchmark stops early


def sleep(seconds: float) -> Deferred[None]:
    return task.deferLater(reactor, max(seconds, 0.0), lambda: None)


class Run:
    """One scenario: its sites, crawlers, faults and windows."""

    def __init__(self, scenario: Scenario, args: argparse.Namespace, redis: RedisServer):
        self.scenario = scenario
        self.args = args
        self.redis = redis
        self.timeline: Timeline = args.timeline
        self.delay: float = args.delay
        self.pages: int = args.one_host_pages if scenario.one_host else args.pages
        robots = body(f"User-agent: *\nDisallow: /private\nCrawl-delay: {self.delay:g}\n")
        hosts = [f"127.0.0.{FIRST_HOST + (0 if scenario.one_host else i)}" for i in range(SITES)]
        self.sites = [CountingSite(host, robots) for host in hosts]
        self.crawlers: list[Crawler] = []
        self.events: list[tuple[float, str]] = []  # what the harness did, when
        self.windows: list[tuple[str, float, float]] = []
        self.t0 = math.nan  # the first page any site saw
        self.timed_out = False
        self.victim: Crawler | None = None  # the crawler the last crawler-kill fault killed

    @property
    def settings(self) -> dict[str, Any]:
        queue = self.args.queue if self.scenario.fault.startswith(("redis", "flush")) else self.scenario.queue
        return {**(MEMORY_QUEUE if queue == "memory" else {}), **self.scenario.settings, **self.args.settings}

    @property
    def planned(self) -> float:
        """The crawl's length at the sites' pace: what the deadline is a multiple of."""
        per_pace = SITES if self.scenario.one_host else 1
        return max(self.pages * self.delay * per_pace, self.timeline.length if self.scenario.fault != "none" else 0)

    def shares(self) -> list[list[str]]:
        """Each site's pages and /private URLs dealt round-robin, sites interleaved: every
        crawler sends requests to every site from its first ones."""
        paths = [f"/p{i}" for i in range(self.pages)] + [f"/private/{i}" for i in range(DISALLOWED)]
        lists: list[list[str]] = [[] for _ in range(CRAWLERS)]
        for i, path in enumerate(paths):
            for site in self.sites:
                lists[i % CRAWLERS].append(site.url + path)
        return lists

    def spawn(self, urls: list[str], note: str = "") -> Crawler:
        label = f"crawler-{len(self.crawlers)}"
        handle = start_crawler(urls, self.redis.url, USER_AGENT=AGENT.format(len(self.crawlers)), **self.settings)
        crawler = Crawler(label, urls, handle, note)
        self.crawlers.append(crawler)
        LIVE.append(crawler)

        def ended(result: dict[str, Any]) -> None:
            crawler.result = result
            LIVE.remove(crawler)

        handle.done.addCallback(ended)
        return crawler

    def running(self) -> list[Crawler]:
        return [c for c in self.crawlers if c.result is None]

    def mark(self, what: str) -> float:
        now = time.monotonic()
        self.events.append((now, what))
        return now

    def fetched_by(self, label: str) -> set[str]:
        return {
            site.url + hit.path
            for site in self.sites
            for hit, agent in zip(site.hits, site.agents)
            if agent == label and hit.path != "/robots.txt"
        }

    async def run(self) -> Outcome:
        for site in self.sites:
            site.start()
        self.redis.flush()  # scrapy-redis's queue and dupefilter, the robots.txt records, the pace
        started = time.monotonic()
        deadline = started + max(3 * self.planned, self.planned + 30)
        for urls in self.shares():
            self.spawn(urls)
        watchdog = reactor.callLater(deadline - started, self.give_up)
        monitor = fleet_bench.StallMonitor()
        monitor.start()
        try:
            while not any(s.page_hits() for s in self.sites) and self.running() and time.monotonic() < deadline:
                await sleep(0.02)
            self.t0 = min((h.at for s in self.sites for h in s.page_hits()), default=time.monotonic())
            if self.scenario.fault != "none":
                await self.inject()
            while self.running():
                await DeferredList([c.handle.done for c in self.running()], consumeErrors=True)
        finally:
            monitor.stop()
            if watchdog.active():
                watchdog.cancel()
            self.redis.resume()
            if not self.redis.ping():
                self.redis.restart()  # the next scenario needs it (blocking: nothing is measured now)
            for site in self.sites:
                await site.stop()
        return Outcome(self, monitor.longest, time.monotonic() - started)

    def give_up(self) -> None:
        self.timed_out = True
        for crawler in self.running():
            crawler.note = crawler.note or "TIMED OUT"
            fleet_bench.kill(crawler.handle)

    async def inject(self) -> None:
        timeline = self.timeline
        edge = -math.inf
        at = self.t0 + timeline.before
        for n in range(1, 3 if timeline.repeat else 2):
            await sleep(at - time.monotonic())
            if not self.running() or self.timed_out:
                self.mark(f"fault {n} not injected: the crawl had ended")
                break
            fault = await self.fault(n)
            self.windows.append(("before" if n == 1 else f"after {n - 1}", edge, fault))
            await sleep(fault + timeline.during - time.monotonic())
            edge = await self.recover(n)
            self.windows.append((f"fault {n}", fault, edge))
            at = edge + timeline.after
        self.windows.append((f"after {len(self.windows) // 2}" if self.windows else "before", edge, math.inf))

    async def fault(self, n: int) -> float:
        kind = self.scenario.fault
        if kind == "redis-kill":
            self.redis.kill()
            return self.mark(f"fault {n}: redis-server SIGKILLed")
        if kind == "redis-stop":
            self.redis.pause()
            return self.mark(f"fault {n}: redis-server SIGSTOPped")
        if kind == "flushall":
            self.redis.flushall()
            return self.mark(f"fault {n}: FLUSHALL")
        # The busiest crawler, by the pages the sites saw from it: with scrapy-redis's queue
        # it is the one most likely to hold the most requests.
        live = self.running()
        victim = max(live, key=lambda c: len(self.fetched_by(c.label)))
        fleet_bench.kill(victim.handle)
        victim.note = "killed"
        self.victim = victim
        return self.mark(f"fault {n}: {victim.label} SIGKILLed")

    async def recover(self, n: int) -> float:
        kind = self.scenario.fault
        if kind == "redis-kill":
            self.redis.spawn()
            while not self.redis.ping():
                await sleep(0.01)
            return self.mark(f"recovery {n}: redis-server restarted empty, answering")
        if kind == "redis-stop":
            self.redis.resume()
            return self.mark(f"recovery {n}: redis-server SIGCONTinued")
        if kind == "flushall":
            return self.mark(f"{self.timeline.during:g} s after flush {n} (nothing to recover)")
        victim = self.victim
        assert victim is not None
        if self.scenario.queue == "redis":
            urls = victim.urls  # as an operator re-runs it: the shared dupefilter drops what was seen
        else:
            done = self.fetched_by(victim.label)
            urls = [url for url in victim.urls if url not in done]
        replacement = self.spawn(urls, f"replaces {victim.label}")
        return self.mark(f"recovery {n}: {replacement.label} started with {len(urls)} URLs of {victim.label}'s")


async def bench(args: argparse.Namespace, redis: RedisServer, names: list[str]) -> None:
    print(
        f"{CRAWLERS} crawlers (tests/fleet_project), {SITES} sites on loopback at Crawl-delay {args.delay:g} s, "
        f"{args.pages} pages and {DISALLOWED} disallowed URLs per site ({args.one_host_pages} pages per site on one "
        f"host);\nfaults at {args.timeline.before:g} s after the first page, recovery {args.timeline.during:g} s "
        f"later, {f'the fault again {args.timeline.after:g} s after that' if args.timeline.repeat else 'once'}"
        f". Goal per window: at most 3 % of gaps under 95 % of the delay ({0.95 * args.delay:g} s).\n"
    )
    outcomes = []
    for name in names:
        outcome = await Run(BY_NAME[name], args, redis).run()
        report(outcome)
        outcomes.append(outcome)
    args.failed = summary(outcomes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", action="append", choices=list(BY_NAME), help="run this one (and its anchor)")
    parser.add_argument("--quick", action="store_true", help="shorter windows, each fault once, no no-fault run")
    parser.add_argument("--delay", type=float, default=1.0, help="the sites' Crawl-delay (default 1)")
    parser.add_argument("--pages", type=int, help="pages per site (default: enough for the timeline)")
    parser.add_argument("--queue", choices=["memory", "redis"], default="memory", help="scheduler for Redis faults")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a setting for every crawler")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a window fails or a problem is found")
    args = parser.parse_args()
    args.settings = dict(item.split("=", 1) for item in args.set)
    args.timeline = QUICK if args.quick else FULL
    # Enough pages that the crawl outlasts the timeline at the sites' pace.
    args.pages = args.pages or math.ceil(args.timeline.length / args.delay) + 2
    args.one_host_pages = max(3, math.ceil(args.timeline.length / args.delay / SITES))
    # --quick leaves out no-fault: each scenario's "before" window is the fleet without a fault.
    names = [s.name for s in SCENARIOS if not (args.quick and s.name == "no-fault")]
    if args.scenario:
        names = [s.name for s in SCENARIOS]
        wanted = set(args.scenario) | {BY_NAME[n].anchor for n in args.scenario if BY_NAME[n].anchor}
        names = [n for n in names if n in wanted]
    args.failed = False

    redis = RedisServer().start()
    try:
        task.react(lambda _: Deferred.fromCoroutine(bench(args, redis, names)))
    except SystemExit as exc:
        if exc.code or not (args.strict and args.failed):
            raise
        raise SystemExit(1) from None
    finally:
        for crawler in LIVE:
            pid = getattr(crawler.handle.transport, "pid", None)
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        redis.resume()
        redis.stop()


if __name__ == "__main__":
    main()
