"""Stopping a crawl while requests wait for robots.txt (issue #11): our middleware and
Scrapy's stock one side by side, each scenario a real `scrapy runspider` process.

    .venv/bin/python bench/stopping.py           # scenarios 1-3 (about 5 minutes: the stock runs are killed at bounds)
    .venv/bin/python bench/stopping.py --long    # and scenario 4 (about 3.5 more minutes)
    .venv/bin/python bench/stopping.py --only 3 --middleware ours   # one scenario (repeatable), one middleware
    .venv/bin/python bench/stopping.py --only 1 --signal-bound 400  # how long a stuck stop really takes

Scenarios, run once for each middleware (1-3 are the ones tests/test_stopping.py asserts):

1. Ctrl-C: 4 healthy sites (robots.txt ``User-agent: *`` / ``Disallow: /private``), 10
   whose robots.txt hangs (accepted, never answered) and 10 whose robots.txt answers 503;
   6 URLs each (/p0 .. /p4 allowed, /private/x disallowed). One SIGINT 0.5 s after the
   healthy sites' allowed pages are fetched and every other site's robots.txt was asked
   for (if that has not happened 30 s after the start, SIGINT then, and a note says so).
   The process is killed 120 s (--signal-bound) after the signal if it has not exited.
2. The same with a JOBDIR; then every robots.txt turns healthy and the same command
   resumes the job. Rows for each run, and one for both runs together.
3. CLOSESPIDER_TIMEOUT = 3 with one healthy site and one 503 site.
4. (--long) One site whose robots.txt answers 503, default settings otherwise (no retry
   settings): how long until the crawl finishes, bounded at 400 s.

Settings for every run: ROBOTSTXT_OBEY, TELNETCONSOLE_ENABLED = False, LOG_LEVEL = INFO,
DOWNLOAD_TIMEOUT = 60 (a hanging robots.txt would hold a crawl this long if nothing
released it), the tests' USER_AGENT; ours adds ROBOTSTXT_TIMEOUT = 60 and replaces the
stock middleware at 100; stock is Scrapy's default DOWNLOADER_MIDDLEWARES.

Columns. Times: signal->exit is from the SIGINT to the process's end as this process sees
it; wall is from the spawn to the end (Scrapy's start-up, about 1-2 s, included).
Counted at the servers: fetched (page requests, robots.txt not included), duplicated (URLs
fetched more than once), disallowed fetched (/private/x, which every robots.txt here
disallows once it can be read), unreachable fetched (pages of a site fetched while its
robots.txt hung or answered 503: RFC 9309 says assume complete disallow), robots.txt
(requests for it). From the spider's own record (tests/spiders/recording.py): ignored
(errback with IgnoreRequest), lost (requested, but neither downloaded, ignored nor failed).

The sites are tests/servers.py's SiteServer on 127.0.0.100 and up (clear of the tests'
127.0.0.2.., bench/crawl_delay.py's .20.. and bench/fleet.py's .40..), fresh for every
run; the crawls are tests/processes.py's run_spider, spawned in this process's reactor so
that the servers keep answering while a crawl runs. Two shared cores: expect noise of a
second or so on every time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# tests/ is not a package: putting it on the path lets the bench run the very processes
# and servers tests/test_stopping.py runs (processes.py, servers.py), not a copy that
# could drift from them.
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from _common import print_table, run_in_reactor  # noqa: E402
from processes import CrawlerHandle, run_spider  # noqa: E402
from servers import Handler, SiteServer, body, hang  # noqa: E402
from twisted.internet import defer  # noqa: E402
from twisted.internet import reactor as _reactor  # noqa: E402
from twisted.internet.task import deferLater  # noqa: E402

reactor: Any = _reactor  # Twisted types the global reactor as a module, not a reactor

ROBOTS = "User-agent: *\nDisallow: /private\n"
PAGES = [f"/p{i}" for i in range(5)] + ["/private/x"]
FIRST_HOST = 100  # 127.0.0.100 and up
OURS = {"scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None, "scrapy_robots.RobotsTxtMiddleware": 100}
SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    # Ours listed by hand, as the README's by-hand setup: the backoff extension beside it.
    "EXTENSIONS": {"scrapy_robots.pace.backoff.PageBackoff": 0},
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "USER_AGENT": "Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example/bot)",
    "DOWNLOAD_TIMEOUT": 60,
}
MIDDLEWARES: dict[str, dict[str, Any]] = {
    "ours": {"DOWNLOADER_MIDDLEWARES": OURS, "ROBOTSTXT_TIMEOUT": 60},
    "stock": {},  # Scrapy's default DOWNLOADER_MIDDLEWARES
}
PATIENCE = 30.0  # longest wait, from the spawn, for the Ctrl-C moment (the tests' too)
SIGNAL_BOUND = 120.0  # a signalled crawl is killed this long after the signal
RESUME_BOUND = 120.0
CLOSESPIDER_BOUND = 60.0
LONG_BOUND = 400.0

HEADERS = [
    "scenario",
    "middleware",
    "signal->exit s",
    "wall s",
    "fetched",
    "ignored",
    "lost",
    "duplicated",
    "disallowed fetched",
    "unreachable fetched",
    "robots.txt",
    "finish reason",
]


async def sleep(seconds: float) -> None:
    await deferLater(reactor, seconds, lambda: None)


@dataclass(frozen=True)
class Seen:
    """What the servers saw: page requests by URL, page requests to sites while their
    robots.txt was unreachable, robots.txt requests."""

    pages: Counter[str]
    unreachable: int
    robots: int

    def __sub__(self, earlier: Seen) -> Seen:
        return Seen(self.pages - earlier.pages, self.unreachable - earlier.unreachable, self.robots - earlier.robots)


@dataclass
class Sites:
    """The servers of one run: healthy, hanging robots.txt, robots.txt answering 503."""

    healthy: list[SiteServer]
    slow: list[SiteServer] = field(default_factory=list)
    down: list[SiteServer] = field(default_factory=list)
    #: Pages fetched from the unreachable sites until they recovered (None: not yet).
    recovered: int | None = None

    @classmethod
    def start(cls, healthy: int, slow: int = 0, down: int = 0) -> Sites:
        hosts = (f"127.0.0.{FIRST_HOST + i}" for i in range(healthy + slow + down))

        def serve(count: int, robots: Callable[[], Handler]) -> list[SiteServer]:
            return [SiteServer(host=next(hosts), robots=robots()).start() for _ in range(count)]

        return cls(
            serve(healthy, lambda: body(ROBOTS)),
            serve(slow, hang),
            serve(down, lambda: body("overloaded", status=503)),
        )

    @property
    def all(self) -> list[SiteServer]:
        return self.healthy + self.slow + self.down

    @property
    def unreachable(self) -> list[SiteServer]:
        return self.slow + self.down

    def urls(self) -> list[str]:
        return [site.url + path for site in self.all for path in PAGES]

    def fetches(self, sites: Sequence[SiteServer] | None = None) -> Counter[str]:
        return Counter(
            site.url + hit.path for site in (self.all if sites is None else sites) for hit in site.page_hits()
        )

    def seen(self) -> Seen:
        unreachable = sum(self.fetches(self.unreachable).values()) if self.recovered is None else self.recovered
        return Seen(self.fetches(), unreachable, sum(site.robots_hits() for site in self.all))

    def recover(self) -> None:
        """Every robots.txt answers as a healthy site's from now on."""
        self.recovered = sum(self.fetches(self.unreachable).values())
        for site in self.unreachable:
            site.robots = body(ROBOTS)

    async def stop(self) -> None:
        await defer.gatherResults([defer.maybeDeferred(site.stop) for site in self.all])


