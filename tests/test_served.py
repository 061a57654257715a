"""A spider's own robots.txt request is answered from the middleware's fetch (#22).

Real crawls of real local sites: a SitemapSpider started from each site's robots.txt,
counted at the servers, its items compared with a crawl without the package."""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit

import pytest
import pytest_twisted
from crawling import BASE_SETTINGS, crawl, stat
from scrapy import signals
from scrapy.crawler import CrawlerRunner
from scrapy.http.request import NO_CALLBACK
from scrapy.spiders import SitemapSpider
from scrapy.utils.defer import deferred_from_coro
from servers import body, redirect
from twisted.internet import reactor
from twisted.internet.task import deferLater

WITHOUT_PACKAGE = {"ROBOTSTXT_OBEY": False, "DOWNLOADER_MIDDLEWARES": {}}
STOCK = {"DOWNLOADER_MIDDLEWARES": {}}  # Scrapy's own RobotsTxtMiddleware, as Scrapy enables it


class SitemapRecorder(SitemapSpider):
    """A SitemapSpider with rules, a follow filter and alternate links, started from
    the URLs it is given; records its items and the robots.txt responses it received."""

    name = "sitemaps"
    sitemap_rules = [("/news/", "parse_news"), ("", "parse_page")]
    sitemap_follow = [r"/sitemap-(pages|news)\.xml", r"/sitemap\.xml"]
    sitemap_alternate_links = True

    def __init__(self, urls=(), **kwargs):
        super().__init__(**kwargs)
        self.sitemap_urls = list(urls)
        self.items: list[tuple[str, str]] = []
        self.robots: list[tuple[str, int, list[str]]] = []

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._received, signal=signals.response_received)
        return spider

    def _received(self, response, request, spider):
        # The spider's own (a robots.txt middleware's requests have no callback).
        if response.url.endswith("robots.txt") and request.callback is not NO_CALLBACK:
            self.robots.append((response.url, response.status, list(response.flags)))

    def parse_page(self, response):
        self.items.append(("page", response.url))
        yield {"page": response.url}

    def parse_news(self, response):
        self.items.append(("news", response.url))
        yield {"news": response.url}


def urlset(*locs: str, alternates: dict[str, str] | None = None) -> bytes:
    alternates = alternates or {}
    entries = "".join(
        f"<url><loc>{loc}</loc>"
        + (f'<xhtml:link rel="alternate" hreflang="de" href="{alternates[loc]}"/>' if loc in alternates else "")
        + "</url>"
        for loc in locs
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        f'xmlns:xhtml="http://www.w3.org/1999/xhtml">{entries}</urlset>'
    ).encode()


def sitemapindex(*locs: str) -> bytes:
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</sitemapindex>'
    ).encode()


def xml(make):
    """A route answering the XML that ``make()`` builds (the sites' URLs are known once they listen)."""

    def handle(request):
        request.setHeader(b"Content-Type", b"application/xml")
        return make()

    return handle


def start_sites(serve):
    """Three sites: one with a sitemap index, one whose robots.txt is a 404 (its sitemap
    submitted by the first one's robots.txt, as sitemaps.org allows), one whose
    robots.txt redirects to /static/robots.txt, whose relative Sitemap line resolves
    against that final URL."""
    a = serve(
        lambda request: body(
            f"User-agent: *\nDisallow: /admin/\nSitemap: /sitemap_index.xml\nSitemap: {b.url}/sitemap.xml\n"
        )(request)
    )
    b = serve(body("<html>Not Found</html>", status=404, headers={"Content-Type": "text/html"}))
    c = serve(redirect("/static/robots.txt"))
    a.routes.update(
        {
            "/sitemap_index.xml": xml(
                lambda: sitemapindex(
                    f"{a.url}/sitemap-pages.xml", f"{a.url}/sitemap-news.xml", f"{a.url}/sitemap-skip.xml"
                )
            ),
            "/sitemap-pages.xml": xml(
                lambda: urlset(
                    f"{a.url}/page/1", f"{a.url}/page/2", alternates={f"{a.url}/page/1": f"{a.url}/de/page/1"}
                )
            ),
            "/sitemap-news.xml": xml(lambda: urlset(f"{a.url}/news/1")),
            "/sitemap-skip.xml": xml(lambda: urlset(f"{a.url}/skipped/1")),
        }
    )
    b.routes["/sitemap.xml"] = xml(lambda: urlset(f"{b.url}/page/1", f"{b.url}/news/2"))
    c.routes.update(
        {
            "/static/robots.txt": body("User-agent: *\nDisallow: /tmp/\nSitemap: sitemap.xml\n"),
            "/static/sitemap.xml": xml(lambda: urlset(f"{c.url}/page/1", f"{c.url}/news/3")),
        }
    )
    return a, b, c


