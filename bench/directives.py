"""Page directives (#33): what reading a page's robots directives costs, per page and in a crawl.

    .venv/bin/python bench/directives.py                  # per-page costs, 3 x 3 crawls, valgrind (~5 min)
    .venv/bin/python bench/directives.py --quick          # about a minute: smaller crawls, no valgrind
    .venv/bin/python bench/directives.py --pages 5000 --no-instructions
    .venv/bin/python bench/directives.py --only pages     # part 1 alone

Part 1, in-process: ``DirectivesMiddleware.read(response)`` (the headers of every response,
the head's meta tags of an HTML one) on real ``HtmlResponse`` / ``Response`` objects, over
pages of several head and body sizes, with and without robots meta tags and headers, and a
PDF; then ``links.nofollow_only(response)`` (the ``rel="nofollow"`` step, run when the
spider yields a request from a page whose body says ``nofollow``) cold (it builds the lxml
document) and with the document already built by the spider. The anchor, on the same
page: ``response.css("a::attr(href)").getall()`` on a fresh response (document built: what a
spider that follows links pays anyway), and on one whose document is built; beside them, a
sketch of the same answer from one walk of the ``<a>`` and ``<area>`` elements. Each figure
is the median of 3 rounds of many calls, in microseconds per call.

Part 2, real crawls: the same crawl of ``--pages`` pages on ``--sites`` local sites
(bench/_directives_site.py: 30-170 KB pages, heads with meta tags, half the pages with
``rel="nofollow"`` links, 1 in 10 ``noindex``, 1 in 10 ``nofollow``, 1 in 10 with headers)
by a spider that follows every same-site link and yields one item per page, with the
add-on (``ADDONS = {"scrapy_robots.Addon": 0}``) and ``ROBOTSTXT_DIRECTIVES = False``
(the anchor), ``True``, and ``True`` with ``ROBOTSTXT_DIRECTIVES_REL_NOFOLLOW = False``; each
crawl a subprocess, its CPU (user + system, from wait4) and wall, medians of 3 rounds (each
round in another order), ratios to the anchor, round by round too. With valgrind
installed (and without ``--no-instructions`` or ``--quick``), one more crawl of each kind of
``--instruction-pages`` pages under cachegrind counts the instructions it executes
(bench/broad.py's machinery): the same count to 0.1 % from one run to the next, where the
CPU seconds of this shared machine scatter by 10-20 %.
"""

from __future__ import annotations

import argparse
import compileall
import gc
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import print_table  # noqa: E402
from _directives_site import html_page  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

USER_AGENT = "Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example/bot)"
URL = "https://example.com/articles/page.html"


# -- part 1: per page, in-process -------------------------------------------------------


@dataclass
class Page:
    label: str
    body: bytes
    headers: dict[bytes, bytes] = field(default_factory=dict)
    html: bool = True


def pages() -> list[Page]:
    """The set read by ``read()``: head sizes 1, 8, 40 and 70 KB (past the 64 KiB scanned),
    bodies of 50-200 KB, robots meta tags or not, headers or not, and a PDF."""
    robots = [("robots", "noindex, nofollow")]
    both = [("robots", "noarchive"), ("foobot", "noindex")]
    xrt = {b"X-Robots-Tag": b"googlebot: noindex, nofollow, foobot: noarchive"}
    rt = {b"Robots-Tag": b"*;nosnippet, FooBot;noindex"}
    links = [f"/p{i}.html" for i in range(60)]
    html = {b"Content-Type": b"text/html; charset=utf-8"}
    return [
        Page("head 1 KB, body 50 KB, no directives", html_page(1_000, 50_000, links=links), html),
        Page("head 1 KB, body 50 KB, meta robots", html_page(1_000, 50_000, robots, links), html),
        Page("head 8 KB, body 100 KB, no directives", html_page(8_000, 100_000, links=links), html),
        Page("head 8 KB, body 100 KB, meta robots + foobot", html_page(8_000, 100_000, both, links), html),
        Page("head 8 KB, body 100 KB, X-Robots-Tag", html_page(8_000, 100_000, links=links), {**html, **xrt}),
        Page(
            "head 8 KB, body 100 KB, both headers + meta", html_page(8_000, 100_000, both, links), {**html, **xrt, **rt}
        ),
        Page(
            "head 40 KB, body 150 KB, meta at head's end",
            html_page(40_000, 150_000, robots, links, meta_last=True),
            html,
        ),
        Page("head 70 KB (past 64 KiB), body 200 KB, no meta", html_page(70_000, 200_000, links=links), html),
        Page(
            "PDF 100 KB, no header", b"%PDF-1.7\n" + os.urandom(100_000), {b"Content-Type": b"application/pdf"}, False
        ),
        Page(
            "PDF 100 KB, X-Robots-Tag",
            b"%PDF-1.7\n" + os.urandom(100_000),
            {b"Content-Type": b"application/pdf", b"X-Robots-Tag": b"noindex, noarchive"},
            False,
        ),
    ]


