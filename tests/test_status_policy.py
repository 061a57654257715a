"""Each row of the status-code policy, in a real crawl."""

from __future__ import annotations

import pytest
import pytest_twisted
from crawling import crawl, stat
from servers import body, reset

from scrapy_robots.status.policy import Action, StatusPolicy

DENY_ALL_TEXT = "User-agent: *\nDisallow: /\n"
PRIVATE = "User-agent: *\nDisallow: /private\n"


@pytest.mark.parametrize(
    ("status", "outcome", "stat_key"),
    [
        (200, "rule", "robotstxt/policy/parse"),
        (401, "deny", "robotstxt/policy/deny"),
        (403, "deny", "robotstxt/policy/deny"),
        (404, "allow", "robotstxt/policy/allow"),
        (410, "allow", "robotstxt/policy/allow"),
        (418, "allow", "robotstxt/policy/allow"),
    ],
)
@pytest_twisted.ensureDeferred
async def test_status_row(serve, status, outcome, stat_key):
    # The error page's body says "Disallow: /private": it must only count on a 2xx.
    site = serve(body(PRIVATE, status=status))
    crawler = await crawl([f"{site.url}/public", f"{site.url}/private"])
    spider = crawler.spider
    assert stat(crawler, stat_key) == 1
    assert stat(crawler, f"robotstxt/response_status_count/{status}") == 1
    if outcome == "rule":
        assert spider.downloaded == [f"{site.url}/public"]
        assert spider.ignored == {f"{site.url}/private": "Forbidden by robots.txt"}
    elif outcome == "allow":
        assert sorted(spider.downloaded) == [f"{site.url}/private", f"{site.url}/public"]
    else:
        assert spider.downloaded == []
        assert set(spider.ignored.values()) == {
            f"Forbidden by robots.txt: deny all (robots.txt answered HTTP {status})"
        }
        # A policy denial is told apart from a rule's, in the stats.
        assert stat(crawler, "robotstxt/denied/deny_all") == 2
        assert stat(crawler, "robotstxt/forbidden") == 0


@pytest_twisted.ensureDeferred
async def test_404_page_saying_disallow_all_does_not_block(serve):
    site = serve(body(DENY_ALL_TEXT, status=404))
    crawler = await crawl([f"{site.url}/a", f"{site.url}/b"])
    assert len(crawler.spider.downloaded) == 2


@pytest_twisted.ensureDeferred
async def test_503_is_unreachable_then_ignored_after_retries(serve):
    site = serve(body("<html>down</html>", status=503))
    crawler = await crawl(
        [f"{site.url}/a", f"{site.url}/b"],
        ROBOTSTXT_UNREACHABLE_RETRY_DELAY=0.2,
        ROBOTSTXT_UNREACHABLE_RETRY_TIMES=2,
    )
    spider = crawler.spider
    assert spider.downloaded == []
    assert len(spider.ignored) == 2
    assert all("robots.txt unreachable (HTTP 503)" in r for r in spider.ignored.values())
    # One first attempt and two retries, shared by both waiting requests.
    assert site.robots_hits() == 3
    assert stat(crawler, "robotstxt/retry") == 2
    assert stat(crawler, "robotstxt/denied/unreachable") == 2
    assert stat(crawler, "robotstxt/forbidden") == 0


@pytest_twisted.ensureDeferred
async def test_unreachable_site_recovers_on_retry(serve):
    answers = iter([body("", status=503), body("", status=500), body(PRIVATE)])
    site = serve(lambda request: next(answers)(request))
    crawler = await crawl(
        [f"{site.url}/public", f"{site.url}/private"],
        ROBOTSTXT_UNREACHABLE_RETRY_DELAY=0.2,
        ROBOTSTXT_UNREACHABLE_RETRY_TIMES=3,
    )
    assert crawler.spider.downloaded == [f"{site.url}/public"]
    assert crawler.spider.ignored == {f"{site.url}/private": "Forbidden by robots.txt"}
    assert site.robots_hits() == 3


@pytest_twisted.ensureDeferred
async def test_network_error_is_unreachable(serve):
    site = serve(reset())
    crawler = await crawl([f"{site.url}/a"], ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0)
    assert crawler.spider.downloaded == []
    assert "robots.txt unreachable" in crawler.spider.ignored[f"{site.url}/a"]
    assert any(k.startswith("robotstxt/exception_count/") for k in crawler.stats.get_stats())


@pytest_twisted.ensureDeferred
async def test_scrapy_preset_restores_allow_all_on_errors(serve):
    site = serve(reset())
    crawler = await crawl([f"{site.url}/a"], ROBOTSTXT_STATUS_POLICY="scrapy")
    assert crawler.spider.downloaded == [f"{site.url}/a"]


@pytest_twisted.ensureDeferred
async def test_rfc9309_preset_lets_403_in(serve):
    site = serve(body(DENY_ALL_TEXT, status=403))
    crawler = await crawl([f"{site.url}/a"], ROBOTSTXT_STATUS_POLICY="rfc9309")
    assert crawler.spider.downloaded == [f"{site.url}/a"]


@pytest_twisted.ensureDeferred
async def test_policy_override_dict(serve):
    site = serve(body("", status=404))
    crawler = await crawl([f"{site.url}/a"], ROBOTSTXT_STATUS_POLICY={404: "deny"})
    assert crawler.spider.ignored == {
        f"{site.url}/a": "Forbidden by robots.txt: deny all (robots.txt answered HTTP 404)"
    }


def test_policy_table():
    policy = StatusPolicy.from_setting(None)
    assert policy.action_for_status(200) is Action.PARSE
    assert policy.action_for_status(206) is Action.PARSE
    assert policy.action_for_status(401) is Action.DENY
    assert policy.action_for_status(404) is Action.ALLOW
    assert policy.action_for_status(429) is Action.UNREACHABLE
    assert policy.action_for_status(503) is Action.UNREACHABLE
    assert policy.action_for_status(999) is Action.UNREACHABLE
    assert policy.action_for_failure() is Action.UNREACHABLE
    custom = StatusPolicy.from_setting({"preset": "rfc9309", "5xx": "allow", "503": "unreachable"})
    assert custom.action_for_status(403) is Action.ALLOW
    assert custom.action_for_status(500) is Action.ALLOW
    assert custom.action_for_status(503) is Action.UNREACHABLE
