"""A fleet of crawlers that behaves like one polite crawler, through Redis.

- :class:`RedisRobotsStorage` (``ROBOTSTXT_CACHE_STORAGE``): one robots.txt fetch per
  site for the whole fleet, shared as data (bytes and JSON, never pickle), with a
  small local LRU in front of Redis.
- :class:`RedisPacer`: a site's delay enforced across the fleet with atomic
  reservations on Redis's own clock.
- :class:`RedisLink`: the connection, its timeouts, and the fallback to local
  behaviour while Redis is unreachable.

Requires the ``redis`` package (``pip install scrapy-robots[redis]``) and Scrapy's
asyncio reactor.
"""

from __future__ import annotations

from scrapy_robots.fleet.link import FleetUnavailable, RedisLink
from scrapy_robots.fleet.pacing import RedisPacer
from scrapy_robots.fleet.storage import FleetPacer, RedisRobotsStorage

__all__ = ["FleetPacer", "FleetUnavailable", "RedisLink", "RedisPacer", "RedisRobotsStorage"]
