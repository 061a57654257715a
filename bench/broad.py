"""A broad crawl: thousands of sites x 4 URLs, robots.txt off, Scrapy's middleware and ours.

    .venv/bin/python bench/broad.py                                # 5,000 sites, 5 crawls (about 12 min)
    .venv/bin/python bench/broad.py --sites 5000,20000,50000       # the full table of issue #12 (hours)
    .venv/bin/python bench/broad.py --runs noobey,ours --repeats 3
    .venv/bin/python bench/broad.py --runs noobey,ours --set ROBOTSTXT_CACHE_SIZE=8192
    .venv/bin/python bench/broad.py --runs noobey,stock,ours --instructions   # under valgrind

The benchmark of issue #12: one robots.txt fetch per site per day at any crawl size, in
bounded memory, surviving a restart. For each number of sites N, one after the other:

- ``noobey``: ROBOTSTXT_OBEY = False, the anchor;
- ``stock``: Scrapy's RobotsTxtMiddleware (ROBOTSTXT_OBEY = True, Protego);
- ``ours``: scrapy_robots.RobotsTxtMiddleware at its defaults;
- ``resume``: ours with a JOBDIR, crawling URLs 1-2 of every site, then again with the
  same JOBDIR over URLs 3-4 of the same sites: robots.txt fetches of the second crawl
  (the goal is 0: what the first crawl learnt survives the restart).

Each crawl is a subprocess of this script (``--crawl``), a real Scrapy crawl with
CrawlerProcess, so that its peak RSS (ru_maxrss from wait4) is its own. The spider
yields every site's URL 1, then every site's URL 2, ... from ``async def start()``,
the way a broad crawl's frontier interleaves sites, and Scrapy's default
DownloaderAwarePriorityQueue round-robins over the sites' slots. Settings:
CONCURRENT_REQUESTS = 64 (``--concurrency``; per site Scrapy's default 8),
DOWNLOAD_DELAY = 0, LOG_LEVEL = INFO to a file, TELNETCONSOLE_ENABLED = False and
REMOTE_CONTROL_ENABLED = False, the default scheduler, a named bot as USER_AGENT (one
no corpus file names: the ``*`` groups apply).

The sites are one loopback process (bench/_broad_site.py): an HTTP forward proxy on
127.0.0.1 that answers for every host itself, so there is no DNS and no network. Site i
is ``s{i:05d}.example``; 1 in 10 answers 404 for robots.txt, 2 in 10 a short robots.txt
that disallows /private, 7 in 10 a file of the robots.txt corpus (cycled, Crawl-delay
and Request-rate lines stripped: a delay would make the wall time the sites' delays).
Every page request carries ``meta["proxy"]``; ours copies it to its robots.txt
request, Scrapy's stock middleware does not, so the crawl also gets ``http_proxy`` in
its environment, which Scrapy's HttpProxyMiddleware reads at start (without it, stock's
robots.txt requests go straight to the site, fail DNS, and the table says so). The proxy counts
robots.txt requests (per site) and pages; the table's robots.txt fetches are the proxy's
count, checked against the crawl's own ``robotstxt/request_count``.

Wall: the crawl process's CrawlerProcess.start() call (imports and interpreter start
excluded). CPU: the crawl process's user + system time, start-up included (steadier than
the wall when other processes share the cores). Peak RSS: its ru_maxrss. Ratios are
against the ``noobey`` anchor of the same N: wall x, CPU x, and the RSS above the
anchor's in KiB per site. The crawl is CPU-bound: the proxy answers at once, so few
requests are ever on the wire; much of the anchor's cost per page is Scrapy's own (with
the asyncio reactor, each response's callback output goes through CONCURRENT_ITEMS =
100 asyncio tasks), which every crawl here pays alike.

Diagnostics, each crawl's own (environment variables; each slows the crawl down, so their
CPU figures are not comparable with a plain run's):

- ``BROAD_PROFILE=<dir>``: its cProfile dump there;
- ``BROAD_TRACEMALLOC=<file>``: what is still allocated at the close;
- ``BROAD_GC_PROMOTED=<file>``: what reached the garbage collector's oldest generation, by
  type, counted as each collection of generation 1 moves its survivors there (they bring
  the next full collection closer even if freed before it);
- ``BROAD_GC_GARBAGE=<file>``: the objects left in reference cycles, by type (the collector
  off, one collection at the close): they count towards the next young collection until
  one frees them, where an object freed by its reference count gives its count back;
- ``BROAD_GC_HEAP=<file>``: the objects the collector tracks at the close (what each full
  collection walks), by type;
- ``BROAD_GC_SAMPLES=<file>``: the Python stack at the start of each young collection (the
  allocation that crossed the threshold), by function: a sample of where tracked objects
  are made, biased where a crawl's allocations repeat a pattern;
- ``BROAD_GC_BALLAST=<n>``: n tracked objects kept through the crawl (the heap a parser
  per site makes), which puts the full collections off.

``--instructions`` runs each crawl under valgrind's cachegrind and adds the instructions it
executed to the table: about 15 times slower, and the same count to 0.1 % from one crawl to
the next, whatever else the machine runs (its CPU seconds scatter by 10-20 %).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _broad_site import PATHS, host, robots_kind  # noqa: E402
from _common import print_table  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

OURS = {
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "scrapy_robots.RobotsTxtMiddleware": 100,
}
#: The "slow down" extension, which the add-on enables beside the middleware (at its defaults, on).
BACKOFF = {"scrapy_robots.pace.backoff.PageBackoff": 0}
RUN_SETTINGS: dict[str, dict[str, Any]] = {
    "noobey": {"ROBOTSTXT_OBEY": False},
    "stock": {"ROBOTSTXT_OBEY": True},
    "ours": {"ROBOTSTXT_OBEY": True, "DOWNLOADER_MIDDLEWARES": OURS, "EXTENSIONS": BACKOFF},
    "resume": {"ROBOTSTXT_OBEY": True, "DOWNLOADER_MIDDLEWARES": OURS, "EXTENSIONS": BACKOFF},  # + JOBDIR
}
LABELS = {
    "noobey": "ROBOTSTXT_OBEY=False (anchor)",
    "stock": "stock (Scrapy 2.19, Protego)",
    "ours": "ours, defaults",
    "resume 1": "ours + JOBDIR, URLs 1-2",
    "resume 2": "ours + same JOBDIR, URLs 3-4",
}
USER_AGENT = "Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example/bot)"
# Issue #12's goals for ours at the defaults.
GOAL_WALL = 1.20  # x the anchor's wall
GOAL_CPU = 1.20  # x the anchor's CPU (issue #21)
GOAL_KIB_PER_SITE = 2.0  # RSS above the anchor's


# -- one crawl (a subprocess) ---------------------------------------------------------


def crawl(config: dict[str, Any]) -> None:
    """Run one crawl as ``config`` says and write what it saw to ``config["result"]``."""
    from _broad_diagnostics import Diagnostics
    from scrapy import Request, Spider
    from scrapy.crawler import CrawlerProcess
    from scrapy.exceptions import IgnoreRequest

    sites, paths, proxy = config["sites"], config["paths"], config["proxy"]

    class BroadSpider(Spider):
        name = "broad"

        async def start(self) -> Any:
            # URL 1 of every site, then URL 2 of every site, ...: made as they are
            # consumed, so that no list of every request weighs on the peak RSS.
            for path in paths:
                for site in range(sites):
                    yield Request(
                        f"http://{host(site)}{path}", meta={"proxy": proxy}, callback=self.parse, errback=self.errback
                    )

        def parse(self, response: Any) -> None:
            self.crawler.stats.inc_value("broad/pages")

        def errback(self, failure: Any) -> None:
            if failure.check(IgnoreRequest):
                self.crawler.stats.inc_value("broad/denied")
                return
            if not self.crawler.stats.get_value("broad/failed"):
                self.logger.error("First failed request, %s:\n%s", failure.request, failure.getTraceback())
            self.crawler.stats.inc_value("broad/failed")

    process = CrawlerProcess(config["settings"])
    crawler = process.create_crawler(BroadSpider)
    diagnostics = Diagnostics(crawler, config["settings"]["LOG_FILE"])
    diagnostics.start()
    start = time.perf_counter()
    process.crawl(crawler)
    process.start()
    wall = time.perf_counter() - start
    diagnostics.stop()
    stats = {key: value for key, value in crawler.stats.get_stats().items() if isinstance(value, (int, float))}
    diagnostics.results(stats)
    Path(config["result"]).write_text(json.dumps({"wall": wall, "stats": stats}))


# -- the parent -----------------------------------------------------------------------


@dataclass
class Run:
    """One crawl as the parent saw it."""

    name: str  # noobey, stock, ours, resume 1, resume 2
    sites: int
    wall: float = float("nan")
    cpu: float = float("nan")  # user + system seconds of the crawl process, start-up included
    rss_kib: int = 0
    instructions: int = 0  # counted by valgrind (--instructions), start-up included
    exit: int | None = None
    timed_out: bool = False
    proxy: dict[str, Any] = field(default_factory=dict)  # the proxy's counts
    stats: dict[str, Any] = field(default_factory=dict)  # the crawl's own stats
    log: str = ""

    @property
    def fetches(self) -> int:
        return int(self.proxy.get("robots", 0))

    @property
    def problems(self) -> list[str]:
        found = []
        if self.timed_out:
            found.append("TIMED OUT")
        elif self.exit != 0:
            found.append(f"exit {self.exit}")
        if not self.stats:
            return [*found, "no result"]  # killed or crashed: nothing to compare the proxy's counts with
        asked = self.stats.get("robotstxt/request_count", 0)
        if asked != self.fetches:
            found.append(f"robots.txt requests: crawl {asked}, proxy {self.fetches}")
        if self.stats.get("broad/pages", 0) != self.proxy.get("pages", 0):
            found.append(f"pages: crawl {self.stats.get('broad/pages', 0)}, proxy {self.proxy.get('pages', 0)}")
        for key, label in (("broad/failed", "failed"), ("log_count/ERROR", "errors logged")):
            if self.stats.get(key):
                found.append(f"{self.stats[key]} {label}")
        prefix = "downloader/exception_type_count/"
        found += [
            f"{count} {key[len(prefix) :]}"
            for key, count in self.stats.items()
            if key.startswith(prefix) and not key.endswith(".IgnoreRequest")
        ]
        if self.proxy.get("stray"):
            found.append(f"{self.proxy['stray']} stray requests at the proxy")
        if self.stats.get("robotstxt/crawl_delay/sites"):
            found.append(f"Crawl-delay applied on {self.stats['robotstxt/crawl_delay/sites']} sites")
        return found

    @property
    def failed(self) -> bool:
        # No stats: the crawl never finished (a crash at start-up exits 0 with CrawlerProcess).
        return self.timed_out or self.exit != 0 or not self.stats or bool(self.stats.get("broad/failed"))


class Proxy:
    """bench/_broad_site.py in its own process, for the whole benchmark."""

    def __init__(self, workdir: Path, *options: str) -> None:
        port_file = workdir / "port"
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "_broad_site.py"), str(port_file), *options], stdin=subprocess.PIPE
        )
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the proxy did not start")
            time.sleep(0.1)
        self.url = f"http://127.0.0.1:{port_file.read_text()}"

    def control(self, what: str) -> dict[str, Any]:
        no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with no_proxy.open(f"{self.url}/__{what}__", timeout=30) as response:
            return dict(json.loads(response.read()))

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def run_crawl(
    name: str,
    sites: int,
    paths: tuple[str, ...],
    settings: dict[str, Any],
    proxy: Proxy,
    workdir: Path,
    timeout: float,
    instructions: bool = False,
) -> Run:
    run = Run(name, sites)
    result, log = workdir / "result.json", workdir / f"{name.replace(' ', '-')}-{sites}.log"
    result.unlink(missing_ok=True)
    log.unlink(missing_ok=True)
    config = {
        "sites": sites,
        "paths": paths,
        "proxy": proxy.url,
        "result": str(result),
        "settings": {**settings, "LOG_FILE": str(log)},
    }
    # Only http_proxy: the sites are http:// and nothing may bypass the proxy.
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["http_proxy"] = proxy.url
    proxy.control("reset")
    counted = workdir / f"{name.replace(' ', '-')}-{sites}.cachegrind"
    wrap = [*VALGRIND, f"--cachegrind-out-file={counted}"] if instructions else []
    if instructions:
        # One hash seed for every counted crawl: with a random one, dicts and sets lay out
        # differently each run and the count moves by about 0.1 %, the size of what is compared.
        env.setdefault("PYTHONHASHSEED", "0")
    process = subprocess.Popen([*wrap, sys.executable, __file__, "--crawl", json.dumps(config)], env=env)
    deadline = time.monotonic() + timeout
    try:
        # wait4, not Popen.wait: the child's own rusage (peak RSS, CPU).
        while not (waited := os.wait4(process.pid, os.WNOHANG))[0]:
            if time.monotonic() > deadline:
                run.timed_out = True
                process.kill()
                waited = os.wait4(process.pid, 0)
                break
            time.sleep(0.1)
    except BaseException:  # Ctrl-C, or anything else that stops the benchmark: no crawl outlives it
        process.kill()
        process.wait()
        raise
    _, status, usage = waited
    process.returncode = run.exit = os.waitstatus_to_exitcode(status)
    run.rss_kib = usage.ru_maxrss  # KiB on Linux
    run.cpu = usage.ru_utime + usage.ru_stime
    run.proxy = proxy.control("stats")
    run.log = str(log)
    if result.exists():
        measured = json.loads(result.read_text())
        run.wall, run.stats = measured["wall"], measured["stats"]
    if instructions and counted.exists():
        run.instructions = cachegrind_total(counted)
    return run


#: The crawl under valgrind's cachegrind, counting the instructions it executes (no cache
#: simulation): about 15 times slower, and the same count to 0.1 % from one crawl to the
#: next, whatever else the machine runs (CPU seconds here scatter by 10-20 %).
VALGRIND = ("valgrind", "--tool=cachegrind", "--cache-sim=no", "--quiet")


def cachegrind_total(path: Path) -> int:
    """The instructions counted in a cachegrind output file (its ``summary:`` line)."""
    for line in reversed(path.read_text().splitlines()):
        if line.startswith("summary:"):
            return int(line.split()[1])
    return 0


def crawl_settings(name: str, concurrency: int, extra: dict[str, Any]) -> dict[str, Any]:
    return {
        **RUN_SETTINGS[name],
        "USER_AGENT": USER_AGENT,
        "CONCURRENT_REQUESTS": concurrency,
        "DOWNLOAD_DELAY": 0,
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,  # Scrapy 2.19's other console: a server, and job files in ~
        "LOG_LEVEL": "INFO",
        **extra,
    }


def one_round(name: str, sites: int, args: argparse.Namespace, proxy: Proxy, workdir: Path) -> list[Run]:
    settings = crawl_settings(name, args.concurrency, args.extra)
    timeout = args.timeout or (120 + sites * len(PATHS) / 50) * (30 if args.instructions else 1)  # >= 50 pages/s
    if name != "resume":
        return [run_crawl(name, sites, PATHS, settings, proxy, workdir, timeout, args.instructions)]
    jobdir = workdir / "jobdir"
    shutil.rmtree(jobdir, ignore_errors=True)
    settings["JOBDIR"] = str(jobdir)
    first = run_crawl("resume 1", sites, PATHS[:2], settings, proxy, workdir, timeout, args.instructions)
    if first.failed:
        return [first]
    return [first, run_crawl("resume 2", sites, PATHS[2:], settings, proxy, workdir, timeout, args.instructions)]


def progress(run: Run) -> None:
    print(
        f"  {run.sites} sites, {run.name}: {run.wall:.1f} s, {run.rss_kib / 1024:.0f} MiB, {run.fetches} robots.txt "
        f"fetches, {run.stats.get('broad/pages', 0)} pages, {run.stats.get('broad/denied', 0)} denied"
        f"{''.join(f'; {p}' for p in run.problems)} (log: {run.log})",
        file=sys.stderr,
        flush=True,
    )


# -- the report -----------------------------------------------------------------------


def parses(runs: list[Run]) -> str:
    """The crawl's robotstxt/parsed: bodies parsed (ours only; '-' for the others)."""
    counts = [r.stats["robotstxt/parsed"] for r in runs if "robotstxt/parsed" in r.stats]
    return f"{statistics.median(counts):.0f}" if counts else "-"


