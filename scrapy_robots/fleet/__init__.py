"""A fleet of crawlers that behaves like one polite crawler, through Redis.

- ``storage.py``: :class:`RedisRobotsStorage` (``ROBOTSTXT_CACHE_STORAGE``), one
  robots.txt fetch per site for the whole fleet, shared as data (bytes and JSON, never
  pickle), with the local tier in front of Redis.
- ``lock.py``: the one fetch per site: a lock its holder renews while it fetches, taken
  over by exactly one waiter when the holder stops renewing it.
- ``writeback.py``: the records written back when Redis lost them (a FLUSHALL, a restart
  without its data).
- ``reservations.py``: :class:`RedisPacer`, one pace per downloader slot, reserved with
  atomic scripts on Redis's own clock, its keys sharded by hash tag (a Redis Cluster serves it).
- ``pacing.py``: :class:`FleetPacer`, the fleet's pace as the middleware asks it, and what a
  crawler does while Redis is away (``ROBOTSTXT_FLEET_OUTAGE``); :class:`SharedPacing`, the
  middleware's pacing call.
- ``link.py``: :class:`RedisLink`, the connection (one Redis, a Redis Cluster, or the
  primary Sentinel names), its bound on calls in flight, and the circuit breaker (one
  outage, one rung; a PING says when Redis is back); ``client.py`` builds its client from the
  settings, ``kind.py`` says whether Redis is the kind the settings say.

Requires the ``redis`` package (``pip install scrapy-robots[redis]``) and Scrapy's
asyncio reactor.
"""

from __future__ import annotations

from scrapy_robots.fleet.link import FleetUnavailable, RedisLink
from scrapy_robots.fleet.pacing import FleetPacer
from scrapy_robots.fleet.reservations import RedisPacer
from scrapy_robots.fleet.storage import RedisRobotsStorage

__all__ = ["FleetPacer", "FleetUnavailable", "RedisLink", "RedisPacer", "RedisRobotsStorage"]
