"""A spider's own robots.txt request is answered from the middleware's fetch (#22).

Real crawls of real local sites: a SitemapSpider started from each site's robots.txt,
counted at the servers, its items compared with a crawl without the package."""

from __future__ import annotations

import asyncio
import gzip
import json
import sqlite3
import time
import zlib
from collections import Counter
from typing import Any
from urllib.parse import urlsplit

import pytest
import pytest_twisted
from crawling import BASE_SETTINGS, crawl, stat
from scrapy import Request, Spider, signals
from scrapy.crawler import CrawlerRunner
from scrapy.http import TextResponse
from scrapy.http.request import NO_CALLBACK
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.spiders import SitemapSpider
from scrapy.utils.defer import deferred_from_coro
from servers import body, redirect, reset, sequence
from twisted.internet import reactor
from twisted.internet.task import deferLater

from scrapy_robots.cache import RobotsEntry, SqliteRobotsStorage, pack, unpack
from scrapy_robots.cache._zdict import DICTIONARY_1
from scrapy_robots.cache.entry import PACKED_1, RECORD_FIELDS, entry_from_record, record_of
from scrapy_robots.status.policy import Action

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


# -- what is served, what is not ----------------------------------------------------------


class RobotsAsker(Spider):
    """Asks for the URLs it is given, each ``(label, url, Request kwargs)``, or waits
    ``seconds`` for a float; records each answer or failure by label."""

    name = "asker"

    def __init__(self, urls=(), **kwargs):
        super().__init__(**kwargs)
        self.asks = list(urls)
        self.answers: dict[str, Any] = {}
        self.failures: dict[str, str] = {}

    async def start(self):
        for ask in self.asks:
            if isinstance(ask, float):
                await asyncio.sleep(ask)
                continue
            label, url, kwargs = ask
            yield Request(url, self.parse, errback=self.errback, dont_filter=True, cb_kwargs={"label": label}, **kwargs)

    def parse(self, response, label):
        self.answers[label] = response

    def errback(self, failure):
        label = failure.request.cb_kwargs["label"]
        if failure.check(HttpError):
            self.answers[label] = failure.value.response
        else:
            self.failures[label] = str(failure.value)


def answer(response) -> tuple[int, str, list[str]]:
    return response.status, response.url, list(response.flags)


class SeenLater:
    """A downloader middleware after ours: the responses its process_response sees."""

    seen: list[tuple[str, list[str]]] = []

    def process_response(self, request, response, spider=None):
        SeenLater.seen.append((response.url, list(response.flags)))
        return response


@pytest_twisted.ensureDeferred
async def test_only_a_get_of_exactly_robots_txt_is_served_and_the_spider_may_ask_for_the_live_file(serve):
    site = serve(body("User-agent: *\nDisallow: /private\n"))
    robots = f"{site.url}/robots.txt"
    asks = [
        ("served", robots, {}),
        ("asked live", robots, {"meta": {"dont_serve_robotstxt": True}}),
        ("not obeyed", robots, {"meta": {"dont_obey_robotstxt": True}}),
        ("query", f"{robots}?v=2", {}),
        ("elsewhere", f"{site.url}/static/robots.txt", {}),
        ("head", robots, {"method": "HEAD"}),
    ]
    crawler = await crawl(asks, spider_cls=RobotsAsker)
    answers = crawler.spider.answers
    assert answer(answers["served"]) == (200, robots, ["robotstxt"])
    assert answers["served"].body == b"User-agent: *\nDisallow: /private\n"
    assert all(answers[label].flags == [] for label in ("asked live", "not obeyed", "query", "elsewhere", "head"))
    # The middleware's fetch, then every request but the served one, downloaded.
    assert Counter(site.paths()) == {"/robots.txt": 5, "/static/robots.txt": 1}
    assert stat(crawler, "robotstxt/served") == 1
    assert stat(crawler, "robotstxt/not_served/asked") == 1
    assert stat(crawler, "robotstxt/request_count") == 1

    site.hits.clear()
    crawler = await crawl(asks[:1], spider_cls=RobotsAsker, ROBOTSTXT_SERVE=False)
    assert answer(crawler.spider.answers["served"]) == (200, robots, [])
    assert site.robots_hits() == 2
    assert stat(crawler, "robotstxt/served") == 0


