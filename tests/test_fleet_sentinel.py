"""The fleet through Redis Sentinel failovers (#42): a real primary, a replica and three
Sentinels (tests/redis_sentinel.py); the primary killed (SIGKILL) and the replica promoted
by the Sentinels, the old primary back as a replica, then the next failover; and a primary
demoted under the link's open connections (READONLY). The link is driven directly; the
pace and the robots.txt downloads are measured at the sites, with real `scrapy crawl`
processes."""

from __future__ import annotations

import asyncio
import logging
import re
import time

import pytest
import pytest_twisted
from failover import assert_paced_through, failover_figures, held, outages_of
from fleet import start_crawler
from redis_sentinel import SERVICE, SentinelGroup, command
from redis_server import RedisServer
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_from_coro
from servers import body
from test_fleet_pace import LOADED_MARGIN, OWN_QUEUE, dealt, robots
from twisted.internet import reactor
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.task import deferLater

from scrapy_robots.fleet.link import FleetUnavailable, RedisLink
from scrapy_robots.settings.config import FleetConfig

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

#: The host and port of ROBOTSTXT_REDIS_URL are not used with Sentinels: nothing listens here.
NOWHERE = "redis://127.0.0.1:9/0"
#: Pages of each site in flight at the first failover (dealt to the two crawlers).
FRESH_PAGES = 16


def sleep(seconds: float):
    return deferLater(reactor, seconds, lambda: None)


async def until(condition, timeout: float, pause=sleep) -> float:
    """Seconds until ``condition()`` held (each check a few ms of loopback), or fail;
    ``pause``: the test's sleep (Twisted's, or asyncio's in an asyncio coroutine)."""
    began = time.monotonic()
    while not condition():
        assert time.monotonic() - began < timeout, f"not within {timeout} s: {condition}"
        await pause(0.05)
    return time.monotonic() - began


def promoted_instead_of(group: SentinelGroup, old: RedisServer):
    return lambda: group.primary_port() not in (None, old.port)


@pytest.fixture
def sentinels():
    group = SentinelGroup().start()
    yield group
    group.stop()


def restart_as_replica(group: SentinelGroup, server: RedisServer) -> None:
    """The dead primary back, empty, as a replica of the new one. (Its own configuration,
    rewritten by the Sentinels, would say so; without it the Sentinels convert it on their
    next look at it, up to 10 s later.)"""
    server.args = ("--replicaof", "127.0.0.1", str(group.primary_port()))
    server.start()


# -- the settings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        ["10.0.0.1:26379", "sentinel.internal:26380"],
        "10.0.0.1:26379, sentinel.internal:26380",
        '["10.0.0.1:26379", "sentinel.internal:26380"]',
    ],
)
def test_sentinels_are_read_as_host_and_port(value):
    fleet = FleetConfig.from_settings(
        Settings({"ROBOTSTXT_REDIS_SENTINELS": value, "ROBOTSTXT_REDIS_SENTINEL_SERVICE": "robots"}), 5.0
    )
    assert fleet.sentinels == (("10.0.0.1", 26379), ("sentinel.internal", 26380))
    assert fleet.sentinel_service == "robots"


def test_without_sentinels_the_url_names_the_server():
    fleet = FleetConfig.from_settings(Settings({"REDIS_URL": "redis://10.0.0.5:6379/2"}), 5.0)
    assert fleet.sentinels == () and fleet.sentinel_service == "mymaster"
    assert fleet.redis_url == "redis://10.0.0.5:6379/2"


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"ROBOTSTXT_REDIS_SENTINELS": ["10.0.0.1"]}, "'10.0.0.1' is not a Sentinel's 'host:port'"),
        ({"ROBOTSTXT_REDIS_SENTINELS": "10.0.0.1:http"}, "is not a Sentinel's 'host:port'"),
        ({"ROBOTSTXT_REDIS_SENTINELS": 26379}, "must list the Sentinels as 'host:port'"),
        (
            {"ROBOTSTXT_REDIS_SENTINELS": "127.0.0.1:26379", "ROBOTSTXT_REDIS_URL": "unix:///run/redis.sock"},
            "cannot be a socket",
        ),
        ({"ROBOTSTXT_REDIS_SENTINEL_SERVICE": ["a"]}, "ROBOTSTXT_REDIS_SENTINEL_SERVICE must name the primary"),
        (
            {"ROBOTSTXT_REDIS_SENTINELS": "127.0.0.1:26379", "ROBOTSTXT_REDIS_CLUSTER": True},
            "name two deployments",
        ),
    ],
)
def test_a_bad_sentinel_setting_fails_at_startup_naming_it(settings, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        FleetConfig.from_settings(Settings(settings), 5.0)


# -- the link -------------------------------------------------------------------------------


class Stats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] = self.values.get(key, start) + count


