"""Stopping a crawl whose site is paced (issue #41): one Ctrl-C at any Crawl-delay, during a
site's "slow down" pause, in a fleet; and what a paced site costs the fast sites beside it.
Each scenario is a real `scrapy runspider` process (the fleet: `scrapy crawl` processes of
tests/fleet_project), with our middleware and, where Scrapy has an equivalent, its stock one.

    .venv/bin/python bench/paced_stop.py                      # every scenario (about 8 min; 16 before #41)
    .venv/bin/python bench/paced_stop.py --quick              # scenario 1 at 1 and 3 s only
    .venv/bin/python bench/paced_stop.py --tree ../before     # the crawls run another checkout's package
    .venv/bin/python bench/paced_stop.py --only 1 --repeat 3  # one scenario (repeatable), medians of 3 runs

Scenarios:

1. One site, 40 pages (/p0 .. /p39), CONCURRENT_REQUESTS = 16, for a delay d of 1, 3 and 10 s
   (--quick: 1 and 3): ``stock`` is Scrapy's RobotsTxtMiddleware (its default
   DOWNLOADER_MIDDLEWARES), a robots.txt without Crawl-delay and DOWNLOAD_DELAY = d; ``ours``
   is scrapy_robots.RobotsTxtMiddleware in its place with the backoff extension (the
   README's by-hand setup) and ``Crawl-delay: d`` in the robots.txt; at the smallest d
   only, ``ours, DOWNLOAD_DELAY``: ours with stock's pace (DOWNLOAD_DELAY = d, a robots.txt
   without Crawl-delay). One SIGINT once the site has received 3 pages (2 at d = 10).
2. After a 429: the site answers 429 with ``Retry-After: 5`` (a 5 s pause, every request in
   it answered the same) once it has had 3 requests within a second (tests/servers.py's
   RateLimited), robots.txt without a delay, 40 pages, no DOWNLOAD_DELAY. One SIGINT 1 s
   after the first 429 came to the site. Twice: the site answers at once (every request
   but the first 3 is sent before the crawl reads a 429: they all wait for the pause in the
   backoff), and 0.5 s after each request (tests/servers.py's answer_later), so that the
   slot's other requests wait in Scrapy's slot queue when the 429 is read: what a pause
   holds there. Stock has no backoff: Scrapy's RetryMiddleware retries at once, so its
   crawl may be over before the signal (the table says so).
3. A fleet: 3 tests/fleet_project crawlers (scrapy-redis's scheduler, RedisRobotsStorage,
   the add-on; a fresh redis-server, tests/redis_server.py) share one Crawl-delay 3 site's
   40 pages, dealt round-robin. One SIGINT to each, at once, once the site has received 3
   pages. Ours only: stock has no fleet.
4. Fast sites beside a slow one: 200 fast sites x 3 pages (robots.txt without a delay), with
   and without a Crawl-delay 3 site whose 60 pages the spider yields first;
   CONCURRENT_REQUESTS = 16; Scrapy's default queue (DownloaderAwarePriorityQueue, ``aware``)
   and SCHEDULER_PRIORITY_QUEUE = "scrapy.pqueues.ScrapyPriorityQueue" (``fifo``, Scrapy
   2.13's default). The crawl gets a SIGINT once the fast sites have all their pages, or
   45 s after the spawn. Ours only.

Every run: ROBOTSTXT_OBEY, TELNETCONSOLE_ENABLED = False, LOG_LEVEL = INFO, the tests'
USER_AGENT, Scrapy's other defaults (RANDOMIZE_DOWNLOAD_DELAY: a gap is 0.5-1.5 x the delay,
for ours as for stock). A signalled crawl is killed 150 s (--signal-bound) after the signal,
scenario 4's 15 s after it.

Columns. signal->exit: seconds from the SIGINT to the process's end as this process sees it
(the fleet: the last of the three); ``>N`` when it was killed (and ``killed`` says so).
Counted at the server: pages before and after the signal (page requests, robots.txt left
out, any answer). From the crawl's record (tests/spiders/recording.py; a killed crawl writes
none: ``-``): unsent, the stat ``robotstxt/closing/ignored`` (requests still waiting for
robots.txt or their slot's turn when the crawl closed, ignored with the reason; stock has no
such stat); lost, requests neither downloaded, ignored nor failed (dropped by Scrapy's
scheduler at the close, silently); never fetched, the site's pages it never received.
Scenario 2: answers after, the site's answer delay; requests before and after the signal;
inside pause, requests that came inside the pause the site asked for after its answer could
have arrived (RateLimited.inside, the answer delay + 0.2 s of grace); 429s, the answers "slow down"; gave up,
requests that ended in the spider's errback with the 429 (Scrapy's retries spent).
Scenario 4: fast pages, those the fast sites received (of 600); first fast and last fast,
seconds from the spawn to the first and the last fast page (start-up included, about 1 s);
span, first to last fast page; pages/s, fast pages / span (last fast, span and pages/s only
for a run that fetched all 600; a row's median over the runs that did, ``-`` if none did); slow pages, pages of the slow
site fetched meanwhile; waited, the stat ``robotstxt/pace/waited`` (requests that waited in
their slot's line); stop s, signal to exit.

Each row of scenario 1 runs once, those of scenarios 2-4 three times (their crawls last
seconds, and what a stop or a pause finds in Scrapy's slot queue varies from run to run);
``--repeat N`` runs every row N times. A row of several runs shows medians (killed: how many
of the N; the finish reasons met, joined). Ratios: ours / stock (scenarios 1 and 2), with / without the slow site
(scenario 4).

``--tree DIR`` runs the crawls with PYTHONPATH=DIR, so that the same bench measures another
checkout's package (e.g. the commit before #41); the default is this checkout. The header
says which scrapy_robots a crawl imports. The harness (tests/processes.py, servers.py,
fleet.py, the recording spider) is always this checkout's.

The sites are tests/servers.py's SiteServer, fresh for every run, on 127.0.0.160 and up
(clear of the tests' 127.0.0.2.., and of the other benches' .20 .. .123), and scenario 4's
fast sites on 127.0.1.1-100 and 127.0.2.1-100: an address each, so that each gets its own
downloader slot (Scrapy's slot key is the host name). The crawls are spawned in this
process's reactor so that the servers keep answering while they run. Two shared cores:
expect noise of a second or so on every time.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# tests/ is not a package: on the path, the bench runs the very processes and servers the
# tests run (processes.py, servers.py, redis_server.py), not copies that could drift.
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from _common import print_table, run_in_reactor  # noqa: E402
from processes import CrawlerHandle, run_spider  # noqa: E402
from redis_server import RedisServer  # noqa: E402
from servers import RateLimited, SiteServer, answer_later, body  # noqa: E402
from twisted.internet import defer  # noqa: E402
from twisted.internet import reactor as _reactor  # noqa: E402
from twisted.internet.error import ProcessExitedAlready  # noqa: E402
from twisted.internet.task import deferLater  # noqa: E402

reactor: Any = _reactor  # Twisted types the global reactor as a module, not a reactor


def _load_crawlers() -> ModuleType:
    """tests/fleet.py (start_crawler), by its path, as bench/fleet.py loads it."""
    spec = importlib.util.spec_from_file_location("fleet_crawlers", ROOT / "tests" / "fleet.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


start_crawler: Any = _load_crawlers().start_crawler

ROBOTS = "User-agent: *\nDisallow: /private\n"
STOCK_MIDDLEWARE = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "USER_AGENT": "Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example/bot)",
    "CONCURRENT_REQUESTS": 16,
}
OURS: dict[str, Any] = {
    "DOWNLOADER_MIDDLEWARES": {STOCK_MIDDLEWARE: None, "scrapy_robots.RobotsTxtMiddleware": 100},
    "EXTENSIONS": {"scrapy_robots.pace.backoff.PageBackoff": 0},
}
MIDDLEWARES = ["stock", "ours"]
#: Scenario 1's third row, at the smallest delay only: ours with the pace set by the user
#: (DOWNLOAD_DELAY = d, a robots.txt without Crawl-delay), as stock's.
OURS_DOWNLOAD_DELAY = "ours, DOWNLOAD_DELAY"

HOST = "127.0.0.{}"
SITE_1, SITE_2, SITE_3, SLOW_4 = (HOST.format(160 + i) for i in range(4))
FAST_HOSTS = [f"127.0.{block}.{i}" for block in (1, 2) for i in range(1, 101)]

PAGES = 40  # scenarios 1-3
DELAYS = [1.0, 3.0, 10.0]
QUICK_DELAYS = [1.0, 3.0]
SIGNAL_BOUND = 150.0  # a signalled crawl is killed this long after the signal
PATIENCE = 30.0  # the wait for the signal's moment, beyond the pages' own delays
PAUSE = 5  # scenario 2: Retry-After
INTO_PAUSE = 1.0  # scenario 2: the signal, this long after the first 429
LATE = [0.0, 0.5]  # scenario 2: the site's answers, this long after the request
CRAWLERS = 3  # scenario 3
FLEET_DELAY = 3.0
SLOW_DELAY = 3.0  # scenario 4
SLOW_PAGES = 60
FAST_PAGES = 3
FAST_BOUND = 45.0  # scenario 4: the signal at the latest this long after the spawn
FAST_STOP_BOUND = 15.0
#: Runs of each row by default: scenario 1 once (its stock stops take minutes), the others three times.
REPEATS = {1: 1, 2: 3, 3: 3, 4: 3}
QUEUES = {"aware": "scrapy.pqueues.DownloaderAwarePriorityQueue", "fifo": "scrapy.pqueues.ScrapyPriorityQueue"}

Row = dict[str, Any]  # column -> value; a number is aggregated by its median, a bool counted


async def sleep(seconds: float) -> None:
    await deferLater(reactor, seconds, lambda: None)


def kill(handle: CrawlerHandle) -> None:
    try:
        handle.kill()
    except ProcessExitedAlready:
        pass


live: list[CrawlerHandle] = []  # killed at the end if the global deadline stopped the reactor


@dataclass
class Run:
    """One crawl process: its result (the spider's record, exit, log, ended_at), when it was
    spawned and signalled, whether it had to be killed."""

    result: dict[str, Any]
    started: float
    sent: float | None
    killed: bool
    notes: list[str] = field(default_factory=list)

    @property
    def has_record(self) -> bool:
        return self.result["reason"] != "no result"

    @property
    def stop(self) -> float | None:
        """Signal to exit (to the kill if killed), None if never signalled."""
        return None if self.sent is None else self.result["ended_at"] - self.sent

    def stat(self, name: str) -> int | str:
        return int(self.result["stats"].get(name, 0)) if self.has_record else "-"

    def lost(self, urls: Sequence[str]) -> int | str:
        if not self.has_record:
            return "-"
        record = set(self.result["downloaded"]) | set(self.result["ignored"]) | set(self.result["failed"])
        return len(set(urls) - record)

    def reason(self) -> str:
        if self.killed:
            return "killed"
        reason = str(self.result["reason"])
        return reason if self.result["exit"] == 0 else f"{reason}, exit {self.result['exit']}"


def spawn(urls: list[str], cwd: Path, **settings: Any) -> tuple[CrawlerHandle, float]:
    started = time.monotonic()
    handle = run_spider(urls, cwd, **settings)
    live.append(handle)
    return handle, started


async def ended(handle: CrawlerHandle, started: float, sent: float | None, bound: float) -> Run:
    """The crawl's result, or kill it ``bound`` seconds after ``sent`` (after the spawn if
    never signalled)."""
    killer = reactor.callLater(max((sent or started) + bound - time.monotonic(), 0), kill, handle)
    result = await handle.done
    live.remove(handle)
    killed = not killer.active()
    if killer.active():
        killer.cancel()
    run = Run(result, started, sent, killed)
    errors = [line for line in result["log"].splitlines() if " ERROR: " in line]
    if errors:
        run.notes.append(f"{len(errors)} ERROR line(s), the first: {errors[0].split(' ERROR: ', 1)[1][:160]}")
    if not run.has_record and not killed:
        run.notes.append("no record; the log ends: " + " | ".join(result["log"].splitlines()[-3:])[-300:])
    return run


async def signal_when(
    handles: Sequence[CrawlerHandle], ready: Callable[[], bool], patience: float, started: float
) -> tuple[float | None, str]:
    """SIGINT to every crawl once ``ready()``; at ``patience`` s after the spawn if it never
    is; never if a crawl ended first. When it was sent, and a note if not at the moment."""
    while not ready():
        if any(handle.done.called for handle in handles):
            return None, "ended before the signal"
        if time.monotonic() - started > patience:
            note = f"SIGINT at {patience:g} s after the spawn, without the moment"
            break
        await sleep(0.02)
    else:
        note = ""
    sent = time.monotonic()
    for handle in handles:
        handle.signal("INT")
    return sent, note


def before_after(site: SiteServer, sent: float | None) -> tuple[int | str, int | str]:
    if sent is None:
        return len(site.page_hits()), "-"
    return sum(hit.at <= sent for hit in site.page_hits()), sum(hit.at > sent for hit in site.page_hits())


def never_fetched(site: SiteServer, urls: Sequence[str]) -> int:
    return len(set(urls) - {site.url + hit.path for hit in site.page_hits()})


# -- the scenarios ----------------------------------------------------------------------------

Result = tuple[Row, list[str]]  # one row, its notes


async def one_site_stop(middleware: str, delay: float, cwd: Path, bound: float) -> Result:
    """Scenario 1: one paced site, one Ctrl-C after 3 pages (2 at 10 s)."""
    robots = ROBOTS + (f"Crawl-delay: {delay:g}\n" if middleware == "ours" else "")
    own = {"ours": OURS, "stock": {"DOWNLOAD_DELAY": delay}}.get(middleware, {**OURS, "DOWNLOAD_DELAY": delay})
    site = SiteServer(host=SITE_1, robots=body(robots)).start()
    try:
        urls = [f"{site.url}/p{i}" for i in range(PAGES)]
        handle, started = spawn(urls, cwd, **SETTINGS, **own)
        pages = 2 if delay >= 10 else 3
        # Up to 1.5 x the delay per gap (Scrapy's jitter), robots.txt included.
        patience = PATIENCE + 1.5 * delay * (pages + 1)
        sent, note = await signal_when([handle], lambda: len(site.page_hits()) >= pages, patience, started)
        run = await ended(handle, started, sent, bound)
        before, after = before_after(site, sent)
        row: Row = {
            "delay s": f"{delay:g}",
            "middleware": middleware,
            "signal->exit s": run.stop,
            "killed": run.killed,
            "pages before": before,
            "pages after": after,
            "unsent": run.stat("robotstxt/closing/ignored") if middleware != "stock" else "-",
            "lost": run.lost(urls),
            "never fetched": never_fetched(site, urls),
            "finish": run.reason(),
        }
        return row, [note, *run.notes]
    finally:
        await site.stop()


async def after_429(middleware: str, late: float, cwd: Path, bound: float) -> Result:
    """Scenario 2: a Ctrl-C 1 s into the pause a 429 asked for; every page answered ``late``
    seconds after it came."""
    # A request sent before the site's answer could arrive is not inside the pause.
    limiter = RateLimited(limit=3, pause=PAUSE, grace=late + 0.2)
    pages = answer_later(limiter, late) if late else limiter
    site = SiteServer(host=SITE_2, robots=body(ROBOTS), pages=pages).start()
    try:
        urls = [f"{site.url}/p{i}" for i in range(PAGES)]
        own = OURS if middleware == "ours" else {}
        handle, started = spawn(urls, cwd, **SETTINGS, **own)
        sent, note = await signal_when(
            [handle], lambda: limiter.began > 0 and time.monotonic() >= limiter.began + INTO_PAUSE, PATIENCE, started
        )
        if sent is None and limiter.began:
            note = (
                f"ended {handle.done.result['ended_at'] - limiter.began:.2f} s after the first 429, before the signal"
            )
        run = await ended(handle, started, sent, bound)
        before, after = before_after(site, sent)
        # Scrapy's HttpError (an IgnoreRequest): the 429 passed on once the retries were spent.
        record = {**run.result["ignored"], **run.result["failed"]}
        gave_up = sum("non-200" in why for why in record.values()) if run.has_record else "-"
        row: Row = {
            "answers after s": f"{late:g}",
            "middleware": middleware,
            "signal->exit s": run.stop,
            "each s": "-" if run.stop is None else f"{run.stop:.1f}",
            "killed": run.killed,
            "requests before": before,
            "requests after": after,
            "inside pause": len(limiter.inside),
            "429s": limiter.throttled,
            "pages served": len(set(limiter.served)),
            "unsent": run.stat("robotstxt/closing/ignored") if middleware == "ours" else "-",
            "gave up": gave_up,
            "lost": run.lost(urls),
            "finish": run.reason(),
        }
        return row, [note, *run.notes]
    finally:
        await site.stop()


async def fleet_stop(middleware: str, cwd: Path, bound: float) -> Result:
    """Scenario 3: three fleet crawlers on one Crawl-delay 3 site, one Ctrl-C to each."""
    redis = RedisServer().start()  # blocks a moment: no crawl runs yet
    site = SiteServer(host=SITE_3, robots=body(ROBOTS + f"Crawl-delay: {FLEET_DELAY:g}\n")).start()
    try:
        urls = [f"{site.url}/p{i}" for i in range(PAGES)]
        started = time.monotonic()
        handles = [start_crawler(urls[k::CRAWLERS], redis.url) for k in range(CRAWLERS)]
        live.extend(handles)
        pages = 3
        patience = PATIENCE + 1.5 * FLEET_DELAY * (pages + 1)
        sent, note = await signal_when(handles, lambda: len(site.page_hits()) >= pages, patience, started)
        runs = [await ended(handle, started, sent, bound) for handle in handles]
        before, after = before_after(site, sent)
        stops = [run.stop for run in runs]

        def summed(name: str) -> int | str:
            values = [run.stat(name) for run in runs]
            return sum(v for v in values if isinstance(v, int)) if all(isinstance(v, int) for v in values) else "-"

        row: Row = {
            "crawlers": CRAWLERS,
            "signal->exit s": None if sent is None else max(s for s in stops if s is not None),
            "each s": "-" if sent is None else "/".join(f"{s:.1f}" for s in stops if s is not None),
            "killed": any(run.killed for run in runs),
            "pages before": before,
            "pages after": after,
            "unsent": summed("robotstxt/closing/ignored"),
            "requeued": summed("robotstxt/closing/requeued"),
            "never fetched": never_fetched(site, urls),
            "finish": "/".join(run.reason() for run in runs),
        }
        notes = [note, *(f"crawler {i}: {n}" for i, run in enumerate(runs) for n in run.notes)]
        return row, notes
    finally:
        await site.stop()
        redis.stop()


async def fast_beside_slow(queue: str, slow: bool, cwd: Path) -> Result:
    """Scenario 4: 200 fast sites' pages per second, with or without a slow site first."""
    fast = [SiteServer(host=host, robots=body(ROBOTS)).start() for host in FAST_HOSTS]
    paced = SiteServer(host=SLOW_4, robots=body(ROBOTS + f"Crawl-delay: {SLOW_DELAY:g}\n")).start() if slow else None
    try:
        urls = [f"{paced.url}/s{i}" for i in range(SLOW_PAGES)] if paced else []
        urls += [f"{site.url}/f{i}" for site in fast for i in range(FAST_PAGES)]
        total = len(fast) * FAST_PAGES

        def done() -> int:
            return sum(len(site.page_hits()) for site in fast)

        handle, started = spawn(urls, cwd, **SETTINGS, **OURS, SCHEDULER_PRIORITY_QUEUE=QUEUES[queue])
        sent, note = await signal_when([handle], lambda: done() >= total, FAST_BOUND, started)
        run = await ended(handle, started, sent, FAST_STOP_BOUND)
        hits = sorted(hit.at for site in fast for hit in site.page_hits())
        complete = len(hits) == total
        span = hits[-1] - hits[0] if len(hits) > 1 else math.nan
        row: Row = {
            "queue": queue,
            "slow site": "yes" if slow else "no",
            "fast pages": len(hits),
            "first fast s": hits[0] - started if hits else math.nan,
            # Only for a run that fetched every fast page: a part of them says nothing of the rate.
            "last fast s": hits[-1] - started if complete else math.nan,
            "span s": span if complete else math.nan,
            "pages/s": len(hits) / span if complete and span > 0 else math.nan,
            "slow pages": len(paced.page_hits()) if paced else "-",
            "waited": run.stat("robotstxt/pace/waited"),
            "stop s": run.stop,
            "killed": run.killed,
            "finish": run.reason(),
        }
        if len(hits) < total:
            note = f"{len(hits)} of {total} fast pages when signalled at {FAST_BOUND:g} s"
        return row, [note, *run.notes]
    finally:
        await defer.gatherResults([defer.maybeDeferred(site.stop) for site in fast + ([paced] if paced else [])])


