"""Fetching robots.txt: once per site, every waiter served, redirects, size cap, hostile servers."""

from __future__ import annotations

import inspect
import logging
import time

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, robots_middleware, stat
from scrapy import Request
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as StockRobotsTxtMiddleware
from servers import SiteServer, body, drip, gzip_bomb, hang, redirect

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

ROBOTS = "User-agent: *\nDisallow: /private\n"
STOCK = {"scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": 100}
STOCK_IS_ASYNC = inspect.iscoroutinefunction(StockRobotsTxtMiddleware.robot_parser)


@pytest.mark.parametrize(
    "middlewares",
    [
        pytest.param(None, id="ours"),
        pytest.param(
            STOCK,
            id="stock",
            marks=pytest.mark.xfail(
                # Since its process_request became a coroutine (Scrapy 2.14): 2.13's
                # Deferred chain handed the parser to every waiter.
                STOCK_IS_ASYNC,
                strict=True,
                reason="Scrapy's stock middleware lets waiters other than the first through",
            ),
        ),
    ],
)
@pytest_twisted.ensureDeferred
async def test_every_waiting_request_gets_the_verdict(serve, middlewares):
    site = serve(body(ROBOTS))
    urls = [f"{site.url}/private/{i}" for i in range(50)]
    settings = {"DOWNLOADER_MIDDLEWARES": middlewares} if middlewares else {}
    crawler = await crawl(urls, **settings)
    assert site.robots_hits() == 1
    assert crawler.spider.downloaded == []
    assert [p for p in site.paths() if p.startswith("/private")] == []
    assert len(crawler.spider.ignored) == 50


@pytest_twisted.ensureDeferred
async def test_one_fetch_per_site_scheme_host_port(serve):
    a = serve(body(ROBOTS))
    b = serve(body("User-agent: *\nDisallow: /\n"))
    urls = [f"{a.url}/p{i}" for i in range(10)] + [f"{b.url}/p{i}" for i in range(10)]
    crawler = await crawl(urls)
    assert (a.robots_hits(), b.robots_hits()) == (1, 1)
    assert len(crawler.spider.downloaded) == 10
    assert len(crawler.spider.ignored) == 10


@pytest_twisted.ensureDeferred
async def test_redirect_chain_rules_apply_to_the_site_asked(serve):
    target = serve(body("User-agent: *\nDisallow: /private\n"))
    hops = [serve(redirect(f"{target.url}/robots.txt"))]
    for _ in range(4):  # 5 redirects in all, RFC 9309's minimum
        hops.append(serve(redirect(f"{hops[-1].url}/robots.txt", status=302)))
    origin = hops[-1]
    crawler = await crawl([f"{origin.url}/public", f"{origin.url}/private"])
    assert crawler.spider.downloaded == [f"{origin.url}/public"]
    assert crawler.spider.ignored == {f"{origin.url}/private": "Forbidden by robots.txt"}
    assert target.robots_hits() == 1
    # Cached under the site that was asked, with the hops it took.
    entry = robots_middleware(crawler).cache.get(f"http://{origin.host}:{origin.port}")
    assert entry.redirects == 5
    assert entry.url == f"{target.url}/robots.txt"
    assert target.page_hits() == []


@pytest_twisted.ensureDeferred
async def test_redirect_loop_ends_as_unavailable(serve):
    loop = serve(None)
    loop.robots = redirect("/robots.txt")  # to itself, forever
    crawler = await crawl([f"{loop.url}/a"], REDIRECT_MAX_TIMES=5)
    # Scrapy gives up after REDIRECT_MAX_TIMES: no rules were found; the request is
    # decided (by the 3xx row of the policy) instead of hanging or crashing.
    assert loop.robots_hits() == 6
    assert crawler.spider.downloaded == [f"{loop.url}/a"]
    assert stat(crawler, "robotstxt/policy/allow") == 1


