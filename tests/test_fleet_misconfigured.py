"""A fleet whose Redis settings do not match its Redis (#48): a Redis Cluster node named
without ``ROBOTSTXT_REDIS_CLUSTER``, the setting against a plain server, a Sentinel address
that is no Sentinel, a service the Sentinels do not know. Each is one ERROR line naming the
setting and the fix, and the crawl closes (``robotstxt_redis_misconfigured``): never an
outage loop of "unreachable" and "reachable again", never a crawl run unshared to its end.
Real servers (tests/redis_cluster.py, redis_server.py, redis_sentinel.py), real crawls; the
right settings on the same servers say nothing of the kind."""

from __future__ import annotations

import logging

import pytest
import pytest_twisted
from crawling import crawl, stat
from fleet import start_crawler
from redis_cluster import RedisCluster
from redis_sentinel import SERVICE, SentinelGroup
from redis_server import RedisServer, free_port
from scrapy.utils.defer import deferred_from_coro
from servers import body
from twisted.internet import reactor, threads
from twisted.internet.task import deferLater

from scrapy_robots.fleet.link import FleetUnavailable, RedisLink

MISCONFIGURED = "robotstxt_redis_misconfigured"

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

ROBOTS = "User-agent: *\nDisallow: /private\nCrawl-delay: 0.3\n"
#: Each crawler its own queue: the test is about the robots.txt layer's Redis.
OWN_QUEUE = {"SCHEDULER": "scrapy.core.scheduler.Scheduler", "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter"}
FLEET = {"ROBOTSTXT_CACHE_STORAGE": "scrapy_robots.fleet.RedisRobotsStorage"}


def sleep(seconds: float):
    return deferLater(reactor, seconds, lambda: None)


@pytest.fixture
def cluster():
    nodes = RedisCluster().start()
    yield nodes
    nodes.stop()


@pytest.fixture
def sentinels():
    group = SentinelGroup().start()
    yield group
    group.stop()


def outage_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if "is unreachable" in line or "is reachable again" in line]


def assert_stopped_at_start(result: dict, setting: str, fix: str) -> None:
    """One ERROR line naming ``setting`` and ``fix``, no outage, no page: the crawl closed."""
    log = result["log"]
    named = [line for line in log.splitlines() if setting in line]
    assert len(named) == 1, log[-4000:]
    assert "ERROR" in named[0] and fix in named[0], named
    assert outage_lines(log) == [], log[-4000:]
    assert result["reason"] == MISCONFIGURED, log[-4000:]
    assert result["downloaded"] == [], result["downloaded"]
    assert "Traceback" not in log, log[-4000:]


def assert_clean(result: dict, pages: int) -> None:
    log = result["log"]
    assert result["exit"] == 0 and result["reason"] == "finished", log[-4000:]
    assert len(result["downloaded"]) == pages, log[-4000:]
    assert "ROBOTSTXT_REDIS_CLUSTER" not in log, log[-4000:]
    assert outage_lines(log) == [], log[-4000:]
    assert not result["stats"].get("robotstxt/fleet/fallback"), result["stats"]


@pytest_twisted.ensureDeferred
async def test_a_cluster_node_without_the_cluster_setting_stops_the_crawl_with_one_line(serve, cluster):
    site = serve(body(ROBOTS))
    urls = [f"{site.url}/p{i}" for i in range(6)]
    settings = {**OWN_QUEUE, "ROBOTSTXT_REDIS_URL": cluster.url}
    wrong = await start_crawler(urls, cluster.url, **settings).done
    assert_stopped_at_start(wrong, "ROBOTSTXT_REDIS_CLUSTER", "ROBOTSTXT_REDIS_CLUSTER = True")
    assert site.page_hits() == [] and site.robots_hits() == 0
    right = await start_crawler(urls, cluster.url, **settings, ROBOTSTXT_REDIS_CLUSTER=True).done
    assert_clean(right, 6)


@pytest_twisted.ensureDeferred
async def test_the_cluster_setting_against_a_plain_redis_stops_the_crawl_with_one_line(serve, redis):
    site = serve(body(ROBOTS))
    urls = [f"{site.url}/p{i}" for i in range(6)]
    settings = {**OWN_QUEUE, "ROBOTSTXT_REDIS_URL": redis.url}
    wrong = await start_crawler(urls, redis.url, **settings, ROBOTSTXT_REDIS_CLUSTER=True).done
    assert_stopped_at_start(wrong, "ROBOTSTXT_REDIS_CLUSTER", "ROBOTSTXT_REDIS_CLUSTER = False")
    assert site.page_hits() == [] and site.robots_hits() == 0
    right = await start_crawler(urls, redis.url, **settings).done
    assert_clean(right, 6)


async def crawl_while(start_redis, urls: list[str], after: float, **settings):
    """An in-process crawl; ``start_redis`` (blocking) run in a thread ``after`` seconds in."""
    started = deferLater(reactor, after, lambda: threads.deferToThread(start_redis))
    crawler = await crawl(urls, **FLEET, **settings)
    await started
    return crawler


