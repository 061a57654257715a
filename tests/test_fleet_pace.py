"""The fleet's pace under faults (#31), measured at the sites: real `scrapy crawl`
processes (tests/fleet_project), a real redis-server stopped, restarted empty and
flushed mid-crawl, a crawler killed mid-crawl.

The goal of each window (before, during, after a fault): at most 3 % of the gaps between
two consecutive requests to a paced slot under 95 % of its delay."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest
import pytest_twisted
from fleet import start_crawler
from servers import SiteServer, body
from twisted.internet import reactor
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.task import deferLater

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

#: The in-memory scheduler: each crawler crawls the URLs it was given (a Redis outage
#: would take scrapy-redis's shared queue away with it).
OWN_QUEUE = {"SCHEDULER": "scrapy.core.scheduler.Scheduler", "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter"}
#: Few requests at a time, none parked (as test_fleet.py's outage test): requests keep
#: reaching the fleet's pace all along the crawl, faults included.
FEW = {"CONCURRENT_REQUESTS": 4, "ROBOTSTXT_MAX_WAITING": 0}
SHORT = 0.95  # a gap under 95 % of the delay is short
TOLERATED = 0.03  # of the gaps in a window
#: ROBOTSTXT_FLEET_PACING_MARGIN of the crawls of two crawlers or more whose gaps are
#: asserted at the site. The guarantee holds while the margin exceeds the crawlers' worst
#: stall between a start's wake-up and its request reaching the server (docs/fleet.rst,
#: "The guarantee"), and `make test` is such a machine: 6 workers beside the crawler
#: processes on 2 cores. At the default (0.05 s) a gap at Crawl-delay 0.4 had 70 ms of room
#: above 0.95 x the delay, taken in about one run in two (0.37-0.38 s gaps); at 0.1, clean
#: clones' runs still saw starts 110 to 190 ms late (gaps of 0.24 s at Crawl-delay 0.3,
#: 0.31-0.36 s at 0.4; three sites short at the same instant: one crawler's event loop
#: late), and late wake-ups (past half the margin) that take the next turn halved a site's
#: rate after an outage. What is asserted at the site (no gap under 0.95 x the delay) is
#: unchanged; the fleet benchmark measures the default margin on a quiet machine.
LOADED_MARGIN = 0.2


def sleep(seconds: float):
    return deferLater(reactor, seconds, lambda: None)


def robots(delay: float) -> str:
    return f"User-agent: *\nDisallow: /private\nCrawl-delay: {delay:g}\n"


def starts(*sites: SiteServer) -> list[float]:
    """Arrival times of every page request at these sites (one downloader slot)."""
    return sorted(hit.at for site in sites for hit in site.page_hits())


def gaps_between(times: list[float], begin: float = 0.0, end: float = float("inf")) -> list[float]:
    """Gaps between consecutive arrivals, for the pairs whose later one came in [begin, end)."""
    return [b - a for a, b in zip(times, times[1:]) if begin <= b < end]


def short(gaps: list[float], delay: float) -> list[float]:
    return sorted(gap for gap in gaps if gap < SHORT * delay)


def assert_polite(gaps: list[float], delay: float, what: str) -> None:
    assert gaps, f"no gaps {what}"
    under = short(gaps, delay)
    assert len(under) <= TOLERATED * len(gaps), f"{what}: {len(under)} of {len(gaps)} gaps < {SHORT} x {delay}: {under}"


def dealt(urls: list[str], crawlers: int) -> list[list[str]]:
    """Each site's URLs dealt in turn to the crawlers: every crawler gets every other page
    (every ``crawlers``-th) of EVERY site, so that the gaps a site sees are between the
    crawlers' starts, the fleet's pace, not one crawler's own slot. (``urls[k::crawlers]``
    over URLs that alternate between ``crawlers`` sites gave each crawler one whole site.)"""
    shares: list[list[str]] = [[] for _ in range(crawlers)]
    seen: dict[str, int] = {}
    for url in urls:
        site = urlsplit(url).netloc
        n = seen[site] = seen.get(site, -1) + 1
        shares[n % crawlers].append(url)
    for site in seen:
        assert all(any(urlsplit(url).netloc == site for url in share) for share in shares), (site, "not shared")
    return shares


async def finished(handles) -> list[dict]:
    results = [result for _, result in await DeferredList([h.done for h in handles])]
    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
        assert result["failed"] == {}, result["failed"]
    return results


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_sites_on_ports_of_one_host_share_one_pace_across_the_fleet(serve, redis):
    # Two sites on one host name: one downloader slot for Scrapy, one pace for the fleet,
    # at the stricter of their delays, although each crawler knows only one of them.
    strict = serve(body(robots(0.5)))
    lax = SiteServer(host=strict.host, robots=body(robots(0.2))).start()
    try:
        handles = [
            start_crawler([f"{strict.url}/a{i}" for i in range(10)], redis.url, **OWN_QUEUE),
            start_crawler([f"{lax.url}/b{i}" for i in range(10)], redis.url, **OWN_QUEUE),
        ]
        results = await finished(handles)
    finally:
        await lax.stop()
    assert [len(r["downloaded"]) for r in results] == [10, 10]
    assert_polite(gaps_between(starts(strict, lax)), 0.5, "at the host, both sites together")


async def crawl_with_faults(serve, redis, fault, recover, *, crawlers=3, delay=0.4, pages=36, **settings):
    """Two paced sites crawled by ``crawlers`` crawlers (each its share of every site);
    ``fault`` then ``recover`` twice mid-crawl. The windows: (fault, recovery) pairs of times."""
    sites = [serve(body(robots(delay))) for _ in range(2)]
    urls = [f"{site.url}/p{i}" for i in range(pages) for site in sites]
    handles = [start_crawler(share, redis.url, **OWN_QUEUE, **FEW, **settings) for share in dealt(urls, crawlers)]
    windows = []
    for after in (6, 2 * pages // 3):
        while min(len(site.page_hits()) for site in sites) < after:
            await sleep(0.05)
        began = time.monotonic()
        await fault()
        ended = time.monotonic()
        await recover()
        windows.append((began, ended))
    results = await finished(handles)
    return sites, windows, results


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_redis_outage_the_fleet_keeps_its_pace(serve, redis):
    async def stop():
        redis.stop()
        await sleep(3)

    async def restart():
        redis.start()  # empty: the pace state is gone too

    delay = 0.4
    sites, windows, results = await crawl_with_faults(
        serve, redis, stop, restart, delay=delay, ROBOTSTXT_FLEET_PACING_MARGIN=LOADED_MARGIN
    )
    assert sum(len(r["downloaded"]) for r in results) == 72
    for n, (began, ended) in enumerate(windows):
        for site in sites:
            times = starts(site)
            assert_polite(gaps_between(times, began, ended), delay, f"outage {n + 1}, {site.url}")
            assert_polite(gaps_between(times, ended, ended + 3), delay, f"after outage {n + 1}, {site.url}")
    # Back at the full rate within a few seconds (#49: one start every 3 intervals for 35 s
    # after an outage): the median gap from 2 s after the first recovery until the second
    # fault (or the crawl's end), at most 1.5 intervals.
    for site in sites:
        back = sorted(gaps_between(starts(site), windows[0][1] + 2, windows[1][0]))
        assert back and back[len(back) // 2] <= 1.5 * (delay + LOADED_MARGIN), back
    assert all("is unreachable" in r["log"] for r in results)
    assert all(r["stats"].get("robotstxt/fleet/outage_paced", 0) > 0 for r in results), [r["stats"] for r in results]


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_flushall_mid_crawl_keeps_the_pace(serve, redis):
    async def flush():
        redis.flush()

    async def settle():
        await sleep(2)

    delay = 0.4
    sites, windows, results = await crawl_with_faults(serve, redis, flush, settle, crawlers=2, delay=delay)
    assert sum(len(r["downloaded"]) for r in results) == 72
    for n, (began, _) in enumerate(windows):
        for site in sites:
            assert_polite(gaps_between(starts(site), began, began + 3), delay, f"after FLUSHALL {n + 1}, {site.url}")
    assert any(r["stats"].get("robotstxt/fleet/pace_reset", 0) for r in results)


@pytest_twisted.ensureDeferred
async def test_starts_the_fleet_could_not_hear_are_written_before_the_records_are_shared(redis):
    # #49, the Sentinel failover: a crawler's robots.txt fetch ended while Redis was away
    # (its start not written to the pace), then it paced the site's first pages alone;
    # the other crawler, which waited for that robots.txt, read it once the write-back
    # shared it and reserved in Redis at once: two pages 0.6 s apart at Crawl-delay 1.
    # Real Redis, restarted empty; the two crawlers' storages and pacers as the crawl
    # builds them. Twice: a second site, a second outage.
    import asyncio

    from scrapy.utils.defer import deferred_from_coro

    from scrapy_robots.fleet import RedisLink
    from scrapy_robots.fleet.storage import RedisRobotsStorage

    delay = 0.4

    async def until_shared(storage: RedisRobotsStorage) -> None:
        from scrapy_robots.fleet.link import FleetUnavailable

        deadline = time.monotonic() + 10
        while True:
            try:
                await storage.write_back.check()
                return
            except FleetUnavailable:  # the link's backoff: it asks Redis again within a second
                assert time.monotonic() < deadline, "Redis did not answer again"
                await asyncio.sleep(0.1)

    async def scenario() -> list[tuple[str, float, float]]:
        storages = [RedisRobotsStorage(RedisLink(redis.url, 0.5), "scrapy-robots-test") for _ in range(2)]
        holder, waiter = (storage.pacer() for storage in storages)
        found = []
        try:
            for site in ("a.example", "b.example"):
                await until_shared(storages[0])  # the first epoch read (or Redis back)
                redis.stop()
                # The holder's robots.txt fetch ends now (the middleware's pacing.fetched),
                # then it paces the site's first page alone, on its outage pace.
                assert await holder.mark_start(site, delay, 0.0) is None
                start = time.monotonic() + holder.outage_wait(site, delay, delay)
                redis.start()
                storages[0].write_back.unshared(site)  # its record, saved while Redis was away
                await until_shared(storages[0])
                # The waiter reads the record now, and reserves the site's first page.
                deadline = time.monotonic() + 10
                while True:
                    asked = time.monotonic()
                    wait = await waiter.reserve(site, delay)
                    if wait is not None:
                        break
                    # Its link met the restart at this call: it asks Redis again within a second.
                    assert time.monotonic() < deadline, "Redis did not answer the waiter again"
                    await asyncio.sleep(0.1)
                found.append((site, round(start, 3), round(asked + wait, 3)))
        finally:
            for storage in storages:
                await storage.link.close()
        return found

    for site, holder_start, waiter_start in await deferred_from_coro(scenario()):
        # The margin (0.05 s) is not asked of the gap: the holder's last start counts as
        # written (its clock), the waiter's as reserved; 10 ms for the loop's own steps.
        assert waiter_start - holder_start >= delay - 0.01, (site, holder_start, waiter_start)


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_redis_restart_while_a_robots_txt_is_in_flight(serve, redis):
    # A single Redis stopped and restarted empty 3 s later, while one site's robots.txt is
    # fetched by one crawler and waited for by the other (answered during the outage), and
    # another's (answered after the restart); two crawlers sharing every site (#49).
    from failover import assert_paced_through, failover_figures, held

    delay, pages, fresh_pages = 0.4, 40, 12
    paced = [serve(body(robots(delay))) for _ in range(2)]
    releases = [Deferred(), Deferred()]
    fresh = [serve(held(releases[n], robots(delay))) for n in range(2)]
    urls = [f"{site.url}/p{i}" for i in range(pages) for site in paced]
    early = [f"{site.url}/f{i}" for i in range(fresh_pages) for site in fresh]
    settings = {
        **OWN_QUEUE,
        "CONCURRENT_REQUESTS": 4 + len(fresh),
        "ROBOTSTXT_MAX_WAITING": fresh_pages + 4,
        "ROBOTSTXT_FLEET_PACING_MARGIN": LOADED_MARGIN,
    }
    handles = [
        start_crawler(first + share, redis.url, **settings)
        for first, share in zip(dealt(early, 2), dealt(urls, 2), strict=True)
    ]
    while min(len(site.page_hits()) for site in paced) < 8:
        await sleep(0.05)
    began = time.monotonic()
    redis.stop()
    await sleep(0.5)
    releases[0].callback(None)  # fetched while Redis is away
    await sleep(2.5)
    redis.start()  # empty: the records, the locks and the pace are gone
    faults = [(began, time.monotonic())]
    await sleep(1)
    releases[1].callback(None)
    results = await finished(handles)
    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
        assert result["failed"] == {}, result["failed"]
    figures = failover_figures(paced, fresh, faults, results, delay)
    print("restart crawl:", figures)
    for site in paced:
        assert sorted(site.paths()) == sorted([f"/p{i}" for i in range(pages)] + ["/robots.txt"]), (site.url, figures)
    for site in fresh:
        assert sorted(site.paths()) == sorted([f"/f{i}" for i in range(fresh_pages)] + ["/robots.txt"]), (
            site.url,
            figures,
        )
    assert_paced_through(paced, fresh, faults, delay, figures)