@pytest_twisted.ensureDeferred
async def test_large_robots_parsed_up_to_maxsize(serve):
    rule = b"Disallow: /private\n"
    filler = b"# " + b"x" * 1000 + b"\n"
    big = b"User-agent: *\n" + rule + filler * 20_000 + b"Disallow: /late\n"  # ~20 MB
    site = serve(body(big))
    crawler = await crawl([f"{site.url}/public", f"{site.url}/private", f"{site.url}/late"], ROBOTSTXT_MAXSIZE=100_000)
    spider = crawler.spider
    # Rules before the cap count; the rule after it was never read.
    assert sorted(spider.downloaded) == [f"{site.url}/late", f"{site.url}/public"]
    assert spider.ignored == {f"{site.url}/private": "Forbidden by robots.txt"}
    assert stat(crawler, "robotstxt/truncated") == 1


@pytest_twisted.ensureDeferred
async def test_gzip_bomb_is_not_inflated(serve):
    site = serve(gzip_bomb(200 * 1024 * 1024))
    crawler = await crawl([f"{site.url}/a"], ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0)
    # Decompression stops at the bound; the fetch fails and the site is "unreachable".
    assert crawler.spider.downloaded == []
    assert "robots.txt unreachable" in crawler.spider.ignored[f"{site.url}/a"]


@pytest_twisted.ensureDeferred
async def test_gzip_bomb_names_our_setting(serve, caplog):
    # The bound is ROBOTSTXT_MAXSIZE's (x10 decompressed), not DOWNLOAD_MAXSIZE, which
    # Scrapy's text names (issue #20 item 17).
    site = serve(gzip_bomb(200 * 1024 * 1024))
    crawler = await crawl([f"{site.url}/a"], ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0, ROBOTSTXT_MAXSIZE=100_000)
    reason = crawler.spider.ignored[f"{site.url}/a"]
    [line] = [r.getMessage() for r in caplog.records if "robots.txt for" in r.getMessage()]
    for text in (reason, line):
        assert "ROBOTSTXT_MAXSIZE" in text and "1000000 bytes" in text, text
        assert "DOWNLOAD_MAXSIZE" not in text and "5120000" not in text, text


@pytest_twisted.ensureDeferred
async def test_a_cut_robots_txt_is_a_warning(serve, caplog):
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    big = b"User-agent: *\n" + (b"# " + b"x" * 1000 + b"\n") * 200 + b"Disallow: /after-cap\n"
    site = serve(body(big))
    await crawl([f"{site.url}/after-cap"], ROBOTSTXT_MAXSIZE=100_000)
    [line] = [r for r in caplog.records if "robots.txt for" in r.getMessage()]
    assert line.levelno == logging.WARNING, line.getMessage()
    assert "cut at ROBOTSTXT_MAXSIZE (100000 bytes)" in line.getMessage()
    assert "rules past it are not read" in line.getMessage()


@pytest_twisted.ensureDeferred
async def test_an_html_page_as_robots_txt_is_a_warning(serve, caplog):
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    html = b"<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body>Disallow: /x</body></html>\n"
    site = serve(body(html, headers={"Content-Type": "text/html"}))
    crawler = await crawl([f"{site.url}/a"])
    [line] = [r for r in caplog.records if "robots.txt for" in r.getMessage()]
    assert line.levelno == logging.WARNING, line.getMessage()
    assert "an HTML page, not a robots.txt" in line.getMessage()
    assert crawler.spider.downloaded == [f"{site.url}/a"]  # parsed as ever: no rule in it
    assert stat(crawler, "robotstxt/html_page") == 1


@pytest_twisted.ensureDeferred
async def test_a_plain_robots_txt_is_one_info_line(serve, caplog):
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    site = serve(body("User-agent: *\nDisallow: /private\n"))
    await crawl([f"{site.url}/a"])
    [line] = [r for r in caplog.records if "robots.txt for" in r.getMessage()]
    assert line.levelno == logging.INFO, line.getMessage()


@pytest_twisted.ensureDeferred
async def test_hanging_robots_bounded_by_timeout(serve):
    site = serve(hang())
    start = time.monotonic()
    crawler = await crawl([f"{site.url}/a"], ROBOTSTXT_TIMEOUT=1, ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0)
    assert time.monotonic() - start < 8
    assert "robots.txt unreachable" in crawler.spider.ignored[f"{site.url}/a"]
    assert "TimeoutError" in crawler.spider.ignored[f"{site.url}/a"]


