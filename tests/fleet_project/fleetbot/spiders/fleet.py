"""Requests the URLs it is given (-a urls=a,b,c) and writes what became of each to -a out=FILE."""

from __future__ import annotations

import json

from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest


class FleetSpider(Spider):
    name = "fleet"

    def __init__(self, urls: str = "", out: str = "", **kwargs):
        super().__init__(**kwargs)
        self.urls = [url for url in urls.split(",") if url]
        self.out = out
        self.downloaded: list[str] = []
        self.ignored: dict[str, str] = {}
        self.failed: dict[str, str] = {}

    async def start(self):
        for url in self.urls:
            yield Request(url, callback=self.parse, errback=self.errback)

    def parse(self, response):
        self.downloaded.append(response.url)

    def errback(self, failure):
        bucket = self.ignored if failure.check(IgnoreRequest) else self.failed
        bucket[failure.request.url] = str(failure.value)

    def closed(self, reason):
        if not self.out:
            return
        stats = {k: v for k, v in self.crawler.stats.get_stats().items() if k.startswith("robotstxt/")}
        with open(self.out, "w") as f:
            json.dump(
                {
                    "downloaded": self.downloaded,
                    "ignored": self.ignored,
                    "failed": self.failed,
                    "stats": stats,
                    "reason": reason,
                },
                f,
                default=str,
            )
