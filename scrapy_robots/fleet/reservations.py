"""The fleet's pace in Redis: the keys, their shards and the scripts that reserve a slot's starts.

The keys are sharded so that a Redis Cluster can serve them (``ROBOTSTXT_REDIS_CLUSTER``):
every script's keys carry one hash tag, and no key is touched by every reservation.

- A slot's pace lives in one of ``PACE_SHARDS`` shards (CRC-32 of the slot), beside that
  shard's epoch (when its state began) and heartbeats (the crawlers live in it):
  ``<prefix>:pace:{k}:<slot>``, ``<prefix>:pace-epoch:{k}``, ``<prefix>:crawlers:{k}``. An
  epoch on the node of the paces it guards lives and dies with them: a node restarted
  empty resets exactly its shards, and the crawlers see it by the epoch each reservation
  returns (a new value is a reset; clocks are not compared, so a busy event loop is none).
  What a crawler knows of the fleet for its outage turns (the crawlers, its rank, Redis's
  clock) is per shard too: the crawlers that pace a slot are those that reserve in its shard.
- A "slow down" pauses the slot in its pace (every reservation obeys it), then is listed in
  one of ``PAUSE_SHARDS`` pause shards (``<prefix>:pauses:{j}``), its floor beside it, which
  every crawler reads in one pipeline (one round trip per node). The two writes are not
  atomic together: see :meth:`RedisPacer.pause`.

256 pace shards spread over a cluster's primaries (about 85 each on 3), few enough that an
epoch or a heartbeat set is shared by many slots (each crawler learns the fleet in every
shard it uses), many enough that no shard is hot. 16 pause shards keep the poll at one
small pipeline per crawler every half second. One Redis runs the same keys and scripts.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

from scrapy_robots.fleet.link import RedisLink

#: A slot's pace state outlives its last reserved start by this much (seconds): a key
#: found missing is then a lost state (FLUSHALL, empty restart), not an idle slot.
PACE_KEEP = 3600
#: A slot's interval comes down to a smaller one asked only after no crawler asked the
#: larger one for this long (seconds).
INTERVAL_KEEP = 600
#: A crawler counts as live while its last reservation is younger than this (seconds).
HEARTBEAT = 30
#: The pace shards: a slot's pace lives with its shard's epoch and heartbeats under one
#: hash tag (one hash slot of a Redis Cluster), and no key is read by every reservation.
PACE_SHARDS = 256
#: The pause shards, each read by every crawler once per poll (one pipelined round trip).
PAUSE_SHARDS = 16


def shard_of(slot: str, shards: int) -> int:
    """The shard of a downloader slot: the same in every crawler (CRC-32, not ``hash``)."""
    return zlib.crc32(slot.encode("utf-8", "backslashreplace")) % shards


# The fleet's clock and the state of a slot's pace, shared by the pace scripts.
# KEYS[1]: the slot's pace, a hash: last reserved start, interval, when the interval was
#          last asked (microseconds, Redis clock)
# KEYS[2]: the shard's epoch: when its pace state began (a FLUSHALL or an empty restart
#          of its node begins a new one)
# ARGV[1]: the interval this crawler asks for the slot, in microseconds
# ARGV[2]: the wait when the slot's state is missing (microseconds after the epoch):
#          reservations given before the state was lost must have passed
_STATE = f"""
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local epoch = tonumber(redis.call('GET', KEYS[2]) or '0')
if epoch == 0 then
  epoch = now
  redis.call('SET', KEYS[2], string.format('%d', now))
end
local asked = tonumber(ARGV[1])
local state = redis.call('HMGET', KEYS[1], 'last', 'interval', 'asked_at')
local interval = tonumber(state[2] or '0')
local asked_at = tonumber(state[3] or '0')
if asked >= interval or now - asked_at > {INTERVAL_KEEP * 1_000_000} then
  interval = asked
  asked_at = now
end
local function save(last)
  redis.call('HSET', KEYS[1], 'last', string.format('%d', last), 'interval', string.format('%d', interval),
             'asked_at', string.format('%d', asked_at))
  redis.call('PEXPIRE', KEYS[1], math.floor(math.max(last - now, 0) / 1000) + {PACE_KEEP * 1000})
end
"""

# ARGV[3]: the least wait this crawler needs (microseconds, relative: no clock is compared)
# ARGV[4]: this crawler's id, for the shard's heartbeats (KEYS[3], a sorted set)
# Returns {microseconds to wait, live crawlers of the shard, this crawler's rank among them,
#          Redis time since the epoch (microseconds), 1 if the slot's state was missing, the epoch,
#          the last reservation of the other live crawler that reserved least lately, since the
#          epoch (microseconds; Redis's time when there is none)}
RESERVE = (
    _STATE
    + f"""
