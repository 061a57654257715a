"""The drop-in contract: enabled like the stock middleware, same meta keys, same stats."""

from __future__ import annotations

import pytest
import pytest_twisted
from crawling import crawl, stat
from servers import body

ROBOTS = "User-agent: *\nDisallow: /private\n"


@pytest_twisted.ensureDeferred
async def test_allows_and_forbids_by_rule(serve):
    site = serve(body(ROBOTS))
    crawler = await crawl([f"{site.url}/public", f"{site.url}/private/1"])
    spider = crawler.spider
    assert spider.downloaded == [f"{site.url}/public"]
    assert spider.ignored == {f"{site.url}/private/1": "Forbidden by robots.txt"}
    assert site.paths().count("/private/1") == 0
    assert site.robots_hits() == 1
    assert stat(crawler, "robotstxt/forbidden") == 1
    assert stat(crawler, "robotstxt/request_count") == 1
    assert stat(crawler, "robotstxt/response_count") == 1
    assert stat(crawler, "robotstxt/response_status_count/200") == 1
    assert stat(crawler, "robotstxt/policy/parse") == 1


@pytest_twisted.ensureDeferred
async def test_not_configured_without_obey(serve):
    site = serve(body(ROBOTS))
    crawler = await crawl([f"{site.url}/private/1"], ROBOTSTXT_OBEY=False)
    assert crawler.spider.downloaded == [f"{site.url}/private/1"]
    assert site.robots_hits() == 0


@pytest_twisted.ensureDeferred
async def test_addon_swaps_the_middleware(serve):
    from crawling import BASE_SETTINGS

    site = serve(body(ROBOTS))
    settings = {k: v for k, v in BASE_SETTINGS.items() if k != "DOWNLOADER_MIDDLEWARES"}
    crawler = await crawl(
        [f"{site.url}/private/1"], **settings, DOWNLOADER_MIDDLEWARES={}, ADDONS={"scrapy_robots.Addon": 0}
    )
    mws = crawler.settings.getdict("DOWNLOADER_MIDDLEWARES")
    assert mws["scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"] is None
    assert stat(crawler, "robotstxt/policy/parse") == 1  # ours ran (the stock one has no such key)
    assert crawler.spider.ignored


@pytest_twisted.ensureDeferred
async def test_dont_obey_meta_and_data_urls(serve):
    from crawling import RecordingSpider
    from scrapy import Request

    site = serve(body("User-agent: *\nDisallow: /\n"))

    class MetaSpider(RecordingSpider):
        async def start(self):
            yield Request(f"{site.url}/x", meta={"dont_obey_robotstxt": True}, callback=self.parse)
            yield Request("data:,hello", callback=self.parse)

    crawler = await crawl([], spider_cls=MetaSpider)
    assert sorted(crawler.spider.downloaded) == sorted([f"{site.url}/x", "data:,hello"])
    assert site.robots_hits() == 0


@pytest_twisted.ensureDeferred
async def test_user_agent_group(serve):
    site = serve(body("User-agent: FooBot\nDisallow: /foo\n\nUser-agent: *\nDisallow: /\n"))
    # USER_AGENT is a full header naming FooBot: FooBot's group applies, not "*".
    crawler = await crawl([f"{site.url}/bar", f"{site.url}/foo"])
    assert crawler.spider.downloaded == [f"{site.url}/bar"]
    # ROBOTSTXT_USER_AGENT wins over USER_AGENT.
    crawler = await crawl([f"{site.url}/bar"], ROBOTSTXT_USER_AGENT="OtherBot")
    assert crawler.spider.ignored == {f"{site.url}/bar": "Forbidden by robots.txt"}


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("ROBOTSTXT_PARSER", "no.such.Parser", "ROBOTSTXT_PARSER"),
        ("ROBOTSTXT_STATUS_POLICY", "nope", "unknown preset"),
        ("ROBOTSTXT_STATUS_POLICY", {404: "explode"}, "not an action"),
        ("ROBOTSTXT_CACHE_TTL", "soon", "ROBOTSTXT_CACHE_TTL must be a number"),
        ("ROBOTSTXT_CACHE_SIZE", 0, "ROBOTSTXT_CACHE_SIZE must be"),
    ],
)
def test_bad_setting_fails_at_startup(name, value, message):
    from crawling import BASE_SETTINGS
    from scrapy.utils.test import get_crawler

    from scrapy_robots import RobotsTxtMiddleware

    # Without the backoff extension, which reads the same configuration and would fail first.
    crawler = get_crawler(settings_dict={**BASE_SETTINGS, "EXTENSIONS": {}, name: value})
    with pytest.raises(ValueError, match=message):
        RobotsTxtMiddleware.from_crawler(crawler)
    with pytest.raises(ValueError, match=message):  # and with it, the crawler does not start
        get_crawler(settings_dict={**BASE_SETTINGS, name: value})