@dataclass
class Run:
    """One crawl process: what its spider recorded and when it started, was signalled, ended."""

    result: dict[str, Any]
    started: float
    bound: float
    sent: float | None = None
    killed: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def has_record(self) -> bool:
        """Whether the spider wrote what became of its requests (a killed crawl does not)."""
        return self.result["reason"] != "no result"

    def lost(self, urls: list[str]) -> set[str]:
        """URLs the spider neither downloaded, nor saw ignored, nor saw fail."""
        record = set(self.result["downloaded"]) | set(self.result["ignored"]) | set(self.result["failed"])
        return set(urls) - record

    def signal_to_exit(self) -> str:
        if self.sent is None:
            return "-"
        if self.killed:
            return f">{self.bound:g} (killed)"
        return f"{self.result['ended_at'] - self.sent:.2f}"

    def wall(self) -> str:
        if self.killed and self.sent is None:
            return f">{self.bound:g} (killed)"
        return f"{self.result['ended_at'] - self.started:.2f}"

    def reason(self) -> str:
        if self.killed:
            return "killed"
        reason = str(self.result["reason"])
        return reason if self.result["exit"] == 0 else f"{reason}, exit {self.result['exit']}"


live: list[CrawlerHandle] = []  # killed at the end if the global deadline stopped the reactor


