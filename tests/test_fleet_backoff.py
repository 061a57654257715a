"""A fleet hears a "slow down" together (issue #32): one crawler's 429 pauses the site
for every crawler sharing the Redis. Real `scrapy crawl` processes, a real redis-server,
the requests counted at the site."""

from __future__ import annotations

import pytest_twisted
from fleet import start_crawler
from servers import RateLimited, body
from twisted.internet.defer import DeferredList

from scrapy_robots.backoff import FLEET_POLL

ROBOTS = "User-agent: *\nDisallow: /private\n"
#: Each crawler its own share of the URLs (the in-memory scheduler): every crawler has
#: requests for the site when it says slow down.
OWN_SHARES = {
    "SCHEDULER": "scrapy.core.scheduler.Scheduler",
    "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter",
    "RETRY_TIMES": 5,
}


async def run_fleet(shares: list[list[str]], redis, **settings) -> list[dict]:
    handles = [start_crawler(urls, redis.url, **OWN_SHARES, **settings) for urls in shares]
    return [result for _, result in await DeferredList([h.done for h in handles])]


@pytest_twisted.ensureDeferred
async def test_one_crawlers_429_pauses_the_site_for_the_whole_fleet(serve, redis):
    # The site allows 3 requests a second, then asks 3 s; the crawlers that did not get
    # the 429 hear of it within FLEET_POLL (their requests sent before count as sent
    # before the answer could arrive).
    limiter = RateLimited(limit=3, pause=3, pauses=1, grace=FLEET_POLL + 0.3)
    site = serve(body(ROBOTS))
    site.pages = limiter
    quiet = serve(body(ROBOTS))
    urls = [f"{site.url}/p{i}" for i in range(9)] + [f"{quiet.url}/q{i}" for i in range(6)]
    results = await run_fleet([urls[i::3] for i in range(3)], redis)
    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
        assert result["failed"] == {}, result["failed"]
    assert limiter.throttled >= 1
    assert limiter.inside == [], (limiter.inside, limiter.began)
    assert sorted(limiter.served) == sorted(f"/p{i}" for i in range(9))  # each once
    stats = [result["stats"] for result in results]
    assert sum(s.get("robotstxt/fleet/paused", 0) for s in stats) >= 1  # told to the fleet
    assert sum(s.get("robotstxt/backoff/fleet_paused", 0) for s in stats) >= 1  # heard by another
    assert len(quiet.page_hits()) == 6
