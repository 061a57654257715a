"""The fleet's link to Redis under faults (#31): a real redis-server killed (SIGKILL),
restarted empty on the same port, then hung (SIGSTOP) and woken (SIGCONT), while
hundreds of calls are in flight; and a crawler with more calls in flight than a
connection pool holds. The link is driven directly (its backoff, its log, when calls
succeed again); the pace is asserted at a site, with two real `scrapy crawl` processes."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import pytest_twisted
from fleet import start_crawler
from redis.exceptions import ConnectionError as RedisConnectionError
from scrapy.utils.defer import deferred_from_coro
from servers import body
from test_fleet_pace import LOADED_MARGIN
from twisted.internet import reactor
from twisted.internet.defer import DeferredList
from twisted.internet.task import deferLater

from scrapy_robots.fleet.link import DEFAULT_CONNECTIONS, FIRST_BACKOFF, FleetUnavailable, RedisLink

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

UNREACHABLE = "is unreachable"
BACK = "is reachable again"


class Stats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self.values[key] = self.values.get(key, start) + count


@dataclass
class Load:
    """``workers`` tasks, each calling Redis through the link again and again: a BLPOP
    on an empty list that Redis holds for ``hold`` seconds, so that every worker has a
    call in flight at any time (as a slow Redis, or many sites at once, would)."""

    link: RedisLink
    workers: int
    hold: float = 0.1
    #: (started, ended, succeeded) of every call
    calls: list[tuple[float, float, bool]] = field(default_factory=list)
    stopped: bool = False

    async def _worker(self) -> None:
        while not self.stopped:
            started = time.monotonic()
            try:
                await self.link.call(self.link.client.blpop, ["scrapy-robots-test:empty"], timeout=self.hold)
                ok = True
            except FleetUnavailable:
                ok = False
            self.calls.append((started, time.monotonic(), ok))
            if not ok:
                await asyncio.sleep(0.02)

    def start(self) -> list[asyncio.Task[None]]:
        return [asyncio.ensure_future(self._worker()) for _ in range(self.workers)]

    def failed_between(self, start: float, end: float) -> int:
        return sum(1 for began, _, ok in self.calls if not ok and start <= began < end)

    def first_success_after(self, moment: float) -> float | None:
        ends = [ended for began, ended, ok in self.calls if ok and began >= moment]
        return min(ends) if ends else None


async def until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def link_lines(caplog) -> list[str]:
    return [
        "unreachable" if UNREACHABLE in r.getMessage() else "back"
        for r in caplog.records
        if r.name == "scrapy_robots.fleet.link" and (UNREACHABLE in r.getMessage() or BACK in r.getMessage())
    ]


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_outages_move_the_backoff_one_rung_and_calls_resume_within_two_seconds(redis, caplog):
    caplog.set_level(logging.WARNING, logger="scrapy_robots.fleet.link")
    stats = Stats()
    link = RedisLink(redis.url, 0.5, stats=stats)
    load = Load(link, workers=200)
    outages: list[dict[str, object]] = []

    async def outage(fault: Callable[[], None], heal: Callable[[], None], name: str) -> None:
        fault()
        went_down = await until(lambda: link.down, timeout=3)
        # The calls in flight when Redis went away have failed by now (a kill resets
        # them at once; a hang's fail at the timeout), and no retry is due yet.
        await asyncio.sleep(0.05)
        rung = link.backoff
        await asyncio.sleep(1.5)
        heal()
        answering = time.monotonic()
        await asyncio.sleep(3)
        first = load.first_success_after(answering)
        outages.append(
            {
                "fault": name,
                "went_down": went_down,
                "backoff": rung,
                "back_after": None if first is None else round(first - answering, 3),
                # calls that failed once calls succeeded again (a stale connection, or
                # failing fast after the link said it was back)
                "failed_after": None if first is None else load.failed_between(first, time.monotonic()),
            }
        )

    async def scenario() -> int:
        tasks = load.start()
        try:
            await asyncio.sleep(1)
            healthy_failures = load.failed_between(0, time.monotonic())
            await outage(redis.kill, redis.start, "kill, restart on the same port")
            await outage(redis.pause, redis.resume, "stop (SIGSTOP), continue (SIGCONT)")
            await outage(redis.kill, redis.start, "kill again")
        finally:
            if redis.process is not None:
                redis.resume()  # never leave the session's server stopped
            load.stopped = True
            await asyncio.gather(*tasks)
            await link.close()
        return healthy_failures

    healthy_failures = await deferred_from_coro(scenario())
    assert healthy_failures == 0, (healthy_failures, outages)
    for seen in outages:
        assert seen["went_down"], outages
        assert seen["backoff"] == FIRST_BACKOFF, outages
        assert seen["back_after"] is not None and seen["back_after"] < 2.0, outages
        assert seen["failed_after"] == 0, outages
    assert link_lines(caplog) == ["unreachable", "back"] * 3, outages
    assert sum(1 for _, _, ok in load.calls if ok) > 1000


#: Redis answers ARGV[1] after 50 ms of its own time: the answer comes while the loop is busy.
SLOW = """
local function now() local t = redis.call('TIME') return t[1] * 1000000 + t[2] end
local start = now()
while now() - start < 50000 do end
return ARGV[1]
"""


@pytest_twisted.ensureDeferred
async def test_a_loop_busy_past_a_call_s_deadline_is_not_an_outage_and_a_hang_after_it_is(redis, caplog):
    # A robots.txt of 500 KiB parses for about a second, with calls in flight: Redis
    # answers meanwhile, and the loop finds the answer and the timeout due together. Twice
    # (a script, a pipeline), then Redis hung for real (SIGSTOP): that one takes the link
    # down, once, and it comes back.
    caplog.set_level(logging.WARNING, logger="scrapy_robots.fleet.link")
    stats = Stats()
    link = RedisLink(redis.url, 0.5, stats=stats)
    slow = link.client.register_script(SLOW)
    loop = asyncio.get_running_loop()

    def busy(seconds: float) -> None:
        loop.call_later(0.01, time.sleep, seconds)  # the loop blocks while Redis works

    async def scenario() -> list[object]:
        seen: list[object] = []
        try:
            await link.call(slow, args=["warm"])  # the pool holds a connection, the script is loaded
            busy(1.0)
            seen.append(await link.call(slow, args=["answer"]))
            busy(1.0)
            seen.append(await link.call(link.piped(lambda pipe: (pipe.eval(SLOW, 0, "piped"), pipe.ping()))))
            seen.append(link.down)
            redis.pause()
            try:
                await link.call(slow, args=["hung"])
            except FleetUnavailable:
                seen.append("unavailable")
            seen.append(link.down)
        finally:
            redis.resume()
        await until(lambda: link.available(), timeout=3)
        seen.append(await link.call(slow, args=["back"]))
        await link.close()
        return seen

    seen = await deferred_from_coro(scenario())
    assert seen == [b"answer", [b"piped", True], False, "unavailable", True, b"back"], seen
    assert stats.values.get("robotstxt/fleet/redis_late") == 2, stats.values
    assert stats.values.get("robotstxt/fleet/redis_unreachable") == 1, stats.values
    assert link_lines(caplog) == ["unreachable", "back"], caplog.text


class SentTwice(RedisLink):
    """A link whose lock SETs are sent twice, the first answer lost: what a SET NX that
    landed and timed out late (the loop busy) looks like to the lock after the link
    sends it again."""

    async def call(self, method, *args, **kwargs):
        if getattr(method, "__name__", "") == "set" and kwargs.get("nx"):
            await super().call(method, *args, **kwargs)
        return await super().call(method, *args, **kwargs)


@pytest_twisted.ensureDeferred
async def test_a_lock_whose_set_was_sent_again_is_held_by_its_crawler_not_waited_for(redis):
    # The second SET NX answers None (the key is there): the lock holds this crawler's
    # own token, so it fetches at once, for two sites in a row, and gives both locks back.
    from scrapy_robots.fleet.lock import FetchLock

    counted: list[str] = []
    link = SentTwice(redis.url, 0.5)
    lock = FetchLock(link, ttl=10.0, wait=30.0, count=counted.append)

    async def scenario() -> list[object]:
        seen: list[object] = []
        try:
            for site in ("http://a.example", "http://b.example"):
                began = time.monotonic()
                entry = await lock.run(site, f"scrapy-robots-test:site:{{{site}}}", fetched(site), nothing)
                seen += [entry, time.monotonic() - began < 2.0]
                seen.append(await link.call(link.client.exists, f"scrapy-robots-test:site:{{{site}}}:lock"))
        finally:
            await link.close()
        return seen

    async def nothing(site: str) -> None:
        return None

    def fetched(site: str):
        async def fetch() -> str:
            return f"fetched {site}"

        return fetch

    seen = await deferred_from_coro(scenario())
    assert seen == ["fetched http://a.example", True, 0, "fetched http://b.example", True, 0], seen
    assert counted.count("fetch") == 2 and "lock_wait" in counted, counted


@pytest_twisted.ensureDeferred
async def test_a_call_in_flight_across_an_outage_does_not_take_the_link_down_again(redis, caplog):
    caplog.set_level(logging.WARNING, logger="scrapy_robots.fleet.link")
    link = RedisLink(redis.url, 0.5)
    release = asyncio.Event()

    async def stale_connection() -> None:
        # A call made before the outage, on a connection that fails only later.
        await release.wait()
        raise RedisConnectionError("Connection closed by server.")

    async def scenario() -> list[str]:
        outcomes = []
        old = asyncio.ensure_future(link.call(stale_connection))
        await asyncio.sleep(0)
        redis.kill()
        try:
            await link.call(link.client.get, "scrapy-robots-test:key")
        except FleetUnavailable:
            outcomes.append("down")
        redis.start()
        for _ in range(200):
            try:
                await link.call(link.client.get, "scrapy-robots-test:key")
                outcomes.append("back")
                break
            except FleetUnavailable:
                await asyncio.sleep(0.01)
        release.set()
        try:
            await old
        except FleetUnavailable:
            outcomes.append("old call failed")
        outcomes.append("up" if link.available() and not link.down else "down")
        await link.close()
        return outcomes

    assert await deferred_from_coro(scenario()) == ["down", "back", "old call failed", "up"]
    assert link_lines(caplog) == ["unreachable", "back"]


@pytest_twisted.ensureDeferred
async def test_more_calls_in_flight_than_a_pool_holds_never_read_as_unreachable(redis, caplog):
    caplog.set_level(logging.WARNING, logger="scrapy_robots.fleet.link")
    link = RedisLink(redis.url, 0.5, stats=Stats())

    async def burst() -> list[object]:
        # 300 calls at once, each taking a connection before any returns: more than
        # redis-py's default pool (100) would allow.
        return await asyncio.gather(
            *(link.call(link.client.blpop, [f"scrapy-robots-test:empty:{i}"], timeout=0.05) for i in range(300)),
            return_exceptions=True,
        )

    async def scenario() -> list[list[object]]:
        try:
            return [await burst() for _ in range(3)]
        finally:
            await link.close()

    rounds = await deferred_from_coro(scenario())
    errors = [repr(r) for results in rounds for r in results if isinstance(r, BaseException)]
    assert errors == [], f"{len(errors)} of {300 * len(rounds)} calls failed, e.g. {errors[:2]}"
    assert link_lines(caplog) == []
    assert not link.down
    # The calls beyond ROBOTSTXT_REDIS_CONNECTIONS waited for their turn.
    assert link.stats.values.get("robotstxt/fleet/redis_waits", 0) >= 3 * (300 - DEFAULT_CONNECTIONS)
    assert "robotstxt/fleet/redis_errors" not in link.stats.values


@pytest.mark.parametrize("value", [0, 2.5, "many"])
def test_a_bad_connections_setting_fails_at_startup_naming_it(value):
    from scrapy.settings import Settings

    from scrapy_robots.settings.config import FleetConfig

    with pytest.raises(ValueError, match="ROBOTSTXT_REDIS_CONNECTIONS must be a"):
        FleetConfig.from_settings(Settings({"ROBOTSTXT_REDIS_CONNECTIONS": value}), 5.0)


def sleep(seconds: float):
    return deferLater(reactor, seconds, lambda: None)


def gaps_from(times: list[float], start: float, end: float) -> list[float]:
    return [b - a for a, b in zip(times, times[1:]) if start <= a < end]


@pytest.mark.slow
@pytest_twisted.ensureDeferred
async def test_the_fleet_pace_is_back_within_two_seconds_of_redis_answering(serve, redis):
    delay, pages = 0.3, 60
    sites = [serve(body(f"User-agent: *\nCrawl-delay: {delay}\n")) for _ in range(6)]
    halves = [[f"{site.url}/p{i}" for i in range(half, pages, 2) for site in sites] for half in (0, 1)]
    settings = {
        # Each crawler keeps its own half of each site (scrapy-redis's queue does not
        # survive a Redis restart; this test is about the pace), and asks for a turn
        # in a site's pace as its requests come, a few at a time.
        "SCHEDULER": "scrapy.core.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter",
        "CONCURRENT_REQUESTS": 6,
        "ROBOTSTXT_MAX_WAITING": 0,
        "ROBOTSTXT_FLEET_PACING_MARGIN": LOADED_MARGIN,  # see test_fleet_pace.py
    }
    handles = [start_crawler(urls, redis.url, **settings) for urls in halves]
    windows: list[tuple[str, float, float]] = []
    try:
        while sum(len(site.page_hits()) for site in sites) < 30:
            await sleep(0.05)
        redis.kill()
        await sleep(1.5)
        redis.start()
        back = time.monotonic()
        # Measured here: for the first seconds after a restart each site gets about one
        # request a second (its pace state lost), so 6 s past the first 2 for 15 gaps.
        await sleep(8)
        redis.pause()
        windows.append(("after the restart", back, time.monotonic()))
        await sleep(1.5)
        redis.resume()
        windows.append(("after SIGCONT", time.monotonic(), float("inf")))
    finally:
        if redis.process is not None:
            redis.resume()
    results = [result for _, result in await DeferredList([h.done for h in handles])]
    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
        assert result["failed"] == {}, result["failed"]
    assert sum(len(r["downloaded"]) for r in results) == pages * len(sites)
    # Per window, the gaps between a site's requests from 2 s after Redis answered: none
    # under the site's delay (within 5 %).
    seen = {}
    for name, answering, end in windows:
        gaps = [
            gap for site in sites for gap in gaps_from(sorted(hit.at for hit in site.page_hits()), answering + 2.0, end)
        ]
        under = sum(1 for gap in gaps if gap < 0.95 * delay)
        seen[name] = {"under": under, "gaps": len(gaps), "min": min(gaps, default=None)}
    assert all(window["under"] == 0 for window in seen.values()), seen
    # Enough requests to judge: after the restart (the pace state gone with it), the
    # fleet comes back at its own turns (docs/fleet.rst, "While Redis is away"), fewer.
    assert all(window["gaps"] >= 15 for window in seen.values()), seen