async def ended(handle: CrawlerHandle, started: float, bound: float, sent: float | None = None) -> Run:
    """The crawl's result, or kill it ``bound`` seconds after ``sent`` (else after the spawn)."""
    killer = reactor.callLater(max((sent or started) + bound - time.monotonic(), 0), handle.kill)
    result = await handle.done
    live.remove(handle)
    run = Run(result, started, bound, sent, killed=not killer.active())
    if killer.active():
        killer.cancel()
    errors = [line for line in result["log"].splitlines() if " ERROR: " in line]
    if errors:
        run.notes.append(
            f"{len(errors)} ERROR line(s) in the log, the first: {errors[0].split(' ERROR: ', 1)[1][:160]}"
        )
    if result["reason"] == "no result":
        run.notes.append(
            "no record from the spider; the log ends: " + " | ".join(result["log"].splitlines()[-3:])[-300:]
        )
    return run


def spawn(urls: list[str], cwd: Path, middleware: str, **settings: Any) -> tuple[CrawlerHandle, float]:
    started = time.monotonic()
    handle = run_spider(urls, cwd, **SETTINGS, **MIDDLEWARES[middleware], **settings)
    live.append(handle)
    return handle, started


async def interrupt_while_waiting(handle: CrawlerHandle, sites: Sites, started: float) -> tuple[float | None, str]:
    """Ctrl-C 0.5 s after the healthy sites' allowed pages are fetched and every other
    site's robots.txt was asked for; at ``PATIENCE`` s after the spawn if that never comes."""

    def state() -> tuple[int, int]:
        allowed = sum(1 for url in sites.fetches(sites.healthy) if "/private" not in url)
        return allowed, sum(1 for site in sites.unreachable if site.robots_hits())

    while state() != (5 * len(sites.healthy), len(sites.unreachable)):
        if handle.done.called:
            return None, "ended before the signal"
        if time.monotonic() - started > PATIENCE:
            pages, asked = state()
            return handle.signal("INT"), (
                f"SIGINT at {PATIENCE:g} s without the moment: {asked}/{len(sites.unreachable)} waiting sites' "
                f"robots.txt asked for, {pages}/{5 * len(sites.healthy)} healthy pages fetched"
            )
        await sleep(0.1)
    await sleep(0.5)
    return handle.signal("INT"), ""