def response(page: Page) -> Any:
    from scrapy import Request
    from scrapy.http import HtmlResponse, Response

    request = Request(URL, headers={"User-Agent": USER_AGENT})
    kind = HtmlResponse if page.html else Response
    return kind(URL, body=page.body, headers=page.headers, request=request)


def per_call(run: Callable[[Any], object], make: Callable[[], Any], calls: int, fresh: bool, rounds: int = 3) -> float:
    """Median over ``rounds`` of the µs per call of ``run(response)``: on ``calls`` fresh
    responses (``fresh``: nothing cached on them) or ``calls`` times on one."""
    results = []
    for _ in range(rounds):
        subjects = [make() for _ in range(calls)] if fresh else [make()] * calls
        gc.collect()
        start = time.perf_counter()
        for subject in subjects:
            run(subject)
        results.append((time.perf_counter() - start) / calls * 1e6)
        del subjects
    return statistics.median(results)


def spider_links(response: Any) -> object:
    return response.css("a::attr(href)").getall()


def warm(page: Page) -> Callable[[], Any]:
    """A response whose lxml document is built, as the spider's selectors leave it."""

    def make() -> Any:
        built = response(page)
        built.selector  # noqa: B018 - building the document is the point
        return built

    return make


def part_one(scale: float) -> None:
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from scrapy_robots.directives.links import nofollow_only
    from scrapy_robots.directives.middleware import DirectivesMiddleware

    crawler = get_crawler(Spider, {"ADDONS": {"scrapy_robots.Addon": 0}, "USER_AGENT": USER_AGENT})
    middleware = DirectivesMiddleware(crawler)
    reads, cold = max(50, int(2_000 * scale)), max(10, int(100 * scale))

    rows = []
    for page in pages():
        found = middleware.read(response(page))
        read_us = per_call(middleware.read, lambda page=page: response(page), reads, fresh=False)
        if page.html:
            anchor = per_call(spider_links, lambda page=page: response(page), cold, fresh=True)
            ratio = f"{read_us / anchor:.3f}"
        else:
            anchor, ratio = float("nan"), "-"
        rows.append(
            [
                page.label,
                f"{len(page.body) / 1024:.0f}",
                ",".join(found.names) or "-",
                f"{read_us:.1f}",
                f"{anchor:.0f}",
                ratio,
            ]
        )
    print(
        "DirectivesMiddleware.read(response), per response (the crawler's product token: foobot). "
        "Anchor: response.css('a::attr(href)').getall() on a fresh response of the same page "
        "(the lxml document built, as a spider that follows links pays anyway). µs, medians of 3 rounds "
        f"of {reads:,} reads / {cold:,} fresh responses.\n"
    )
    print_table(["page", "KiB", "applies", "read() µs", "anchor µs", "read / anchor"], rows)

    links = [f"/p{i}.html" for i in range(60)]
    with_word = Page(
        "50 KB, 60 links, 5 rel=nofollow",
        html_page(4_000, 50_000, links=links, nofollow_links=links[-5:] + ["http://ads.example/"]),
    )
    with_word_big = Page(
        "150 KB, 60 links, 5 rel=nofollow",
        html_page(8_000, 150_000, links=links, nofollow_links=links[-5:] + ["http://ads.example/"]),
    )
    without = Page("150 KB, 60 links, no 'nofollow' in the body", html_page(8_000, 150_000, links=links))
    rows = []
    for page in (with_word, with_word_big, without):
        page.headers = {b"Content-Type": b"text/html; charset=utf-8"}
        fresh = lambda page=page: response(page)  # noqa: E731
        figures = {
            "cold": per_call(nofollow_only, fresh, cold, fresh=True),
            "warm": per_call(nofollow_only, warm(page), cold, fresh=True),
            "anchor cold": per_call(spider_links, fresh, cold, fresh=True),
            "anchor warm": per_call(spider_links, warm(page), cold, fresh=True),
            "extractor": per_call(extractor_nofollow_only, warm(page), cold, fresh=True),
        }
        found = len(nofollow_only(response(page)))
        same = extractor_nofollow_only(warm(page)()) == nofollow_only(response(page))
        rows.append(
            [
                page.label,
                str(found),
                f"{figures['cold']:.0f}",
                f"{figures['warm']:.0f}",
                f"{figures['anchor cold']:.0f}",
                f"{figures['anchor warm']:.0f}",
                f"{figures['warm'] / figures['anchor cold']:.2f}",
                f"{figures['warm'] / figures['anchor warm']:.2f}",
                f"{figures['extractor']:.0f}" + ("" if same else " (NOT the same URLs)"),
            ]
        )
    print(
        "links.nofollow_only(response): the rel=nofollow step (one walk of the document's <a> and <area> "
        "elements, lxml's iter), on a fresh response "
        "(cold: it builds the lxml document) and on one whose document the spider built (warm). "
        "Anchor: response.css('a::attr(href)').getall(), cold and warm. µs per response, medians of 3 rounds "
        f"of {cold:,} responses. LinkExtractor, warm: the same answer from Scrapy's LinkExtractor (its walk "
        "of every element in Python), the package's first version.\n"
    )
    print_table(
        [
            "page",
            "URLs only nofollow",
            "cold µs",
            "warm µs",
            "anchor cold µs",
            "anchor warm µs",
            "warm / anchor cold",
            "warm / anchor warm",
            "LinkExtractor, warm µs",
        ],
        rows,
    )
    body = without.body
    search = per_call(_NOFOLLOW.search, lambda: body, reads, fresh=False)
    lowered = per_call(lambda b: b.lower().find(b"nofollow"), lambda: body, reads, fresh=False)
    print(
        f"Of which the byte search for 'nofollow' ({len(body) / 1024:.0f} KiB page without it), every HTML page "
        f"that yields a request: body.lower().find(b'nofollow'), the package's: {lowered:.0f} µs; a regular "
        f"expression with re.I, its first version: {search:.0f} µs.\n"
    )