def robots_downloads(sites) -> list[dict[str, int]]:
    """Per site, the robots.txt files its server sent, by path."""
    return [dict(Counter(hit.path for hit in site.hits if hit.path.endswith("robots.txt"))) for site in sites]


def pages(sites) -> Counter[str]:
    return Counter(f"{site.host}{hit.path}" for site in sites for hit in site.hits if not hit.path.endswith(".txt"))


async def sitemap_crawl(sites, **settings):
    """The SitemapSpider from the sites' robots.txt; the servers' records start afresh."""
    for site in sites:
        site.hits.clear()
    return await crawl([f"{site.url}/robots.txt" for site in sites], spider_cls=SitemapRecorder, **settings)


ONE_EACH = [{"/robots.txt": 1}, {"/robots.txt": 1}, {"/robots.txt": 1, "/static/robots.txt": 1}]
EXPECTED_ITEMS = [
    ("news", "/news/1"),
    ("news", "/news/2"),
    ("news", "/news/3"),
    ("page", "/de/page/1"),
    ("page", "/page/1"),
    ("page", "/page/1"),
    ("page", "/page/1"),
    ("page", "/page/2"),
]


def storage_settings(kind, tmp_path, request):
    if kind == "memory":
        return {}
    if kind == "sqlite":
        return {"ROBOTSTXT_CACHE_PATH": str(tmp_path / "robots.sqlite3")}
    redis = request.getfixturevalue("redis")
    return {"ROBOTSTXT_CACHE_STORAGE": "scrapy_robots.fleet.RedisRobotsStorage", "ROBOTSTXT_REDIS_URL": redis.url}


@pytest.mark.parametrize("storage", ["memory", "sqlite", "redis"])
@pytest_twisted.ensureDeferred
async def test_a_sitemap_spider_from_robots_txt_downloads_each_once_and_crawls_as_without_the_package(
    serve, tmp_path, request, storage
):
    sites = start_sites(serve)
    plain = await sitemap_crawl(sites, **WITHOUT_PACKAGE)
    plain_pages = pages(sites)
    assert robots_downloads(sites) == ONE_EACH
    assert sorted((kind, urlsplit(url).path) for kind, url in plain.spider.items) == EXPECTED_ITEMS

    ours = await sitemap_crawl(sites, **storage_settings(storage, tmp_path, request))
    # One robots.txt download per site, counted at the servers: the middleware's.
    assert robots_downloads(sites) == ONE_EACH
    assert stat(ours, "robotstxt/request_count") == 3
    assert stat(ours, "robotstxt/served") == 3
    # The same sitemaps and pages, the same items: sitemap_rules, sitemap_follow
    # (sitemap-skip.xml is not followed) and sitemap_alternate_links unchanged.
    assert sorted(ours.spider.items) == sorted(plain.spider.items)
    assert pages(sites) == plain_pages
    assert all("/skipped/" not in page and "sitemap-skip" not in page for page in pages(sites))
    # The spider's robots.txt responses: the status and final URL of a download, flagged.
    a, b, c = sites
    assert sorted(ours.spider.robots) == sorted(
        [
            (f"{a.url}/robots.txt", 200, ["robotstxt"]),
            (f"{b.url}/robots.txt", 404, ["robotstxt"]),
            (f"{c.url}/static/robots.txt", 200, ["robotstxt"]),
        ]
    )
    assert sorted(url_status for *url_status, _ in ours.spider.robots) == sorted(
        url_status for *url_status, _ in plain.spider.robots
    )


@pytest_twisted.ensureDeferred
async def test_scrapys_middleware_downloads_each_robots_txt_twice(serve):
    # The numbers the docs give: Scrapy's own middleware and the spider each download
    # robots.txt (the redirecting site's target too); the items are the same.
    sites = start_sites(serve)
    plain = await sitemap_crawl(sites, **WITHOUT_PACKAGE)
    stock = await sitemap_crawl(sites, **STOCK)
    assert robots_downloads(sites) == [
        {"/robots.txt": 2},
        {"/robots.txt": 2},
        {"/robots.txt": 2, "/static/robots.txt": 2},
    ]
    assert sorted(stock.spider.items) == sorted(plain.spider.items)
    ours = await sitemap_crawl(sites)
    assert robots_downloads(sites) == ONE_EACH
    assert sorted(ours.spider.items) == sorted(plain.spider.items)


