"""Sites that say "slow down", crawled by this package and by Scrapy's stock middlewares;
every request counted where it matters, at the server.

    .venv/bin/python bench/backoff.py            # 2 sites x 40 pages + a quiet one (about 3 min)
    .venv/bin/python bench/backoff.py --quick    # 2 sites x 16 pages (about 2 min)

Two limited sites, each on its own 127.0.0.x (from 90 up, clear of the tests and the
other benchmarks), and a quiet one beside them:

- ``429``: more than 2 requests within a second gets ``429`` with ``Retry-After: 5`` and
  starts a 5 s pause, during which every request gets a 429 too;
- ``503``: the same with ``503`` and ``Retry-After`` as an HTTP date 5 s ahead (rounded up);
- ``quiet``: never limits; how long the others keep it waiting.

Modes, each crawl in its own subprocess of this script (``--one MODE`` prints one JSON line):

- ``ours``: the package's middleware, the backoff on (the default);
- ``stock``: Scrapy's own RobotsTxtMiddleware and RetryMiddleware with their defaults (the anchor);
- ``off``: ours with ``ROBOTSTXT_BACKOFF = False`` (what the backoff alone changes);
- ``fleet-ours`` and ``fleet-stock``: three ``scrapy crawl`` processes of tests/fleet_project
  over one redis-server, each with its own share of every site (the in-memory scheduler),
  with ours (the fleet storage) and with Scrapy's stock middlewares.

For each site: requests inside a pause the site had asked for (after its answer could have
arrived: a retry of a page told to slow down, or any request sent 0.2 s after the pause
began), pages fetched (each once) out of the pages asked, the last page's time, and the
median gap between requests after the first pause. The goal: 0 requests inside with ours.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from email.utils import formatdate
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # tests/servers.py and tests/crawling.py
sys.path.insert(0, str(ROOT / "bench"))

from _common import print_table, run_in_reactor  # noqa: E402

TIMEOUT = 120.0
FIRST_HOST = 90
PAUSE = 5.0
STOCK_MIDDLEWARES = {"scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": 100}
MODES: dict[str, dict[str, Any]] = {
    "ours": {},
    "stock": {"DOWNLOADER_MIDDLEWARES": STOCK_MIDDLEWARES},
    "off": {"ROBOTSTXT_BACKOFF": False},
}
#: Three `scrapy crawl` processes of tests/fleet_project, each with its own share of the
#: URLs (the in-memory scheduler), over one redis-server: ours, and Scrapy's stock
#: middlewares in the same project (the add-on off).
FLEET_MODES: dict[str, dict[str, Any]] = {
    "fleet-ours": {},
    "fleet-stock": {"ADDONS": {}, "DOWNLOADER_MIDDLEWARES": STOCK_MIDDLEWARES},
}
FLEET_SHARES = {
    "SCHEDULER": "scrapy.core.scheduler.Scheduler",
    "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter",
}
CRAWLERS = 3


def run_one(mode: str, pages: int, timeout: float) -> dict[str, Any]:
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")

    from crawling import BACKOFF, OURS, RecordingSpider
    from scrapy.crawler import CrawlerRunner

    settings: dict[str, Any] = {
        "ROBOTSTXT_OBEY": True,
        "DOWNLOADER_MIDDLEWARES": OURS,
        "EXTENSIONS": BACKOFF,
        "USER_AGENT": "Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example/bot)",
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 10,
        **MODES[mode],
    }
    limiters, servers, urls = _sites(pages)
    result: dict[str, Any] = {"mode": mode, "timed_out": False, "sites": {}}

    async def main() -> None:
        crawler = CrawlerRunner(settings).create_crawler(RecordingSpider)
        result["start"] = time.monotonic()
        await crawler.crawl(urls=urls)
        result["wall"] = time.monotonic() - result["start"]
        for server in servers.values():
            await server.stop()

    result["timed_out"] = run_in_reactor(main, timeout)
    result["sites"] = _measure(limiters, servers, result.get("start", 0.0))
    return result


def run_fleet(mode: str, pages: int, timeout: float) -> dict[str, Any]:
    """Three crawlers of the fleet project at once, each its own share of every site."""
    import importlib.util

    from redis_server import RedisServer
    from twisted.internet import reactor
    from twisted.internet.defer import DeferredList

    spec = importlib.util.spec_from_file_location("fleet_crawlers", ROOT / "tests" / "fleet.py")
    assert spec is not None and spec.loader is not None
    crawlers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(crawlers)
    redis = RedisServer().start()
    limiters, servers, urls = _sites(pages)
    result: dict[str, Any] = {"mode": mode, "timed_out": False, "sites": {}}

    async def main() -> None:
        result["start"] = time.monotonic()
        settings = {**FLEET_SHARES, **FLEET_MODES[mode]}
        handles = [crawlers.start_crawler(urls[i::CRAWLERS], redis.url, **settings) for i in range(CRAWLERS)]
        killer = reactor.callLater(timeout, lambda: [h.kill() for h in handles])
        await DeferredList([h.done for h in handles], consumeErrors=True)
        result["timed_out"] = not killer.active()
        if killer.active():
            killer.cancel()
        result["wall"] = time.monotonic() - result["start"]
        for server in servers.values():
            await server.stop()

    try:
        run_in_reactor(main, timeout + 30)
    finally:
        redis.stop()
    result["sites"] = _measure(limiters, servers, result["start"])
    return result


def _sites(pages: int) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    from servers import RateLimited, SiteServer, body

    limiters = {
        "429": RateLimited(limit=2, pause=PAUSE),
        "503": RateLimited(
            limit=2,
            pause=PAUSE,
            status=503,
            retry_after=lambda now: formatdate(math.ceil(time.time() + PAUSE), usegmt=True),
        ),
        "quiet": None,
    }
    robots = body("User-agent: *\nDisallow: /private\n")
    servers = {}
    for n, (name, limiter) in enumerate(limiters.items()):
        server = SiteServer(host=f"127.0.0.{FIRST_HOST + n}", robots=robots)
        server.pages = limiter
        servers[name] = server.start()
    urls = [f"{server.url}/page{i}" for i in range(pages) for server in servers.values()]
    return limiters, servers, urls


def _measure(limiters: dict[str, Any], servers: dict[str, Any], start: float) -> dict[str, Any]:
    sites = {}
    for name, server in servers.items():
        limiter = limiters[name]
        times = sorted(hit.at for hit in server.page_hits())
        served = limiter.served if limiter is not None else [hit.path for hit in server.page_hits()]
        after = [t for t in times if limiter is not None and limiter.began and t >= limiter.began]
        gaps = [b - a for a, b in zip(after, after[1:])]
        sites[name] = {
            "requests": len(times),
            "inside": len(limiter.inside) if limiter is not None else 0,
            "throttled": limiter.throttled if limiter is not None else 0,
            "fetched": len(set(served)),
            "twice": len(served) - len(set(served)),
            "last": (times[-1] - start) if times else 0.0,
            "median_gap": statistics.median(gaps) if gaps else 0.0,
        }
    return sites


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--pages", type=int)
    parser.add_argument("--one", choices=[*MODES, *FLEET_MODES])
    args = parser.parse_args()
    pages = args.pages or (16 if args.quick else 40)
    if args.one in FLEET_MODES:
        print(json.dumps(run_fleet(args.one, pages, TIMEOUT)))
        return
    if args.one:
        print(json.dumps(run_one(args.one, pages, TIMEOUT)))
        return
    results = {}
    for mode in [*MODES, *FLEET_MODES]:
        out = subprocess.run(
            [sys.executable, __file__, "--one", mode, "--pages", str(pages)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT + 30,
            check=True,
        )
        results[mode] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"{pages} pages per site; the limited sites allow 2 requests a second, then ask {PAUSE:g} s\n")
    rows = []
    for mode, result in results.items():
        for name, site in result["sites"].items():
            rows.append(
                [
                    f"{mode}{' (timed out)' if result['timed_out'] else ''}",
                    name,
                    site["requests"],
                    site["throttled"],
                    site["inside"],
                    f"{site['fetched']}/{pages}",
                    site["twice"],
                    f"{site['last']:.1f}",
                    f"{site['median_gap']:.2f}",
                ]
            )
    print_table(
        ["mode", "site", "requests", "slow downs", "inside pause", "pages", "twice", "last page s", "median gap s"],
        rows,
    )
    for label, ours, stock in (
        ("one crawler", results["ours"], results["stock"]),
        (f"a fleet of {CRAWLERS}", results["fleet-ours"], results["fleet-stock"]),
    ):
        for name in ("429", "503"):
            mine, theirs = ours["sites"][name], stock["sites"][name]
            print(
                f"{label}, site {name}: inside the asked pauses ours {mine['inside']} vs stock {theirs['inside']}; "
                f"pages ours {mine['fetched']}/{pages} vs stock {theirs['fetched']}/{pages}; "
                f"wall ours {ours.get('wall', TIMEOUT):.1f} s vs stock {stock.get('wall', TIMEOUT):.1f} s "
                f"(x{ours.get('wall', TIMEOUT) / max(stock.get('wall', TIMEOUT), 1e-9):.2f})"
            )


if __name__ == "__main__":
    main()
