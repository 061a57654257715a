"""Run a real crawl, in the test's reactor, and report what happened to each request."""

from __future__ import annotations

from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import CrawlerRunner
from scrapy.exceptions import IgnoreRequest

OURS = {
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "scrapy_robots.RobotsTxtMiddleware": 100,
}
#: The "slow down" extension, which the add-on enables beside the middleware.
BACKOFF = {"scrapy_robots.pace.backoff.PageBackoff": 0}

BASE_SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    "DOWNLOADER_MIDDLEWARES": OURS,
    "EXTENSIONS": BACKOFF,
    "USER_AGENT": "Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example/bot)",
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "DOWNLOAD_TIMEOUT": 10,
}


class RecordingSpider(Spider):
    """Requests every URL it is given and records each outcome."""

    name = "recording"

    def __init__(self, urls: list[str] = (), **kwargs: Any):
        super().__init__(**kwargs)
        self.urls = list(urls)
        self.downloaded: list[str] = []
        self.ignored: dict[str, str] = {}
        self.failed: dict[str, str] = {}

    async def start(self):
        for url in self.urls:
            yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)

    def parse(self, response):
        self.downloaded.append(response.url)

    def errback(self, failure):
        url = failure.request.url
        if failure.check(IgnoreRequest):
            self.ignored[url] = str(failure.value)
        else:
            self.failed[url] = repr(failure.value)


async def crawl(urls: list[str], spider_cls: type[Spider] = RecordingSpider, **settings: Any):
    """Crawl ``urls`` and return the crawler; ``crawler.spider`` has the outcomes."""
    runner = CrawlerRunner({**BASE_SETTINGS, **settings})
    crawler = runner.create_crawler(spider_cls)
    await crawler.crawl(urls=urls)
    return crawler


def stat(crawler, key: str, default: Any = 0) -> Any:
    return crawler.stats.get_value(key, default)


def robots_middleware(crawler):
    """The RobotsTxtMiddleware instance of a crawler."""
    from scrapy_robots import RobotsTxtMiddleware

    [mw] = [m for m in crawler.engine.downloader.middleware.middlewares if isinstance(m, RobotsTxtMiddleware)]
    return mw
