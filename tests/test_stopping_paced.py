"""Stopping a crawl whose sites are paced (issue #41): requests wait for their slot's turn
outside Scrapy's downloader, so a Ctrl-C, a ``CLOSESPIDER_*`` or a pause ends or holds them
at once, whatever the delay. Real `scrapy runspider` processes stopped as a user stops
them, and in-process crawls; every count is taken at the servers or from the crawl's record."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, robots_middleware, stat
from fleet import start_crawler
from processes import run_spider
from scrapy import Request
from servers import RateLimited, answer_later, body
from test_stopping import OURS, SETTINGS, ended, until

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

#: Seconds from the signal to the process's exit, downloads on the wire and start-up's
#: share of the close included (the issue's "about two seconds").
STOP_BOUND = 3.0


def paced_site(serve, delay: float):
    return serve(body(f"User-agent: *\nCrawl-delay: {delay}\nDisallow: /private\n"))


def site_urls(site, pages: int) -> list[str]:
    return [f"{site.url}/p{i}" for i in range(pages)] + [f"{site.url}/private/{i}" for i in range(2)]


def fetched(site) -> Counter[str]:
    return Counter(site.url + hit.path for hit in site.page_hits())


async def stop_after(handle, site, pages: int, signal: str = "INT") -> float:
    """Send ``signal`` once ``site`` has received ``pages`` more pages; when it was sent."""
    before = len(site.page_hits())
    await until(lambda: len(site.page_hits()) >= before + pages, 30, f"{pages} more pages")
    return handle.signal(signal)


def after(site, moment: float) -> int:
    return sum(1 for hit in site.page_hits() if hit.at > moment)


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_ctrl_c_at_a_crawl_delay_three_times_then_a_resume_fetches_every_allowed_page_once(serve, tmp_path):
    # Crawl-delay 2, 16 requests in the downloader's reach (CONCURRENT_REQUESTS): Scrapy's slot
    # queue held them all, and each stop waited for them, one every 2 s (about 30 s).
    site = paced_site(serve, 2)
    urls = site_urls(site, 14)
    settings = {
        **SETTINGS,
        "DOWNLOADER_MIDDLEWARES": OURS,
        "JOBDIR": str(tmp_path / "job"),
        "CONCURRENT_REQUESTS": 16,
    }
    for run in range(3):
        handle = run_spider(urls, tmp_path, **settings)
        sent = await stop_after(handle, site, 2)
        result = await ended(handle, timeout=15)
        assert not result["killed"], result["log"][-3000:]
        assert result["reason"] == "shutdown", result["log"][-3000:]
        assert result["ended_at"] - sent < STOP_BOUND, (run, result["ended_at"] - sent)
        assert after(site, sent) <= 1, (run, fetched(site))  # at most the one whose turn had come
        assert result["stats"]["robotstxt/closing/requeued"] >= 1, result["log"][-3000:]
        assert "their site's turn go back to the job's queue (JOBDIR)" in result["log"]
        assert "ERROR" not in result["log"], result["log"][-3000:]
    last = await ended(run_spider(urls, tmp_path, **settings), timeout=60)
    assert last["exit"] == 0 and last["reason"] == "finished", last["log"][-3000:]
    pages = fetched(site)
    assert set(pages) == {url for url in urls if "/private" not in url}
    assert max(pages.values()) == 1, pages
    assert site.robots_hits() == 1  # the job kept it across the four runs


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stop", "reason"),
    [({}, "shutdown"), ({"CLOSESPIDER_PAGECOUNT": 3}, "closespider_pagecount")],
    ids=["ctrl-c", "closespider"],
)
@pytest_twisted.ensureDeferred
async def test_a_stop_without_jobdir_at_a_crawl_delay_says_what_was_not_sent(serve, tmp_path, stop, reason):
    slow = paced_site(serve, 3)
    fast = serve(body("User-agent: *\nDisallow: /private\n"))
    # CLOSESPIDER_PAGECOUNT counts every response, robots.txt's and the fast site's too.
    urls = site_urls(slow, 12) + ([] if stop else site_urls(fast, 4))
    handle = run_spider(urls, tmp_path, DOWNLOADER_MIDDLEWARES=OURS, CONCURRENT_REQUESTS=16, **SETTINGS, **stop)
    sent = None if stop else await stop_after(handle, slow, 2)
    result = await ended(handle, timeout=15)
    if sent is None:  # the close began with the page that reached the count
        sent = max(hit.at for hit in slow.page_hits())
    assert not result["killed"], result["log"][-3000:]
    assert result["reason"] == reason, result["log"][-3000:]
    assert result["ended_at"] - sent < STOP_BOUND, result["ended_at"] - sent
    # Every request downloaded or ignored with a reason; none lost.
    unsent = {url for url, why in result["ignored"].items() if "turn in its pace had not come" in why}
    assert unsent, result["ignored"]
    assert set(result["downloaded"]) | set(result["ignored"]) == set(urls)
    assert result["stats"]["robotstxt/closing/ignored"] == len(unsent)
    assert "their site's turn are not sent (stat robotstxt/closing/ignored)" in result["log"]
    assert len(fast.page_hits()) == (0 if stop else 4)  # the fast site was done long before
    assert "ERROR" not in result["log"], result["log"][-3000:]


@pytest_twisted.ensureDeferred
async def test_a_pause_holds_the_requests_already_queued_for_the_site(serve):
    # Four transfers at once, each answered 0.5 s later: the other requests of the burst
    # wait in Scrapy's slot queue when the site says "slow down" for 3 s. None of them
    # may reach the site inside the pause once its answer could have come back.
    limiter = RateLimited(limit=2, pause=3, grace=0.7, pauses=1)
    site = serve(body("User-agent: *\n"))
    site.pages = answer_later(limiter, 0.5)
    urls = [f"{site.url}/p{i}" for i in range(12)]
    crawler = await crawl(urls, CONCURRENT_REQUESTS_PER_DOMAIN=4, CONCURRENT_REQUESTS=16)
    assert limiter.throttled >= 1
    assert limiter.inside == [], [round(at - limiter.began, 2) for at in limiter.inside]
    assert sorted(limiter.served) == sorted(f"/p{i}" for i in range(12))
    assert stat(crawler, "robotstxt/backoff/paused") == 1


class ChangingRulesSpider(RecordingSpider):
    """Every page at once; the site's robots.txt changes right after the crawl's first fetch."""

    site: Any = None

    async def start(self):
        for url in self.urls:
            yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)


@pytest_twisted.ensureDeferred
async def test_a_request_is_judged_as_it_leaves_not_as_it_began_to_wait(serve):
    # Crawl-delay 0.5 and a robots.txt kept 1 s: the file starts forbidding /c/ once first
    # fetched. Every /c/ request still waiting when the new file is fetched is denied.
    answers = ["User-agent: *\nCrawl-delay: 0.5\n", "User-agent: *\nCrawl-delay: 0.5\nDisallow: /c/\n"]
    fetches: list[float] = []

    def robots(request):
        fetches.append(time.monotonic())
        return body(answers[min(len(fetches) - 1, 1)])(request)

    site = serve(robots)
    urls = [f"{site.url}/c/{i}" for i in range(8)]
    crawler = await crawl(urls, ROBOTSTXT_CACHE_TTL=1.0, CONCURRENT_REQUESTS=16)
    assert len(fetches) >= 2
    changed = fetches[1]
    late = [hit.path for hit in site.page_hits() if hit.at > changed]
    assert late == [], (late, [round(h.at - fetches[0], 2) for h in site.page_hits()])
    denied = {url for url, why in crawler.spider.ignored.items() if why == "Forbidden by robots.txt"}
    assert len(denied) >= 4 and len(denied) + len(site.page_hits()) == 8, crawler.spider.ignored
    assert stat(crawler, "robotstxt/forbidden") == len(denied)


class CrawlAgentHeaderSpider(RecordingSpider):
    """Requests that already carry the crawl's own User-Agent, as bytes (as after Scrapy's
    UserAgentMiddleware: a retry, a request back from the scheduler)."""

    async def start(self):
        agent = self.settings.get("USER_AGENT")
        for url in self.urls:
            yield Request(url, headers={"User-Agent": agent}, callback=self.parse, errback=self.errback)


@pytest_twisted.ensureDeferred
async def test_a_request_carrying_the_crawls_own_agent_as_bytes_is_the_crawls_agent(serve):
    site = serve(body("User-agent: FooBot\nDisallow: /foo\n\nUser-agent: *\nDisallow: /\n"))
    urls = [f"{site.url}/a", f"{site.url}/foo/b"]
    crawler = await crawl(urls, spider_cls=CrawlAgentHeaderSpider)
    assert crawler.spider.downloaded == [f"{site.url}/a"]
    assert crawler.spider.ignored == {f"{site.url}/foo/b": "Forbidden by robots.txt"}
    # Its rules were the crawl's own: no other agent's were built.
    entry = robots_middleware(crawler).sites.ready(site.url)
    assert entry is not None and not entry.others, entry.others


class SlowFirstSpider(RecordingSpider):
    """The slow site's requests first, then every fast site's: the frontier a FIFO queue keeps."""


@pytest.mark.parametrize(
    "queue",
    [
        pytest.param("scrapy.pqueues.DownloaderAwarePriorityQueue", id="downloader-aware"),
        pytest.param("scrapy.pqueues.ScrapyPriorityQueue", id="fifo"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_a_slow_sites_waiting_requests_hold_no_download_place(serve, queue):
    # One site at Crawl-delay 2 whose 30 requests come first, 8 download places: in Scrapy's
    # slot queue they held all 8, and the fast sites waited for the slow one's pace.
    slow = paced_site(serve, 2)
    fast = [serve(body("User-agent: *\n")) for _ in range(6)]
    urls = [f"{slow.url}/s{i}" for i in range(30)] + [f"{f.url}/f{i}" for f in fast for i in range(5)]
    started = time.monotonic()
    crawler = await crawl(
        urls,
        spider_cls=SlowFirstSpider,
        CONCURRENT_REQUESTS=8,
        SCHEDULER_PRIORITY_QUEUE=queue,
        CLOSESPIDER_TIMEOUT=6,
    )
    fast_done = max(hit.at for f in fast for hit in f.page_hits())
    assert sum(len(f.page_hits()) for f in fast) == 30
    assert fast_done - started < 3, fast_done - started
    assert len(slow.page_hits()) >= 2
    assert stat(crawler, "robotstxt/pace/waited") >= 1


@pytest_twisted.ensureDeferred
async def test_a_close_during_a_pause_lets_the_requests_scrapy_had_queued_go_back(serve):
    # As above, the site asks 4 s; CLOSESPIDER_TIMEOUT closes the crawl 2 s in, inside the
    # pause. The requests held in Scrapy's slot queue are let go at once, ignored with the
    # reason (no JOBDIR): the close does not wait for the pause, nor send them after it.
    limiter = RateLimited(limit=2, pause=4, grace=0.7, pauses=1)
    site = serve(body("User-agent: *\n"))
    site.pages = answer_later(limiter, 0.5)
    urls = [f"{site.url}/p{i}" for i in range(12)]
    started = time.monotonic()
    crawler = await crawl(urls, CONCURRENT_REQUESTS_PER_DOMAIN=4, CONCURRENT_REQUESTS=16, CLOSESPIDER_TIMEOUT=2)
    took = time.monotonic() - started
    assert limiter.throttled >= 1
    assert took < 3.5, took  # the pause would end about 4.6 s in
    assert limiter.inside == [], [round(at - limiter.began, 2) for at in limiter.inside]
    held = {url: why for url, why in crawler.spider.ignored.items() if "had said slow down" in why}
    assert held, crawler.spider.ignored
    # Let go from the package's line (named by the site) or from Scrapy's slot queue (by the slot, the host).
    assert all(
        why.startswith(("crawl closing while http://127.0.0.2:", "crawl closing while 127.0.0.2 "))
        for why in held.values()
    )
    assert stat(crawler, "robotstxt/closing/ignored") == len(crawler.spider.ignored)
    # Every request downloaded, ignored with a reason, or failed as Scrapy fails a 429 it gave up on: none lost.
    assert set(crawler.spider.downloaded) | set(crawler.spider.ignored) | set(crawler.spider.failed) == set(urls)


@pytest.mark.slow
@pytest.mark.parametrize(
    "setting", [{"DOWNLOAD_DELAY": 1.5}, {"AUTOTHROTTLE_ENABLED": True}], ids=["delay", "autothrottle"]
)
@pytest_twisted.ensureDeferred
async def test_a_users_own_delay_stops_at_once_too(serve, tmp_path, setting):
    # No Crawl-delay: the user's DOWNLOAD_DELAY (or AutoThrottle's start delay, 5 s) paces the
    # site. Its requests, released together when robots.txt came, waited in Scrapy's slot
    # queue: a Ctrl-C took 47 s at DOWNLOAD_DELAY 1 (stock: 19 s), every one of them sent.
    site = serve(body("User-agent: *\nDisallow: /private\n"))
    urls = site_urls(site, 20)
    handle = run_spider(urls, tmp_path, DOWNLOADER_MIDDLEWARES=OURS, CONCURRENT_REQUESTS=16, **SETTINGS, **setting)
    sent = await stop_after(handle, site, 2)
    result = await ended(handle, timeout=15)
    assert not result["killed"], result["log"][-3000:]
    assert result["ended_at"] - sent < STOP_BOUND, result["ended_at"] - sent
    assert after(site, sent) <= 1, fetched(site)
    assert result["stats"]["robotstxt/closing/ignored"] >= 10, result["log"][-3000:]
    gaps = [b.at - a.at for a, b in zip(site.page_hits(), site.page_hits()[1:])]
    floor = setting.get("DOWNLOAD_DELAY", 5.0) * 0.5  # Scrapy's jitter: at least half the delay
    assert min(gaps) >= floor - 0.01, gaps


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_ctrl_c_on_a_fleet_crawler_says_what_waited_for_the_fleets_turn(serve, redis):
    # The fleet's pace keeps a request waiting for its turn in the fleet (fleet/shared_pacing.py),
    # not in the waiting room: the close line counts those too, one line.
    slow = [paced_site(serve, 3) for _ in range(2)]
    urls = [url for site in slow for url in site_urls(site, 8)]
    own_queue = {"SCHEDULER": "scrapy.core.scheduler.Scheduler", "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter"}
    handle = start_crawler(urls, redis.url, **own_queue, CONCURRENT_REQUESTS=16)
    await until(lambda: all(len(site.page_hits()) >= 1 for site in slow), 30, "a page of each site")
    sent = handle.signal("INT")
    result = await ended(handle, timeout=15)
    log = result["log"]
    assert not result["killed"] and result["reason"] == "shutdown", log[-3000:]
    assert result["ended_at"] - sent < STOP_BOUND, result["ended_at"] - sent
    # The fleet project keeps its queue (SCHEDULER_PERSIST): the requests go back to it.
    closed = result["stats"].get("robotstxt/closing/requeued", 0)
    assert closed >= 2, "\n".join([repr(result["stats"]), log[-2500:]])
    lines = [line for line in log.splitlines() if "Crawl closing:" in line]
    assert len(lines) == 1, log[-3000:]
    assert f"Crawl closing: {closed} request(s) of 2 site(s)" in lines[0], (lines, closed)
    assert "ERROR" not in log, log[-3000:]
