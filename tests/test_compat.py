"""Scrapy versions: what the package relies on in Scrapy, and what it says when that is gone."""

from __future__ import annotations

import logging
import subprocess
import sys
from typing import Any

import pytest_twisted
from crawling import crawl, stat
from scrapy.core.downloader import Downloader
from servers import body


def test_importing_the_package_installs_no_reactor():
    # Scrapy 2.13 installs the asyncio reactor when the first crawler starts: a module
    # that imports twisted.internet.reactor before that (the command imports the
    # middleware first) installs Twisted's default one, and the crawl refuses to start.
    code = (
        "import sys, pkgutil, importlib, scrapy_robots\n"
        "for m in pkgutil.walk_packages(scrapy_robots.__path__, 'scrapy_robots.'):\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except ImportError:\n"
        "        pass  # an optional backend (reppy, redis) not installed\n"
        "print('twisted.internet.reactor' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


SCOPES_QUEUE = "scrapy.pqueues.ScrapyPriorityQueue"


class ScopesDownloader(Downloader):
    """A downloader whose slots are no longer ``Downloader.slots``, as Scrapy's pull
    request 6931 (throttling scopes) would have it: Scrapy's own methods still find
    them, nothing else does (crawl with SCHEDULER_PRIORITY_QUEUE = SCOPES_QUEUE: the
    downloader-aware queue reads them too)."""

    def __init__(self, crawler: Any):
        super().__init__(crawler)
        self.scopes = self.__dict__.pop("slots")

    def _with_slots(self, method: str, *args: Any, **kwargs: Any) -> Any:
        self.__dict__["slots"] = self.scopes
        try:
            return getattr(super(), method)(*args, **kwargs)
        finally:
            del self.__dict__["slots"]

    def _get_slot(self, *args: Any, **kwargs: Any) -> Any:
        return self._with_slots("_get_slot", *args, **kwargs)

    def _slot_gc(self, *args: Any, **kwargs: Any) -> Any:
        return self._with_slots("_slot_gc", *args, **kwargs)

    def close(self) -> None:
        self._with_slots("close")


@pytest_twisted.ensureDeferred
async def test_a_downloader_without_slots_is_named_at_start_up(serve, caplog):
    site = serve(body("User-agent: *\nCrawl-delay: 0.3\nDisallow: /private\n"))
    with caplog.at_level(logging.WARNING, logger="scrapy_robots"):
        crawler = await crawl(
            [f"{site.url}/a", f"{site.url}/private"],
            DOWNLOADER=f"{__name__}.ScopesDownloader",
            SCHEDULER_PRIORITY_QUEUE=SCOPES_QUEUE,
            AUTOTHROTTLE_ENABLED=False,
        )
    [warning] = [r for r in caplog.records if r.name == "scrapy_robots.pace.slots"]
    assert "Crawl-delay and Request-rate cannot be applied" in warning.getMessage()
    assert "has no Downloader.slots" in warning.getMessage()
    assert "ROBOTSTXT_CRAWL_DELAY = False" in warning.getMessage()
    # Said before the first request went out, not found out from a site.
    # (The start-up's own lines, settings/startup.py, are no request.)
    per_site = [
        r for r in caplog.records if r.name.startswith("scrapy_robots") and r.name != "scrapy_robots.settings.startup"
    ]
    first_request = min(r.created for r in per_site if r is not warning)
    assert warning.created <= first_request
    assert stat(crawler, "robotstxt/crawl_delay/unsupported") == 1
    # The site's Crawl-delay could not be set, and that is said too; the crawl goes on.
    assert stat(crawler, "robotstxt/crawl_delay/error") == 1
    assert crawler.spider.downloaded == [f"{site.url}/a"]
    assert list(crawler.spider.ignored) == [f"{site.url}/private"]


@pytest_twisted.ensureDeferred
async def test_no_warning_when_crawl_delay_is_off(serve, caplog):
    site = serve(body("User-agent: *\nCrawl-delay: 0.3\n"))
    with caplog.at_level(logging.WARNING, logger="scrapy_robots"):
        crawler = await crawl(
            [f"{site.url}/a"],
            DOWNLOADER=f"{__name__}.ScopesDownloader",
            SCHEDULER_PRIORITY_QUEUE=SCOPES_QUEUE,
            ROBOTSTXT_CRAWL_DELAY=False,
        )
    assert not [r for r in caplog.records if r.name == "scrapy_robots.pace.slots"]
    assert crawler.spider.downloaded == [f"{site.url}/a"]


@pytest_twisted.ensureDeferred
async def test_scrapys_own_downloader_has_everything(serve, caplog):
    site = serve(body("User-agent: *\nCrawl-delay: 0.3\n"))
    with caplog.at_level(logging.WARNING, logger="scrapy_robots"):
        crawler = await crawl([f"{site.url}/a"])
    assert not [r for r in caplog.records if r.name == "scrapy_robots.pace.slots"]
    assert stat(crawler, "robotstxt/crawl_delay/unsupported") == 0
    assert stat(crawler, "robotstxt/crawl_delay/error") == 0