def link_lines(caplog) -> list[str]:
    kinds = {"is unreachable": "unreachable", "is reachable again": "back", "Redis Sentinel moved": "moved"}
    return [
        kind
        for r in caplog.records
        if r.name == "scrapy_robots.fleet.link"
        for text, kind in kinds.items()
        if text in r.getMessage()
    ]


def demote(group: SentinelGroup) -> RedisServer:
    """An operator's failover without the Sentinels' help: the replica promoted, the
    Sentinels told, then the old primary made a replica of it; the clients' connections to
    the old primary stay open (the Sentinels' own failover would close them) and its next
    write is answered READONLY. Returns the new primary."""
    old = group.primary()
    new = next(server for server in group.servers if server is not old)
    command(new.port, "REPLICAOF", "NO", "ONE")
    for sentinel in group.sentinels:
        command(sentinel.port, "SENTINEL", "REMOVE", SERVICE)
        command(sentinel.port, "SENTINEL", "MONITOR", SERVICE, "127.0.0.1", str(new.port), "2")
        command(sentinel.port, "SENTINEL", "SET", SERVICE, "down-after-milliseconds", "1000")
        command(sentinel.port, "SENTINEL", "SET", SERVICE, "failover-timeout", "2000")
    command(old.port, "REPLICAOF", "127.0.0.1", str(new.port))
    return new


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_the_link_follows_the_primary_through_a_sequence_of_failovers(sentinels, caplog):
    caplog.set_level(logging.WARNING, logger="scrapy_robots.fleet.link")
    await until(sentinels.ready, timeout=20)
    stats = Stats()
    settings = Settings({"ROBOTSTXT_REDIS_URL": NOWHERE, "ROBOTSTXT_REDIS_TIMEOUT": 0.5})
    settings.set("ROBOTSTXT_REDIS_SENTINELS", [f"{host}:{port}" for host, port in sentinels.addresses])
    link = RedisLink.of(FleetConfig.from_settings(settings, 10.0), stats=stats)
    #: (started, ended, succeeded, the port of the primary the Sentinels named when it ended)
    calls: list[tuple[float, float, bool]] = []
    stopped = False

    async def writer(n: int) -> None:
        while not stopped:
            started = time.monotonic()
            try:
                # A write: on a demoted primary, READONLY.
                await link.call(link.client.set, f"scrapy-robots-test:{n}", started)
                ok = True
            except FleetUnavailable:
                ok = False
            calls.append((started, time.monotonic(), ok))
            await asyncio.sleep(0.01 if ok else 0.02)

    def back_after(moment: float) -> float | None:
        ends = [ended for began, ended, ok in calls if ok and began >= moment]
        return round(min(ends) - moment, 2) if ends else None

    events = []

    async def scenario() -> None:
        nonlocal stopped
        tasks = [asyncio.ensure_future(writer(n)) for n in range(20)]
        try:
            await asyncio.sleep(1)
            for name in ("SIGKILL, promoted by the Sentinels", "SIGKILL again", "demoted under open connections"):
                old = sentinels.primary()
                began = time.monotonic()
                if name.startswith("SIGKILL"):
                    old.kill()
                    promoted = await until(promoted_instead_of(sentinels, old), 10, asyncio.sleep)
                else:
                    demote(sentinels)
                    promoted = 0.0
                await asyncio.sleep(2.5)
                new = sentinels.primary()
                # The writers' last writes (their start times) are on the new primary.
                latest = max(float(command(new.port, "GET", f"scrapy-robots-test:{n}")) for n in range(20))
                events.append(
                    {
                        "fault": name,
                        "promoted": round(promoted, 2),
                        "back": back_after(began),
                        "written after": latest > began + promoted + 1,
                    }
                )
                if old.process is None:
                    restart_as_replica(sentinels, old)
                await until(sentinels.ready, 20, asyncio.sleep)
        finally:
            stopped = True
            await asyncio.gather(*tasks)
            await link.close()

    await deferred_from_coro(scenario())
    for event in events:
        # Calls land on the new primary within about a second of the promotion.
        assert event["back"] is not None and event["back"] < event["promoted"] + 1.5, events
        assert event["written after"], events
    # One outage per failover: the connections to the old primary are not reused after it.
    assert link_lines(caplog) == ["unreachable", "back", "moved"] * 3, (link_lines(caplog), events)
    assert stats.values["robotstxt/fleet/redis_failover"] == 3
    readonly = [r.getMessage() for r in caplog.records if "is unreachable" in r.getMessage()][-1]
    assert "The previous master is now a slave" in readonly, readonly  # redis-py's word for READONLY
    print("failovers (seconds from the fault):", events)


