"""Run `scrapy crawl` processes of the test fleet project without blocking the reactor
that serves the test sites."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from processes import CrawlerHandle, result_file, settings_args, start_process
from twisted.internet.defer import DeferredList

PROJECT = Path(__file__).resolve().parent / "fleet_project"


def start_crawler(urls: list[str], redis_url: str, **settings: Any) -> CrawlerHandle:
    out = result_file("fleet-")
    args = ["crawl", "fleet", "-a", f"urls={','.join(urls)}", "-a", f"out={out}", "-s", f"REDIS_URL={redis_url}"]
    # The project first, then the caller's PYTHONPATH if any: the package tree to run
    # (bench/paced_stop.py --tree), else the installed package.
    pythonpath = os.pathsep.join(filter(None, [str(PROJECT), os.environ.get("PYTHONPATH")]))
    return start_process(args + settings_args(settings), out, cwd=PROJECT, pythonpath=pythonpath)


def seed_queue(redis_url: str, urls: list[str]) -> None:
    """Put ``urls`` in scrapy-redis's shared queue of the fleet project's spider, as an
    operator's feeder does: the crawlers start with nothing of their own."""
    import pickle

    import redis as redis_py
    from scrapy import Request

    client = redis_py.Redis.from_url(redis_url)
    for url in urls:
        client.execute_command("ZADD", "fleet:requests", 0, pickle.dumps(Request(url).to_dict(), protocol=-1))
    client.close()


async def finished(handles: list[CrawlerHandle]) -> list[dict[str, Any]]:
    """Every crawl's result once all ended, each asserted clean: exit 0, no request failed,
    no traceback in its log."""
    results = [result for _, result in await DeferredList([h.done for h in handles])]
    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
        assert result["failed"] == {}, result["failed"]
        assert "Traceback" not in result["log"], result["log"][-3000:]
    return results
