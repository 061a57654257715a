"""A real fleet: several `scrapy crawl` processes with scrapy-redis's scheduler sharing
one Redis, crawling loopback sites. Everything is asserted at the servers."""

from __future__ import annotations

import time

import pytest
import pytest_twisted
from fleet import start_crawler
from servers import body, hang
from twisted.internet import reactor
from twisted.internet.defer import DeferredList
from twisted.internet.task import deferLater

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing


def sleep(seconds: float):
    return deferLater(reactor, seconds, lambda: None)


async def run_fleet(n: int, urls: list[str], redis, **settings):
    handles = [start_crawler(urls, redis.url, **settings) for _ in range(n)]
    results = await DeferredList([h.done for h in handles])
    return [result for _, result in results]


def assert_clean(results, expected_downloads: int):
    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
        assert result["failed"] == {}, result["failed"]
        assert "Traceback" not in result["log"], result["log"][-3000:]
        assert "robotstxt/crawl_delay/error" not in result["stats"], result["stats"]
    assert sum(len(r["downloaded"]) for r in results) == expected_downloads, results[0]["log"][-6000:]


@pytest_twisted.ensureDeferred
async def test_robots_fetched_once_per_site_for_the_fleet(serve, redis):
    sites = [serve(body("User-agent: *\nDisallow: /private\n")) for _ in range(4)]
    urls = [f"{site.url}/p{i}" for site in sites for i in range(5)] + [f"{s.url}/private" for s in sites]
    results = await run_fleet(3, urls, redis)
    assert_clean(results, expected_downloads=20)
    assert [site.robots_hits() for site in sites] == [1, 1, 1, 1]
    # Nothing disallowed reached a server, and each page was fetched once by the fleet.
    for site in sites:
        assert sorted(site.paths()) == ["/p0", "/p1", "/p2", "/p3", "/p4", "/robots.txt"]
    stats = [r["stats"] for r in results]
    assert sum(s.get("robotstxt/fleet/fetch", 0) for s in stats) == 4


@pytest_twisted.ensureDeferred
async def test_crawl_delay_paced_across_the_fleet(serve, redis):
    site = serve(body("User-agent: *\nCrawl-delay: 0.25\n"))
    urls = [f"{site.url}/p{i}" for i in range(16)]
    # Each crawler brings its own half of the site: both send requests to it at once.
    handles = [start_crawler(urls[::2], redis.url), start_crawler(urls[1::2], redis.url)]
    results = [result for _, result in await DeferredList([h.done for h in handles])]
    assert_clean(results, expected_downloads=16)
    times = sorted(hit.at for hit in site.page_hits())
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert min(gaps) >= 0.25, sorted(gaps)[:3]
    # Both crawlers took part: the pace is the fleet's, not one crawler's.
    assert all(r["downloaded"] for r in results), [len(r["downloaded"]) for r in results]


@pytest_twisted.ensureDeferred
async def test_killed_crawler_does_not_block_the_site_past_the_lock_expiry(serve, redis):
    hung = {"first": True}
    good = body("User-agent: *\nDisallow: /private\n")

    def robots(request):
        if hung.pop("first", False):
            return hang()(request)  # the first fetcher never gets an answer
        return good(request)

    site = serve(robots)
    urls = [f"{site.url}/p{i}" for i in range(3)]
    settings = {"ROBOTSTXT_FLEET_LOCK_TTL": 3, "ROBOTSTXT_TIMEOUT": 30}
    first = start_crawler(urls, redis.url, **settings)
    while site.robots_hits() == 0:
        await sleep(0.1)
    first.kill()  # killed while holding the site's fetch lock
    await first.done
    started = time.monotonic()
    [second] = await run_fleet(1, [f"{site.url}/q{i}" for i in range(3)], redis, **settings)
    assert_clean([second], expected_downloads=3)
    assert time.monotonic() - started < 3 + 8
    assert second["stats"].get("robotstxt/fleet/lock_wait") == 1
    assert site.robots_hits() == 2


@pytest_twisted.ensureDeferred
async def test_redis_stopped_and_restarted_mid_crawl(serve, redis):
    site = serve(body("User-agent: *\nDisallow: /private\nCrawl-delay: 0.2\n"))
    others = [serve(body("User-agent: *\nDisallow: /private\n")) for _ in range(2)]
    urls = [f"{site.url}/p{i}" for i in range(20)] + [f"{s.url}/private" for s in others]
    urls += [f"{s.url}/p{i}" for s in others for i in range(3)]
    # The default (in-memory) scheduler: scrapy-redis's own queue cannot survive a
    # Redis outage; this test is about scrapy-robots' part. Few requests at a time
    # (no parking), so that some reach the middleware while Redis is down.
    handle = start_crawler(
        urls,
        redis.url,
        SCHEDULER="scrapy.core.scheduler.Scheduler",
        DUPEFILTER_CLASS="scrapy.dupefilters.RFPDupeFilter",
        CONCURRENT_REQUESTS=2,
        ROBOTSTXT_MAX_WAITING=0,
    )
    while len(site.page_hits()) < 3:
        await sleep(0.05)
    redis.stop()
    await sleep(1.5)
    redis.start()
    result = await handle.done
    assert_clean([result], expected_downloads=26)
    assert result["ignored"] == {f"{s.url}/private": "Forbidden by robots.txt" for s in others}
    assert result["stats"].get("robotstxt/fleet/fallback", 0) >= 1
    times = sorted(hit.at for hit in site.page_hits())
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert min(gaps) >= 0.2 - 0.01, sorted(gaps)[:3]
    assert "Redis at" in result["log"] and "is unreachable" in result["log"]