def collections(run: Run, generation: int) -> float:
    return float(run.stats.get(f"gc/collections/{generation}", 0))


def median(runs: list[Run], value: Callable[[Run], float]) -> float:
    return statistics.median(value(run) for run in runs)


def instruction_columns(runs: list[Run], anchor: float) -> list[str]:
    instructions = median(runs, lambda r: r.instructions)
    return [f"{instructions / 1e9:.2f}", f"{instructions / anchor:.3f}"] if instructions else ["-", "-"]


def per_site(runs: list[Run]) -> str:
    """How many sites had their robots.txt fetched once, twice, ... (the first run's)."""
    counts = runs[0].proxy.get("robots_per_site", {})
    return " ".join(f"{n}x:{sites}" for n, sites in counts.items()) or "-"


def report(results: dict[int, dict[str, list[Run]]], args: argparse.Namespace) -> None:
    headers = [
        "run",
        "sites",
        "robots.txt fetches",
        "fetches per site",
        "evicted",
        "parses",
        "GCs gen 0/1/2",
        "GC s",
        "pages",
        "denied",
        "wall s",
        "wall x",
        "CPU s",
        "CPU x",
        "peak RSS MiB",
        "RSS +KiB/site",
        *(["instructions G", "instr. x"] if args.instructions else []),
        "problems",
    ]
    rows = []
    for sites, by_run in results.items():
        anchor = by_run.get("noobey")
        nan = float("nan")
        anchor_wall, anchor_cpu, anchor_rss, anchor_instructions = (
            (median(anchor, value) if anchor else nan)
            for value in (lambda r: r.wall, lambda r: r.cpu, lambda r: r.rss_kib, lambda r: r.instructions)
        )
        for name, runs in by_run.items():
            wall, cpu, rss = (median(runs, value) for value in (lambda r: r.wall, lambda r: r.cpu, lambda r: r.rss_kib))
            evicted = [r.stats["robotstxt/cache/evicted"] for r in runs if "robotstxt/cache/evicted" in r.stats]
            rows.append(
                [
                    LABELS[name],
                    f"{sites:,}",
                    f"{median(runs, lambda r: r.fetches):.0f}",
                    per_site(runs),
                    f"{statistics.median(evicted):.0f}" if evicted else "-",
                    parses(runs),
                    "/".join(f"{median(runs, partial(collections, generation=g)):.0f}" for g in range(3)),
                    f"{median(runs, lambda r: sum(r.stats.get(f'gc/seconds/{g}', 0) for g in range(3))):.1f}",
                    f"{median(runs, lambda r: r.stats.get('broad/pages', 0)):.0f}",
                    f"{median(runs, lambda r: r.stats.get('broad/denied', 0)):.0f}",
                    f"{wall:.1f}",
                    f"{wall / anchor_wall:.2f}",
                    f"{cpu:.1f}",
                    f"{cpu / anchor_cpu:.2f}",
                    f"{rss / 1024:.0f}",
                    f"{(rss - anchor_rss) / sites:+.2f}",
                    *(instruction_columns(runs, anchor_instructions) if args.instructions else []),
                    "; ".join(p for r in runs for p in r.problems) or "-",
                ]
            )
    repeats = f"medians of {args.repeats} runs" if args.repeats > 1 else "one run each"
    extra = "".join(f", {name}={value!r}" for name, value in args.extra.items())
    print(
        f"Broad crawl, {len(PATHS)} URLs per site, interleaved; CONCURRENT_REQUESTS={args.concurrency}, "
        f"DOWNLOAD_DELAY=0, LOG_LEVEL=INFO{extra}; {repeats}.\n"
        f"robots.txt fetches, fetches per site ('1x:4990 2x:10': 4,990 sites fetched once, 10 twice): at the "
        f"proxy. evicted: the crawl's robotstxt/cache/evicted. parses: its robotstxt/parsed. GCs gen 0/1/2: its\n"
        f"garbage collections by generation (2: the full ones, which scan the whole heap); GC s: CPU seconds in all.\n"
        f"pages, denied: the crawl's responses and IgnoreRequests. CPU: user + system of the crawl process.\n"
        f"x and RSS +KiB/site: against the ROBOTSTXT_OBEY=False crawl of the same sites.\n"
        + (
            "instructions: executed by the crawl process (start-up included), counted by valgrind's cachegrind; "
            "wall and CPU are valgrind's.\n"
            if args.instructions
            else ""
        )
    )
    print_table(headers, rows)
    for sites, by_run in results.items():
        kinds = [robots_kind(i) for i in range(sites)]
        print(
            f"{sites:,} sites ({kinds.count('404'):,} answer 404 for robots.txt, {kinds.count('synthetic'):,} "
            f"disallow /private, the rest corpus files):"
        )
        goals(sites, by_run)
        paired(by_run)
        for name, runs in by_run.items():
            if len(runs) > 1:
                print(
                    f"  {LABELS[name]}, every run: wall "
                    + " ".join(f"{r.wall:.1f}" for r in runs)
                    + " s, CPU "
                    + " ".join(f"{r.cpu:.1f}" for r in runs)
                    + " s, RSS "
                    + " ".join(f"{r.rss_kib / 1024:.0f}" for r in runs)
                    + " MiB"
                )
        print()


