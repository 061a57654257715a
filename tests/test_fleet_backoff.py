"""A fleet hears a "slow down" together (issue #32): one crawler's 429 pauses the site
for every crawler sharing the Redis. Real `scrapy crawl` processes, a real redis-server,
the requests counted at the site."""

from __future__ import annotations

import pytest
import pytest_twisted
from fleet import start_crawler
from servers import RateLimited, body
from twisted.internet import reactor
from twisted.internet.defer import DeferredList
from twisted.internet.task import deferLater

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

ROBOTS = "User-agent: *\nDisallow: /private\n"
#: Each crawler its own share of the URLs (the in-memory scheduler): every crawler has
#: requests for the site when it says slow down.
OWN_SHARES = {
    "SCHEDULER": "scrapy.core.scheduler.Scheduler",
    "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter",
    "RETRY_TIMES": 5,
}


def sleep(seconds: float):
    return deferLater(reactor, seconds, lambda: None)


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_one_crawlers_429_pauses_the_site_for_the_whole_fleet(serve, redis):
    # The site allows 3 requests a second, then asks 6 s. One crawler meets it first; two
    # more join during the pause: they hear of it before their first request (a crawler
    # already running hears within FLEET_POLL). Without it they came 0.7 s into the pause.
    limiter = RateLimited(limit=3, pause=6, pauses=1, grace=0.3)
    site = serve(body(ROBOTS))
    site.pages = limiter
    quiet = serve(body(ROBOTS))
    urls = [f"{site.url}/p{i}" for i in range(12)] + [f"{quiet.url}/q{i}" for i in range(6)]
    shares = [urls[i::3] for i in range(3)]
    # After the pause the fleet paces the site at 1 s (a factor of 1, from MIN_DELAY).
    settings = {**OWN_SHARES, "ROBOTSTXT_BACKOFF_FACTOR": 1}
    first = start_crawler(shares[0], redis.url, **settings)
    while not limiter.throttled:
        await sleep(0.05)
    joining = [start_crawler(share, redis.url, **settings) for share in shares[1:]]
    results = [result for _, result in await DeferredList([h.done for h in [first, *joining]])]
    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
        assert result["failed"] == {}, result["failed"]
        assert "Traceback" not in result["log"], result["log"][-3000:]
    assert limiter.inside == [], (limiter.inside, limiter.began)
    assert sorted(limiter.served) == sorted(f"/p{i}" for i in range(12))  # each once
    told, *heard = [result["stats"] for result in results]
    assert told.get("robotstxt/fleet/paused", 0) >= 1
    assert [stats.get("robotstxt/backoff/fleet_paused", 0) for stats in heard] == [1, 1]
    assert len(quiet.page_hits()) == 6


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_after_a_pause_the_fleet_comes_back_to_its_pace_in_steps(serve, redis):
    # Three crawlers at once; the site asks 2 s once. After it, the fleet paces the site at
    # 1 s (a factor of 1, from MIN_DELAY) and comes back to no delay in 4 steps per crawler,
    # as a crawler alone does: not held at 1 s for the fleet pace's 10 minutes.
    limiter = RateLimited(limit=3, pause=2, pauses=1)
    site = serve(body(ROBOTS))
    site.pages = limiter
    urls = [f"{site.url}/p{i}" for i in range(21)]
    settings = {**OWN_SHARES, "ROBOTSTXT_BACKOFF_FACTOR": 1, "ROBOTSTXT_BACKOFF_RECOVERY": 4}
    handles = [start_crawler(urls[i::3], redis.url, **settings) for i in range(3)]
    results = [result for _, result in await DeferredList([h.done for h in handles])]
    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
    assert limiter.inside == []
    assert sorted(limiter.served) == sorted(f"/p{i}" for i in range(21))
    after = sorted(hit.at for hit in site.page_hits() if hit.at >= limiter.paused_until)
    gaps = [later - earlier for earlier, later in zip(after, after[1:])]
    assert gaps and gaps[0] >= 0.9, gaps  # slower than before the pause
    assert min(gaps[-4:]) < 0.5, gaps  # and back, in steps


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_requests_queued_in_the_slot_at_a_slow_down_keep_the_fleets_pace_after_it(serve, redis):
    # One request at a time per crawler (CONCURRENT_REQUESTS_PER_DOMAIN 1): when the site says
    # slow down, each crawler has requests queued in Scrapy's slot. They come back through the
    # fleet's pace (sent back to the scheduler): at the pause's end each crawler's local slot
    # started its own, and two crawlers' starts came a few ms apart, then again a second later.
    limiter = RateLimited(limit=2, pause=2, pauses=1)
    site = serve(body(ROBOTS))
    site.pages = limiter
    urls = [f"{site.url}/p{i}" for i in range(12)]
    # The raised floor (1 s) comes back in 1000 steps: the whole crawl after the pause keeps it.
    settings = {
        **OWN_SHARES,
        "ROBOTSTXT_BACKOFF_FACTOR": 1,
        "ROBOTSTXT_BACKOFF_RECOVERY": 1000,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
    }
    handles = [start_crawler(urls[i::2], redis.url, **settings) for i in range(2)]
    results = [result for _, result in await DeferredList([h.done for h in handles])]
    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
        assert result["failed"] == {}, result["failed"]
    assert limiter.inside == []
    assert sorted(limiter.served) == sorted(f"/p{i}" for i in range(12))  # each once
    after = sorted(hit.at for hit in site.page_hits() if hit.at >= limiter.paused_until)
    gaps = [later - earlier for earlier, later in zip(after, after[1:])]
    assert len(after) >= 8 and min(gaps) >= 0.95, gaps
    assert sum(result["stats"].get("robotstxt/fleet/sent_back", 0) for result in results) >= 1
