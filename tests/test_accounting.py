"""Every request a spider yields is downloaded, or ignored with a reason counted in the stats."""

from __future__ import annotations

import pytest_twisted
from crawling import crawl, stat
from servers import body, hang, reset

DENIAL_STATS = (
    "robotstxt/forbidden",
    "robotstxt/denied/deny_all",
    "robotstxt/denied/unreachable",
    "robotstxt/denied/retry_after",
    "robotstxt/denied/excluded",
)


@pytest_twisted.ensureDeferred
async def test_every_request_accounted_for(serve):
    sites = [
        serve(body("User-agent: *\nDisallow: /p1\nDisallow: /p3\n")),
        serve(body("User-agent: *\nDisallow: /\n", status=403)),
        serve(body("User-agent: *\nDisallow: /\n", status=404)),
        serve(body("down", status=503)),
        serve(reset()),
        serve(hang()),
        serve(body("later", status=429, headers={"Retry-After": "60"})),  # not waited for (#22)
        serve(body("User-agent: *\nDisallow:\n")),  # excluded below
    ]
    urls = [f"{site.url}/p{i}" for site in sites for i in range(6)]
    crawler = await crawl(
        urls,
        CONCURRENT_REQUESTS=3,
        ROBOTSTXT_TIMEOUT=1,
        ROBOTSTXT_UNREACHABLE_RETRY_DELAY=0.1,
        ROBOTSTXT_UNREACHABLE_RETRY_TIMES=1,
        ROBOTSTXT_EXCLUDED_DOMAINS=[sites[-1].host],
    )
    spider = crawler.spider
    assert spider.failed == {}
    assert len(spider.downloaded) + len(spider.ignored) == len(urls)
    assert sum(stat(crawler, key) for key in DENIAL_STATS) == len(spider.ignored)
    # What each site's requests became.
    assert len(spider.downloaded) == 4 + 6  # the parsed site's allowed pages, the 404 site
    assert stat(crawler, "robotstxt/forbidden") == 2
    assert stat(crawler, "robotstxt/denied/deny_all") == 6
    assert stat(crawler, "robotstxt/denied/unreachable") == 18
    assert stat(crawler, "robotstxt/denied/retry_after") == 6
    assert stat(crawler, "robotstxt/denied/excluded") == 6
    pages = sum(len(site.page_hits()) for site in sites)
    assert pages == len(spider.downloaded)