# -- a fleet crawl --------------------------------------------------------------------------


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_a_fleet_crawl_through_two_failovers_keeps_its_pace_and_its_robots_txt(serve, sentinels):
    await until(sentinels.ready, timeout=20)
    delay, pages = 0.4, 60
    paced = [serve(body(robots(delay))) for _ in range(2)]
    releases = [Deferred(), Deferred()]
    # Sites whose robots.txt is being fetched by one crawler, and waited for by the
    # other, when the first primary dies; paced too (#49: the fetch's start, never written
    # to the fleet's pace, let the two crawlers' first pages of such a site meet).
    fresh = [serve(held(releases[n % 2], robots(delay))) for n in range(2)]
    # Both crawlers share every site, each every other page of it (#49): the gaps counted
    # at a site are between the two crawlers' starts, the fleet's pace.
    urls = [f"{site.url}/p{i}" for i in range(pages) for site in paced]
    early = [f"{site.url}/f{i}" for i in range(FRESH_PAGES) for site in fresh]
    settings = {
        **OWN_QUEUE,
        # A few requests at a time besides the held robots.txt fetches (each holds a place).
        "CONCURRENT_REQUESTS": 4 + len(fresh),
        "ROBOTSTXT_MAX_WAITING": FRESH_PAGES + 4,
        "ROBOTSTXT_REDIS_SENTINELS": sentinels.setting,
        # A crawler's first calls, made while Scrapy starts on a loaded machine, timed out at
        # 0.5 s in some runs, and each crawler then fetched every site alone. A dead primary
        # refuses connections at once: the failover does not wait for this timeout.
        "ROBOTSTXT_REDIS_TIMEOUT": 2.0,
        # The outage's turns kept by each crawler's estimate of Redis's clock (test_fleet_pace.py).
        "ROBOTSTXT_FLEET_PACING_MARGIN": LOADED_MARGIN,
    }
    handles = [
        start_crawler(first + share, NOWHERE, **settings)
        for first, share in zip(dealt(early, 2), dealt(urls, 2), strict=True)
    ]
    kills: list[tuple[float, float]] = []  # (killed, promoted)
    while min(len(site.page_hits()) for site in paced) < 8:
        await sleep(0.05)
    for n in range(2):
        old = sentinels.primary()
        old.kill()
        killed = time.monotonic()
        if n == 0:
            # The first fetches end while no primary answers (#49: the fetch's start could
            # not be written to the fleet's pace), the others after the promotion.
            await sleep(0.3)
            releases[0].callback(None)
        await until(promoted_instead_of(sentinels, old), 10)
        kills.append((killed, time.monotonic()))
        if n == 0:
            await sleep(1)
            releases[1].callback(None)
        restart_as_replica(sentinels, old)
        await until(sentinels.ready, timeout=20)
        await sleep(3)
    # A crawler that joins after both failovers reads every site from the primary of now.
    late = start_crawler([f"{site.url}/late" for site in paced + fresh], NOWHERE, **settings)
    results = [result for _, result in await DeferredList([h.done for h in [*handles, late]])]
    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
        assert result["failed"] == {}, result["failed"]
    assert sum(len(r["downloaded"]) for r in results[:2]) == 2 * pages + FRESH_PAGES * len(fresh)
    # Each crawler fetched pages of every site.
    for result in results[:2]:
        assert {url.rsplit("/", 1)[0] for url in result["downloaded"]} == {s.url for s in paced + fresh}

    figures = failover_figures(paced, fresh, kills, results[:2], delay)
    print("failover crawl:", figures)
    assert all(r["stats"].get("robotstxt/fleet/redis_failover") == 2 for r in results[:2]), figures
    assert all(r["stats"].get("robotstxt/fleet/paced", 0) > pages // 2 for r in results[:2]), figures
    # The sites in flight at the failover: their first pages, after the failover, at the
    # fleet's pace (no gap tolerated: a handful of gaps each).
    assert_paced_through(paced, fresh, kills, delay, figures)
    # The records written before a failover are on the new primary: no paced site fetched
    # again, not even by the crawler that joined after. A site whose fetch was in flight at
    # the failover is downloaded once too: its waiter waits through the failover, and reads
    # the record its holder saved during it once the write-back shares it (2 each before).
    late_lines = [line for line in results[2]["log"].splitlines() if "scrapy_robots" in line][-12:]
    assert [site.robots_hits() for site in paced] == [1, 1], (figures, results[2]["stats"], late_lines)
    assert [site.robots_hits() for site in fresh] == [1] * len(fresh), (figures, results[2]["stats"], late_lines)
    assert results[2]["stats"].get("robotstxt/fleet/hit", 0) == len(paced + fresh), results[2]["stats"]
    # The pace is back within seconds: no crawler's outage longer than the promotion + 1.5 s.
    longest = max(promoted - killed for killed, promoted in kills) + 1.5
    assert all(0 < s <= longest for r in results[:2] for s in outages_of(r["log"])), figures
