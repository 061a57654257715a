"""examples/fleet_spider.py, the fleet's example crawler (docs/fleet.rst): fed through a real
Redis list, crawled in-process with its own settings (scrapy-redis's queue, the fleet's
robots.txt and pace)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import pytest_twisted
import redis as redis_py
from crawling import crawl, stat
from servers import body

pytestmark = pytest.mark.timing

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "fleet_spider.py"


def example_spider():
    spec = importlib.util.spec_from_file_location("fleet_spider", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FleetSpider


@pytest_twisted.ensureDeferred
async def test_the_example_crawls_the_urls_of_its_redis_list(serve, redis):
    spider = example_spider()
    site = serve(body("User-agent: *\nDisallow: /private\n"))
    urls = [f"{site.url}/p{i}" for i in range(3)] + [f"{site.url}/private"]
    client = redis_py.Redis.from_url(redis.url)
    try:
        client.rpush(spider.redis_key, *urls)
        crawler = await crawl([], spider, REDIS_URL=redis.url, LOG_LEVEL="INFO")
        assert client.llen(spider.redis_key) == 0
    finally:
        client.close()
    assert sorted(site.paths()) == ["/p0", "/p1", "/p2", "/robots.txt"]
    assert stat(crawler, "robotstxt/fleet/fetch") == 1
    assert stat(crawler, "robotstxt/forbidden") == 1
