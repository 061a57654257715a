"""A crawler of a fleet: run as many as you like, each with

    scrapy runspider examples/fleet_spider.py -s REDIS_URL=redis://127.0.0.1:6379/0

and feed them URLs through Redis (one list shared by the fleet; each URL goes to one crawler):

    redis-cli RPUSH fleet_example:start_urls https://example.com/ https://example.org/

scrapy-redis shares the queue and the dupefilter; scrapy-robots shares robots.txt (one
download per site for the whole fleet) and each site's pace (docs/fleet.rst).

Why not scrapy-redis's ``RedisSpider``: scrapy-redis 0.9.1 reads its start URLs in
``start_requests``, which Scrapy 2.13+ calls only through ``start()``'s default, so a
``RedisSpider`` picks them up only once the crawl goes idle. ``start()`` here reads the list
itself, at once. URLs pushed after a crawler started go to the crawlers started after them
(or add a ``spider_idle`` handler that reads the list again).
"""

from __future__ import annotations

import redis.asyncio
from scrapy import Request, Spider


class FleetSpider(Spider):
    name = "fleet_example"
    #: the Redis list the fleet is fed through (scrapy-redis's ``<name>:start_urls``)
    redis_key = "fleet_example:start_urls"

    custom_settings = {
        # scrapy-redis: one queue and one dupefilter for the fleet (REDIS_URL)
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": True,  # a crawler that ends leaves the fleet's queue to the others
        # scrapy-robots: robots.txt and each site's pace shared through Redis (REDIS_URL too)
        "ROBOTSTXT_OBEY": True,
        "ADDONS": {"scrapy_robots.Addon": 0},
        "ROBOTSTXT_CACHE_STORAGE": "scrapy_robots.fleet.RedisRobotsStorage",
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
    }

    async def start(self):
        # LPOP: each URL to one crawler of the fleet, 100 at a time, until the list is empty.
        client = redis.asyncio.Redis.from_url(self.settings.get("REDIS_URL") or "redis://127.0.0.1:6379/0")
        try:
            while urls := await client.lpop(self.redis_key, 100):
                for url in urls:
                    yield Request(url.decode(), callback=self.parse)
        finally:
            await client.aclose()

    def parse(self, response):
        yield {"url": response.url, "status": response.status}