def row(
    scenario: str, middleware: str, seen: Seen, run: Run | None, urls: list[str], lost: object = None
) -> list[object]:
    """One line of the table: ``seen`` at the servers, ``run`` the crawl (None: several runs)."""
    if run is None:
        times: list[object] = ["-", "-"]
        ignored: object = "-"
        reason = "-"
    else:
        times = [run.signal_to_exit(), run.wall()]
        ignored = len(run.result["ignored"]) if run.has_record else "no record"
        reason = run.reason()
        if lost is None:
            lost = len(run.lost(urls)) if run.has_record else "no record"
    return [
        scenario,
        middleware,
        *times,
        sum(seen.pages.values()),
        ignored,
        lost,
        sum(1 for count in seen.pages.values() if count > 1),
        sum(count for url, count in seen.pages.items() if "/private" in url),
        seen.unreachable,
        seen.robots,
        reason,
    ]


def where_lost(sites: Sites, lost: set[str]) -> str:
    """Which kind of site the lost URLs belong to; "" when none is lost."""
    if not lost:
        return ""
    kinds = [("healthy", sites.healthy), ("hanging robots.txt", sites.slow), ("503 robots.txt", sites.down)]
    counts = [
        f"{sum(1 for url in lost if url.startswith(tuple(site.url + '/' for site in group)))} of {label}"
        for label, group in kinds
        if group
    ]
    return f"lost {len(lost)}: " + ", ".join(counts)


# -- the scenarios --------------------------------------------------------------------------

Result = tuple[list[list[object]], list[str]]  # rows and notes


async def ctrl_c(middleware: str, cwd: Path, signal_bound: float) -> Result:
    sites = Sites.start(healthy=4, slow=10, down=10)
    try:
        urls = sites.urls()
        handle, started = spawn(urls, cwd, middleware)
        sent, note = await interrupt_while_waiting(handle, sites, started)
        run = await ended(handle, started, signal_bound, sent)
        lost = where_lost(sites, run.lost(urls)) if run.has_record else ""
        return [row("1 ctrl-c", middleware, sites.seen(), run, urls)], [note, lost, *run.notes]
    finally:
        await sites.stop()


async def ctrl_c_and_resume(middleware: str, cwd: Path, signal_bound: float) -> Result:
    sites = Sites.start(healthy=4, slow=10, down=10)
    try:
        urls = sites.urls()
        jobdir = {"JOBDIR": str(cwd / "job")}
        handle, started = spawn(urls, cwd, middleware, **jobdir)
        sent, note = await interrupt_while_waiting(handle, sites, started)
        first = await ended(handle, started, signal_bound, sent)
        after_first = sites.seen()

        sites.recover()  # the sites come back; the same command resumes the job
        handle, started = spawn(urls, cwd, middleware, **jobdir)
        second = await ended(handle, started, RESUME_BOUND)
        both = sites.seen()
        # What the first run leaves for the resume is not lost yet: judged over both runs.
        left = f"({len(first.lost(urls))} left)" if first.has_record else "no record"
        # A killed first run wrote no record, and the resume's dupefilter skips silently
        # what it had fetched: what was lost over both runs is not known then.
        lost = first.lost(urls) & second.lost(urls) if first.has_record and second.has_record else None
        rows = [
            row("2 jobdir: ctrl-c", middleware, after_first, first, urls, lost=left),
            row("2 jobdir: resume", middleware, both - after_first, second, urls, lost="-"),
            row("2 jobdir: both runs", middleware, both, None, urls, lost="no record" if lost is None else len(lost)),
        ]
        allowed = {url for url in urls if "/private" not in url}
        once = sum(1 for url in allowed if both.pages[url] == 1)
        verdict = f"allowed pages fetched exactly once: {once}/{len(allowed)}; never: " + str(
            sum(1 for url in allowed if not both.pages[url])
        )
        notes = [
            note,
            *first.notes,
            *(f"resume: {n}" for n in second.notes),
            f"both runs: {verdict}",
            where_lost(sites, lost or set()),
        ]
        return rows, notes
    finally:
        await sites.stop()