@pytest_twisted.ensureDeferred
async def test_the_body_served_is_the_text_the_crawl_read_without_content_encoding(serve):
    # A gzip-encoded Latin-1 file with CRLF line ends: served as the crawl read it, UTF-8
    # (the byte that is not UTF-8 as its %XX, as every parser read it), its Content-Type saying
    # so. A file past ROBOTSTXT_MAXSIZE is not served cut: the spider downloads it whole.
    latin = "User-agent: *\r\nDisallow: /caf\xe9\r\nSitemap: /sitemap.xml\r\n".encode("latin-1")

    def encoded(request):
        request.setHeader(b"Content-Type", b"text/plain; charset=ISO-8859-1")
        request.setHeader(b"Content-Encoding", b"gzip")
        return gzip.compress(latin)

    latin_site = serve(encoded)
    big = "User-agent: *\n" + "".join(f"Disallow: /p{i:03d}\n" for i in range(100))
    big_site = serve(body(big))
    SeenLater.seen = []
    crawler = await crawl(
        [("latin", f"{latin_site.url}/robots.txt", {}), ("big", f"{big_site.url}/robots.txt", {})],
        spider_cls=RobotsAsker,
        ROBOTSTXT_MAXSIZE=200,
        DOWNLOADER_MIDDLEWARES={**BASE_SETTINGS["DOWNLOADER_MIDDLEWARES"], SeenLater: 950},
    )
    served = crawler.spider.answers["latin"]
    assert isinstance(served, TextResponse) and served.flags == ["robotstxt"]
    assert served.body == b"User-agent: *\nDisallow: /caf%E9\nSitemap: /sitemap.xml\n"
    assert served.headers.get(b"Content-Type") == b"text/plain; charset=utf-8"
    assert b"Content-Encoding" not in served.headers
    assert served.text.splitlines()[2] == "Sitemap: /sitemap.xml"
    whole = crawler.spider.answers["big"]
    assert whole.body == big.encode() and whole.flags == []
    assert [latin_site.robots_hits(), big_site.robots_hits()] == [1, 2]
    # Through the other downloader middlewares' process_response, as a download.
    assert (f"{latin_site.url}/robots.txt", ["robotstxt"]) in SeenLater.seen
    assert stat(crawler, "downloader/response_count") == 4  # 2 fetches, 1 served, 1 downloaded
    assert stat(crawler, "robotstxt/not_served/truncated") == 1


@pytest_twisted.ensureDeferred
async def test_a_site_whose_robots_txt_was_not_parsed_gets_its_status(serve):
    denied = serve(body("no robots for you", status=403))
    down = serve(body("overloaded", status=503))
    crawler = await crawl(
        [("403", f"{denied.url}/robots.txt", {}), ("503", f"{down.url}/robots.txt", {})],
        spider_cls=RobotsAsker,
        ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0,
        RETRY_ENABLED=False,
    )
    answers = crawler.spider.answers
    assert answer(answers["403"]) == (403, f"{denied.url}/robots.txt", ["robotstxt"])
    assert answer(answers["503"]) == (503, f"{down.url}/robots.txt", ["robotstxt"])
    assert answers["403"].body == answers["503"].body == b""  # an error page's body is not kept
    assert [denied.robots_hits(), down.robots_hits()] == [1, 1]
    assert stat(crawler, "robotstxt/served") == 2


