"""The Redis fleet storage and pacer inside one crawler process (the multi-process
fleet tests are in test_fleet.py)."""

from __future__ import annotations

import logging

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, stat
from servers import answer_later, body
from twisted.internet.defer import Deferred, DeferredList

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

ROBOTS = "User-agent: *\nDisallow: /private\nCrawl-delay: 0.3\n"


def fleet_settings(redis):
    return {
        "ROBOTSTXT_CACHE_STORAGE": "scrapy_robots.fleet.RedisRobotsStorage",
        "ROBOTSTXT_REDIS_URL": redis.url,
    }


@pytest_twisted.ensureDeferred
async def test_second_crawler_uses_the_fleet_cache(serve, redis):
    site = serve(body(ROBOTS))
    urls = [f"{site.url}/public", f"{site.url}/private"]
    first = await crawl(urls, **fleet_settings(redis))
    second = await crawl(urls, **fleet_settings(redis))
    assert site.robots_hits() == 1
    assert stat(first, "robotstxt/fleet/fetch") == 1
    assert stat(second, "robotstxt/fleet/hit") == 1
    assert stat(second, "robotstxt/request_count") == 0
    # The second crawler (same parser, same agent) built the rules stored beside the
    # shared body, without parsing it (#21): same verdicts.
    assert second.spider.downloaded == [f"{site.url}/public"]
    assert second.spider.ignored == {f"{site.url}/private": "Forbidden by robots.txt"}
    assert stat(first, "robotstxt/parsed") == 1
    assert stat(second, "robotstxt/parsed") == 0


@pytest_twisted.ensureDeferred
async def test_fleet_pacing_in_one_crawler(serve, redis):
    site = serve(body(ROBOTS))
    crawler = await crawl([f"{site.url}/p{i}" for i in range(4)], **fleet_settings(redis))
    times = sorted(hit.at for hit in site.page_hits())
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert len(gaps) == 3 and min(gaps) >= 0.3, gaps
    assert stat(crawler, "robotstxt/fleet/paced") == 4


@pytest_twisted.ensureDeferred
async def test_redis_down_falls_back_to_local(serve):
    site = serve(body(ROBOTS))
    from redis_server import free_port

    crawler = await crawl(
        [f"{site.url}/p{i}" for i in range(3)] + [f"{site.url}/private"],
        ROBOTSTXT_CACHE_STORAGE="scrapy_robots.fleet.RedisRobotsStorage",
        ROBOTSTXT_REDIS_URL=f"redis://127.0.0.1:{free_port()}/0",  # nobody listens
    )
    # No crash, no request lost, nothing disallowed let through, local pacing held.
    assert len(crawler.spider.downloaded) == 3
    assert crawler.spider.ignored == {f"{site.url}/private": "Forbidden by robots.txt"}
    times = sorted(hit.at for hit in site.page_hits())
    assert min(b - a for a, b in zip(times, times[1:])) >= 0.3 - 0.01
    assert stat(crawler, "robotstxt/fleet/fallback") >= 1


@pytest_twisted.ensureDeferred
async def test_a_crawler_that_reads_a_site_from_the_fleet_says_so_once_per_site(serve, redis, caplog):
    # Two crawlers at once on the same sites: each site's robots.txt is downloaded by one of
    # them (its usual line), and the other takes the entry from the fleet, during its crawl:
    # it says so, with the delay it obeys, once per site as the downloading crawler does.
    caplog.set_level(logging.INFO)
    sites = [serve(answer_later(body(ROBOTS), 0.5)) for _ in range(3)]
    urls = [f"{site.url}/p{i}" for site in sites for i in range(3)]

    class First(RecordingSpider):
        name = "first"

    class Second(RecordingSpider):
        name = "second"

    runs = [Deferred.fromCoroutine(crawl(urls, spider, **fleet_settings(redis))) for spider in (First, Second)]
    crawlers = [result for _, result in await DeferredList(runs)]
    assert [site.robots_hits() for site in sites] == [1, 1, 1]
    from_fleet = 0
    for crawler in crawlers:
        mine = [r.getMessage() for r in caplog.records if getattr(r, "spider", None) is crawler.spider]
        for site in sites:
            said = [m for m in mine if m.startswith(f"robots.txt for {site.url}")]
            assert len(said) == 1, (crawler.spider.name, mine)
            if " from the fleet " in said[0]:
                from_fleet += 1
                assert "HTTP 200 -> parse" in said[0] and "crawl-delay 0.3s" in said[0], said
                assert "fetched by another crawler" in said[0], said
    assert from_fleet == 3