_NOFOLLOW = re.compile(rb"nofollow", re.I)


def extractor_nofollow_only(response: Any) -> frozenset[str]:
    """``links.nofollow_only``'s answer through Scrapy's ``LinkExtractor`` (the first version)."""
    from scrapy.linkextractors import LinkExtractor

    from scrapy_robots.directives.links import key

    if _NOFOLLOW.search(response.body) is None:
        return frozenset()
    nofollow: set[str] = set()
    followed: set[str] = set()
    extractor = LinkExtractor(tags=("a", "area"), attrs=("href",), deny_extensions=[], unique=False)
    for link in extractor.extract_links(response):
        (nofollow if link.nofollow else followed).add(key(link.url))
    return frozenset(nofollow - followed)


# -- part 2: crawls (subprocesses) ----------------------------------------------------------


def crawl(config: dict[str, Any]) -> None:
    """One crawl as ``config`` says; what it saw goes to ``config["result"]``."""
    from scrapy import Request, Spider
    from scrapy.crawler import CrawlerProcess

    class FollowSpider(Spider):
        name = "follow"

        async def start(self) -> Any:
            for base in config["bases"]:  # filtered as any other (start_urls are not): each page once
                yield Request(f"{base}/p0.html", self.parse)

        def parse(self, response: Any) -> Any:
            for href in response.css("a::attr(href)").getall():
                if href.startswith("/"):
                    yield response.follow(href, self.parse)
            yield {"url": response.url, "title": response.css("title::text").get()}

    process = CrawlerProcess(config["settings"])
    crawler = process.create_crawler(FollowSpider)
    start = time.perf_counter()
    process.crawl(crawler)
    process.start()
    wall = time.perf_counter() - start
    stats = {key: value for key, value in crawler.stats.get_stats().items() if isinstance(value, (int, float))}
    Path(config["result"]).write_text(json.dumps({"wall": wall, "stats": stats}))


