"""A server's Retry-After on an unreachable robots.txt (issue #22): the next attempt is not
before it (bounded by ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY), the waiting requests are not
held past the retry schedule, a malformed value is ignored. Real crawls against real local
servers; the pure rules are tested as tables in test_decision.py."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, stat
from scrapy import Request
from servers import body, sequence

from scrapy_robots.cache.entry import RobotsEntry, entry_from_record, pack, record_of, unpack
from scrapy_robots.status.policy import Action
from scrapy_robots.status.retry_after import parse_retry_after

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

ROBOTS = "User-agent: *\nDisallow: /private\n"
FAST = {"ROBOTSTXT_UNREACHABLE_RETRY_DELAY": 0.2}  # the schedule: 0.2, 0.4, 0.8 s (1.4 s in all)
#: One retry: the schedule's last attempt 0.2 s after the first failure.
ONE_RETRY = {**FAST, "ROBOTSTXT_UNREACHABLE_RETRY_TIMES": 1}


class PlannedSpider(RecordingSpider):
    """Sends each URL at its time (seconds after the start), from ``plan``."""

    plan: tuple[float, ...] = ()

    async def start(self):
        began = time.monotonic()
        for url, at in zip(self.urls, self.plan):
            await asyncio.sleep(max(0.0, began + at - time.monotonic()))
            yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)


def planned(*plan: float) -> type[PlannedSpider]:
    return type("Planned", (PlannedSpider,), {"plan": plan})


def robots_times(site) -> list[float]:
    return [hit.at for hit in site.hits if hit.path == "/robots.txt"]


def site_lines(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "robots.txt for" in r.getMessage()]


@pytest_twisted.ensureDeferred
async def test_a_retry_after_within_the_schedules_time_is_waited_for(serve, caplog):
    # 1 s asked: later than the schedule's next attempt (0.2 s), before its last (1.4 s).
    site = serve(sequence(body("busy", status=503, headers={"Retry-After": "1"}), body(ROBOTS)))
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    urls = [f"{site.url}/a", f"{site.url}/private/b", f"{site.url}/c"]
    crawler = await crawl(urls, spider_cls=planned(0, 0, 0.5), **FAST)
    first, second = robots_times(site)
    assert second - first >= 1.0  # not at the schedule's 0.2 s, nor when /c came
    # Every request waited for the server's time, and got the rules.
    assert sorted(crawler.spider.downloaded) == [urls[0], urls[2]]
    assert crawler.spider.ignored == {urls[1]: "Forbidden by robots.txt"}
    assert stat(crawler, "robotstxt/unreachable/retry_after") == 1
    assert stat(crawler, "robotstxt/denied/retry_after") == 0
    message = site_lines(caplog)[0].getMessage()
    assert "attempt 1 of 4: 2 request(s) wait, next attempt in 1s (Retry-After); they hold the crawl" in message


@pytest_twisted.ensureDeferred
async def test_retry_after_in_seconds_sets_the_next_attempt_and_the_waiting_requests_give_up(serve, caplog):
    site = serve(sequence(body("busy", status=503, headers={"Retry-After": "1"}), body(ROBOTS)))
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    # /a and /b wait for the first attempt; /c comes after the schedule's 0.2 s but
    # before the server's 1 s; /d and /private/e after it.
    urls = [f"{site.url}/a", f"{site.url}/b", f"{site.url}/c", f"{site.url}/d", f"{site.url}/private/e"]
    crawler = await crawl(urls, spider_cls=planned(0, 0, 0.5, 2, 2), **ONE_RETRY)
    first, second = robots_times(site)
    assert second - first >= 1.0  # not at the schedule's 0.2 s, nor when /c came
    # The waiting requests were not held past the schedule: ignored at once, and /c too.
    spider = crawler.spider
    assert set(spider.ignored) == set(urls[:3]) | {urls[4]}
    for url in urls[:3]:
        assert spider.ignored[url] == (
            "Forbidden by robots.txt: robots.txt unreachable (HTTP 503) after 1 attempt(s), and its Retry-After "
            "(1s) puts the next attempt past the retry schedule's last"
        )
    assert spider.ignored[urls[4]] == "Forbidden by robots.txt"
    assert spider.downloaded == [urls[3]]
    assert stat(crawler, "robotstxt/denied/retry_after") == 3
    assert stat(crawler, "robotstxt/denied/unreachable") == 0
    assert stat(crawler, "robotstxt/unreachable/retry_after") == 1
    line = site_lines(caplog)[0]
    assert line.levelno == logging.WARNING
    assert line.getMessage() == (
        f"robots.txt for {site.url}: HTTP 503 -> unreachable, attempt 1 of 2: next attempt in 1s (Retry-After), "
        "past the schedule's last attempt (in 0.2s: ROBOTSTXT_UNREACHABLE_RETRY_DELAY, "
        "ROBOTSTXT_UNREACHABLE_RETRY_TIMES): 2 waiting request(s) ignored rather than held; the site is tried "
        "again then if a request needs it"
    )


def _in_two_seconds(request):
    # An HTTP date is whole seconds: 1 to 2 s from now.
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)
    return body("slow down", status=429, headers={"Retry-After": when})(request)


@pytest_twisted.ensureDeferred
async def test_retry_after_as_an_http_date_on_a_429(serve, caplog):
    site = serve(sequence(_in_two_seconds, body(ROBOTS)))
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    urls = [f"{site.url}/a", f"{site.url}/b", f"{site.url}/c"]
    crawler = await crawl(urls, spider_cls=planned(0, 0.6, 2.6), **ONE_RETRY)
    first, second = robots_times(site)
    assert second - first >= 2.0  # /b, at 0.6 s, is before the date: no attempt for it
    assert set(crawler.spider.ignored) == set(urls[:2])
    assert all("its Retry-After" in reason for reason in crawler.spider.ignored.values())
    assert crawler.spider.downloaded == [urls[2]]
    message = site_lines(caplog)[0].getMessage()
    expected = r"HTTP 429 -> unreachable, attempt 1 of 2: next attempt in [12]s \(Retry-After\)"
    assert re.search(expected, message), message
    assert stat(crawler, "robotstxt/unreachable/retry_after") == 1


@pytest.mark.parametrize("value", ["soon", "1.5"])
@pytest_twisted.ensureDeferred
async def test_a_malformed_retry_after_is_ignored_and_the_schedule_applies(serve, caplog, value):
    site = serve(sequence(body("busy", status=503, headers={"Retry-After": value}), body(ROBOTS)))
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    urls = [f"{site.url}/a", f"{site.url}/private/b"]
    crawler = await crawl(urls, **FAST)
    # The requests waited for the schedule's second attempt, 0.2 s later, and got the rules.
    first, second = robots_times(site)
    assert 0.2 <= second - first < 1.0
    assert crawler.spider.downloaded == [urls[0]]
    assert crawler.spider.ignored == {urls[1]: "Forbidden by robots.txt"}
    assert stat(crawler, "robotstxt/unreachable/retry_after_malformed") == 1
    assert stat(crawler, "robotstxt/unreachable/retry_after") == 0
    message = site_lines(caplog)[0].getMessage()
    assert "2 request(s) wait, next attempt in 0s (ROBOTSTXT_UNREACHABLE_RETRY_DELAY" in message, message
    assert message.endswith(f"; Retry-After {value!r} ignored (neither seconds nor an HTTP date)"), message


@pytest_twisted.ensureDeferred
async def test_a_retry_after_past_the_bound_is_bounded(serve, caplog):
    # A day asked; ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY allows 1 s.
    site = serve(sequence(body("busy", status=503, headers={"Retry-After": "86400"}), body(ROBOTS)))
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    urls = [f"{site.url}/a", f"{site.url}/b", f"{site.url}/c"]
    crawler = await crawl(urls, spider_cls=planned(0, 0.5, 2), ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY=1, **ONE_RETRY)
    first, second = robots_times(site)
    assert 1.0 <= second - first < 4.0  # the bound, not the day asked, nor the schedule
    assert set(crawler.spider.ignored) == set(urls[:2])
    assert "its Retry-After (86400s)" in crawler.spider.ignored[urls[0]]
    assert crawler.spider.downloaded == [urls[2]]
    message = site_lines(caplog)[0].getMessage()
    assert (
        "attempt 1 of 2: next attempt in 1s (Retry-After asks 86400s, bounded by ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY)"
        in message
    ), message
    assert stat(crawler, "robotstxt/denied/retry_after") == 2


@pytest_twisted.ensureDeferred
async def test_a_retry_after_within_the_schedule_changes_nothing(serve):
    # 0 s asked, the schedule's 0.2 s kept: the requests wait for the second attempt.
    site = serve(sequence(body("busy", status=503, headers={"Retry-After": "0"}), body(ROBOTS)))
    crawler = await crawl([f"{site.url}/a", f"{site.url}/b"], **FAST)
    first, second = robots_times(site)
    assert second - first >= 0.2
    assert sorted(crawler.spider.downloaded) == [f"{site.url}/a", f"{site.url}/b"]
    assert stat(crawler, "robotstxt/unreachable/retry_after") == 0


@pytest_twisted.ensureDeferred
async def test_a_resumed_crawl_keeps_the_servers_delay(serve, tmp_path, caplog):
    site = serve(body("busy", status=503, headers={"Retry-After": "10"}))
    settings = {"JOBDIR": str(tmp_path / "job"), **FAST}
    await crawl([f"{site.url}/a"], **settings)
    assert site.robots_hits() == 1  # no attempt at the schedule's 0.2 s
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    start = time.monotonic()
    second = await crawl([f"{site.url}/b"], **settings)
    # Restored from the job's SQLite file with the server's delay: neither fetched nor waited for.
    assert site.robots_hits() == 1
    assert time.monotonic() - start < 5
    assert "its Retry-After (10s)" in second.spider.ignored[f"{site.url}/b"]
    assert stat(second, "robotstxt/denied/retry_after") == 1
    [line] = [r.getMessage() for r in caplog.records if "restored from storage" in r.getMessage()]
    assert "HTTP 503 -> unreachable, attempt 1, next attempt in" in line and "(stored schedule, Retry-After)" in line


# -- parsing, and the stored entry --------------------------------------------------------

NOW = 1_700_000_000.0  # Tue, 14 Nov 2023 22:13:20 GMT


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("120", 120.0),
        (" 120 ", 120.0),
        ("0", 0.0),
        ("9" * 400, float(2**31)),  # "very long", bounded later by the setting
        ("Tue, 14 Nov 2023 22:15:20 GMT", 120.0),  # IMF-fixdate
        ("Tuesday, 14-Nov-23 22:15:20 GMT", 120.0),  # RFC 850
        ("Tue Nov 14 22:15:20 2023", 120.0),  # asctime: GMT
        ("Tue, 14 Nov 2023 22:00:00 GMT", 0.0),  # in the past: now
        ("soon", None),
        ("1.5", None),
        ("-1", None),
        ("+5", None),
        ("", None),
        ("١٢", None),  # Arabic-Indic digits are no HTTP seconds
    ],
)
def test_parse_retry_after(value, seconds):
    assert parse_retry_after(value, NOW) == seconds


def _entry(**fields) -> RobotsEntry:
    return RobotsEntry(
        site="http://down.example:80",
        action=Action.UNREACHABLE,
        fetched_at=NOW,
        expires_at=NOW + 120,
        status=503,
        failures=1,
        unreachable_since=NOW,
        **fields,
    )


def test_the_stored_entry_keeps_the_retry_after_and_an_old_record_lacks_it():
    entry = _entry(retry_after=120.0)
    assert entry_from_record(record_of(entry), None).retry_after == 120.0
    assert unpack(pack(entry)).retry_after == 120.0
    # A record written before Retry-After was read (a JOBDIR, a SQLite file, Redis).
    old = record_of(_entry()).replace(',"retry_after":null', "")
    assert "retry_after" not in old
    restored = entry_from_record(old, None)
    assert restored.retry_after is None
    assert restored == _entry()


@pytest_twisted.ensureDeferred
async def test_a_retry_after_on_an_early_attempt_does_not_push_the_bound_of_the_later_ones(serve, caplog):
    # The schedule: 0.5, 1 and 2 s, its last attempt 3.5 s after the first failure. The
    # server asks 2 s after the first: the second attempt comes at 2 s, the third 1 s
    # later (3 s), and the fourth would come 2 s after that (5 s), past the 3.5 s the
    # first WARNING promised: the waiting requests are ignored at the third attempt, not
    # held until the fourth (issue #30: they were held 18 s where 14 were promised).
    busy = body("busy", status=503)
    site = serve(sequence(body("busy", status=503, headers={"Retry-After": "2"}), busy, busy, busy, body(ROBOTS)))
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    urls = [f"{site.url}/a", f"{site.url}/b"]
    crawler = await crawl(urls, spider_cls=RecordingSpider, ROBOTSTXT_UNREACHABLE_RETRY_DELAY=0.5)
    first, second, third = robots_times(site)  # and no fourth
    assert 2.0 <= second - first < 2.5 and 1.0 <= third - second < 1.5
    expected = (
        "Forbidden by robots.txt: robots.txt unreachable (HTTP 503) after 3 attempt(s), and a Retry-After on an "
        "earlier attempt put the next attempt past the retry schedule's last"
    )
    assert crawler.spider.ignored == dict.fromkeys(urls, expected)
    assert stat(crawler, "robotstxt/denied/retry_after") == 2
    lines = [line.getMessage() for line in site_lines(caplog)]
    assert len(lines) == 3, lines
    # Every line names the same end, which the attempts' downloads alone may move.
    until = [float(re.search(r"until about \S+ \(([\d.]+)s\)", line).group(1)) for line in lines[:2]]
    assert until[0] == 3.5 and 1.2 <= until[1] <= 1.5, lines
    assert re.search(
        r"attempt 3 of 4: next attempt in 2s \(an earlier Retry-After moved the attempts later\), past the "
        r"schedule's last attempt \(in 0\.\ds: ROBOTSTXT_UNREACHABLE_RETRY_DELAY, ROBOTSTXT_UNREACHABLE_RETRY_TIMES\): "
        r"2 waiting request\(s\) ignored rather than held; the site is tried again then if a request needs it$",
        lines[2],
    ), lines[2]
