"""Crawl-delay and Request-rate become the site's slot delay; nothing undercuts it.

Gaps are measured at the server, between the arrivals of consecutive page requests.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, stat
from scrapy import Request
from servers import body, redirect

from scrapy_robots.parsers import RFC9309Parser
from scrapy_robots.parsers.delay import read_site_delay

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

# The server sees a request a little after Scrapy sends it; connection reuse can make
# the second arrival quicker than the first. This is the measurement's slack, not the
# crawl's: see docs/crawl-delay.rst.
SLACK = 0.01


def gaps(site) -> list[float]:
    times = sorted(hit.at for hit in site.page_hits())
    return [b - a for a, b in zip(times, times[1:])]


def assert_paced(site, floor: float, pages: int) -> list[float]:
    measured = gaps(site)
    assert len(measured) == pages - 1, site.paths()
    assert min(measured) >= floor - SLACK, measured
    return measured


def urls(site, n: int) -> list[str]:
    return [f"{site.url}/page{i}" for i in range(n)]


@pytest.mark.parametrize("delay", [1.0, 0.5])
@pytest_twisted.ensureDeferred
async def test_crawl_delay_paces_the_site(serve, delay):
    site = serve(body(f"User-agent: *\nCrawl-delay: {delay}\n"))
    crawler = await crawl(urls(site, 4))
    measured = assert_paced(site, delay, 4)
    # Scrapy's jitter draws up to 1.5 x the floor; the loop's own lateness comes on top.
    assert max(measured) < delay * 1.5 + 0.2, measured
    assert stat(crawler, "robotstxt/crawl_delay/sites") == 1
    assert stat(crawler, "robotstxt/crawl_delay/max") == delay


@pytest_twisted.ensureDeferred
async def test_request_rate(serve):
    site = serve(body("User-agent: *\nRequest-rate: 2/1s\n"))
    await crawl(urls(site, 4))
    assert_paced(site, 0.5, 4)


@pytest_twisted.ensureDeferred
async def test_autothrottle_cannot_lower_it(serve):
    site = serve(body("User-agent: *\nCrawl-delay: 0.5\n"))
    await crawl(
        urls(site, 5),
        AUTOTHROTTLE_ENABLED=True,
        AUTOTHROTTLE_START_DELAY=0.01,
        AUTOTHROTTLE_MAX_DELAY=0.01,
        AUTOTHROTTLE_TARGET_CONCURRENCY=16,
    )
    assert_paced(site, 0.5, 5)


@pytest.mark.parametrize("setting", [{"DOWNLOAD_DELAY_JITTER": 0.9}, {"RANDOMIZE_DOWNLOAD_DELAY": True}])
@pytest_twisted.ensureDeferred
async def test_randomised_delay_only_lengthens(serve, setting):
    site = serve(body("User-agent: *\nCrawl-delay: 0.3\n"))
    await crawl(urls(site, 6), **setting)
    assert_paced(site, 0.3, 6)


@pytest_twisted.ensureDeferred
async def test_concurrency_within_the_slot_does_not_defeat_it(serve):
    site = serve(body("User-agent: *\nCrawl-delay: 0.4\n"))
    await crawl(urls(site, 5), CONCURRENT_REQUESTS_PER_DOMAIN=8, CONCURRENT_REQUESTS=16)
    assert_paced(site, 0.4, 5)


class GarbageCollectingSpider(RecordingSpider):
    """Crawls a batch, lets the slot be garbage-collected, then crawls another batch."""

    async def start(self):
        for url in self.urls[:2]:
            yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)
        downloader = self.crawler.engine.downloader
        while len(self.downloaded) < 2:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        # What Scrapy's slot GC loop does a minute after a slot's last request.
        downloader._slot_gc(age=0)
        self.slots_after_gc = dict(downloader.slots)
        for url in self.urls[2:]:
            yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)


@pytest_twisted.ensureDeferred
async def test_delay_survives_slot_garbage_collection(serve):
    site = serve(body("User-agent: *\nCrawl-delay: 0.4\n"))
    crawler = await crawl(urls(site, 5), spider_cls=GarbageCollectingSpider)
    assert site.host not in crawler.spider.slots_after_gc  # the slot really was collected
    assert_paced(site, 0.4, 5)


@pytest_twisted.ensureDeferred
async def test_two_sites_each_paced_on_their_own(serve):
    slow = serve(body("User-agent: *\nCrawl-delay: 0.6\n"))
    fast = serve(body("User-agent: *\nCrawl-delay: 0.2\n"))
    await crawl(urls(slow, 4) + urls(fast, 8))
    assert_paced(slow, 0.6, 4)
    fast_gaps = assert_paced(fast, 0.2, 8)
    # The fast site was not slowed to the slow one's pace.
    assert sorted(fast_gaps)[len(fast_gaps) // 2] < 0.4


@pytest_twisted.ensureDeferred
async def test_users_larger_delay_stays_the_floor(serve):
    site = serve(body("User-agent: *\nCrawl-delay: 0.1\n"))
    await crawl(urls(site, 3), DOWNLOAD_DELAY=0.5, DOWNLOAD_DELAY_JITTER=0.5)
    assert_paced(site, 0.5, 3)


@pytest_twisted.ensureDeferred
async def test_download_slots_delay_stays_the_floor(serve):
    site = serve(body("User-agent: *\nCrawl-delay: 0.1\n"))
    await crawl(urls(site, 3), DOWNLOAD_SLOTS={site.host: {"delay": 0.5, "jitter": 0.5}})
    assert_paced(site, 0.5, 3)


@pytest_twisted.ensureDeferred
async def test_max_crawl_delay_clamps(serve, caplog):
    site = serve(body("User-agent: *\nCrawl-delay: 100\n"))
    crawler = await crawl(urls(site, 3), ROBOTSTXT_MAX_CRAWL_DELAY=0.4)
    measured = assert_paced(site, 0.4, 3)
    assert max(measured) < 2
    assert stat(crawler, "robotstxt/crawl_delay/clamped") == 1
    assert f"robots.txt for http://{site.host}:{site.port} asks a delay of 100s" in caplog.text


@pytest_twisted.ensureDeferred
async def test_max_crawl_delay_skip(serve, caplog):
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    site = serve(body("User-agent: *\nCrawl-delay: 100\n"))
    crawler = await crawl(urls(site, 3), ROBOTSTXT_MAX_CRAWL_DELAY=10, ROBOTSTXT_CRAWL_DELAY_EXCEEDED="skip")
    assert site.page_hits() == []
    assert set(crawler.spider.ignored.values()) == {
        "Forbidden by robots.txt: Crawl-delay 100s exceeds ROBOTSTXT_MAX_CRAWL_DELAY (10s)"
    }
    assert stat(crawler, "robotstxt/denied/crawl_delay") == 3
    # No delay is applied to a site skipped (#30): not in the stats, nor in the site's line.
    assert stat(crawler, "robotstxt/crawl_delay/skipped") == 1
    assert stat(crawler, "robotstxt/crawl_delay/max", None) is None
    [line] = [r.getMessage() for r in caplog.records if "HTTP 200 -> parse" in r.getMessage()]
    assert line.endswith(", crawl-delay 100s above the maximum: site skipped"), line


@pytest_twisted.ensureDeferred
async def test_feature_off(serve):
    site = serve(body("User-agent: *\nCrawl-delay: 1\n"))
    crawler = await crawl(urls(site, 4), ROBOTSTXT_CRAWL_DELAY=False)
    assert max(gaps(site)) < 0.5
    assert stat(crawler, "robotstxt/crawl_delay/sites") == 0


class CustomSlotSpider(RecordingSpider):
    async def start(self):
        for url in self.urls:
            yield Request(url, callback=self.parse, meta={"download_slot": "my-slot"}, dont_filter=True)


@pytest_twisted.ensureDeferred
async def test_site_delay_applies_to_a_custom_download_slot(serve):
    site = serve(body("User-agent: *\nCrawl-delay: 0.4\n"))
    crawler = await crawl(urls(site, 4), spider_cls=CustomSlotSpider)
    assert_paced(site, 0.4, 4)
    assert crawler.engine.downloader.per_slot_settings["my-slot"]["delay"] == 0.4


class TwoBatchSpider(RecordingSpider):
    async def start(self):
        for batch in (self.urls[:3], self.urls[3:]):
            for url in batch:
                yield Request(url, callback=self.parse, dont_filter=True)
            await asyncio.sleep(1.6)


@pytest_twisted.ensureDeferred
async def test_slot_follows_a_refetched_robots_txt(serve):
    second = itertools.repeat("User-agent: *\nCrawl-delay: 0.6\n")
    answers = itertools.chain(["User-agent: *\nCrawl-delay: 0.1\n"], second)
    site = serve(lambda request: body(next(answers))(request))
    await crawl(urls(site, 6), spider_cls=TwoBatchSpider, ROBOTSTXT_CACHE_TTL=1.0)
    # The second batch waits 1.2 to 1.8 s in its slot's line, beyond the file's 1 s lifetime:
    # a request is judged as it leaves, with the file fetched again whenever it expired.
    assert 2 <= site.robots_hits() <= 4
    measured = gaps(site)
    assert max(measured[:2]) < 0.5  # first batch: 0.1 s apart
    assert min(measured[3:]) >= 0.6 - SLACK  # second batch: the new, longer delay


class LateSiteSpider(RecordingSpider):
    """The first site's pages at once; the last URL (another site's) 1.5 s later."""

    async def start(self):
        for url in self.urls[:-1]:
            yield Request(url, callback=self.parse, dont_filter=True)
        await asyncio.sleep(1.5)
        yield Request(self.urls[-1], callback=self.parse, dont_filter=True)


def arrivals_apart(site) -> list[float]:
    """Gaps between every arrival at ``site`` after its robots.txt: pages and other sites' hops."""
    times = sorted(hit.at for hit in site.hits)
    return [b - a for a, b in zip(times, times[1:])]