@pytest_twisted.ensureDeferred
async def test_dripping_robots_bounded_by_timeout(serve):
    site = serve(drip(b"User-agent: *\nDisallow: /\n" * 100, interval=0.05))
    start = time.monotonic()
    crawler = await crawl([f"{site.url}/a"], ROBOTSTXT_TIMEOUT=1, ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0)
    assert time.monotonic() - start < 8
    assert crawler.spider.downloaded == []


@pytest_twisted.ensureDeferred
async def test_slow_site_does_not_stall_a_healthy_one(serve):
    slow = serve(hang())
    healthy = serve(body(ROBOTS))
    urls = [f"{slow.url}/s{i}" for i in range(20)] + [f"{healthy.url}/h{i}" for i in range(30)]
    start = time.monotonic()
    crawler = await crawl(urls, CONCURRENT_REQUESTS=4, ROBOTSTXT_TIMEOUT=4, ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0)
    healthy_done = max(hit.at for hit in healthy.page_hits())
    # Twenty requests wait for the slow site's robots.txt, yet all 30 healthy pages
    # are fetched long before that robots.txt times out.
    assert len(healthy.page_hits()) == 30
    assert healthy_done - start < 3
    assert len(crawler.spider.ignored) == 20


@pytest.fixture
def one_host():
    """``one_host(robots_handler) -> SiteServer``: sites on ports of 127.0.0.1 alone, so
    that they share one downloader slot (Scrapy's slots are per host name)."""
    started: list[SiteServer] = []

    def start(robots):
        site = SiteServer(host="127.0.0.1", robots=robots, routes={}).start()
        started.append(site)
        return site

    yield start
    for site in started:
        site.stop()


@pytest.mark.parametrize("settings", [{"CONCURRENT_REQUESTS_PER_DOMAIN": 1}, {"DOWNLOAD_DELAY": 0.5}])
@pytest_twisted.ensureDeferred
async def test_a_hanging_robots_txt_does_not_stall_the_sites_that_share_its_slot(one_host, settings):
    # Two sites on ports of one host share the downloader slot "127.0.0.1". The first
    # one's robots.txt hangs: it must not hold the slot's transfer place (or, paced, its
    # turn) while the other site's robots.txt and pages wait behind it (issue #30).
    slow = one_host(hang())
    healthy = one_host(body(ROBOTS))
    urls = [f"{slow.url}/s{i}" for i in range(3)] + [f"{healthy.url}/h{i}" for i in range(4)]
    start = time.monotonic()
    crawler = await crawl(urls, ROBOTSTXT_TIMEOUT=5, ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0, **settings)
    healthy_pages = healthy.page_hits()
    assert len(healthy_pages) == 4
    assert max(hit.at for hit in healthy_pages) - start < 4, [hit.at - start for hit in healthy_pages]
    assert len(crawler.spider.ignored) == 3
    # The slot's pace holds between the healthy site's robots.txt and its first page,
    # and between its pages, as when the robots.txt download went through the slot.
    delay = settings.get("DOWNLOAD_DELAY", 0)
    robots_at = next(hit.at for hit in healthy.hits if hit.path == "/robots.txt")
    starts = [robots_at] + sorted(hit.at for hit in healthy_pages)
    gaps = [later - earlier for earlier, later in zip(starts, starts[1:])]
    assert min(gaps) >= delay * 0.5 - 0.01, gaps  # RANDOMIZE_DOWNLOAD_DELAY: 0.5 to 1.5 times


class ProxySpider(RecordingSpider):
    """Every request goes through ``self.proxy`` (meta["proxy"], as a spider sets it)."""

    proxy = ""

    async def start(self):
        for url in self.urls:
            yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True, meta={"proxy": self.proxy})


def _forward_proxy(serve):
    """A forward proxy on loopback that answers for the site itself: a request line
    ``GET http://shop.invalid/path`` reaches it with the absolute URL as its path."""
    return serve(body(ROBOTS), routes={"http://shop.invalid/robots.txt": body(ROBOTS)})


