"""The robots.txt cache: TTL then one refetch, LRU eviction, HTTP lifetime headers."""

from __future__ import annotations

import asyncio

import pytest_twisted
from scrapy import Request

from crawling import RecordingSpider, crawl, robots_middleware, stat
from scrapy_robots.cache import MemoryRobotsStorage, RobotsCache, RobotsEntry, lifetime_from_headers
from scrapy_robots.policy import Action
from servers import body


class PacedSpider(RecordingSpider):
    """Sends its URLs one after the other, ``pause`` seconds apart."""

    pause = 0.6

    async def start(self):
        for url in self.urls:
            yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)
            await asyncio.sleep(self.pause)


@pytest_twisted.ensureDeferred
async def test_expired_entry_is_fetched_again_once(serve):
    answers = iter(["User-agent: *\nDisallow: /a\n", "User-agent: *\nDisallow: /b\n"])
    site = serve(lambda request: body(next(answers))(request))
    urls = [f"{site.url}/a", f"{site.url}/b", f"{site.url}/a", f"{site.url}/b"]
    crawler = await crawl(urls, spider_cls=PacedSpider, ROBOTSTXT_CACHE_TTL=1.0)
    # Requests 1-2 use the first file; the second fetch (after 1 s) forbids /b instead.
    assert site.robots_hits() == 2
    assert crawler.spider.downloaded == [f"{site.url}/b", f"{site.url}/a"]
    assert stat(crawler, "robotstxt/cache/expired") == 1


@pytest_twisted.ensureDeferred
async def test_least_recently_used_site_evicted(serve):
    a = serve(body("User-agent: *\nDisallow:\n"))
    b = serve(body("User-agent: *\nDisallow:\n"))
    crawler = await crawl(
        [f"{a.url}/1", f"{b.url}/1", f"{a.url}/2"], spider_cls=PacedSpider, ROBOTSTXT_CACHE_SIZE=1
    )
    assert (a.robots_hits(), b.robots_hits()) == (2, 1)
    assert stat(crawler, "robotstxt/cache/evicted") == 2
    assert len(crawler.spider.downloaded) == 3


@pytest_twisted.ensureDeferred
async def test_cache_control_shortens_lifetime(serve):
    site = serve(body("User-agent: *\nDisallow:\n", headers={"Cache-Control": "max-age=0"}))
    crawler = await crawl([f"{site.url}/1"], spider_cls=PacedSpider)
    _, entry = robots_middleware(crawler).cache.lookup(f"http://{site.host}:{site.port}")
    assert 59 <= entry.expires_at - entry.fetched_at <= 61  # never below a minute


def test_lifetime_from_headers():
    from scrapy.http.headers import Headers

    day = 86400.0
    assert lifetime_from_headers(Headers({}), day, 0) == day
    assert lifetime_from_headers(Headers({"Cache-Control": "public, max-age=3600"}), day, 0) == 3600
    assert lifetime_from_headers(Headers({"Cache-Control": "max-age=999999"}), day, 0) == day
    assert lifetime_from_headers(Headers({"Expires": "Thu, 01 Jan 1970 02:00:00 GMT"}), day, 0) == 7200
    assert lifetime_from_headers(Headers({"Expires": "garbage"}), day, 0) == day


def test_memory_storage_is_bounded_lru():
    evicted = []
    storage = MemoryRobotsStorage(max_entries=2, on_evict=evicted.append)
    cache = RobotsCache(storage, clock=lambda: 10.0)
    for site in ("a", "b"):
        cache.put(RobotsEntry(site=site, action=Action.ALLOW, fetched_at=0, expires_at=20))
    assert cache.lookup("a")[0] == RobotsCache.HIT  # "a" is now the most recent
    cache.put(RobotsEntry(site="c", action=Action.ALLOW, fetched_at=0, expires_at=5))
    assert evicted == ["b"]
    assert cache.lookup("b") == (RobotsCache.MISS, None)
    assert cache.lookup("c")[0] == RobotsCache.EXPIRED
    assert len(cache) == 2