local start = now + tonumber(ARGV[3])
local missing = 0
-- ARGV[5]: this crawler's "slow down" floor, not kept: its start comes that long after the last
local step = math.max(interval, tonumber(ARGV[5] or '0'))
if state[1] then
  start = math.max(start, tonumber(state[1]) + step)
else
  start = math.max(start, epoch + tonumber(ARGV[2]))
  missing = 1
end
-- ARGV[6..8]: this crawler's outage turns while it rejoins (an origin on Redis's clock, a
-- period, a tolerance; microseconds; a period of 0: none): the start goes on the first turn
-- at or after it, a start up to the tolerance into a turn being on it
local period = tonumber(ARGV[7] or '0')
if period > 0 then
  local origin = tonumber(ARGV[6])
  local turn = origin + math.ceil((start - origin - tonumber(ARGV[8])) / period) * period
  start = math.max(start, turn)
end
save(start)
redis.call('ZADD', KEYS[3], now, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - {HEARTBEAT * 1_000_000})
redis.call('PEXPIRE', KEYS[3], {HEARTBEAT * 1000})
local beats = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
local live = {{}}
-- the last reservation of the other crawler that reserved least lately (now if none)
local stalest = now
for i = 1, #beats, 2 do
  live[#live + 1] = beats[i]
  if beats[i] ~= ARGV[4] then stalest = math.min(stalest, tonumber(beats[i + 1])) end
end
table.sort(live)
local rank = 0
for i, id in ipairs(live) do
  if id == ARGV[4] then rank = i - 1 end
end
return {{start - now, #live, rank, now - epoch, missing, epoch, stalest - epoch}}
"""
)

# A start that already happened (the robots.txt fetch) ARGV[3] microseconds ago.
MARK = (
    _STATE
    + """
local started = now - tonumber(ARGV[3])
if state[1] then
  save(math.max(started, tonumber(state[1])))
else
  save(math.max(started, epoch + tonumber(ARGV[2]) - interval))
end
return 0
"""
)

# A "slow down" (scrapy_robots.pace.backoff): no start of the slot before ARGV[3]
# microseconds from now, in the slot's pace (what every reservation of the slot reads).
PAUSE = (
    _STATE
    + """
save(math.max(tonumber(state[1] or '0'), now + tonumber(ARGV[3])))
return 0
"""
)

# The same pause listed in its pause shard (KEYS[1], a hash: slot -> "<end> <floor>", on
# this node's clock), which every crawler reads (PAUSES) for the slots it does not pace
# through the fleet. ARGV: the slot, microseconds from now, the pause's floor (microseconds).
LIST_PAUSE = f"""
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ends = now + tonumber(ARGV[2])
local found = redis.call('HGET', KEYS[1], ARGV[1])
if found then
  ends = math.max(ends, tonumber(string.match(found, '^(%d+)')) or 0)
end
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d %d', ends, tonumber(ARGV[3])))
local keep = math.floor((ends - now) / 1000) + {PACE_KEEP * 1000}
if redis.call('PTTL', KEYS[1]) < keep then
  redis.call('PEXPIRE', KEYS[1], keep)
end
return 0
"""

# A pause shard's slots paused now: {slot, microseconds left, the pause's floor, ...}; the
# pauses that ended are dropped. KEYS[1]: the shard's hash.
PAUSES = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local found = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #found, 2 do
  local ends, floor = string.match(found[i + 1], '^(%d+) (%d+)$')
  ends = tonumber(ends)
  if ends == nil or ends <= now then
    redis.call('HDEL', KEYS[1], found[i])
  else
    table.insert(out, found[i])
    table.insert(out, ends - now)
    table.insert(out, tonumber(floor))
  end
end
return out
"""


@dataclass(frozen=True)
class Reservation:
    wait: float  #: seconds until the reserved start
    crawlers: int  #: live crawlers of the slot's shard (this one included)
    rank: int  #: this crawler's place among them (0 to crawlers - 1), the same in every crawler's view
    fleet_time: float  #: Redis's clock, in seconds since the shard's epoch
    lost: bool  #: the slot's pace state was missing
    epoch: int = 0  #: the shard's epoch: another value than last time is a pace state lost
    #: Redis's clock (seconds since the epoch) at the last reservation of the other live
    #: crawler of the shard that reserved least lately (``fleet_time`` when none)
    others_since: float = 0.0


class RedisPacer:
    """The fleet's pace in Redis: a slot's keys live in one of ``PACE_SHARDS`` shards."""

    def __init__(self, link: RedisLink, prefix: str, crawler_id: str):
        self.link = link
        self.prefix = prefix
        self.crawler_id = crawler_id
        self._script: Any = link.client.register_script(RESERVE)
        self._mark: Any = link.client.register_script(MARK)
        self._pause: Any = link.client.register_script(PAUSE)
        self._list_pause: Any = link.client.register_script(LIST_PAUSE)

    @staticmethod
    def shard(slot: str) -> int:
        return shard_of(slot, PACE_SHARDS)

    def _keys(self, slot: str) -> list[str]:
        tag = f"{{{self.shard(slot)}}}"  # one hash slot for the shard's keys
        return [f"{self.prefix}:pace:{tag}:{slot}", f"{self.prefix}:pace-epoch:{tag}", f"{self.prefix}:crawlers:{tag}"]

    def _pauses_key(self, shard: int) -> str:
        return f"{self.prefix}:pauses:{{{shard}}}"

    async def reserve(
        self,
        slot: str,
        interval: float,
        not_before: float,
        unknown: float,
        raised: float = 0.0,
        turns: tuple[float, float, float] | None = None,
    ) -> Reservation:
        """Reserve the slot's next start, at least ``not_before`` seconds from now, and at
        least ``unknown`` seconds after the epoch if the slot's state is missing; ``raised``:
        this crawler's "slow down" interval, which spaces this start only (not kept);
        ``turns``: (origin on Redis's clock in microseconds, period, tolerance in seconds),
        the start put on the first such turn at or after it. Raises
        :class:`~scrapy_robots.fleet.link.FleetUnavailable`."""
        origin, period, tolerance = turns if turns is not None else (0.0, 0.0, 0.0)
        wait, crawlers, rank, fleet_time, lost, epoch, others_since = await self.link.call(
            self._script,
            keys=self._keys(slot),
            args=[
                _micro(interval),
                _micro(unknown),
                _micro(not_before),
                self.crawler_id,
                _micro(raised),
                int(origin),
                _micro(period),
                _micro(tolerance),
            ],
        )
        return Reservation(
            int(wait) / 1e6,
            int(crawlers),
            int(rank),
            int(fleet_time) / 1e6,
            bool(lost),
            int(epoch),
            int(others_since) / 1e6,
        )

    async def mark_start(self, slot: str, interval: float, ago: float, unknown: float) -> None:
        """Count a request that started ``ago`` seconds ago (the robots.txt fetch, which
        the fleet did not reserve; a start paced while Redis was away, negative if still to
        come) in the slot's pace. Raises FleetUnavailable."""
        await self.link.call(
            self._mark, keys=self._keys(slot)[:2], args=[_micro(interval), _micro(unknown), int(ago * 1_000_000)]
        )

    async def pause(self, slot: str, interval: float, seconds: float) -> None:
        """No start of the slot for ``seconds`` (a "slow down"), for every crawler; its
        interval at least ``interval`` (the raised delay). Raises FleetUnavailable.

        Two calls: the pause in the slot's pace (every reservation of the slot obeys it),
        then in its pause shard, which the crawlers read for the slots they pace alone.
        Not atomic, and need not be: if the second is lost (its node away, this crawler
        killed in between), the slot's fleet pace still holds the pause, and a crawler
        that paces the slot alone hears the site's own "slow down" at its next request."""
        await self.link.call(self._pause, keys=self._keys(slot)[:2], args=[0, 0, _micro(seconds)])
        await self.link.call(
            self._list_pause,
            keys=[self._pauses_key(shard_of(slot, PAUSE_SHARDS))],
            args=[slot, _micro(seconds), _micro(interval)],
        )

    async def pauses(self) -> list[tuple[str, float, float]]:
        """The slots paused now: (slot, seconds left, interval), every pause shard read
        in one pipeline (on a cluster, one round trip per node, in parallel). Raises
        FleetUnavailable."""

        def build(pipe: Any) -> None:
            for shard in range(PAUSE_SHARDS):
                # EVAL, not EVALSHA: a pipeline cannot load a script that a node lost (restarted).
                pipe.eval(PAUSES, 1, self._pauses_key(shard))

        shards = await self.link.call(self.link.piped(build))
        return [
            (_text(found[i]), int(found[i + 1]) / 1e6, int(found[i + 2]) / 1e6)
            for found in shards
            for i in range(0, len(found), 3)
        ]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _micro(seconds: float) -> int:
    return int(max(seconds, 0.0) * 1_000_000)