@pytest_twisted.ensureDeferred
async def test_no_answer_is_made_up_for_a_failed_fetch_or_a_stale_copy(serve):
    # A network error: nothing to pass on; the request is ignored as unreachable, as
    # any request of the site. A 3xx not followed (its Location is not kept) and a stale
    # copy kept in use (the refetch failed): the spider downloads robots.txt itself.
    broken = serve(reset())
    moved = serve(body("moved", status=301))  # no Location: not followed, and the site allowed
    stale = serve(sequence(body("User-agent: *\nDisallow: /private\n"), body("down", status=503)))
    crawler = await crawl(
        [
            ("reset", f"{broken.url}/robots.txt", {}),
            ("moved", f"{moved.url}/robots.txt", {}),
            ("page", f"{stale.url}/page", {}),
            1.5,
            ("stale", f"{stale.url}/robots.txt", {}),
        ],
        spider_cls=RobotsAsker,
        ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0,
        ROBOTSTXT_CACHE_TTL=1,
        RETRY_ENABLED=False,
    )
    spider = crawler.spider
    assert list(spider.failures) == ["reset"]
    assert spider.failures["reset"].startswith("Forbidden by robots.txt: robots.txt unreachable (")
    assert answer(spider.answers["stale"]) == (503, f"{stale.url}/robots.txt", [])
    assert answer(spider.answers["moved"]) == (301, f"{moved.url}/robots.txt", [])
    assert [broken.robots_hits(), moved.robots_hits()] == [1, 2]
    assert stale.robots_hits() == 3  # the fetch, the refetch that failed, the spider's own
    assert stat(crawler, "robotstxt/cache/stale_used") == 1
    assert stat(crawler, "robotstxt/not_served/failed") == 3
    assert stat(crawler, "robotstxt/served") == 0


@pytest_twisted.ensureDeferred
async def test_an_excluded_sites_robots_txt_is_neither_served_nor_fetched(serve):
    site = serve(body("User-agent: *\nDisallow:\n"))
    crawler = await crawl(
        [("excluded", f"{site.url}/robots.txt", {})], spider_cls=RobotsAsker, ROBOTSTXT_EXCLUDED_DOMAINS=[site.host]
    )
    assert crawler.spider.failures == {
        "excluded": "Forbidden by robots.txt: excluded domain (ROBOTSTXT_EXCLUDED_DOMAINS)"
    }
    assert site.hits == []
    assert stat(crawler, "robotstxt/not_served/excluded") == 1


def old_record(entry: RobotsEntry) -> str:
    """``entry``'s record as a version without ``content_type`` wrote it."""
    fields = json.loads(record_of(entry))
    del fields["content_type"]
    return json.dumps(fields)


def test_a_record_of_an_earlier_version_still_loads():
    entry = RobotsEntry(
        site="http://a.example:80",
        action=Action.PARSE,
        fetched_at=1.0,
        expires_at=2.0,
        status=200,
        url="http://a.example/robots.txt",
        content_type="text/plain",
        body=b"User-agent: *\n",
    )
    assert entry_from_record(record_of(entry), entry.body) == entry
    old = entry_from_record(old_record(entry), entry.body)
    assert old.content_type is None and old.status == 200 and old.body == entry.body
    # The packed form (memory storage) of an entry without the field, too.
    stream = zlib.decompressobj(15, DICTIONARY_1).decompress(pack(entry)[1:])
    record, _, rest = stream.partition(b"\0")
    # (content_type and every field after it: the fields a version before #22 lacks)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, DICTIONARY_1)
    shorter_stream = json.dumps(json.loads(record)[: RECORD_FIELDS.index("content_type")]).encode() + b"\0" + rest
    shorter = PACKED_1 + compressor.compress(shorter_stream) + compressor.flush()
    assert unpack(shorter).content_type is None and unpack(shorter).body == entry.body
    with pytest.raises(ValueError):
        entry_from_record(record_of(entry).replace('"content_type":"text/plain"', '"content_type":5'), None)