@dataclass
class Run:
    kind: str
    wall: float = float("nan")
    cpu: float = float("nan")
    instructions: int = 0
    exit: int | None = None
    served: dict[str, int] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def problems(self) -> list[str]:
        found = [] if self.exit == 0 else [f"exit {self.exit}"]
        if not self.stats:
            return [*found, "no result"]
        if self.stats.get("log_count/ERROR"):
            found.append(f"{self.stats['log_count/ERROR']} errors logged")
        if self.served.get("other"):
            found.append(f"{self.served['other']} 404s at the sites")
        return found


class Sites:
    """bench/_directives_site.py in its own process."""

    def __init__(self, workdir: Path, sites: int, pages: int) -> None:
        port_file = workdir / "port"
        port_file.unlink(missing_ok=True)
        script = str(ROOT / "bench" / "_directives_site.py")
        self.process = subprocess.Popen(
            [sys.executable, script, str(port_file), str(sites), str(pages)], stdin=subprocess.PIPE
        )
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the sites did not start")
            time.sleep(0.1)
        port = port_file.read_text()
        self.bases = [f"http://127.0.0.{site + 2}:{port}" for site in range(sites)]

    def control(self, what: str) -> dict[str, int]:
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with direct.open(f"{self.bases[0]}/__{what}__", timeout=30) as answer:
            return dict(json.loads(answer.read()))

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def run_crawl(kind: str, sites: Sites, workdir: Path, timeout: float, instructions: bool = False) -> Run:
    from broad import VALGRIND, cachegrind_total

    run = Run(kind)
    slug = kind.replace(", ", "-").replace(" ", "-")
    result = workdir / "result.json"
    result.unlink(missing_ok=True)
    log = workdir / f"crawl-{slug}.log"
    config = {
        "bases": sites.bases,
        "result": str(result),
        "settings": {
            "ADDONS": {"scrapy_robots.Addon": 0},
            "ROBOTSTXT_OBEY": True,
            **KINDS[kind],
            "USER_AGENT": USER_AGENT,
            "CONCURRENT_REQUESTS": 32,
            "DOWNLOAD_DELAY": 0,
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
            "LOG_LEVEL": "INFO",
            "LOG_FILE": str(log),
        },
    }
    sites.control("reset")
    counted = workdir / f"crawl-{slug}.cachegrind"
    wrap = [*VALGRIND, f"--cachegrind-out-file={counted}"] if instructions else []
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    # valgrind's own warnings (about the cache it does not simulate) go to a file.
    stderr = (workdir / f"crawl-{slug}.stderr").open("w") if instructions else None
    process = subprocess.Popen([*wrap, sys.executable, __file__, "--crawl", json.dumps(config)], env=env, stderr=stderr)
    deadline = time.monotonic() + timeout
    try:
        while not (waited := os.wait4(process.pid, os.WNOHANG))[0]:
            if time.monotonic() > deadline:
                process.kill()
                waited = os.wait4(process.pid, 0)
                break
            time.sleep(0.05)
    except BaseException:  # Ctrl-C: no crawl outlives the benchmark
        process.kill()
        process.wait()
        raise
    if stderr is not None:
        stderr.close()
    _, status, usage = waited
    process.returncode = run.exit = os.waitstatus_to_exitcode(status)
    run.cpu = usage.ru_utime + usage.ru_stime
    run.served = sites.control("stats")
    if result.exists():
        measured = json.loads(result.read_text())
        run.wall, run.stats = measured["wall"], measured["stats"]
    if instructions and counted.exists():
        run.instructions = cachegrind_total(counted)
    return run