@pytest_twisted.ensureDeferred
async def test_request_user_agent_header_is_used(serve):
    from crawling import RecordingSpider
    from scrapy import Request

    site = serve(body("User-agent: BarBot\nDisallow: /bar\n\nUser-agent: *\nDisallow:\n"))

    class HeaderSpider(RecordingSpider):
        async def start(self):
            headers = {"User-Agent": "Mozilla/5.0 (compatible; BarBot/3.0)"}
            yield Request(f"{site.url}/bar", headers=headers, callback=self.parse, errback=self.errback)
            yield Request(f"{site.url}/bar?plain", callback=self.parse, errback=self.errback)

    crawler = await crawl([], spider_cls=HeaderSpider)
    # The request's own header names BarBot; the other request goes as FooBot (USER_AGENT).
    assert crawler.spider.ignored == {f"{site.url}/bar": "Forbidden by robots.txt"}
    assert crawler.spider.downloaded == [f"{site.url}/bar?plain"]


@pytest_twisted.ensureDeferred
async def test_each_other_user_agent_gets_its_rules_built_once(serve):
    from crawling import RecordingSpider, stat
    from scrapy import Request

    site = serve(
        body("User-agent: BarBot\nDisallow: /bar\n\nUser-agent: BazBot\nDisallow: /baz\n\nUser-agent: *\nDisallow:\n")
    )
    agents = {"bar": "Mozilla/5.0 (compatible; BarBot/3.0)", "baz": "BazBot/1.0", "plain": None}

    class HeaderSpider(RecordingSpider):
        async def start(self):
            for number in range(3):
                for name, agent in agents.items():
                    for path in ("bar", "baz"):
                        headers = {"User-Agent": agent} if agent else {}
                        url = f"{site.url}/{path}?{name}{number}"
                        yield Request(url, headers=headers, callback=self.parse, errback=self.errback)

    crawler = await crawl([], spider_cls=HeaderSpider, CONCURRENT_REQUESTS=1)
    denied = {url.split("?")[1][:-1] + "-" + url.split("/")[3][:3] for url in crawler.spider.ignored}
    assert denied == {"bar-bar", "baz-baz"}
    assert len(crawler.spider.downloaded) == 18 - 6
    # The crawl's own agent's rules at the fetch, then BarBot's and BazBot's, once each.
    assert stat(crawler, "robotstxt/parsed") == 3


@pytest_twisted.ensureDeferred
async def test_robots_parsed_signal(serve):
    from scrapy import signals

    if not hasattr(signals, "robots_parsed"):
        pytest.skip("robots_parsed arrived in Scrapy 2.18")
    from crawling import BASE_SETTINGS, RecordingSpider
    from scrapy.crawler import CrawlerRunner

    site = serve(body(ROBOTS))
    received = []
    runner = CrawlerRunner(BASE_SETTINGS)
    crawler = runner.create_crawler(RecordingSpider)

    def on_parsed(robotparser, request):
        received.append((robotparser, request.url))

    crawler.signals.connect(on_parsed, signals.robots_parsed)  # held weakly: keep on_parsed alive
    await crawler.crawl(urls=[f"{site.url}/public", f"{site.url}/x"])
    assert len(received) == 1
    parser, url = received[0]
    assert url in (f"{site.url}/public", f"{site.url}/x")  # the request that needed it
    assert not parser.allowed(f"{site.url}/private/1", "FooBot")