# -- the tables -------------------------------------------------------------------------------


def aggregate(rows: list[Row], keys: Sequence[str]) -> list[Row]:
    """One row per key: medians of numbers, ``k/N`` for a bool, distinct strings joined."""
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row)
    merged_rows = []
    for key, group in groups.items():
        merged: Row = dict(zip(keys, key))
        for column in group[0]:
            if column in keys:
                continue
            values = [row[column] for row in group]
            numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
            if all(isinstance(v, bool) for v in values):
                merged[column] = f"{sum(values)}/{len(values)}" if len(values) > 1 else ("yes" if values[0] else "no")
            elif numbers and len(numbers) == len(values):
                # NaN (not measured in that run) left out; all NaN stays NaN.
                known = [v for v in numbers if not math.isnan(v)]
                merged[column] = statistics.median(known) if known else math.nan
            elif all(v is None for v in values):
                merged[column] = None
            elif column == "each s":  # every run's, in order
                merged[column] = " / ".join(str(v) for v in values)
            else:
                merged[column] = " / ".join(dict.fromkeys("-" if v is None else str(v) for v in values))
        merged_rows.append(merged)
    return merged_rows


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.2f}"
    return str(value)


def was_killed(value: Any) -> bool:
    """The aggregated ``killed`` column ("yes", "no", "k/N") says a run was killed."""
    return value == "yes" or (isinstance(value, str) and "/" in value and not value.startswith("0/"))


