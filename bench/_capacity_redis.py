"""bench/fleet_capacity.py's in-process workers, each a subprocess that imports the package
under measure (PYTHONPATH: this checkout's, or ``--tree``'s):

    .venv/bin/python bench/_capacity_redis.py save SETTINGS_JSON FIRST COUNT OUT
    .venv/bin/python bench/_capacity_redis.py reserve SETTINGS_JSON SECONDS SLOTS START_AT OUT

``save``: sites FIRST .. FIRST+COUNT-1 written to Redis as a crawl writes them, without the
crawl: each site's robots.txt response as bench/_capacity_site.py's ``corpus`` mode serves it
(corpus file ``i % 4,231``, ``text/plain``) goes through the package's own code: the fetch's
size cap (``cut_at_maxsize``), :func:`~scrapy_robots.policyfiles.decision.decide`, the reader
(``ROBOTSTXT_PARSER``'s rules kept in text form, as ``RobotsTxt.fetched`` does), then
``RedisRobotsStorage.save``; its ``tdmrep.json`` (the proxy's 404) the same way under
TDMRep's status policy, for the robots.txt outcomes that need one; and, for a site with a
delay, the fleet pacer's ``mark_start`` (the robots.txt fetch) and one reservation (its
page). 50 sites at a time, as the storage's link allows 50 calls in flight.

``reserve``: from START_AT (wall clock), for SECONDS, 50 tasks each calling
``RedisPacer.reserve`` on a random one of SLOTS slots (interval 1 s) in a loop, as fast as
Redis answers; writes the count and the calls' latencies.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from _broad_site import CORPUS, host

TASKS = 50  # ROBOTSTXT_REDIS_CONNECTIONS' default: the calls one crawler has in flight


def crawler_parts(settings: dict[str, Any]) -> tuple[Any, Any, Any]:
    """A crawler (not crawling) with the crawl's settings, its config and its fleet storage."""
    from scrapy.utils.reactor import install_reactor

    # RedisRobotsStorage asks for Scrapy's asyncio reactor; the work runs on its asyncio loop.
    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from scrapy.utils.test import get_crawler

    from scrapy_robots.fleet import RedisRobotsStorage
    from scrapy_robots.settings.config import RobotsConfig

    crawler = get_crawler(settings_dict=settings)
    config = RobotsConfig.of(crawler)
    return crawler, config, RedisRobotsStorage.from_crawler(crawler)


async def save(settings: dict[str, Any], first: int, count: int) -> dict[str, Any]:
    from scrapy.http import Request, TextResponse

    from scrapy_robots.decoding import cut_at_maxsize
    from scrapy_robots.policyfiles.decision import decide
    from scrapy_robots.policyfiles.reader import RobotsReader
    from scrapy_robots.status.policy import Action
    from scrapy_robots.status.result import FetchResult, robots_url, site_of
    from scrapy_robots.tdmrep.crawl import NEEDED_AFTER, STATUS_POLICY, WELL_KNOWN

    crawler, config, storage = crawler_parts(settings)
    tdmrep_config = replace(config, status_policy=STATUS_POLICY)
    reader = RobotsReader(crawler, config)
    pacer = storage.pacer()
    bodies = [path.read_bytes() for path in sorted(CORPUS.iterdir()) if path.is_file()]
    sites = iter(range(first, first + count))
    counts = {"records": 0, "tdmrep": 0, "paced": 0}

    def fetched(site: str, url: str, status: int, raw: bytes, cfg: Any) -> Any:
        headers = {"Content-Type": "text/plain"}
        response = TextResponse(url=url, status=status, headers=headers, body=raw, request=Request(url))
        body = cut_at_maxsize(raw, cfg.maxsize)
        result = FetchResult(url, url, response, body=body, truncated=len(raw) > cfg.maxsize, site=site)
        result.started = time.monotonic()
        return result, decide(result, None, time.time(), cfg)

    async def one(i: int) -> None:
        site = site_of(Request(f"http://{host(i)}/p0"))
        result, decision = fetched(site, robots_url(site), 200, bodies[i % len(bodies)], config)
        entry = decision.entry
        if entry.action is Action.PARSE and entry.parser is None and entry.rules is None:
            reader.read(entry)
        await storage.save(entry)
        counts["records"] += 1
        if config.tdmrep and entry.action in NEEDED_AFTER:
            url = robots_url(site).replace("/robots.txt", WELL_KNOWN)
            _, tdm = fetched(site + WELL_KNOWN, url, 404, b"", tdmrep_config)
            await storage.save(tdm.entry)
            counts["tdmrep"] += 1
        delay = entry.delay.applied if entry.delay is not None else None
        if pacer is not None and delay is not None and result.response is not None:
            slot = host(i)  # Scrapy's slot key: the host name
            await pacer.mark_start(slot, delay, time.monotonic() - result.started)
            if delay > 0:
                await pacer.reserve(slot, delay, 0.0)
                counts["paced"] += 1

    async def worker() -> None:
        for i in sites:
            await one(i)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(TASKS)))
    elapsed = time.perf_counter() - started
    stats = crawler.stats.get_stats()
    await storage.close()
    fallbacks = stats.get("robotstxt/fleet/fallback", 0)
    return {**counts, "seconds": elapsed, "fallback": fallbacks}


async def reserve(settings: dict[str, Any], seconds: float, slots: int, start_at: float) -> dict[str, Any]:
    from scrapy_robots.fleet import FleetUnavailable

    _, _, storage = crawler_parts(settings)
    fleet_pacer = storage.pacer()
    pacer = fleet_pacer.redis  # the RedisPacer behind the fleet's pace
    rng = random.Random()
    latencies: list[float] = []
    errors = 0
    await asyncio.sleep(max(start_at - time.time(), 0.0))
    end = time.monotonic() + seconds

    async def task() -> None:
        nonlocal errors
        while time.monotonic() < end:
            slot = f"slot{rng.randrange(slots)}.example"
            began = time.perf_counter()
            try:
                await pacer.reserve(slot, 1.0, 0.0, 0.0)
            except FleetUnavailable:
                errors += 1
                await asyncio.sleep(0.05)
                continue
            latencies.append(time.perf_counter() - began)

    began = time.monotonic()
    await asyncio.gather(*(task() for _ in range(TASKS)))
    elapsed = time.monotonic() - began
    await storage.close()
    latencies.sort()
    return {
        "count": len(latencies),
        "errors": errors,
        "seconds": elapsed,
        "p50": statistics.median(latencies) if latencies else None,
        "p99": latencies[int(len(latencies) * 0.99)] if latencies else None,
    }


def main() -> None:
    what, settings = sys.argv[1], json.loads(sys.argv[2])
    if what == "save":
        first, count, out = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
        result = asyncio.run(save(settings, first, count))
    else:
        seconds, slots, start_at, out = float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
        result = asyncio.run(reserve(settings, seconds, slots, start_at))
    Path(out).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