def stat(runs: list[Run], key: str) -> str:
    return f"{statistics.median(r.stats.get(key, 0) for r in runs):.0f}"


def crawl_row(label: str, runs: list[Run], anchor: list[Run]) -> list[str]:
    cpu, wall = statistics.median(r.cpu for r in runs), statistics.median(r.wall for r in runs)
    cpu_off, wall_off = statistics.median(r.cpu for r in anchor), statistics.median(r.wall for r in anchor)
    return [
        label,
        f"{statistics.median(r.served.get('pages', 0) for r in runs):.0f}",
        stat(runs, "item_scraped_count"),
        stat(runs, "robotstxt/directives/pages"),
        stat(runs, "robotstxt/directives/nofollow/requests_dropped"),
        stat(runs, "robotstxt/directives/rel_nofollow/requests_dropped"),
        stat(runs, "robotstxt/directives/noindex/items_marked"),
        f"{wall:.1f}",
        f"{wall / wall_off:.3f}",
        f"{cpu:.2f}",
        f"{cpu / cpu_off:.3f}",
        " ".join(f"{r.cpu:.1f}" for r in runs),
        "; ".join(p for r in runs for p in r.problems) or "-",
    ]


#: The crawls: ROBOTSTXT_DIRECTIVES off (the anchor), on, and on without its rel=nofollow step.
KINDS: dict[str, dict[str, Any]] = {
    "off": {"ROBOTSTXT_DIRECTIVES": False},
    "on": {"ROBOTSTXT_DIRECTIVES": True},
    "on, no rel": {"ROBOTSTXT_DIRECTIVES": True, "ROBOTSTXT_DIRECTIVES_REL_NOFOLLOW": False},
}
LABELS = {
    "off": "False (anchor)",
    "on": "True (defaults)",
    "on, no rel": "True, REL_NOFOLLOW=False",
}


