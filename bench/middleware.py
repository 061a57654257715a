"""Per-request cost of obeying robots.txt: a real crawl with the middleware on, next to
the same crawl with robots.txt off.

    .venv/bin/python bench/middleware.py            # 20 sites x 100 pages, 5 runs (about 2 min)
    .venv/bin/python bench/middleware.py --quick    # 10 sites x 100 pages, 3 runs (about 30 s)

Five crawls of the same pages, each in its own subprocess of this script (``--one MODE``
prints one JSON line), so that each gets a fresh reactor and fresh caches:

- ``off``: ROBOTSTXT_OBEY = False, the anchor;
- ``noop``: the same plus an async middleware that does nothing, where ours sits: what
  Scrapy charges any such middleware, apart from the middleware's own work;
- ``stock``: Scrapy's own RobotsTxtMiddleware, ROBOTSTXT_OBEY = True (Protego);
- ``ours``: scrapy_robots.RobotsTxtMiddleware with its default parser (RFC9309Parser);
- ``ours-protego``: the same with ROBOTSTXT_PARSER = ProtegoParser.

The sites are tests/servers.py's SiteServer, one per 127.0.0.60+ address (each its own
downloader slot), served by one more subprocess (``--serve``) for the whole run: the
crawler's CPU time is then the crawler's alone, not the servers'. Each crawl reports
the CPU time (time.process_time) and the wall time of its ``crawl()`` call; runs are
interleaved (off, noop, stock, ours, ours-protego, off, ...) so that a noisy neighbour
weighs on every mode alike, and the table shows medians.

Then, in this process, the cost of one check on a cache hit, without the crawl around
it: our ``cache.get(site)`` + ``verdict(entry, request)``, and the whole of our
``process_request`` (driven synchronously: on a hit it never suspends), next to the
stock middleware's ``process_request_2(rp, request)`` and its whole ``process_request``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # tests/servers.py and tests/crawling.py
sys.path.insert(0, str(ROOT / "bench"))

from _common import median_seconds, print_table, run_in_reactor  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

TIMEOUT = 115.0  # the whole run: servers, every crawl, the micro-measurement
FIRST_HOST = 60  # 127.0.0.60 and up: clear of the tests (2+), crawl_delay.py (20+), fleet.py (40+)
# Allows every page the crawl asks for, so that every mode downloads the same pages;
# the rules are still matched on each request (the Disallow lines and the other group
# are what a parser has to look through).
ROBOTS = """\
User-agent: *
Disallow: /private/
Disallow: /cart
Disallow: /*?sessionid=
Disallow: /search
Allow: /private/public/

User-agent: BadBot
Disallow: /
"""
OURS_PROTEGO = "scrapy_robots.parsers.ProtegoParser"
STOCK_COUNTING = "__main__.CountingStockMiddleware"  # below; the child runs this file as __main__
NOOP = "__main__.NoopMiddleware"
MODES: dict[str, dict[str, Any]] = {
    "off": {"ROBOTSTXT_OBEY": False},
    "noop": {"ROBOTSTXT_OBEY": False, "DOWNLOADER_MIDDLEWARES": {NOOP: 100}},
    "stock": {
        "ROBOTSTXT_OBEY": True,
        "DOWNLOADER_MIDDLEWARES": {
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            STOCK_COUNTING: 100,
        },
    },
    "ours": {"ROBOTSTXT_OBEY": True},  # + crawling.OURS, below
    "ours-protego": {"ROBOTSTXT_OBEY": True, "ROBOTSTXT_PARSER": OURS_PROTEGO},
}
LABELS = {
    "off": "ROBOTSTXT_OBEY=False (anchor)",
    "noop": "robots.txt off + a no-op async middleware",
    "stock": "Scrapy's RobotsTxtMiddleware (Protego)",
    "ours": "ours, RFC9309Parser (default)",
    "ours-protego": "ours, ProtegoParser",
}


# -- the servers (a subprocess for the whole run) -------------------------------------


def serve(sites: int) -> None:
    """Serve the sites until stdin closes; print their base URLs as one JSON line."""
    import threading

    from servers import SiteServer, body
    from twisted.internet import reactor as _reactor

    reactor: Any = _reactor
    servers = [SiteServer(host=f"127.0.0.{FIRST_HOST + i}", robots=body(ROBOTS)).start() for i in range(sites)]
    print(json.dumps([server.url for server in servers]), flush=True)
    # The parent closes our stdin when it is done (or dies): stop then.
    threading.Thread(target=lambda: (sys.stdin.read(), reactor.callFromThread(reactor.stop)), daemon=True).start()
    reactor.run()


# -- one crawl (a subprocess) ---------------------------------------------------------


class NoopMiddleware:
    """An async downloader middleware that does nothing, where ours sits (100): what any
    such middleware costs per request in Scrapy's middleware manager (ensure_awaitable,
    the coroutine, the loop over methods), apart from the work of the middleware."""

    async def process_request(self, request: Any, spider: Any = None) -> None:
        return None


def _counting_stock_class() -> type:
    from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

    class CountingStockMiddleware(RobotsTxtMiddleware):
        """The stock middleware, counting the requests it lets through unchecked.

        Its robot_parser() hands the parser to the first request that waited for
        robots.txt and None ("allow") to the others, which skip the parser: the stock
        figures include that shortcut, so the table says how many took it. The count
        costs one Python call per request, a fraction of a microsecond.
        """

        unchecked = 0

        def process_request_2(self, rp: Any, request: Any) -> None:
            if rp is None:
                CountingStockMiddleware.unchecked += 1
            super().process_request_2(rp, request)

    return CountingStockMiddleware


def __getattr__(name: str) -> Any:
    # STOCK_COUNTING names this module's class; build it only when Scrapy loads it, so
    # that the parent never imports Scrapy's middleware module for nothing.
    if name == "CountingStockMiddleware":
        globals()[name] = cls = _counting_stock_class()
        return cls
    raise AttributeError(name)


def run_one(mode: str, bases: list[str], pages: int, timeout: float) -> dict[str, Any]:
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")

    # Every mode imports every middleware and parser module before the clock starts:
    # a first import inside crawl() would be counted as the mode's cost per page.
    import protego  # noqa: F401
    import scrapy.downloadermiddlewares.robotstxt
    import scrapy.robotstxt  # noqa: F401
    from crawling import BASE_SETTINGS, OURS, RecordingSpider
    from scrapy.crawler import CrawlerRunner

    import scrapy_robots.middleware
    import scrapy_robots.parsers.protego
    import scrapy_robots.parsers.rfc9309  # noqa: F401

    settings: dict[str, Any] = {
        **BASE_SETTINGS,
        "DOWNLOADER_MIDDLEWARES": OURS if mode.startswith("ours") else {},
        **MODES[mode],
        # Nothing but the crawl: many requests in flight, no delay, no per-request logging.
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
        "DOWNLOAD_DELAY": 0,
        "LOG_LEVEL": "WARNING",
    }
    # Round-robin over the sites, as a broad crawl sees them.
    urls = [f"{base}/page{n}" for n in range(pages) for base in bases]
    result: dict[str, Any] = {"mode": mode, "timed_out": False}
    # The steady state: from the response at 20 % of the pages to the one at 80 %. It
    # leaves out start-up, the robots.txt fetches and shutdown, which are per crawl or
    # per site, not per request, and are where most of the run-to-run noise is.
    window = (len(urls) // 5, len(urls) * 4 // 5)
    marks: dict[int, tuple[float, float]] = {}

    class MarkingSpider(RecordingSpider):
        def parse(self, response: Any) -> None:
            super().parse(response)
            if len(self.downloaded) in window:
                marks[len(self.downloaded)] = (time.process_time(), time.perf_counter())

    async def main() -> None:
        crawler = CrawlerRunner(settings).create_crawler(MarkingSpider)
        # CPU of this process only (the servers run elsewhere), from the crawl's start
        # (engine, middlewares, robots.txt fetches included) to its end.
        cpu, wall = time.process_time(), time.perf_counter()
        await crawler.crawl(urls=urls)
        result["cpu"], result["wall"] = time.process_time() - cpu, time.perf_counter() - wall
        spider = crawler.spider
        assert isinstance(spider, RecordingSpider)
        result["pages"] = len(spider.downloaded)
        result["ignored"] = len(spider.ignored)
        result["failed"] = len(spider.failed)
        if len(marks) == 2:
            (cpu0, wall0), (cpu1, wall1) = marks[window[0]], marks[window[1]]
            result["steady"] = {"pages": window[1] - window[0], "cpu": cpu1 - cpu0, "wall": wall1 - wall0}
        result["robots_fetches"] = crawler.stats.get_value("robotstxt/request_count", 0)
        if mode == "stock":
            result["unchecked"] = __getattr__("CountingStockMiddleware").unchecked

    result["timed_out"] = run_in_reactor(main, timeout)
    return result


def spawn(mode: str, bases: list[str], pages: int, deadline: float) -> dict[str, Any]:
    budget = deadline - time.monotonic()
    if budget < 5:
        raise TimeoutError(f"out of time before the {mode} crawl")
    command = [
        sys.executable,
        __file__,
        "--one",
        mode,
        "--bases",
        json.dumps(bases),
        "--pages",
        str(pages),
        "--timeout",
        f"{budget - 3:.1f}",
    ]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, timeout=budget, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the micro-measurement (this process) ---------------------------------------------


def micro(count: int, repeats: int) -> list[list[str]]:
    """µs per call on a cache hit, median of ``repeats`` passes over ``count`` requests."""
    from crawling import BASE_SETTINGS
    from scrapy import Request
    from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as StockMiddleware
    from scrapy.utils.httpobj import urlparse_cached
    from scrapy.utils.misc import build_from_crawler, load_object
    from scrapy.utils.test import get_crawler

    from scrapy_robots import RobotsTxtMiddleware
    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.status.policy import Action
    from scrapy_robots.status.result import site_of
    from scrapy_robots.verdict import verdict

    base = f"http://127.0.0.{FIRST_HOST}:8000"
    # All allowed (a denial raises IgnoreRequest in both middlewares: another cost).
    paths = ["/page{}", "/private/public/doc{}", "/products/{}?color=red", "/a/b/c/d/{}.html", "/carpet{}"]
    requests = [Request(base + paths[i % len(paths)].format(i)) for i in range(count)]
    for request in requests:
        # In a crawl the downloader has parsed the URL (its slot key) before any
        # middleware sees the request: the parse is cached, for both middlewares.
        urlparse_cached(request)
    body = ROBOTS.encode()

    def ours(parser: str | None) -> Any:
        crawler = get_crawler(settings_dict={**BASE_SETTINGS, **({"ROBOTSTXT_PARSER": parser} if parser else {})})
        mw = RobotsTxtMiddleware(crawler)
        now = time.time()
        # What a fetch leaves in the hot tier after a 200: the entry made ready by the reader.
        entry = RobotsEntry(
            site=site_of(requests[0]),
            action=Action.PARSE,
            fetched_at=now,
            expires_at=now + 86400,
            status=200,
            size=len(body),
            body=body,
            url=base + "/robots.txt",
        )
        mw.cache.put(mw.sites.reader.ready(entry))
        return mw

    def stock() -> Any:
        crawler = get_crawler(settings_dict=BASE_SETTINGS)
        mw = StockMiddleware(crawler)
        # What robot_parser() keeps after the fetch: Scrapy's parser, keyed by netloc.
        mw._parsers[urlparse_cached(requests[0]).netloc] = build_from_crawler(
            load_object(crawler.settings["ROBOTSTXT_PARSER"]), crawler, body
        )
        return mw

    def drive(make: Callable[[Any], Coroutine[Any, Any, None]]) -> Callable[[], None]:
        def run() -> None:
            for request in requests:
                coroutine = make(request)
                try:
                    coroutine.send(None)
                except StopIteration:
                    continue
                raise AssertionError("process_request suspended on a cache hit")

        return run

    def verdicts(mw: Any) -> Callable[[], None]:
        site = site_of(requests[0])

        def run() -> None:
            lookup, config = mw.cache.get, mw.config
            for request in requests:
                verdict(lookup(site), request, config)

        return run

    def process_request_2(mw: Any) -> Callable[[], None]:
        rp = next(iter(mw._parsers.values()))

        def run() -> None:
            check = mw.process_request_2
            for request in requests:
                check(rp, request)

        return run

    def each(run: Callable[[], None]) -> float:
        run()  # warm-up: our parser compiles the agent's rules on its first check
        return median_seconds(run, repeats) / count * 1e6

    stock_mw, ours_mw, protego_mw = stock(), ours(None), ours(OURS_PROTEGO)
    stock_check = each(process_request_2(stock_mw))
    stock_whole = each(drive(stock_mw.process_request))
    rows: list[tuple[str, float, float]] = [
        ("stock: process_request_2(rp, request)", stock_check, stock_check),
        ("ours, RFC9309Parser: cache.get + verdict", each(verdicts(ours_mw)), stock_check),
        ("ours, ProtegoParser: cache.get + verdict", each(verdicts(protego_mw)), stock_check),
        ("stock: whole process_request", stock_whole, stock_whole),
        ("ours, RFC9309Parser: whole process_request", each(drive(ours_mw.process_request)), stock_whole),
        ("ours, ProtegoParser: whole process_request", each(drive(protego_mw.process_request)), stock_whole),
    ]
    return [[name, f"{us:.2f}", f"{us / anchor:.2f}x"] for name, us, anchor in rows]


# -- the report (the parent process) --------------------------------------------------


def spread(samples: list[tuple[int, float, float]]) -> str:
    """Half the range of the runs' CPU per page, relative to their median: the noise a
    difference between two modes has to stand out of."""
    per_page = [cpu / pages for pages, cpu, _ in samples]
    if len(per_page) < 2:
        return "-"
    return f"±{(max(per_page) - min(per_page)) / 2 / statistics.median(per_page):.1%}"


def report(
    title: str, measured: dict[str, list[tuple[int, float, float]]], fetches: dict[str, float] | None = None
) -> None:
    """One table: per mode, medians over its runs of (pages, CPU s, wall s)."""

    def median_rate(samples: list[tuple[int, float, float]], index: int) -> float:
        # Seconds per page, run by run, then the median: the runs' windows may differ by a page.
        return statistics.median(sample[index] / sample[0] for sample in samples) if samples else float("nan")

    anchor_cpu, anchor_wall = median_rate(measured["off"], 1), median_rate(measured["off"], 2)
    headers = ["mode", "pages/s", "vs anchor", "CPU s / 1,000 pages", "vs anchor", "added CPU µs / page", "CPU spread"]
    if fetches is not None:
        headers.append("robots.txt fetches")
    table = []
    for mode, samples in measured.items():
        cpu, wall = median_rate(samples, 1), median_rate(samples, 2)
        row: list[object] = [
            LABELS[mode],
            f"{1 / wall:.0f}",
            f"{anchor_wall / wall:.2f}x",
            f"{cpu * 1000:.3f}",
            f"{cpu / anchor_cpu:.3f}x",
            f"{(cpu - anchor_cpu) * 1e6:+.0f}",
            spread(samples),
        ]
        if fetches is not None:
            row.append(f"{fetches[mode]:.0f}")
        table.append(row)
    print(title)
    print_table(headers, table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=20)
    parser.add_argument("--pages", type=int, default=100, help="pages per site")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="10 sites x 100 pages, 3 runs")
    parser.add_argument("--one", choices=list(MODES), help=argparse.SUPPRESS)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--bases", help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    if args.one:
        print(json.dumps(run_one(args.one, json.loads(args.bases), args.pages, args.timeout)))
        return
    if args.quick:
        args.sites, args.pages, args.runs = 10, 100, 3
    if not 1 <= args.sites <= 190:
        parser.error("1 to 190 sites (127.0.0.60 .. 127.0.0.249)")

    deadline = time.monotonic() + TIMEOUT
    total = args.sites * args.pages
    print(
        f"{args.sites} sites x {args.pages} pages = {total} pages per crawl, {args.runs} runs of each mode, "
        f"interleaved; CONCURRENT_REQUESTS=64 (16 per site), no delay, LOG_LEVEL=WARNING,\n"
        f"~40-byte pages, a 9-line robots.txt that allows every page asked. Servers in a separate process; "
        f"CPU = the crawler process's time.process_time() over crawl().\n"
    )
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(args.sites)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        bases = json.loads(server.stdout.readline())
        runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
        for _ in range(args.runs):
            for mode in MODES:
                runs[mode].append(spawn(mode, bases, args.pages, deadline))
                print(f"  {mode}: {runs[mode][-1]['cpu']:.2f} s CPU", file=sys.stderr)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()

    problems = []
    for mode, results in runs.items():
        pages = sorted({run["pages"] for run in results})
        if pages != [total] or any(run["timed_out"] or run["failed"] or run["ignored"] for run in results):
            problems.append(
                f"{mode}: pages {pages}, "
                + ", ".join(f"{key} {sum(run[key] for run in results)}" for key in ("timed_out", "failed", "ignored"))
            )
    report(
        "Whole crawl: crawl() call to its return (start-up, robots.txt fetches, shutdown included)",
        {mode: [(total, run["cpu"], run["wall"]) for run in results] for mode, results in runs.items()},
        {mode: statistics.median(run["robots_fetches"] for run in results) for mode, results in runs.items()},
    )
    report(
        "Steady state: from the response at 20 % of the pages to the one at 80 % (the cost per request)",
        {
            mode: [
                (run["steady"]["pages"], run["steady"]["cpu"], run["steady"]["wall"])
                for run in results
                if "steady" in run
            ]
            for mode, results in runs.items()
        },
    )
    if problems:
        print("  INCOMPLETE: " + "; ".join(problems))
    unchecked = [run["unchecked"] for run in runs["stock"]]
    print(
        f"  Scrapy's middleware lets every request that waits for robots.txt behind the first of its site through\n"
        f"  unchecked (it hands the parser to the first waiter only); its figures include that shortcut, taken by\n"
        f"  {statistics.median(unchecked):.0f} of {total} requests per crawl here "
        f"(median; runs: {', '.join(map(str, unchecked))})."
    )
    print(
        "  Every run's whole-crawl CPU s: "
        + "; ".join(f"{mode} " + " ".join(f"{run['cpu']:.2f}" for run in results) for mode, results in runs.items())
    )
    print()

    count, repeats = (5_000, 5) if args.quick else (10_000, 7)
    print(
        f"One check on a cache hit, in-process: µs per call, median of {repeats} passes over {count:,} requests to "
        f"one site\n(URL already parsed, as the downloader leaves it; the robots.txt above; agent FooBot)"
    )
    print_table(["what is timed", "µs/call", "vs stock"], micro(count, repeats))


if __name__ == "__main__":
    main()