@pytest.mark.parametrize("middlewares", [pytest.param(None, id="ours"), pytest.param(STOCK, id="stock")])
@pytest_twisted.ensureDeferred
async def test_robots_txt_goes_through_the_requests_proxy(serve, middlewares):
    proxy = _forward_proxy(serve)
    # A host only the proxy can reach: no DNS answer for .invalid (RFC 6761).
    urls = ["http://shop.invalid/a", "http://shop.invalid/private/b"]
    settings = {"DOWNLOADER_MIDDLEWARES": middlewares} if middlewares else {}
    ProxySpider.proxy = proxy.url
    crawler = await crawl(urls, spider_cls=ProxySpider, ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0, **settings)
    asked = proxy.paths()
    if middlewares is None:
        # Ours fetches robots.txt the way the page goes: through the proxy, and obeys it.
        assert asked.count("http://shop.invalid/robots.txt") == 1, asked
        assert crawler.spider.downloaded == ["http://shop.invalid/a"]
        assert "http://shop.invalid/private/b" in crawler.spider.ignored
        assert "http://shop.invalid/private/b" not in asked
    else:
        # Scrapy's stock middleware fetches it direct: DNS fails, the site is allowed,
        # and the disallowed page is fetched through the proxy (a documented difference).
        assert "http://shop.invalid/robots.txt" not in asked
        assert "http://shop.invalid/private/b" in asked


class CountingSpider(RecordingSpider):
    """Counts the receivers of the download signals while each page is being parsed."""

    def parse(self, response):
        from pydispatch.dispatcher import getAllReceivers, liveReceivers
        from scrapy import signals

        sender = self.crawler.signals.sender
        receivers = [
            receiver
            for signal in (signals.headers_received, signals.bytes_received)
            for receiver in liveReceivers(getAllReceivers(sender, signal))
        ]
        self.receivers = getattr(self, "receivers", []) + [
            type(getattr(receiver, "__self__", None)).__name__ for receiver in receivers
        ]
        return super().parse(response)


@pytest_twisted.ensureDeferred
async def test_the_size_cap_listens_to_robots_txt_downloads_only(serve):
    # The cap's receivers (headers_received, bytes_received) run only while a robots.txt
    # download is in flight: a page download pays nothing for them.
    site = serve(body("User-agent: *\nDisallow: /private\n"))
    crawler = await crawl([f"{site.url}/a", f"{site.url}/b"], spider_cls=CountingSpider, CONCURRENT_REQUESTS=1)
    assert len(crawler.spider.downloaded) == 2
    assert "RobotsFetcher" not in crawler.spider.receivers


class SlotCountingSpider(RecordingSpider):
    """Counts, at each page, the downloader slots of policy file downloads that hold nothing."""

    idle_policy_slots: list[int]

    def parse(self, response):
        super().parse(response)
        slots = self.crawler.engine.downloader.slots
        idle = [key for key, slot in slots.items() if key.startswith("robots.txt ") and not slot.active]
        # A download whose answer is still on its way back through the middlewares has left
        # its slot already: one such slot per download in flight, no more.
        self.idle_policy_slots.append(len(idle) - robots_middleware(self.crawler).sites.fetcher._in_flight)


@pytest.mark.parametrize("settings", [{}, {"ROBOTSTXT_USAGE": "train-ai"}], ids=["robots.txt", "and-tdmrep.json"])
@pytest_twisted.ensureDeferred
async def test_a_policy_files_slot_goes_when_its_download_ends(serve, settings):
    # Scrapy collects an idle slot after a minute: until then each site seen kept two slots,
    # its pages' and its robots.txt's (#41, memory). With TDMRep, two files pass through it.
    sites = [serve(body(ROBOTS)) for _ in range(10)]
    urls = [f"{site.url}/page/{n}" for site in sites for n in range(3)]
    SlotCountingSpider.idle_policy_slots = []
    crawler = await crawl(urls, SlotCountingSpider, **settings)
    assert len(crawler.spider.downloaded) == 30
    assert all(site.robots_hits() == 1 for site in sites)
    assert len(crawler.spider.idle_policy_slots) == 30
    assert max(crawler.spider.idle_policy_slots) <= 0, crawler.spider.idle_policy_slots
    slots = crawler.engine.downloader.slots if crawler.engine is not None else {}
    assert not [key for key in slots if key.startswith("robots.txt ")]