@pytest_twisted.ensureDeferred
async def test_a_stored_record_of_an_earlier_version_is_obeyed_and_the_spider_downloads_robots_txt(serve, tmp_path):
    site = serve(body("User-agent: *\nDisallow: /private\n"))
    path = tmp_path / "robots.sqlite3"
    now = time.time()
    entry = RobotsEntry(
        site=f"http://{site.host}:{site.port}",
        action=Action.PARSE,
        fetched_at=now - 60,
        expires_at=now + 3600,
        status=200,
        url=f"{site.url}/robots.txt",
        content_type="text/plain",
        body=b"User-agent: *\nDisallow: /private\n",
    )
    storage = SqliteRobotsStorage(path)
    await deferred_from_coro(storage.save(entry))
    await deferred_from_coro(storage.close())
    with sqlite3.connect(path) as db:
        db.execute("UPDATE robots SET record = ?", (old_record(entry),))
    db.close()
    crawler = await crawl(
        [("robots", f"{site.url}/robots.txt", {}), ("private", f"{site.url}/private", {})],
        spider_cls=RobotsAsker,
        ROBOTSTXT_CACHE_PATH=str(path),
    )
    # The old record's rules still apply (no fetch); the spider's request is downloaded.
    assert crawler.spider.failures == {"private": "Forbidden by robots.txt"}
    assert answer(crawler.spider.answers["robots"]) == (200, f"{site.url}/robots.txt", [])
    assert site.robots_hits() == 1
    assert stat(crawler, "robotstxt/request_count") == 0
    assert stat(crawler, "robotstxt/not_served/not_stored") == 1


def large_robots_txt(sitemap_url: str, size: int) -> str:
    """A robots.txt of about ``size`` bytes of rules whose ``Sitemap:`` line comes last,
    as large sites write them."""
    rule = "Disallow: /archive/{:08d}/\n"
    count = size // len(rule.format(0)) + 1
    return "User-agent: *\n" + "".join(rule.format(n) for n in range(count)) + f"Sitemap: {sitemap_url}\n"


@pytest.mark.parametrize("storage", ["memory", "sqlite", "redis"])
@pytest_twisted.ensureDeferred
async def test_a_robots_txt_cut_at_maxsize_is_not_served_and_the_spider_reads_its_sitemaps(
    serve, tmp_path, request, storage, caplog
):
    # A 720 KB robots.txt (over the default 500 KiB cap) lists its sitemap last, and a
    # small one next to it, served as usual. The spider never sees less than it would
    # without the package: the cut copy is not served, the spider downloads the whole file.
    large = serve(lambda req: body(large_robots_txt(f"{large.url}/sitemap.xml", 720_000))(req))
    small = serve(lambda req: body(f"User-agent: *\nDisallow: /admin/\nSitemap: {small.url}/sitemap.xml\n")(req))
    large.routes["/sitemap.xml"] = xml(lambda: urlset(f"{large.url}/page/1", f"{large.url}/news/1"))
    small.routes["/sitemap.xml"] = xml(lambda: urlset(f"{small.url}/page/2"))
    sites = [large, small]
    plain = await sitemap_crawl(sites, **WITHOUT_PACKAGE)
    plain_pages = pages(sites)
    assert sorted(urlsplit(url).path for _, url in plain.spider.items) == ["/news/1", "/page/1", "/page/2"]

    caplog.set_level("DEBUG", logger="scrapy_robots")
    ours = await sitemap_crawl(sites, **storage_settings(storage, tmp_path, request))
    assert sorted(ours.spider.items) == sorted(plain.spider.items)
    assert pages(sites) == plain_pages  # each sitemap and page once
    assert stat(ours, "robotstxt/truncated") == 1
    assert stat(ours, "robotstxt/served") == 1  # the small one
    assert stat(ours, "robotstxt/not_served/truncated") == 1
    # The spider's own response is the live download, whole and not flagged.
    assert sorted(ours.spider.robots) == [
        (f"{large.url}/robots.txt", 200, []),
        (f"{small.url}/robots.txt", 200, ["robotstxt"]),
    ]
    assert robots_downloads(sites) == [{"/robots.txt": 2}, {"/robots.txt": 1}]
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Not serving")]
    assert said == [
        f"Not serving <GET {large.url}/robots.txt> from the crawl's fetch (truncated: the copy was cut at "
        "ROBOTSTXT_MAXSIZE): it goes on as any other request"
    ]