@pytest.mark.parametrize("kind", ["cluster setting, plain server", "cluster node, no setting"])
@pytest_twisted.ensureDeferred
async def test_a_mismatch_found_when_redis_comes_back_mid_crawl_closes_the_spider(serve, caplog, kind):
    # Redis is down at start-up: the crawl runs on its own (the fleet's outage), and the
    # mismatch is found at the link's first PING that Redis answers.
    caplog.set_level(logging.INFO)
    site = serve(body(ROBOTS))
    urls = [f"{site.url}/p{i}" for i in range(20)]
    if kind == "cluster setting, plain server":
        server = RedisServer(port=free_port())
        start, stop, fix = server.start, server.stop, "ROBOTSTXT_REDIS_CLUSTER = False"
        settings = {"ROBOTSTXT_REDIS_URL": server.url, "ROBOTSTXT_REDIS_CLUSTER": True}
    else:
        nodes = RedisCluster().start()
        node = nodes.nodes[0]
        node.stop()
        start, stop, fix = node.start, nodes.stop, "ROBOTSTXT_REDIS_CLUSTER = True"
        settings = {"ROBOTSTXT_REDIS_URL": nodes.url}
    try:
        crawler = await crawl_while(start, urls, 1.0, **settings)
    finally:
        stop()
    messages = [r.getMessage() for r in caplog.records]
    named = [r for r in caplog.records if "ROBOTSTXT_REDIS_CLUSTER" in r.getMessage()]
    assert len(named) == 1, messages
    assert named[0].levelno == logging.ERROR and fix in named[0].getMessage(), named[0].getMessage()
    assert stat(crawler, "finish_reason", None) == MISCONFIGURED
    # One outage at start-up (Redis was down), never "reachable again": no loop.
    assert len([m for m in messages if "is unreachable" in m]) == 1, messages
    assert not [m for m in messages if "is reachable again" in m], messages
    assert 0 < len(crawler.spider.downloaded) < len(urls)


@pytest_twisted.ensureDeferred
async def test_a_moved_reply_on_a_plain_client_is_the_misconfiguration_not_an_outage(cluster, caplog):
    # The link driven directly, past the start-up check: a key another node serves answers
    # MOVED, wherever the call. Twice, two keys: the link neither goes down nor comes back.
    caplog.set_level(logging.INFO)
    said: list[str] = []
    link = RedisLink(cluster.url, 1.0, on_misconfigured=said.append)
    link.verified = True  # as if the start-up check had not run (the link's first call asks)
    node = cluster.nodes[0]
    elsewhere = [key for key in (f"k{i}" for i in range(200)) if cluster.node_of(key) is not node][:2]

    async def calls() -> list[bool]:
        outcomes = []
        for key in elsewhere:
            try:
                await link.call(link.client.get, key)
                outcomes.append(True)
            except FleetUnavailable:
                outcomes.append(False)
        await link.close()
        return outcomes

    assert await deferred_from_coro(calls()) == [False, False]
    assert not link.down and link.misconfigured is not None
    assert len(said) == 1 and "ROBOTSTXT_REDIS_CLUSTER = True" in said[0], said
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "is unreachable" in m or "is reachable again" in m], messages
    assert len([r for r in caplog.records if r.levelno == logging.ERROR]) == 1, messages


@pytest_twisted.ensureDeferred
async def test_sentinel_settings_naming_no_sentinel_or_an_unknown_service_stop_the_crawl(
    serve, redis, sentinels, caplog
):
    caplog.set_level(logging.INFO)
    site = serve(body(ROBOTS))
    urls = [f"{site.url}/p{i}" for i in range(4)]
    cases = [
        ({"ROBOTSTXT_REDIS_SENTINELS": f"127.0.0.1:{redis.port}"}, "ROBOTSTXT_REDIS_SENTINELS"),
        (
            {"ROBOTSTXT_REDIS_SENTINELS": sentinels.setting, "ROBOTSTXT_REDIS_SENTINEL_SERVICE": "nosuch"},
            "ROBOTSTXT_REDIS_SENTINEL_SERVICE",
        ),
    ]
    for settings, setting in cases:
        caplog.clear()
        crawler = await crawl(urls, **FLEET, ROBOTSTXT_REDIS_URL="redis://127.0.0.1:9/0", **settings)
        messages = [r.getMessage() for r in caplog.records]
        named = [r for r in caplog.records if setting in r.getMessage()]
        assert len(named) == 1 and named[0].levelno == logging.ERROR, messages
        assert not [m for m in messages if "is unreachable" in m or "is reachable again" in m], messages
        assert stat(crawler, "finish_reason", None) == MISCONFIGURED
        assert crawler.spider.downloaded == []
    caplog.clear()
    crawler = await crawl(
        urls,
        **FLEET,
        ROBOTSTXT_REDIS_URL="redis://127.0.0.1:9/0",
        ROBOTSTXT_REDIS_SENTINELS=sentinels.setting,
        ROBOTSTXT_REDIS_SENTINEL_SERVICE=SERVICE,
        # The docs' complete by-hand recipe: a correct crawl, which warns of nothing.
        SPIDER_MIDDLEWARES={"scrapy_robots.directives.middleware.DirectivesMiddleware": 90},
    )
    assert stat(crawler, "finish_reason", None) == "finished"
    assert len(crawler.spider.downloaded) == 4
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], [r.getMessage() for r in caplog.records]


@pytest_twisted.ensureDeferred
async def test_the_link_s_lines_never_name_the_redis_password(caplog):
    # A URL with a password (user part, and the query's), Redis away: the "unreachable" line
    # names the server without it (it printed the whole URL, password included).
    caplog.set_level(logging.DEBUG, logger="scrapy_robots.fleet")
    for url in (f"redis://:s3cret@127.0.0.1:{free_port()}/0", f"redis://bot:s3cret@127.0.0.1:{free_port()}/1"):
        link = RedisLink(url, 0.2)
        try:
            for _ in range(2):
                with pytest.raises(FleetUnavailable):
                    await deferred_from_coro(link.call(link.client.get, "k"))
        finally:
            await deferred_from_coro(link.close())
        said = [r.getMessage() for r in caplog.records]
        assert any("is unreachable" in line and "127.0.0.1" in line for line in said), said
        assert not any("s3cret" in line for line in said), said
        caplog.clear()