@pytest_twisted.ensureDeferred
async def test_a_robots_txt_redirected_to_a_paced_host_keeps_its_pace(serve):
    # Scrapy's redirect keeps meta["download_slot"]: the hop to the paced host would go
    # out in the first host's slot, 0.04 s after one of that host's pages (issue #20 item 16).
    paced = serve(body("User-agent: *\nCrawl-delay: 1\n"), routes={"/moved-robots.txt": body("User-agent: *\n")})
    other = serve(redirect(f"{paced.url}/moved-robots.txt"))
    crawler = await crawl([*urls(paced, 4), f"{other.url}/page"], spider_cls=LateSiteSpider)
    assert "/moved-robots.txt" in paced.paths()
    assert len(crawler.spider.downloaded) == 5
    assert min(arrivals_apart(paced)) >= 1 - SLACK, (paced.paths(), arrivals_apart(paced))


@pytest_twisted.ensureDeferred
async def test_a_page_redirected_to_a_paced_host_keeps_its_pace(serve):
    paced = serve(body("User-agent: *\nCrawl-delay: 1\n"))
    other = serve(body("User-agent: *\n"), routes={"/moved": redirect(f"{paced.url}/landing")})
    crawler = await crawl([*urls(paced, 4), f"{other.url}/moved"], spider_cls=LateSiteSpider)
    assert "/landing" in paced.paths()
    assert len(crawler.spider.downloaded) == 5
    assert min(arrivals_apart(paced)) >= 1 - SLACK, (paced.paths(), arrivals_apart(paced))


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ("Crawl-delay: abc", None),
        ("Crawl-delay: -1", None),
        ("Crawl-delay: NaN", None),
        ("Crawl-delay: inf", None),
        ("Crawl-delay: 0", None),
        ("Crawl-delay: 2.5", (2.5, 2.5)),
        ("Crawl-delay: 1e308", (1e308, 60.0)),
        ("Request-rate: 0/5", None),
        ("Request-rate: 3/10s", (10 / 3, 10 / 3)),
        ("Crawl-delay: 1\nRequest-rate: 1/5", (5.0, 5.0)),
    ],
)
def test_invalid_values_never_crash(lines, expected):
    parser = RFC9309Parser(f"User-agent: *\n{lines}\n".encode(), "FooBot")
    delay = read_site_delay(parser, "FooBot", 60.0, "clamp")
    if expected is None:
        assert delay is None
    else:
        assert delay is not None
        assert math.isclose(delay.asked, expected[0]) and math.isclose(delay.applied, expected[1])