@pytest_twisted.ensureDeferred
async def test_a_second_crawl_is_served_from_the_sqlite_file_with_no_download(serve, tmp_path):
    sites = start_sites(serve)
    plain = await sitemap_crawl(sites, **WITHOUT_PACKAGE)
    path = {"ROBOTSTXT_CACHE_PATH": str(tmp_path / "robots.sqlite3")}
    await sitemap_crawl(sites, **path)
    second = await sitemap_crawl(sites, **path)
    assert robots_downloads(sites) == [{}, {}, {}]
    assert stat(second, "robotstxt/request_count") == 0
    assert stat(second, "robotstxt/served") == 3
    assert sorted(second.spider.items) == sorted(plain.spider.items)


@pytest_twisted.ensureDeferred
async def test_a_fleets_second_crawler_is_served_from_redis_with_no_download(serve, redis):
    sites = start_sites(serve)
    plain = await sitemap_crawl(sites, **WITHOUT_PACKAGE)
    fleet = {"ROBOTSTXT_CACHE_STORAGE": "scrapy_robots.fleet.RedisRobotsStorage", "ROBOTSTXT_REDIS_URL": redis.url}
    await sitemap_crawl(sites, **fleet)
    second = await sitemap_crawl(sites, **fleet)
    assert robots_downloads(sites) == [{}, {}, {}]
    assert stat(second, "robotstxt/served") == 3
    assert stat(second, "robotstxt/fleet/hit") == 3
    assert sorted(second.spider.items) == sorted(plain.spider.items)


async def until(condition, timeout: float = 10.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        await deferLater(reactor, 0.02, lambda: None)
    raise AssertionError("timed out")


class PauseAfterRobots:
    """A downloader middleware before ours: once the spider's 3 robots.txt requests
    have reached the downloader, the engine takes no other request (the sitemaps that
    the answers name stay in the scheduler)."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.seen = 0

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def process_request(self, request, spider=None):
        if request.url.endswith("/robots.txt") and request.callback is not NO_CALLBACK:
            self.seen += 1
            if self.seen == 3:
                self.crawler.engine.pause()


@pytest_twisted.ensureDeferred
async def test_a_jobdir_crawl_resumed_downloads_no_robots_txt_and_follows_the_sitemaps(serve, tmp_path):
    sites = start_sites(serve)
    plain = await sitemap_crawl(sites, **WITHOUT_PACKAGE)
    settings = {**BASE_SETTINGS, "JOBDIR": str(tmp_path / "job")}
    for site in sites:
        site.hits.clear()
    # The first run stops once the spider has its 3 robots.txt answers, and the sitemaps
    # they name wait in the job's queue.
    paused = {**settings, "DOWNLOADER_MIDDLEWARES": {**settings["DOWNLOADER_MIDDLEWARES"], PauseAfterRobots: 10}}
    first = CrawlerRunner(paused).create_crawler(SitemapRecorder)
    done = first.crawl(urls=[f"{site.url}/robots.txt" for site in sites])
    await until(lambda: first.spider is not None and len(first.spider.robots) == 3)
    await until(lambda: first.engine.scraper.slot.is_idle() and len(first.engine._slot.scheduler) == 3)
    await (deferred_from_coro(first.stop_async()) if hasattr(first, "stop_async") else first.stop())  # 2.14+
    await done
    assert robots_downloads(sites) == ONE_EACH
    assert stat(first, "robotstxt/served") == 3
    assert stat(first, "scheduler/dequeued") == 3
    assert first.spider.items == []

    for site in sites:
        site.hits.clear()
    second = await crawl([f"{site.url}/robots.txt" for site in sites], spider_cls=SitemapRecorder, **settings)
    # The resumed run downloads no robots.txt: its sites come back from the job's SQLite
    # file, and the sitemaps found before the stop are followed.
    assert robots_downloads(sites) == [{}, {}, {}]
    assert stat(second, "robotstxt/request_count") == 0
    assert stat(second, "robotstxt/cache/restored") == 3
    assert sorted(second.spider.items) == sorted(plain.spider.items)
