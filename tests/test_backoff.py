"""A site that says "slow down" on its pages (issue #32): a 429, or a 503 with
Retry-After, pauses the site's slot for the time asked, then paces it slower and brings it
back gradually; the request that got it is retried after the pause, through Scrapy's own
RetryMiddleware. Real crawls against real local servers, next to the crawl without it."""

from __future__ import annotations

import logging

import pytest
import pytest_twisted
from crawling import crawl, stat
from servers import RateLimited, SiteServer, body

ROBOTS = "User-agent: *\nDisallow: /private\n"


def limited_site(serve, limiter: RateLimited) -> SiteServer:
    site = serve(body(ROBOTS))
    site.pages = limiter
    return site


@pytest.mark.parametrize("backoff", [True, False], ids=["ours", "off"])
@pytest_twisted.ensureDeferred
async def test_a_429_pauses_the_site_for_the_time_asked_and_every_page_comes(serve, caplog, backoff):
    limiter = RateLimited(limit=2, pause=2)
    site = limited_site(serve, limiter)
    other = serve(body(ROBOTS))
    urls = [f"{site.url}/p{i}" for i in range(12)] + [f"{other.url}/q{i}" for i in range(12)]
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    crawler = await crawl(urls, ROBOTSTXT_BACKOFF=backoff)
    if not backoff:
        # Scrapy's RetryMiddleware alone: its retries go at once, inside the pause asked,
        # and run out: pages lost.
        assert len(limiter.inside) > 10 and len(set(limiter.served)) < 12
        return
    # Not one request inside a pause the site asked for, after its answer could arrive.
    assert limiter.inside == [], limiter.inside
    # Every page, once; the retries went through Scrapy's own accounting.
    assert sorted(limiter.served) == sorted(f"/p{i}" for i in range(12))
    assert stat(crawler, "retry/count") == limiter.throttled
    assert stat(crawler, "retry/max_reached") == 0
    assert stat(crawler, "robotstxt/backoff/throttled") == limiter.throttled
    assert stat(crawler, "robotstxt/backoff/paused") >= 1
    # The other site was not paused.
    assert len(other.page_hits()) == 12
    lines = [r.getMessage() for r in caplog.records if "says slow down" in r.getMessage()]
    assert len(lines) == stat(crawler, "robotstxt/backoff/paused"), lines
    assert lines[0].startswith(f"{site.url} says slow down (HTTP 429): its requests paused 2.0s (Retry-After)")
