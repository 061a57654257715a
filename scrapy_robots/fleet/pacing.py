"""RedisPacer: a site's delay enforced across every crawler of the fleet.

Each request reserves the next start time of its site in one atomic Lua script that
reads Redis's clock (``TIME``), so the crawlers' own clocks never matter: a
reservation is ``max(now, next free time)``, and the next free time moves one delay
later. The crawler then waits until its reserved time, outside the downloader's
concurrency (see :mod:`scrapy_robots.slots`).
"""

from __future__ import annotations

from typing import Any

from scrapy_robots.fleet.link import RedisLink

# KEYS[1]: the site's next free start time (microseconds, Redis clock)
# ARGV[1]: the delay in microseconds
# ARGV[2]: the least wait the crawler needs (microseconds, relative: no clock is compared)
# Returns the microseconds to wait before starting.
RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local free = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(now + tonumber(ARGV[2]), free)
local nxt = start + interval
redis.call('SET', KEYS[1], string.format('%d', nxt), 'PX', math.floor((nxt - now) / 1000) + 60000)
return start - now
"""


# A start that already happened (the robots.txt fetch) ARGV[2] microseconds ago:
# the next free start is at least one delay after it.
MARK = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nxt = now - tonumber(ARGV[2]) + tonumber(ARGV[1])
local free = tonumber(redis.call('GET', KEYS[1]) or '0')
if nxt > free then
  redis.call('SET', KEYS[1], string.format('%d', nxt), 'PX', math.floor(math.max(nxt - now, 0) / 1000) + 60000)
end
return 0
"""


class RedisPacer:
    def __init__(self, link: RedisLink, prefix: str):
        self.link = link
        self.prefix = prefix
        self._script: Any = link.client.register_script(RESERVE)
        self._mark: Any = link.client.register_script(MARK)

    async def reserve(self, site: str, delay: float, not_before: float = 0.0) -> float:
        """Reserve the site's next start, at least ``not_before`` seconds from now;
        return the seconds to wait for it. Raises
        :class:`~scrapy_robots.fleet.link.FleetUnavailable`."""
        waited = await self.link.call(
            self._script,
            keys=[f"{self.prefix}:pace:{site}"],
            args=[int(delay * 1_000_000), int(not_before * 1_000_000)],
        )
        return int(waited) / 1_000_000

    async def mark_start(self, site: str, delay: float, ago: float) -> None:
        """Count a request that started ``ago`` seconds ago (the robots.txt fetch, which
        the fleet did not reserve) in the site's pace. Raises FleetUnavailable."""
        await self.link.call(
            self._mark, keys=[f"{self.prefix}:pace:{site}"], args=[int(delay * 1_000_000), int(ago * 1_000_000)]
        )
