"""The fleet on a Redis Cluster (#42): a real 3-primary cluster (tests/redis_cluster.py),
real `scrapy crawl` processes (tests/fleet_project) with ``ROBOTSTXT_REDIS_CLUSTER``, a
node killed and restarted mid-crawl, nodes flushed one after the other. Everything is
asserted at the sites and in the cluster's nodes. And the fleet's pace reset told by the
shard's epoch, not by clocks: a busy event loop is no reset, a FLUSHALL is."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from datetime import datetime

import pytest
import pytest_twisted
from fleet import finished, start_crawler
from redis_cluster import RedisCluster
from scrapy.utils.defer import deferred_from_coro
from servers import SiteServer, body
from test_fleet_pace import LOADED_MARGIN, dealt
from twisted.internet import reactor
from twisted.internet.task import deferLater

from scrapy_robots.fleet import FleetPacer, RedisLink, RedisPacer
from scrapy_robots.fleet.reservations import PACE_SHARDS, shard_of

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

PREFIX = "scrapy_robots:fleetbot"
CLUSTER = {"ROBOTSTXT_REDIS_CLUSTER": True}
#: The in-memory scheduler: each crawler crawls the URLs it was given (scrapy-redis has no
#: cluster client, and a node down would take its queue away).
OWN_QUEUE = {"SCHEDULER": "scrapy.core.scheduler.Scheduler", "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter"}
#: Few requests at a time, none parked: requests keep reaching the fleet's pace all along.
FEW = {"CONCURRENT_REQUESTS": 4, "ROBOTSTXT_MAX_WAITING": 0}
SHORT = 0.95  # a gap under 95 % of the delay is short
TOLERATED = 0.03  # of the gaps in a window


@pytest.fixture
def cluster():
    nodes = RedisCluster().start()
    yield nodes
    nodes.stop()


def sleep(seconds: float):
    return deferLater(reactor, seconds, lambda: None)


def robots(delay: float) -> str:
    return f"User-agent: *\nDisallow: /private\nCrawl-delay: {delay:g}\n"


def starts(site: SiteServer) -> list[float]:
    return sorted(hit.at for hit in site.page_hits())


def gaps_between(times: list[float], begin: float = 0.0, end: float = float("inf")) -> list[float]:
    """Gaps between consecutive arrivals, for the pairs whose later one came in [begin, end)."""
    return [b - a for a, b in zip(times, times[1:]) if begin <= b < end]


def assert_polite(gaps: list[float], delay: float, what: str) -> None:
    assert gaps, f"no gaps {what}"
    under = sorted(gap for gap in gaps if gap < SHORT * delay)
    assert len(under) <= TOLERATED * len(gaps), f"{what}: {len(under)} of {len(gaps)} gaps < {SHORT} x {delay}: {under}"


def pace_key(site: SiteServer) -> str:
    """The fleet's pace of the site's downloader slot (its host name)."""
    return f"{PREFIX}:pace:{{{shard_of(site.host, PACE_SHARDS)}}}:{site.host}"


def node_index(cluster: RedisCluster, key: str) -> int:
    """The node that holds ``key`` now (asserted in the nodes, not computed)."""
    holders = [n for n, keys in enumerate(cluster.keys()) if key in keys]
    assert len(holders) == 1, (key, cluster.keys())
    return holders[0]


def on_different_nodes(cluster: RedisCluster, serve, delay: float, count: int) -> list[SiteServer]:
    """``count`` paced sites whose pace keys the cluster serves on different nodes."""
    chosen: list[SiteServer] = []
    nodes: set[int] = set()
    for _ in range(12):
        site = serve(body(robots(delay)))
        node = cluster.nodes.index(cluster.node_of(pace_key(site)))
        if node not in nodes:
            nodes.add(node)
            chosen.append(site)
        if len(chosen) == count:
            return chosen
    raise AssertionError("no sites whose paces live on different nodes")


async def until_ok(cluster: RedisCluster, timeout: float = 20) -> None:
    """Until the cluster is whole again, without blocking the reactor that serves the sites."""
    deadline = time.monotonic() + timeout
    while not cluster.ok():
        assert time.monotonic() < deadline, "the cluster did not come back"
        await sleep(0.1)


@pytest_twisted.ensureDeferred
async def test_two_crawlers_share_robots_and_pace_across_the_cluster_nodes(serve, redis, cluster):
    # Both deployments at once: scrapy-redis's queue on one Redis (REDIS_URL), the
    # robots.txt layer on the cluster (ROBOTSTXT_REDIS_URL, one node named).
    delay = 0.3
    sites = on_different_nodes(cluster, serve, delay, 3)
    urls = [f"{site.url}/p{i}" for site in sites for i in range(8)] + [f"{s.url}/private" for s in sites]
    settings = {**CLUSTER, "ROBOTSTXT_REDIS_URL": cluster.url, "ROBOTSTXT_FLEET_PACING_MARGIN": LOADED_MARGIN}
    handles = [start_crawler(urls[::2], redis.url, **settings), start_crawler(urls[1::2], redis.url, **settings)]
    results = await finished(handles)
    assert sum(len(r["downloaded"]) for r in results) == 24
    assert all(r["downloaded"] for r in results), [len(r["downloaded"]) for r in results]
    assert [site.robots_hits() for site in sites] == [1, 1, 1]
    assert sum(r["stats"].get("robotstxt/fleet/fetch", 0) for r in results) == 3
    assert not any(r["stats"].get("robotstxt/fleet/fallback") for r in results), [r["stats"] for r in results]
    for site in sites:
        assert sorted(site.paths()) == sorted([f"/p{i}" for i in range(8)] + ["/robots.txt"])
        times = starts(site)
        assert min(gaps_between(times)) >= SHORT * delay, sorted(gaps_between(times))[:3]
    # The paces lived on three different nodes, each beside its shard's epoch and heartbeats.
    assert len({node_index(cluster, pace_key(site)) for site in sites}) == 3
    for site in sites:
        node = node_index(cluster, pace_key(site))
        shard = shard_of(site.host, PACE_SHARDS)
        assert f"{PREFIX}:pace-epoch:{{{shard}}}" in cluster.keys()[node]
    # scrapy-redis's queue stayed on the single Redis: the cluster holds none of its keys.
    assert not [key for keys in cluster.keys() for key in keys if key.startswith("fleet:")]


def _resumed_at(log: str) -> list[float]:
    """Wall-clock times (seconds) of the lines saying the fleet's pace resumes."""
    found = re.findall(
        r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \[scrapy_robots\.fleet\.pacing\] INFO: The fleet's pace resumes", log, re.M
    )
    return [datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").timestamp() for stamp in found]


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_node_killed_and_restarted_mid_crawl(serve, cluster):
    # The node that holds a site's pace is killed (SIGKILL), then started again with its
    # nodes.conf (it rejoins with its slots, empty), twice. The crawl goes on, paced.
    # Pages enough that the crawl still runs when the second node is back: at the fleet's
    # full rate after the first (#49), 36 a site had ended before it.
    delay = 0.4
    pages = 60
    sites = on_different_nodes(cluster, serve, delay, 2)
    urls = [f"{site.url}/p{i}" for i in range(pages) for site in sites]
    margin = {"ROBOTSTXT_FLEET_PACING_MARGIN": LOADED_MARGIN}  # see test_fleet_pace.py
    handles = [start_crawler(share, cluster.url, **CLUSTER, **OWN_QUEUE, **FEW, **margin) for share in dealt(urls, 2)]
    windows = []
    for n, after in enumerate((6, 2 * pages // 3)):
        while min(len(site.page_hits()) for site in sites) < after:
            await sleep(0.05)
        node = cluster.node_of(pace_key(sites[n]))
        began = time.monotonic()
        node.kill()
        await sleep(2)
        restarted = time.time()
        node.start()
        await until_ok(cluster)
        windows.append((began, time.monotonic(), restarted))
    results = await finished(handles)
    assert sum(len(r["downloaded"]) for r in results) == 2 * pages
    for n, (began, back, _) in enumerate(windows):
        for site in sites:
            times = starts(site)
            assert_polite(gaps_between(times, began, back), delay, f"node down {n + 1}, {site.url}")
            assert_polite(gaps_between(times, back, back + 3), delay, f"after node back {n + 1}, {site.url}")
    for result in results:
        assert "is unreachable" in result["log"], result["log"][-3000:]
        # The pace is reserved in the cluster again within seconds of each node's return.
        resumed = _resumed_at(result["log"])
        # From the node's restart (the log's seconds are whole): the cluster's own state
        # may say ok later than the crawlers find the node again, on a loaded machine.
        for _, _, wall in windows:
            assert any(wall - 1 <= at <= wall + 6 for at in resumed), (wall, resumed)
    assert all(r["stats"].get("robotstxt/fleet/paced", 0) > 0 for r in results)


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_nodes_flushed_one_after_the_other(serve, cluster):
    # FLUSHALL on the node of one site's pace, then on another's: each time the crawlers
    # see that node's records lost (one epoch key per primary) and write them back, and
    # the site's pace restarts past the reservations given before it.
    delay = 0.4
    pages = 30
    sites = on_different_nodes(cluster, serve, delay, 2)
    urls = [f"{site.url}/p{i}" for i in range(pages) for site in sites]
    handles = [start_crawler(share, cluster.url, **CLUSTER, **OWN_QUEUE, **FEW) for share in dealt(urls, 2)]
    flushed = []
    for n, after in enumerate((6, 2 * pages // 3)):
        while min(len(site.page_hits()) for site in sites) < after:
            await sleep(0.05)
        flushed.append(time.monotonic())
        cluster.node_of(pace_key(sites[n])).flushall()
        await sleep(2)
    results = await finished(handles)
    assert sum(len(r["downloaded"]) for r in results) == 2 * pages
    for n, began in enumerate(flushed):
        for site in sites:
            assert_polite(gaps_between(starts(site), began, began + 3), delay, f"after FLUSHALL {n + 1}, {site.url}")
    assert [site.robots_hits() for site in sites] == [1, 1]
    for result in results:
        assert result["stats"].get("robotstxt/fleet/records_lost") == 2, result["stats"]
        assert result["log"].count("1 of the cluster's 3 primaries") == 2, result["log"][-3000:]
    assert sum(r["stats"].get("robotstxt/fleet/pace_reset", 0) for r in results) >= 2


class SlowLoop(RedisPacer):
    """A crawler whose event loop is busy when Redis's answers come back: each one is
    seen ``busy`` seconds late."""

    busy = 0.0

    async def reserve(self, *args, **kwargs):
        reservation = await super().reserve(*args, **kwargs)
        time.sleep(self.busy)  # the loop does other work meanwhile
        return reservation


@pytest_twisted.ensureDeferred
async def test_a_busy_event_loop_is_no_pace_reset_and_a_flushall_is(redis, caplog):
    caplog.set_level(logging.WARNING, logger="scrapy_robots")
    counted: list[str] = []

    async def scenario() -> list[int]:
        link = RedisLink(redis.url, 2.0)
        pacer = SlowLoop(link, "scrapy-robots-test", "crawler-1")
        fleet = FleetPacer(pacer, counted.append, margin=0.0)
        resets = []
        try:
            for busy in (0.0, 1.5, 0.0, 2.5, 0.0):  # a loop busy now and then: no reset
                pacer.busy = busy
                await fleet.reserve("example.com", 0.01)
            resets.append(counted.count("pace_reset"))
            pacer.busy = 0.0
            for _ in range(2):  # FLUSHALL, then the next reservations: one reset each
                redis.flushall()
                await fleet.reserve("example.com", 0.01)
                await fleet.reserve("example.com", 0.01)
                resets.append(counted.count("pace_reset"))
                await asyncio.sleep(0.01)
        finally:
            await link.close()
        return resets

    assert await deferred_from_coro(scenario()) == [0, 1, 2]
    warnings = [r.getMessage() for r in caplog.records if "pace state in Redis is gone" in r.getMessage()]
    assert len(warnings) == 1, warnings  # the second flush within RESET_QUIET: counted, not said again


@pytest_twisted.ensureDeferred
async def test_answers_seen_late_leave_the_estimate_of_redis_s_clock_where_the_prompt_ones_put_it(redis):
    # The crawlers' turns of an outage meet on Redis's clock as each one estimates it: an
    # answer seen late (a busy loop) must not move the estimate back by its lateness, a
    # prompt one after it keeps it, and a new epoch (FLUSHALL) learns it anew.
    shard = shard_of("example.com", PACE_SHARDS)

    async def scenario() -> tuple[list[float], float]:
        link = RedisLink(redis.url, 2.0)
        pacer = SlowLoop(link, "scrapy-robots-test", "crawler-1")
        fleet = FleetPacer(pacer, lambda _: None, margin=0.0)
        offsets = []
        try:
            for busy in (0.0, 0.3, 0.0, 0.5, 0.0):
                pacer.busy = busy
                await fleet.reserve("example.com", 0.01)
                offsets.append(fleet.shards[shard].offset)
            redis.flushall()
            await fleet.reserve("example.com", 0.01)
            return offsets, fleet.shards[shard].offset
        finally:
            await link.close()

    offsets, anew = await deferred_from_coro(scenario())
    # Late answers (0.3 s, 0.5 s) leave it within a few ms (the prompt answers' own way
    # back, OFFSET_FORGET a second); taken as they came, they would set it 0.3 and 0.5 s back.
    assert max(offsets) - min(offsets) < 0.02, offsets
    # After the FLUSHALL the shard's clock counts from a new epoch, 0.8 s and more later:
    # its offset is that much lower, not held at the old one.
    assert offsets[-1] - anew > 0.7, (offsets, anew)


def test_a_cluster_named_by_a_unix_socket_fails_at_startup_naming_it():
    from scrapy.settings import Settings

    from scrapy_robots.settings.config import FleetConfig

    settings = Settings({"ROBOTSTXT_REDIS_URL": "unix:///run/redis.sock", "ROBOTSTXT_REDIS_CLUSTER": True})
    with pytest.raises(ValueError, match="ROBOTSTXT_REDIS_CLUSTER = True needs a node's TCP address"):
        FleetConfig.from_settings(settings, 5.0)
    assert FleetConfig.from_settings(Settings({"ROBOTSTXT_REDIS_CLUSTER": "true"}), 5.0).cluster