async def closespider_timeout(middleware: str, cwd: Path, signal_bound: float) -> Result:
    sites = Sites.start(healthy=1, down=1)
    try:
        urls = sites.urls()
        handle, started = spawn(urls, cwd, middleware, CLOSESPIDER_TIMEOUT=3)
        run = await ended(handle, started, CLOSESPIDER_BOUND)
        return [row("3 closespider_timeout=3", middleware, sites.seen(), run, urls)], run.notes
    finally:
        await sites.stop()


async def unreachable_default(middleware: str, cwd: Path, signal_bound: float) -> Result:
    sites = Sites.start(healthy=0, down=1)
    try:
        urls = sites.urls()
        handle, started = spawn(urls, cwd, middleware)
        run = await ended(handle, started, LONG_BOUND)
        times = ", ".join(f"{hit.at - started:.1f}" for hit in sites.down[0].hits if hit.path == "/robots.txt")
        notes = [f"robots.txt asked at {times} s after the spawn", *run.notes]
        return [row("4 503 only, defaults", middleware, sites.seen(), run, urls)], notes
    finally:
        await sites.stop()


Scenario = Callable[[str, Path, float], Any]
SCENARIOS: dict[int, Scenario] = {1: ctrl_c, 2: ctrl_c_and_resume, 3: closespider_timeout, 4: unreachable_default}


def longest(number: int, signal_bound: float) -> float:
    """The longest one run of scenario ``number`` (for one middleware) can take."""
    return {
        1: PATIENCE + signal_bound,
        2: PATIENCE + signal_bound + RESUME_BOUND,
        3: CLOSESPIDER_BOUND,
        4: LONG_BOUND,
    }[number]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--long", action="store_true", help="also scenario 4 (a 503 robots.txt, defaults; minutes)")
    parser.add_argument(
        "--signal-bound",
        type=float,
        default=SIGNAL_BOUND,
        metavar="S",
        help=f"kill a signalled crawl S seconds after the signal (default {SIGNAL_BOUND:g})",
    )
    parser.add_argument("--middleware", choices=list(MIDDLEWARES), action="append", help="run only this one")
    parser.add_argument("--only", type=int, choices=[1, 2, 3, 4], action="append", help="run only this scenario")
    args = parser.parse_args()

    chosen = args.only or [1, 2, 3, *([4] if args.long else [])]
    scenarios = [SCENARIOS[number] for number in sorted(set(chosen))]
    # Every run is bounded on its own; this is the backstop for the whole bench.
    middlewares = [name for name in MIDDLEWARES if name in (args.middleware or MIDDLEWARES)]
    bounds = sum(len(middlewares) * longest(number, args.signal_bound) for number in set(chosen))
    rows: list[list[object]] = []
    notes: list[tuple[str, str, str]] = []

    async def run_all(work: Path) -> None:
        for scenario in scenarios:
            for middleware in middlewares:
                print(f"{scenario.__name__} / {middleware} ...", file=sys.stderr, flush=True)
                cwd = work / f"{scenario.__name__}-{middleware}"  # the crawl's working directory
                cwd.mkdir()
                scenario_rows, scenario_notes = await scenario(middleware, cwd, args.signal_bound)
                rows.extend(scenario_rows)
                notes.extend((str(scenario_rows[0][0]).split(":")[0], middleware, n) for n in scenario_notes if n)

    with tempfile.TemporaryDirectory(prefix="bench-stopping-") as work:
        # run_spider writes its URL and result files with tempfile.mktemp: keep them in
        # the bench's own directory, removed at the end.
        tempfile.tempdir = work
        try:
            timed_out = run_in_reactor(lambda: run_all(Path(work)), bounds + 60)
        finally:
            for handle in live:  # only if the global deadline stopped the reactor mid-crawl
                handle.kill()
            tempfile.tempdir = None

    print_table(HEADERS, rows)
    for scenario, middleware, note in notes:
        print(f"  {scenario} / {middleware}: {note}")
    if timed_out:
        print(f"  TIMED OUT after {bounds + 60:g} s: the table has the runs that finished")


if __name__ == "__main__":
    main()