def paired(by_run: dict[str, list[Run]]) -> None:
    """Ours's CPU over stock's and the anchor's, round by round: the crawls of one round run
    minutes apart, so a slow spell of the machine weighs on them alike (the medians above
    mix rounds)."""
    ours = by_run.get("ours", [])
    for name in ("stock", "noobey"):
        other = by_run.get(name, [])
        rounds = min(len(ours), len(other))
        if rounds > 1:
            ratios = [ours[i].cpu / other[i].cpu for i in range(rounds)]
            print(
                f"  CPU ours / {LABELS[name]}, round by round: "
                + " ".join(f"x{ratio:.2f}" for ratio in ratios)
                + f" (median x{statistics.median(ratios):.2f})"
            )


def goals(sites: int, by_run: dict[str, list[Run]]) -> None:
    """Issue #12's goals for ours at the defaults, with stock's figures next to them."""
    ours, stock, anchor = by_run.get("ours"), by_run.get("stock"), by_run.get("noobey")

    def say(goal: str, figure: Callable[[list[Run]], str], met: Callable[[list[Run]], bool]) -> None:
        figures = [f"{name} {figure(runs)}" for name, runs in (("ours", ours), ("stock", stock)) if runs]
        if figures:
            verdict = "-" if not ours else "FAILED" if any(r.failed for r in ours) else "yes" if met(ours) else "NO"
            print(f"  {goal}: {verdict} ({', '.join(figures)})")

    say(
        f"robots.txt fetches = sites ({sites:,})",
        lambda runs: f"{median(runs, lambda r: r.fetches):.0f}",
        lambda runs: all(r.proxy.get("robots_per_site") == {"1": sites} for r in runs),
    )
    if ours:
        parsed = [r.stats.get("robotstxt/parsed", 0) for r in ours]
        bodies = sites - [robots_kind(i) for i in range(sites)].count("404")  # a 404 has no body
        verdict = "yes" if all(count == bodies for count in parsed) else "NO"
        print(f"  robots.txt parses = sites with a body ({bodies:,}): {verdict} (ours {statistics.median(parsed):.0f})")
    if ours and stock:
        cpu_ours, cpu_stock = median(ours, lambda r: r.cpu), median(stock, lambda r: r.cpu)
        verdict = "yes" if cpu_ours <= cpu_stock else "NO"
        ratio = cpu_ours / cpu_stock
        print(f"  CPU <= stock's: {verdict} (ours {cpu_ours:.1f} s, stock {cpu_stock:.1f} s, x{ratio:.2f})")
        ir_ours, ir_stock = median(ours, lambda r: r.instructions), median(stock, lambda r: r.instructions)
        if ir_ours and ir_stock:
            verdict = "yes" if ir_ours <= ir_stock else "NO"
            print(
                f"  instructions <= stock's: {verdict} (ours {ir_ours / 1e9:.2f} G, stock {ir_stock / 1e9:.2f} G, "
                f"x{ir_ours / ir_stock:.3f})"
            )
    if anchor:
        wall, cpu, rss = (median(anchor, value) for value in (lambda r: r.wall, lambda r: r.cpu, lambda r: r.rss_kib))
        say(
            f"CPU <= x{GOAL_CPU:.2f} of no-robots ({cpu:.1f} s)",
            lambda runs: f"x{median(runs, lambda r: r.cpu) / cpu:.2f}",
            lambda runs: median(runs, lambda r: r.cpu) <= GOAL_CPU * cpu,
        )
        say(
            f"wall <= x{GOAL_WALL:.2f} of no-robots ({wall:.1f} s)",
            lambda runs: (
                f"x{median(runs, lambda r: r.wall) / wall:.2f} (CPU x{median(runs, lambda r: r.cpu) / cpu:.2f})"
            ),
            lambda runs: median(runs, lambda r: r.wall) <= GOAL_WALL * wall,
        )
        instructions = median(anchor, lambda r: r.instructions)
        if instructions and ours and median(ours, lambda r: r.instructions):
            say(
                f"instructions <= x{GOAL_CPU:.2f} of no-robots ({instructions / 1e9:.2f} G)",
                lambda runs: f"x{median(runs, lambda r: r.instructions) / instructions:.3f}",
                lambda runs: median(runs, lambda r: r.instructions) <= GOAL_CPU * instructions,
            )
        limit = rss + GOAL_KIB_PER_SITE * sites
        say(
            f"peak RSS <= no-robots + {GOAL_KIB_PER_SITE:g} KiB/site ({limit / 1024:.0f} MiB)",
            lambda runs: f"{median(runs, lambda r: r.rss_kib) / 1024:.0f} MiB",
            lambda runs: median(runs, lambda r: r.rss_kib) <= limit,
        )
    if "resume 1" in by_run:
        first, second = by_run["resume 1"], by_run.get("resume 2", [])
        failed = not second or any(r.failed for r in first + second)
        fetches = median(second, lambda r: r.fetches) if second else float("nan")
        verdict = "FAILED" if failed else "yes" if fetches == 0 else "NO"
        print(
            f"  a resumed JOBDIR crawl makes 0 robots.txt fetches: {verdict} "
            f"({fetches:.0f} in the second crawl, {median(first, lambda r: r.fetches):.0f} in the first)"
        )
        parsed = median(second, lambda r: r.stats.get("robotstxt/parsed", 0)) if second else float("nan")
        verdict = "FAILED" if failed else "yes" if parsed == 0 else "NO"
        print(f"  ... and parses 0 bodies: {verdict} ({parsed:.0f} in the second crawl)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sites",
        default="5000",
        help="comma-separated site counts (default 5000; the issue's table: 5000,20000,50000)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="crawls of each kind per N; the table shows medians")
    parser.add_argument("--runs", default="noobey,stock,ours,resume", help="which crawls (default all four)")
    parser.add_argument("--concurrency", type=int, default=64, help="CONCURRENT_REQUESTS (default 64)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=0,
        help="seconds per crawl before it is killed (default 120 + 1 s per 50 pages)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Scrapy setting for every crawl (VALUE read as JSON if it parses, else a string)",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="run each crawl under valgrind and count the instructions it executes (about 15x slower; "
        "a measure the machine's load does not move)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the crawls' logs (their directory is printed)")
    parser.add_argument("--crawl", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.instructions and shutil.which(VALGRIND[0]) is None:
        parser.error("--instructions needs valgrind (Debian: apt-get install valgrind)")
    if args.crawl:
        crawl(json.loads(args.crawl))
        return
    counts = [int(n) for n in args.sites.split(",")]
    names = args.runs.split(",")
    if unknown := set(names) - set(RUN_SETTINGS):
        parser.error(f"unknown runs {sorted(unknown)}; choose among {', '.join(RUN_SETTINGS)}")
    if not all(0 < n <= 100_000 for n in counts) or args.repeats < 1:
        parser.error("1 to 100,000 sites, at least 1 repeat")
    args.extra = {}
    for assignment in args.set:
        name, equals, value = assignment.partition("=")
        if not equals:
            parser.error(f"--set {assignment}: NAME=VALUE")
        try:
            args.extra[name] = json.loads(value)
        except json.JSONDecodeError:
            args.extra[name] = value

    # Byte-compiled as a pip install leaves it: an editable install under PYTHONDONTWRITEBYTECODE
    # (this machine's environment) would compile the package's sources at each crawl's start,
    # about 0.1 s (0.26 G instructions) that only ours would pay, Scrapy's own modules coming
    # compiled from their install.
    compileall.compile_dir(str(ROOT / "scrapy_robots"), quiet=1)
    workdir = Path(tempfile.mkdtemp(prefix="bench-broad-"))
    proxy = Proxy(workdir)
    results: dict[int, dict[str, list[Run]]] = {}
    try:
        for sites in counts:
            by_run: dict[str, list[Run]] = {}
            results[sites] = by_run
            # Repeats interleaved, and each round in another order (noobey, stock, ours;
            # stock, ours, noobey; ...): a noisy neighbour, or a machine that slows down
            # as a round goes on, weighs on every kind of crawl alike.
            chosen = [name for name in RUN_SETTINGS if name in names]
            for repeat in range(args.repeats):
                shift = repeat % len(chosen)
                for name in chosen[shift:] + chosen[:shift]:
                    for run in one_round(name, sites, args, proxy, workdir):
                        by_run.setdefault(run.name, []).append(run)
                        progress(run)
    finally:
        proxy.stop()
    report(results, args)
    failed = [
        f"{run.sites} sites, {run.name}"
        for by_run in results.values()
        for runs in by_run.values()
        for run in runs
        if run.failed
    ]
    if args.keep or failed:
        print(f"The crawls' logs: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    if failed:
        print("FAILED: " + "; ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
