"""Requests the URLs it is given (-a urls=a,b,c or -a urls_file=FILE, one per line) and
writes what became of each, with the crawl's stats, to -a out=FILE when it closes."""

from __future__ import annotations

import json
from pathlib import Path

from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest


class RecordingSpider(Spider):
    name = "recording"

    def __init__(self, urls: str = "", urls_file: str = "", out: str = "", **kwargs):
        super().__init__(**kwargs)
        listed = Path(urls_file).read_text().splitlines() if urls_file else urls.split(",")
        self.urls = [url for url in listed if url]
        self.out = out
        self.downloaded: list[str] = []
        self.ignored: dict[str, str] = {}
        self.failed: dict[str, str] = {}

    async def start(self):
        for url in self.urls:
            yield Request(url, callback=self.parse, errback=self.errback)
        # Tests wait for this line: a stop before it cuts start() short (Scrapy's doing).
        self.logger.info("recording spider: all %d start requests yielded", len(self.urls))

    def parse(self, response):
        self.downloaded.append(response.url)

    def errback(self, failure):
        bucket = self.ignored if failure.check(IgnoreRequest) else self.failed
        bucket[failure.request.url] = str(failure.value)

    def closed(self, reason):
        if not self.out:
            return
        stats = self.crawler.stats.get_stats()
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
