"""The Redis fleet storage and pacer inside one crawler process (the multi-process
fleet tests are in test_fleet.py)."""

from __future__ import annotations

import logging
import time

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, stat
from scrapy import Request
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


class LaterSiteSpider(RecordingSpider):
    """Crawls the paced site's pages; its first page hands out another site's pages, at a
    lower priority (a site found later in a crawl)."""

    later: list[str] = []

    def parse(self, response):
        super().parse(response)
        if response.url.endswith("/p0"):
            self.handed_out = time.monotonic()
            for url in self.later:
                yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True, priority=-1)


@pytest.mark.parametrize("max_waiting", [None, 2])
@pytest_twisted.ensureDeferred
async def test_fleet_paced_requests_wait_outside_the_downloader(serve, redis, max_waiting):
    # Issue #49: a fleet-paced request waiting for its turn held one of CONCURRENT_REQUESTS
    # (54 sat in `active` at 16), so a site handed out later waited in the scheduler until
    # the paced site's requests had left it (7 to 25 s). It waits outside now, within
    # ROBOTSTXT_MAX_WAITING (the head of each slot's line over it): the later site goes at
    # once, and with a bound of 2 the paced site's requests beyond it go back to the
    # scheduler, none lost, none twice, the pace kept.
    paced = serve(body("User-agent: *\nCrawl-delay: 0.4\n"))
    later = serve(body("User-agent: *\n"))
    LaterSiteSpider.later = [f"{later.url}/q{i}" for i in range(3)]
    settings = {**fleet_settings(redis), "CONCURRENT_REQUESTS": 4}
    if max_waiting is not None:
        settings["ROBOTSTXT_MAX_WAITING"] = max_waiting
    most_active, most_waiting = [0], [0]

    def look(crawler):
        try:
            engine = crawler.engine
        except RuntimeError:  # Scrapy 2.19 before the crawl starts (2.13: None)
            engine = None
        downloader = getattr(engine, "downloader", None)
        if downloader is not None:
            from scrapy_robots import RobotsTxtMiddleware

            # The paced site's requests in the downloader (the later site's may all be there).
            paced_active = sum(1 for request in downloader.active if request.url.startswith(paced.url))
            most_active[0] = max(most_active[0], paced_active)
            for mw in downloader.middleware.middlewares:
                if isinstance(mw, RobotsTxtMiddleware):
                    most_waiting[0] = max(most_waiting[0], len(mw.room))

    from crawling import BASE_SETTINGS
    from scrapy.crawler import CrawlerRunner
    from twisted.internet.task import LoopingCall

    runner = CrawlerRunner({**BASE_SETTINGS, **settings})
    crawler = runner.create_crawler(LaterSiteSpider)
    watch = LoopingCall(look, crawler)
    watch.start(0.05)
    try:
        await crawler.crawl(urls=[f"{paced.url}/p{i}" for i in range(12)])
    finally:
        watch.stop()
    spider = crawler.spider
    assert sorted(spider.downloaded) == sorted([f"{paced.url}/p{i}" for i in range(12)] + LaterSiteSpider.later)
    assert sorted(paced.paths()) == sorted(["/robots.txt"] + [f"/p{i}" for i in range(12)])
    if max_waiting is None:
        # (With a bound, the paced site's requests sent back to the scheduler come out at
        # the later site's priority, one step lower than theirs, in whatever order the
        # scheduler's queue keeps: Scrapy 2.13's LIFO put them first.)
        first_later = min(hit.at for hit in later.page_hits())
        assert first_later - spider.handed_out < 1.0, first_later - spider.handed_out
    times = sorted(hit.at for hit in paced.page_hits())
    assert min(b - a for a, b in zip(times, times[1:])) >= 0.4, times
    if max_waiting is not None:
        # (A request sent back beyond the bound pauses 0.5 s in its download place first.)
        assert most_waiting[0] <= max_waiting + 1, most_waiting[0]
        assert stat(crawler, "robotstxt/waiting/requeued") > 0
    else:
        # Nothing of the paced site waits in the downloader for its turn: what is there is
        # on the wire (one, two at a hand-over).
        assert most_active[0] <= 2, most_active[0]
        assert most_waiting[0] >= 5, most_waiting[0]
