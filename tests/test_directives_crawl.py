"""Robots directives on the page (issue #33), in real crawls with the add-on: what the
servers see (which links were followed), what the items carry, what the stats and the
log say. Scrapy's stock middlewares follow every link and mark nothing: the contrast is
run beside each case where it matters."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest
import pytest_twisted
import scrapy
from crawling import RecordingSpider, crawl, stat
from scrapy import Request
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule
from servers import body

ADDON = {"scrapy_robots.Addon": 0}
STOCK = {"scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": 100}
ROBOTS = body("User-agent: *\nDisallow: /private\n")
OTHER_UA = "Mozilla/5.0 (compatible; OtherBot/2.0; +https://other.example/bot)"


def html(head: str = "", links: str = "", headers: list[tuple[str, str]] = (), content_type: str = "text/html"):
    """A page whose head holds ``head`` and whose body holds ``links``; each header pair is
    added (several of one name are several headers)."""
    data = f"<html><head><title>t</title>{head}</head><body>{links}</body></html>".encode()

    def handle(request):
        request.setHeader(b"Content-Type", content_type.encode())
        for name, value in headers:
            request.responseHeaders.addRawHeader(name.encode(), value.encode())
        return data

    return handle


def anchors(*paths: str, rel: str | None = None) -> str:
    attribute = f' rel="{rel}"' if rel else ""
    return "".join(f'<a href="{p}"{attribute}>{p}</a>' for p in paths)


class FollowingSpider(RecordingSpider):
    """One item per page; follows every link of every HTML page."""

    name = "following"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.items: list[dict] = []
        self.directives: dict[str, dict | None] = {}

    def parse(self, response):
        super().parse(response)
        self.directives[response.url.split("/", 3)[3]] = response.meta.get("robotstxt_directives")
        item = {"url": response.url}
        self.items.append(item)
        yield item
        if isinstance(response, scrapy.http.HtmlResponse):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, callback=self.parse, errback=self.errback)


async def follow(urls, **settings):
    settings.setdefault("ADDONS", ADDON)
    return await crawl(urls, FollowingSpider, **settings)


def visited(site) -> set[str]:
    # The site's policy files (robots.txt, and TDMRep's under a declared AI purpose) are no pages.
    return {path for path in site.paths() if path not in ("/robots.txt", "/.well-known/tdmrep.json")}


@pytest_twisted.ensureDeferred
async def test_a_nofollow_page_s_links_are_not_followed_and_the_next_page_s_are(serve, caplog):
    site = serve(
        ROBOTS,
        {
            "/start": html('<meta name="robots" content="nofollow">', anchors("/a", "/b", "/c") + anchors("/next")),
            "/next": html("", anchors("/d")),
        },
    )
    # /next is linked from /start only: not followed. A second start page without nofollow
    # links /next and /d: followed, although /start's links were not.
    site.routes["/open"] = html("", anchors("/next", "/a"))
    with caplog.at_level(logging.DEBUG, logger="scrapy_robots"):
        crawler = await follow([f"{site.url}/start", f"{site.url}/open"])
    assert visited(site) == {"/start", "/open", "/next", "/a", "/d"}
    assert stat(crawler, "robotstxt/directives/nofollow/requests_dropped") == 4
    assert stat(crawler, "robotstxt/directives/nofollow/meta-robots") == 1
    assert crawler.spider.directives["start"] == {"nofollow": ['meta name="robots"']}
    assert crawler.spider.directives["open"] is None
    info = [r for r in caplog.records if r.levelno == logging.INFO and "says nofollow" in r.getMessage()]
    debug = [r for r in caplog.records if r.levelno == logging.DEBUG and "says nofollow" in r.getMessage()]
    assert len(info) == 1 and len(debug) == 3, [r.getMessage() for r in info + debug]
    assert "said once per site" in info[0].getMessage()
    # Scrapy's stock middleware follows them all.
    stock_site = serve(ROBOTS, dict(site.routes))
    await follow([f"{stock_site.url}/start"], ADDONS={}, DOWNLOADER_MIDDLEWARES=STOCK)
    assert visited(stock_site) == {"/start", "/a", "/b", "/c", "/next", "/d"}


@pytest_twisted.ensureDeferred
async def test_noindex_pages_are_fetched_and_their_items_marked_or_dropped(serve):
    routes = {
        "/hidden": html("", anchors("/child"), headers=[("X-Robots-Tag", "noindex")]),
        "/child": html(),
        "/gone": html('<meta name="robots" content="unavailable_after: 2001-01-01T00:00:00Z">'),
        "/later": html('<meta name="robots" content="unavailable_after: 2999-01-01T00:00:00Z">'),
    }
    site = serve(ROBOTS, routes)
    urls = [f"{site.url}/hidden", f"{site.url}/gone", f"{site.url}/later"]
    crawler = await follow(urls)
    assert visited(site) == {"/hidden", "/child", "/gone", "/later"}  # noindex is not nofollow
    marked = {item["url"].split("/", 3)[3] for item in crawler.spider.items if item.get("robots_noindex")}
    assert marked == {"hidden", "gone"}
    assert stat(crawler, "robotstxt/directives/noindex/items_marked") == 2
    assert crawler.spider.directives["later"] == {
        "unavailable_after": {"date": "2999-01-01T00:00:00+00:00", "sources": ['meta name="robots"']}
    }
    # Dropped, if the spider asks; a spider's own field name.
    site.hits.clear()
    dropped = await follow(urls, ROBOTSTXT_DIRECTIVES_NOINDEX="drop")
    assert visited(site) == {"/hidden", "/child", "/gone", "/later"}
    assert stat(dropped, "robotstxt/directives/noindex/items_dropped") == 2
    assert stat(dropped, "item_scraped_count") == 2  # /child and /later
    named = await follow(urls, ROBOTSTXT_DIRECTIVES_NOINDEX_FIELD="noindex")
    assert sum(1 for item in named.spider.items if item.get("noindex") is True) == 2


class Page(scrapy.Item):
    url = scrapy.Field()


@dataclass
class Marked:
    url: str
    robots_noindex: bool = False


class ItemClassSpider(FollowingSpider):
    def parse(self, response):
        super().parse(response).close()
        yield Page(url=response.url)
        yield Marked(url=response.url)


@pytest_twisted.ensureDeferred
async def test_an_item_class_without_the_field_is_kept_unmarked_with_a_warning(serve, caplog):
    site = serve(
        ROBOTS,
        {"/a": html('<meta name="robots" content="noindex">'), "/b": html('<meta name="robots" content="noindex">')},
    )
    with caplog.at_level(logging.INFO):
        crawler = await crawl([f"{site.url}/a", f"{site.url}/b"], ItemClassSpider, ADDONS=ADDON)
    assert stat(crawler, "item_scraped_count") == 4  # nothing lost
    assert stat(crawler, "robotstxt/directives/noindex/items_unmarked") == 2  # the Items
    assert stat(crawler, "robotstxt/directives/noindex/items_marked") == 2  # the dataclasses
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "not marked" in r.getMessage()]
    assert len(warnings) == 1 and "'robots_noindex' field" in warnings[0].getMessage()


SCOPED = {
    "/scoped": html(
        '<meta name="foobot" content="noindex"><meta name="otherbot" content="noarchive">',
        anchors("/x", "/y"),
        headers=[("X-Robots-Tag", "otherbot: nofollow"), ("X-Robots-Tag", "googlebot: noindex, nofollow")],
    )
}


@pytest.mark.parametrize(
    ("user_agent", "expected_visits", "expected"),
    [
        # FooBot: its meta tag applies, OtherBot's header part does not.
        (None, {"/scoped", "/x", "/y"}, {"noindex": ['meta name="foobot"']}),
        # OtherBot: the header's part for it and its meta tag; FooBot's tag does not.
        (OTHER_UA, {"/scoped"}, {"nofollow": ["X-Robots-Tag"], "noarchive": ['meta name="otherbot"']}),
        # ROBOTSTXT_USER_AGENT names the crawler whatever the User-Agent header.
        ("otherbot", {"/scoped"}, {"nofollow": ["X-Robots-Tag"], "noarchive": ['meta name="otherbot"']}),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_scoped_header_and_a_botname_meta_apply_to_that_crawler_only(
    serve, user_agent, expected_visits, expected
):
    site = serve(ROBOTS, dict(SCOPED))
    settings = {}
    if user_agent == "otherbot":
        settings["ROBOTSTXT_USER_AGENT"] = "OtherBot"
    elif user_agent:
        settings["USER_AGENT"] = user_agent
    crawler = await follow([f"{site.url}/scoped"], **settings)
    assert visited(site) == expected_visits
    assert crawler.spider.directives["scoped"] == expected


@pytest_twisted.ensureDeferred
async def test_the_structured_robots_tag_is_scoped_by_its_items(serve):
    site = serve(
        ROBOTS,
        {
            "/sf": html("", anchors("/x"), headers=[("Robots-Tag", "*;nosnippet, FooBot;nofollow, OtherBot;noindex")]),
            "/sf2": html("", anchors("/y"), headers=[("Robots-Tag", "otherbot;nofollow;noindex")]),
        },
    )
    crawler = await follow([f"{site.url}/sf", f"{site.url}/sf2"])
    assert visited(site) == {"/sf", "/sf2", "/y"}
    assert crawler.spider.directives["sf"] == {"nosnippet": ["Robots-Tag"], "nofollow": ["Robots-Tag"]}
    assert crawler.spider.directives["sf2"] is None
    assert stat(crawler, "robotstxt/directives/nofollow/robots-tag") == 1


class RuleSpider(CrawlSpider):
    """Scrapy's own CrawlSpider, whose LinkExtractor knows each Link's nofollow."""

    name = "rules"
    rules = (Rule(LinkExtractor(), follow=True),)

    def __init__(self, urls=(), **kwargs):
        super().__init__(**kwargs)
        self.start_urls = list(urls)


REL = {
    "/rel": html(
        "",
        anchors("/only-nofollow", "/only-nofollow#again", rel="nofollow")
        + anchors("/both", rel="ugc nofollow")
        + anchors("/both", "/plain")
        + anchors("/sponsored", rel="sponsored"),
    ),
}


@pytest.mark.parametrize("spider", [FollowingSpider, RuleSpider])
@pytest_twisted.ensureDeferred
async def test_a_url_linked_only_with_rel_nofollow_is_not_followed(serve, spider):
    site = serve(ROBOTS, dict(REL))
    crawler = await crawl([f"{site.url}/rel"], spider, ADDONS=ADDON)
    assert visited(site) == {"/rel", "/both", "/plain", "/sponsored"}
    assert stat(crawler, "robotstxt/directives/rel_nofollow/requests_dropped") >= 1
    # Turned off for one spider: followed.
    site.hits.clear()
    await crawl([f"{site.url}/rel"], spider, ADDONS=ADDON, ROBOTSTXT_DIRECTIVES_REL_NOFOLLOW=False)
    assert "/only-nofollow" in visited(site)


@pytest_twisted.ensureDeferred
async def test_noai_denies_items_under_robotstxt_usage_and_only_tags_in_tag_mode(serve):
    site = serve(
        ROBOTS,
        {
            "/noai": html('<meta name="robots" content="noai">', anchors("/plain")),
            "/plain": html(),
            "/img": html("", headers=[("X-Robots-Tag", "noimageai")], content_type="image/png"),
            "/imgpage": html('<meta name="robots" content="noimageai">'),
        },
    )
    urls = [f"{site.url}/{p}" for p in ("noai", "img", "imgpage")]
    denied = await follow(urls, ROBOTSTXT_USAGE=["train-ai"])
    assert visited(site) == {"/noai", "/plain", "/img", "/imgpage"}  # noai is not nofollow
    assert stat(denied, "item_scraped_count") == 2  # /plain, and /imgpage (an HTML page: its images' preference)
    assert stat(denied, "robotstxt/usage/items_dropped/train-ai") == 2
    assert stat(denied, "robotstxt/usage/directive/denied/train-ai") == 2
    tagged = await follow(urls, ROBOTSTXT_USAGE=["train-ai", "search"], ROBOTSTXT_USAGE_MODE="tag")
    assert stat(tagged, "item_scraped_count") == 4
    # Without a declared purpose, noai is recorded and nothing is dropped.
    plain = await follow(urls)
    assert stat(plain, "item_scraped_count") == 4
    assert plain.spider.directives["noai"] == {"noai": ['meta name="robots"']}


class UsageTagSpider(FollowingSpider):
    def parse(self, response):
        yield from super().parse(response)
        self.directives[response.url.split("/", 3)[3] + "#usage"] = response.meta.get("robotstxt_usage")


@pytest_twisted.ensureDeferred
async def test_tag_mode_names_the_directive_that_denies(serve):
    site = serve(ROBOTS, {"/noai": html("", headers=[("X-Robots-Tag", "FooBot: noai")])})
    crawler = await crawl(
        [f"{site.url}/noai"],
        UsageTagSpider,
        ADDONS=ADDON,
        ROBOTSTXT_USAGE=["train-ai", "search"],
        ROBOTSTXT_USAGE_MODE="tag",
    )
    usage = crawler.spider.directives["noai#usage"]
    assert usage["train-ai"] == {
        "decision": "deny",
        "stated": True,
        "line": None,
        "text": "X-Robots-Tag: noai",
        "source": "directive",
    }
    assert usage["search"]["decision"] == "allow"


@pytest_twisted.ensureDeferred
async def test_near_misses_and_malformed_values_change_nothing_and_say_why_at_debug(serve, caplog):
    site = serve(
        ROBOTS,
        {
            "/preview": html('<meta name="robots" content="max-image-preview:none, max-snippet:-1">', anchors("/a")),
            "/broken": html(
                '<meta name="robots">',
                anchors("/b"),
                headers=[("Robots-Tag", "FooBot;nofollow, (unclosed"), ("X-Robots-Tag", "unavailable_after: someday")],
            ),
        },
    )
    with caplog.at_level(logging.DEBUG, logger="scrapy_robots"):
        crawler = await follow([f"{site.url}/preview", f"{site.url}/broken"])
    assert visited(site) == {"/preview", "/broken", "/a", "/b"}
    assert crawler.spider.directives == {"preview": None, "broken": None, "a": None, "b": None}
    assert stat(crawler, "robotstxt/directives/malformed") == 3
    said = [r.getMessage() for r in caplog.records if "Robots directive of" in r.getMessage()]
    assert len(said) == 3 and all(
        r.levelno == logging.DEBUG for r in caplog.records if "Robots directive of" in r.getMessage()
    )
    assert any("not a structured-field list" in m for m in said)
    assert any("'someday' does not read" in m for m in said)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


class PdfSpider(RecordingSpider):
    def parse(self, response):
        super().parse(response)
        yield {"url": response.url}
        yield Request(response.urljoin("/after-pdf"), callback=super().parse)


@pytest_twisted.ensureDeferred
async def test_a_pdf_with_x_robots_tag(serve):
    pdf = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
    site = serve(
        ROBOTS,
        {"/doc.pdf": body(pdf, headers={"Content-Type": "application/pdf", "X-Robots-Tag": "noindex, nofollow"})},
    )
    crawler = await crawl([f"{site.url}/doc.pdf"], PdfSpider, ADDONS=ADDON)
    assert visited(site) == {"/doc.pdf"}
    assert stat(crawler, "robotstxt/directives/noindex/items_marked") == 1
    assert stat(crawler, "robotstxt/directives/nofollow/requests_dropped") == 1


class DontObeySpider(FollowingSpider):
    def parse(self, response):
        for out in super().parse(response):
            if isinstance(out, Request):
                out.meta["dont_obey_robotstxt"] = True
            yield out


@pytest_twisted.ensureDeferred
async def test_turned_off_per_spider_and_per_request(serve):
    site = serve(ROBOTS, {"/start": html('<meta name="robots" content="none">', anchors("/a"))})
    off = await follow([f"{site.url}/start"], ROBOTSTXT_DIRECTIVES=False)
    assert visited(site) == {"/start", "/a"}
    assert off.spider.directives["start"] is None and stat(off, "robotstxt/directives/pages") == 0
    site.hits.clear()
    nofollow_off = await follow([f"{site.url}/start"], ROBOTSTXT_DIRECTIVES_NOFOLLOW=False)
    assert visited(site) == {"/start", "/a"} and stat(nofollow_off, "robotstxt/directives/noindex/items_marked") == 1
    site.hits.clear()
    await crawl([f"{site.url}/start"], DontObeySpider, ADDONS=ADDON)
    assert visited(site) == {"/start", "/a"}


def test_a_bad_setting_fails_at_start_naming_it():
    from scrapy.settings import Settings

    from scrapy_robots.settings.parts import DirectivesConfig

    with pytest.raises(ValueError, match="ROBOTSTXT_DIRECTIVES_NOINDEX must be one of 'mark', 'drop', 'ignore'"):
        DirectivesConfig.from_settings(Settings({"ROBOTSTXT_DIRECTIVES_NOINDEX": "hide"}))
    with pytest.raises(ValueError, match="ROBOTSTXT_DIRECTIVES must be True or False"):
        DirectivesConfig.from_settings(Settings({"ROBOTSTXT_DIRECTIVES": "maybe"}))


@pytest.mark.parametrize("policy", ["NoArchivePolicy", "NoArchiveRFC2616Policy"])
@pytest_twisted.ensureDeferred
async def test_noarchive_pages_stay_out_of_the_http_cache_run_after_run(serve, tmp_path, policy):
    cacheable = [("Cache-Control", "max-age=3600")]
    site = serve(
        ROBOTS,
        {
            "/keep": html("", headers=cacheable),
            "/header": html("", headers=[*cacheable, ("X-Robots-Tag", "noarchive")]),
            "/meta": html('<meta name="foobot" content="noarchive">', headers=cacheable),
            "/other": html('<meta name="otherbot" content="noarchive">', headers=cacheable),
        },
    )
    urls = [f"{site.url}/{p}" for p in ("keep", "header", "meta", "other")]
    cache = {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path / "cache")}
    for _ in range(3):  # the first run fills the cache; the next two read it
        crawler = await crawl(urls, ADDONS=ADDON, HTTPCACHE_POLICY=f"scrapy_robots.directives.cache.{policy}", **cache)
        assert sorted(u.split("/", 3)[3] for u in crawler.spider.downloaded) == ["header", "keep", "meta", "other"]
    hits = {path: site.paths().count(path) for path in ("/keep", "/header", "/meta", "/other")}
    assert hits == {"/keep": 1, "/header": 3, "/meta": 3, "/other": 1}
    # Scrapy's own policy stores them all.
    stock = serve(ROBOTS, dict(site.routes))
    stock_urls = [u.replace(site.url, stock.url) for u in urls]
    for _ in range(2):
        await crawl(stock_urls, ADDONS=ADDON, HTTPCACHE_DIR=str(tmp_path / "stock"), HTTPCACHE_ENABLED=True)
    assert [stock.paths().count(p) for p in ("/keep", "/header", "/meta", "/other")] == [1, 1, 1, 1]


def gzip_chunked_html(text: str):
    import gzip

    from twisted.web.server import NOT_DONE_YET

    data = gzip.compress(text.encode())

    def handle(request):
        request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
        request.setHeader(b"Content-Encoding", b"gzip")
        for start in range(0, len(data), 40):
            request.write(data[start : start + 40])
        request.finish()
        return NOT_DONE_YET

    return handle


@pytest_twisted.ensureDeferred
async def test_compressed_chunked_and_close_delimited_pages_with_every_default_middleware(serve):
    from servers import raw

    head = '<meta name="robots" content="nofollow">'
    close_delimited = (
        b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nX-Robots-Tag: FooBot: nofollow\r\n\r\n"
        b'<html><head></head><body><a href="/c">c</a></body></html>'
    )
    site = serve(
        ROBOTS,
        {
            "/gz": gzip_chunked_html(f"<html><head>{head}</head><body>{anchors('/a')}</body></html>"),
            "/close": raw(close_delimited),
            "/plain": html("", anchors("/b")),
        },
    )
    crawler = await follow([f"{site.url}/{p}" for p in ("gz", "close", "plain")])
    assert visited(site) == {"/gz", "/close", "/plain", "/b"}
    assert stat(crawler, "robotstxt/directives/nofollow/requests_dropped") == 2
    assert stat(crawler, "robotstxt/directives/nofollow/meta-robots") == 1
    assert stat(crawler, "robotstxt/directives/nofollow/x-robots-tag") == 1


class MetaPassingSpider(FollowingSpider):
    """The old idiom: every link followed with ``meta=response.meta``."""

    def parse(self, response):
        for out in super().parse(response):
            if isinstance(out, Request):
                out = out.replace(meta=dict(response.meta))
            yield out


@pytest_twisted.ensureDeferred
async def test_a_page_s_answers_do_not_ride_on_to_its_children_with_meta_response_meta(serve):
    site = serve(
        ROBOTS,
        {
            "/hidden": html('<meta name="robots" content="noindex">', anchors("/child")),
            "/child": html("", anchors("/grandchild")),
            "/reserved": html("", anchors("/free"), headers=[("Content-Usage", "train-ai=n")]),
            "/noai": html('<meta name="robots" content="noai">', anchors("/free2")),
        },
    )
    urls = [f"{site.url}/{p}" for p in ("hidden", "reserved", "noai")]
    crawler = await crawl(urls, MetaPassingSpider, ADDONS=ADDON, ROBOTSTXT_USAGE=["train-ai"])
    assert visited(site) == {"/hidden", "/child", "/grandchild", "/reserved", "/free", "/noai", "/free2"}
    marked = {i["url"].split("/", 3)[3] for i in crawler.spider.items if i.get("robots_noindex")}
    assert marked == {"hidden"}
    # /reserved and /noai's items dropped for train-ai; their children's kept.
    assert stat(crawler, "robotstxt/usage/items_dropped/train-ai") == 2
    assert stat(crawler, "item_scraped_count") == 5
    assert crawler.spider.directives["child"] is None and crawler.spider.directives["grandchild"] is None


SITEMAP = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    "<url><loc>{0}/p1</loc></url><url><loc>{0}/p2</loc></url></urlset>"
)


class MapSpider(scrapy.spiders.SitemapSpider):
    name = "map"

    def __init__(self, urls=(), **kwargs):
        super().__init__(**kwargs)
        self.sitemap_urls = list(urls)

    def parse(self, response):
        yield {"url": response.url}


class OwnSitemapSpider(RecordingSpider):
    """Reads the sitemap itself, as a spider without SitemapSpider does."""

    def parse(self, response):
        super().parse(response)
        for loc in response.xpath("//*[local-name()='loc']/text()").getall():
            yield Request(loc, callback=super().parse)


@pytest.mark.parametrize("spider", [MapSpider, OwnSitemapSpider])
@pytest_twisted.ensureDeferred
async def test_a_sitemap_sent_with_nofollow_still_lists_what_to_crawl(serve, spider):
    """SEO plug-ins send sitemaps with X-Robots-Tag: noindex, nofollow; the URLs are the
    site's own list of what to crawl, not a page's links."""
    holder = {}

    def sitemap(request):
        request.setHeader(b"Content-Type", b"application/xml")
        request.setHeader(b"X-Robots-Tag", b"noindex, nofollow")
        return SITEMAP.format(holder["url"]).encode()

    site = serve(body("User-agent: *\nDisallow: /private\n"), {"/sitemap.xml": sitemap})
    holder["url"] = site.url
    crawler = await crawl([f"{site.url}/sitemap.xml"], spider, ADDONS=ADDON)
    assert visited(site) == {"/sitemap.xml", "/p1", "/p2"}
    assert stat(crawler, "robotstxt/directives/nofollow/requests_dropped") == 0
    assert stat(crawler, "robotstxt/directives/nofollow") == 1  # recorded all the same