def part_two(args: argparse.Namespace, workdir: Path) -> None:
    # Byte-compiled as a pip install leaves it (see bench/broad.py): an editable install
    # under PYTHONDONTWRITEBYTECODE would compile the package at each crawl's start.
    compileall.compile_dir(str(ROOT / "scrapy_robots"), quiet=1)
    per_site = max(20, args.pages // args.sites)
    sites = Sites(workdir, args.sites, per_site)
    timeout = 60 + args.pages / 20
    kinds = list(KINDS)
    runs: dict[str, list[Run]] = {kind: [] for kind in kinds}
    counted: dict[str, Run] = {}
    try:
        for repeat in range(args.repeats):
            # Each round in another order: a machine that slows down as a round goes on
            # weighs on every kind alike.
            shift = repeat % len(kinds)
            for kind in kinds[shift:] + kinds[:shift]:
                run = run_crawl(kind, sites, workdir, timeout)
                runs[kind].append(run)
                print(
                    f"  {kind}: {run.served.get('pages', 0)} pages, wall {run.wall:.1f} s, "
                    f"CPU {run.cpu:.2f} s{''.join('; ' + p for p in run.problems)}",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        sites.stop()
    if args.instructions:
        small = Sites(workdir, args.sites, max(20, args.instruction_pages // args.sites))
        try:
            for kind in kinds:
                timeout = 30 * (60 + args.instruction_pages / 20)
                counted[kind] = run_crawl(kind, small, workdir, timeout, instructions=True)
                print(f"  under valgrind, {kind}: {counted[kind].instructions / 1e9:.3f} G", file=sys.stderr)
        finally:
            small.stop()

    total = per_site * args.sites
    print(
        f"A crawl of {total:,} pages on {args.sites} local sites ({per_site} pages each, 30-170 KB), add-on on, "
        f"CONCURRENT_REQUESTS=32, LOG_LEVEL=INFO; medians of {args.repeats}. pages: served by the sites; "
        "the next four: the crawl's stats (robotstxt/directives/pages, .../nofollow/requests_dropped, "
        ".../rel_nofollow/requests_dropped, .../noindex/items_marked). CPU: user + system of the crawl process, "
        "start-up included; x: against ROBOTSTXT_DIRECTIVES = False.\n"
    )
    headers = ["ROBOTSTXT_DIRECTIVES", "pages", "items", "pages w/ dir.", "nofollow drops", "rel drops", "marked",
               "wall s", "wall x", "CPU s", "CPU x", "CPU each run", "problems"]  # fmt: skip
    print_table(headers, [crawl_row(LABELS[kind], runs[kind], runs["off"]) for kind in kinds])
    for kind in kinds[1:]:
        rounds = min(len(runs[kind]), len(runs["off"]))
        ratios = [runs[kind][i].cpu / runs["off"][i].cpu for i in range(rounds)]
        print(
            f"CPU {kind} / off, round by round: "
            + " ".join(f"x{ratio:.3f}" for ratio in ratios)
            + f" (median x{statistics.median(ratios):.3f}; "
            f"{(median_cpu(runs[kind]) - median_cpu(runs['off'])) / total * 1e6:+.0f} µs per page)"
        )
    print()
    if counted:
        off = counted["off"]
        pages = off.served.get("pages", 0)
        print(
            "Under valgrind (cachegrind: instructions executed by the crawl process, start-up included), "
            f"{pages:,} pages:"
        )
        for kind in kinds:
            run = counted[kind]
            print(
                f"  {LABELS[kind]}: {run.instructions / 1e9:.3f} G, x{run.instructions / off.instructions:.4f} "
                f"({(run.instructions - off.instructions) / max(1, pages) / 1e3:+,.0f} k instructions per page)"
                f"{''.join('; ' + p for p in run.problems)}"
            )
        print()


def median_cpu(runs: list[Run]) -> float:
    return statistics.median(r.cpu for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="about a minute: fewer calls, 800 pages, no valgrind")
    parser.add_argument("--pages", type=int, default=3_000, help="pages per crawl (default 3,000)")
    parser.add_argument("--sites", type=int, default=4, help="local sites (default 4, at most 200)")
    parser.add_argument("--repeats", type=int, default=3, help="crawls of each kind (default 3)")
    parser.add_argument("--instruction-pages", type=int, default=600, help="pages of the crawls under valgrind")
    parser.add_argument("--no-instructions", dest="instructions", action="store_false", help="skip valgrind")
    parser.add_argument("--only", choices=("pages", "crawls"), help="one part only")
    parser.add_argument("--crawl", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.crawl:
        crawl(json.loads(args.crawl))
        return
    if not 1 <= args.sites <= 200 or args.repeats < 1:
        parser.error("1 to 200 sites, at least 1 repeat")
    if args.quick:
        args.pages, args.instructions = min(args.pages, 800), False
    if args.instructions and shutil.which("valgrind") is None:
        print("valgrind is not installed: no instruction counts (Debian: apt-get install valgrind)\n")
        args.instructions = False
    started = time.monotonic()
    if args.only != "crawls":
        part_one(0.2 if args.quick else 1.0)
    if args.only != "pages":
        workdir = Path(tempfile.mkdtemp(prefix="bench-directives-"))
        try:
            part_two(args, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"({time.monotonic() - started:.0f} s in all)")


if __name__ == "__main__":
    main()