def show(title: str, rows: list[Row], bound: float | None = None) -> None:
    print(title)
    if not rows:
        print("  (no run)\n")
        return
    headers = list(rows[0])
    cells = []
    for row in rows:
        line = []
        for header in headers:
            text = cell(row[header])
            # A killed crawl's signal->exit is the bound: at least that.
            if header in ("signal->exit s", "stop s") and was_killed(row.get("killed")) and text != "-":
                text = ">" + text
            line.append(text)
        cells.append(line)
    print_table(headers, cells)


def ratio(a: Any, b: Any) -> str:
    if isinstance(a, int | float) and isinstance(b, int | float) and b and not (math.isnan(a) or math.isnan(b)):
        return f"{a / b:.3f}"
    return "-"


def tree_header(tree: Path) -> str:
    """Which scrapy_robots a crawl imports with PYTHONPATH=tree, and the tree's commit."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = "import scrapy, scrapy_robots; print(scrapy_robots.__file__, scrapy.__version__)"
    found = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True
    ).stdout.split()
    commit = subprocess.run(
        ["git", "-C", str(tree), "log", "-1", "--format=%h %s"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(tree), "status", "--porcelain", "--", "scrapy_robots"], capture_output=True, text=True
    ).stdout.strip()
    return (
        f"tree {tree}: {commit[:90]}{' (scrapy_robots/ modified)' if dirty else ''}\n"
        f"crawls import scrapy_robots from {found[0]}, Scrapy {found[1]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=ROOT, help="run the crawls with PYTHONPATH=DIR (default: here)")
    parser.add_argument("--only", type=int, choices=[1, 2, 3, 4], action="append", help="run only this scenario")
    parser.add_argument("--quick", action="store_true", help="scenario 1 at Crawl-delay 1 and 3 only")
    parser.add_argument(
        "--repeat",
        type=int,
        metavar="N",
        help=f"run each row N times: medians (default: {', '.join(f'{n}: {r}' for n, r in REPEATS.items())})",
    )
    parser.add_argument("--middleware", choices=MIDDLEWARES, action="append", help="scenarios 1-2: only this one")
    parser.add_argument(
        "--signal-bound",
        type=float,
        default=SIGNAL_BOUND,
        metavar="S",
        help=f"kill a signalled crawl S seconds after the signal (default {SIGNAL_BOUND:g})",
    )
    args = parser.parse_args()
    tree = args.tree.resolve()
    if not (tree / "scrapy_robots" / "__init__.py").is_file():
        parser.error(f"{tree} has no scrapy_robots/")
    os.environ["PYTHONPATH"] = str(tree)  # every crawl: run_spider's, and start_crawler's after the project
    chosen = sorted(set(args.only or [1, 2, 3, 4]))
    delays = QUICK_DELAYS if args.quick else DELAYS
    middlewares = [m for m in MIDDLEWARES if m in (args.middleware or MIDDLEWARES)]
    bound = args.signal_bound
    longest = {
        1: sum((len(middlewares) + (d == delays[0])) * (PATIENCE + 4.5 * d + bound) for d in delays),
        2: len(LATE) * len(middlewares) * (PATIENCE + bound),
        3: PATIENCE + 6 * FLEET_DELAY + bound,
        4: 4 * (FAST_BOUND + FAST_STOP_BOUND),
    }
    repeats = {n: args.repeat or REPEATS[n] for n in chosen}
    backstop = sum(repeats[n] * longest[n] for n in chosen) + 60
    print(tree_header(tree))
    print(
        f"runs of each row: {', '.join(f'scenario {n}: {r}' for n, r in repeats.items())}; a signalled crawl is "
        f"killed {bound:g} s after the signal (scenario 4: {FAST_STOP_BOUND:g} s)\n"
    )

    tables: dict[int, list[Row]] = {n: [] for n in chosen}
    notes: list[str] = []

    async def run_all(work: Path) -> None:
        count = 0

        def cwd(name: str) -> Path:
            nonlocal count
            count += 1
            path = work / f"{count:03d}-{name}"
            path.mkdir()
            return path

        def progress(text: str) -> None:
            print(f"  {time.strftime('%H:%M:%S')} {text} ...", file=sys.stderr, flush=True)

        def keep(n: int, label: str, result: Result) -> None:
            row, run_notes = result
            tables[n].append(row)
            notes.extend(f"{n} {label}: {note}" for note in run_notes if note)

        # A scenario's repeats one after the other, the rows of a repeat interleaved.
        for _ in range(repeats.get(1, 0)):
            for delay in delays:
                extra = [OURS_DOWNLOAD_DELAY] if delay == delays[0] and "ours" in middlewares else []
                for middleware in middlewares + extra:
                    progress(f"1 delay {delay:g} / {middleware}")
                    result = await one_site_stop(middleware, delay, cwd(f"s1-{middleware}"), bound)
                    keep(1, f"delay {delay:g} / {middleware}", result)
        for _ in range(repeats.get(2, 0)):
            for late in LATE:
                for middleware in middlewares:
                    progress(f"2 after a 429, answers after {late:g} s / {middleware}")
                    result = await after_429(middleware, late, cwd(f"s2-{middleware}"), bound)
                    keep(2, f"answers after {late:g} s / {middleware}", result)
        for _ in range(repeats.get(3, 0)):
            progress("3 fleet / ours")
            keep(3, "fleet", await fleet_stop("ours", cwd("s3"), bound))
        for _ in range(repeats.get(4, 0)):
            for queue in QUEUES:
                for slow in (False, True):
                    progress(f"4 {queue} / slow site {'yes' if slow else 'no'}")
                    label = f"{queue} / slow {'yes' if slow else 'no'}"
                    keep(4, label, await fast_beside_slow(queue, slow, cwd(f"s4-{queue}")))

    with tempfile.TemporaryDirectory(prefix="bench-paced-stop-") as work:
        # run_spider writes its URL and result files with tempfile.mktemp: in the bench's
        # own directory, removed at the end.
        tempfile.tempdir = work
        try:
            timed_out = run_in_reactor(lambda: run_all(Path(work)), backstop)
        finally:
            for handle in live:  # only if the backstop stopped the reactor mid-crawl
                kill(handle)
            tempfile.tempdir = None

    report(tables, repeats)
    for note in notes:
        print(f"  {note}")
    if timed_out:
        print(f"  TIMED OUT after {backstop:g} s: the tables have the runs that finished")


def report(tables: dict[int, list[Row]], repeats: dict[int, int]) -> None:
    def median(n: int) -> str:
        return f" (medians of {repeats[n]})" if repeats[n] > 1 else ""

    if 1 in tables:
        rows = aggregate(tables[1], ["delay s", "middleware"])
        show(
            f"1. One paced site, 40 pages, CONCURRENT_REQUESTS 16, one SIGINT after 3 pages (2 at 10 s){median(1)}",
            rows,
        )
        for delay in dict.fromkeys(row["delay s"] for row in rows):
            by = {row["middleware"]: row for row in rows if row["delay s"] == delay}
            stock = by.pop("stock", None)
            for name, row in by.items() if stock else ():
                print(
                    f"  delay {delay} s, {name} / stock: signal->exit "
                    f"{ratio(row['signal->exit s'], stock['signal->exit s'])}, pages after "
                    f"{ratio(row['pages after'], stock['pages after'])}"
                )
        print()
    if 2 in tables:
        rows = aggregate(tables[2], ["answers after s", "middleware"])
        show(f"2. After a 429 (Retry-After: {PAUSE}), one SIGINT {INTO_PAUSE:g} s into the pause{median(2)}", rows)
        for late in dict.fromkeys(row["answers after s"] for row in rows):
            pair = {row["middleware"]: row for row in rows if row["answers after s"] == late}
            if len(pair) == 2:
                stock_over = pair["stock"]["signal->exit s"] is None
                print(
                    f"  answers after {late} s, ours / stock: signal->exit "
                    f"{ratio(pair['ours']['signal->exit s'], pair['stock']['signal->exit s'])}, pages served "
                    f"{ratio(pair['ours']['pages served'], pair['stock']['pages served'])}, requests inside the pause "
                    f"{ratio(pair['ours']['inside pause'], pair['stock']['inside pause'])}"
                    + (" (stock's crawl was over before the signal)" if stock_over else "")
                )
        print()
    if 3 in tables:
        rows = aggregate(tables[3], ["crawlers"])
        show(f"3. A fleet of {CRAWLERS} on one Crawl-delay {FLEET_DELAY:g} site, one SIGINT to each{median(3)}", rows)
    if 4 in tables:
        rows = aggregate(tables[4], ["queue", "slow site"])
        show(
            f"4. {len(FAST_HOSTS)} fast sites x {FAST_PAGES} pages, with and without a Crawl-delay {SLOW_DELAY:g} "
            f"site's {SLOW_PAGES} pages first, CONCURRENT_REQUESTS 16{median(4)}",
            rows,
        )
        for queue in QUEUES:
            pair = {row["slow site"]: row for row in rows if row["queue"] == queue}
            if len(pair) == 2:
                print(
                    f"  {queue}: with / without the slow site: fast pages/s "
                    f"{ratio(pair['yes']['pages/s'], pair['no']['pages/s'])}, last fast page "
                    f"{ratio(pair['yes']['last fast s'], pair['no']['last fast s'])}"
                )
        print()


if __name__ == "__main__":
    main()
