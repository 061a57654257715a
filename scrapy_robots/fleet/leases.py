"""The requests a crawler holds waiting, leased in Redis: a crawler that dies (SIGKILL, an
out-of-memory kill, a lost machine) does not take them with it.

With scrapy-redis's shared queue, a request a crawler pops is the crawler's alone. The
package holds some outside the downloader: waiting for their site's robots.txt, or for
their turn in the site's pace (local, or the fleet's). While one waits, it is leased: kept,
serialized as the scheduler's queue keeps it (``request.to_dict(spider=...)`` and the
scrapy-redis scheduler's own serializer, ``SCHEDULER_SERIALIZER``, pickle by default), in
this crawler's hash ``<prefix>:lease:{<crawler>}``, beside a heartbeat
``<prefix>:lease:{<crawler>}:beat`` that expires ``ROBOTSTXT_FLEET_LEASE_TTL`` seconds after
its last refresh (one hash tag: one Lua script touches both on a Redis Cluster). The
crawlers that hold leases are listed in the set ``<prefix>:leases``.

Nothing is written on a request's path: a lease is taken and given back in memory
(:meth:`RequestLeases.held`), and the changes are written four times a second
(``FLUSH_INTERVAL``) in one script that also refreshes the heartbeat: a request that waits
less than that, taken and given back between two writes, costs Redis nothing. A request that
cannot be serialized (a lambda callback) is not leased (``robotstxt/fleet/leases_unserializable``,
said once).

Every ``LOOK_INTERVAL`` seconds a crawler reads the set; for another crawler whose
heartbeat is gone, it claims that crawler's leases in one script (which reads and deletes
the hash only while no heartbeat is there: one crawler gets them) and gives the requests
back to the shared queue through its own scheduler (``engine.crawl``, ``dont_filter``: the
dupefilter saw them), with one INFO line and ``robotstxt/fleet/leases_returned``. A crawler
whose queue ran dry stays open (``DontCloseSpider``) while another crawler of the fleet holds
leases: they may come back to the queue.

Redis away: the changes wait in memory and are written when it answers (the link's
outage). A crawler that finds its own leases gone (its heartbeat lapsed: a stall past the
TTL, or Redis lost its data) writes every lease it holds again, and says so: if another
crawler gave them back meanwhile, they may be downloaded twice. A crawl that closes
cleanly deletes its hash, heartbeat and place in the set.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import socket
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.request import request_from_dict

from scrapy_robots.fleet.link import FleetUnavailable, RedisLink
from scrapy_robots.pace.slots import engine_closing

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

logger = logging.getLogger(__name__)

#: Seconds between two writes of the leases (and refreshes of the heartbeat). A request that
#: began to wait less than this before its crawler died may be lost (measured with scrapy-redis,
#: two kills: 3 to 5 lost at 1 s and at 0.5 s; at 0.25 s none in 4 runs of 5; docs/fleet.rst).
FLUSH_INTERVAL = 0.25
#: Seconds between two looks for a crawler whose heartbeat stopped.
LOOK_INTERVAL = 3.0
#: Leases written per script (Lua's unpack takes a few thousand arguments at most).
CHUNK = 500

# Write this crawler's changes and refresh its heartbeat. KEYS: the hash, the heartbeat.
# ARGV: the heartbeat's TTL in ms, the number n of leases to add, n field/value pairs,
# then the fields to remove. Returns 1 if the heartbeat was there before (the leases
# written earlier are still this crawler's), 0 if not.
FLUSH = """
local was = redis.call('EXISTS', KEYS[2])
local n = tonumber(ARGV[2])
if n > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 3, 2 + 2 * n))
end
if #ARGV > 2 + 2 * n then
  redis.call('HDEL', KEYS[1], unpack(ARGV, 3 + 2 * n))
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
else
  redis.call('DEL', KEYS[2])
end
return was
"""

# Take a crawler's leases if its heartbeat is gone: the leased requests, and the hash
# deleted, so that one crawler only gets them. False (nil) while the heartbeat lives.
CLAIM = """
if redis.call('EXISTS', KEYS[2]) == 1 then
  return false
end
local leased = redis.call('HVALS', KEYS[1])
redis.call('DEL', KEYS[1])
return leased
"""


class _Pickle:
    """scrapy-redis's default serializer (``scrapy_redis.picklecompat``), for a scheduler without one."""

    @staticmethod
    def dumps(obj: Any) -> bytes:
        return pickle.dumps(obj, protocol=-1)

    @staticmethod
    def loads(data: bytes) -> Any:
        # scrapy-redis pickles its queue: the leases keep the trust the queue has
        return pickle.loads(data)


@dataclass
class _Lease:
    field: str
    request: Request
    #: times entered (a request's waits may nest)
    depth: int = 1
    written: bool = False


class RequestLeases:
    """The leases of one crawler: :meth:`held` while a request waits; the writes, the
    heartbeat and the look for dead crawlers run on their own (started with the spider)."""

    def __init__(self, crawler: Crawler, link: RedisLink, prefix: str, ttl: float):
        self.crawler = crawler
        self.link = link
        self.ttl = ttl
        #: the crawler as the set lists it and the log names it: its host and process, made unique
        self.name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.prefix = prefix
        self.index = f"{prefix}:leases"
        #: id(request) -> its lease, while it waits
        self._held: dict[int, _Lease] = {}
        #: fields written to Redis and given back since: removed at the next write
        self._gone: list[str] = []
        #: fields in Redis (as far as this crawler knows)
        self._written: set[str] = set()
        self._next = 0
        self._unserializable_said = False
        #: other crawlers held leases at the last look: this one does not close meanwhile
        self._others = False
        #: this crawler was put in the set of those holding leases
        self._listed = False
        self._tasks: list[asyncio.Task[None]] = []
        crawler.signals.connect(self._start, signal=signals.spider_opened)
        crawler.signals.connect(self._spider_idle, signal=signals.spider_idle)

    def _hash(self, name: str) -> str:
        return f"{self.prefix}:lease:{{{name}}}"

    def _beat(self, name: str) -> str:
        return f"{self._hash(name)}:beat"

    @contextmanager
    def held(self, request: Request) -> Iterator[None]:
        key = id(request)
        lease = self._held.get(key)
        if lease is None:
            self._next += 1
            lease = self._held[key] = _Lease(str(self._next), request)
        else:
            lease.depth += 1
        try:
            yield
        finally:
            lease.depth -= 1
            if not lease.depth:
                del self._held[key]
                if lease.written:
                    self._gone.append(lease.field)

    def _start(self) -> None:
        if not self._tasks:
            loop = asyncio.get_event_loop()
            self._tasks = [loop.create_task(self._every(FLUSH_INTERVAL, self.flush)), loop.create_task(self._looking())]

    async def _every(self, seconds: float, work: Callable[[], Any]) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await work()
            except FleetUnavailable:
                pass  # the link said so; the next round tries again
            except Exception:
                logger.exception("The fleet's request leases failed a round; the next one tries again")

    async def _looking(self) -> None:
        await self._every(LOOK_INTERVAL, self.look)

    # -- this crawler's leases ----------------------------------------------------------

    def _encode(self, request: Request) -> bytes | None:
        spider = self.crawler.spider
        try:
            return self._serializer().dumps(request.to_dict(spider=spider))
        except Exception as exc:  # a lambda callback, an object in meta that does not pickle
            self._inc("leases_unserializable")
            if not self._unserializable_said:
                self._unserializable_said = True
                logger.warning(
                    "A waiting request cannot be leased in Redis (%(error)s): %(request)s. If this crawler dies, "
                    "such requests die with it (robotstxt/fleet/leases_unserializable; said once)",
                    {"error": exc, "request": request},
                    extra={"spider": spider},
                )
            return None

    def _serializer(self) -> Any:
        # The scheduler's own (scrapy-redis's SCHEDULER_SERIALIZER): what is given back is
        # what its queue would have held.
        engine = self.crawler.engine
        return getattr(getattr(engine, "scheduler", None), "serializer", None) or _Pickle

    async def flush(self) -> None:
        """Write the leases taken and given back since the last write, and refresh the
        heartbeat. Raises :class:`~scrapy_robots.fleet.link.FleetUnavailable` (the changes wait)."""
        new = [lease for lease in self._held.values() if not lease.written]
        if not new and not self._gone and not self._written:
            return
        adds: list[tuple[_Lease, bytes]] = []
        for lease in new:
            value = self._encode(lease.request)
            lease.written = True  # not tried again; its field is removed when it leaves
            if value is not None:
                adds.append((lease, value))
        gone = list(self._gone)
        hash_key, beat_key = self._hash(self.name), self._beat(self.name)
        ttl_ms = str(int(self.ttl * 1000))
        rounds = [adds[i : i + CHUNK] for i in range(0, len(adds), CHUNK)] or [[]]
        gone_rounds = [gone[i : i + CHUNK] for i in range(0, len(gone), CHUNK)]

        def build(pipe: Any) -> None:
            for i, chunk in enumerate(rounds):
                removed = gone_rounds[i] if i < len(gone_rounds) else []
                args: list[str | bytes] = [ttl_ms, str(len(chunk))]
                for lease, value in chunk:
                    args += [lease.field, value]
                pipe.eval(FLUSH, 2, hash_key, beat_key, *args, *removed)
            for removed in gone_rounds[len(rounds) :]:
                pipe.eval(FLUSH, 2, hash_key, beat_key, ttl_ms, "0", *removed)
            if adds:
                # Again with each new lease: another crawler that found this one's hash empty
                # (and its heartbeat gone with it) took it off the list.
                self._listed = True
                pipe.sadd(self.index, self.name)

        try:
            answers = await self.link.call(self.link.piped(build))
        except FleetUnavailable:
            for lease, _ in adds:
                lease.written = False  # written at the next round
            raise
        had = set(self._written)
        added = {lease.field for lease, _ in adds}
        self._written.difference_update(gone)
        self._written.update(added)
        del self._gone[: len(gone)]
        if had and not answers[0]:
            # The heartbeat had lapsed: the leases written before may have been claimed and
            # given back by another crawler (or Redis lost them). Every held one is leased again.
            again = [lease for lease in self._held.values() if lease.field in had and lease.field not in added]
            for lease in again:
                lease.written = False
            self._written = added
            self._inc("leases_rewritten", len(again))
            logger.warning(
                "This crawler's request leases were gone from Redis (its heartbeat lapsed: a stall past "
                "ROBOTSTXT_FLEET_LEASE_TTL, or Redis lost its data): %(count)d waiting request(s) leased again. "
                "Another crawler may have given them back to the queue meanwhile: those may be downloaded twice",
                {"count": len(again)},
                extra={"spider": self.crawler.spider},
            )

    # -- the others' ---------------------------------------------------------------------

    async def look(self) -> int:
        """Claim the leases of every crawler whose heartbeat stopped, and give their requests
        back to the queue; the number given back. Raises :class:`FleetUnavailable`."""
        if self.crawler.engine is None or self.crawler.spider is None or engine_closing(self.crawler):
            return 0
        members = await self.link.call(self.link.client.smembers, self.index)
        names = (m.decode() if isinstance(m, bytes) else str(m) for m in members)
        others = sorted(name for name in names if name != self.name)
        if not others:
            self._others = False
            return 0

        def alive(pipe: Any) -> None:
            for name in others:
                pipe.exists(self._beat(name))

        beats = await self.link.call(self.link.piped(alive))
        # A live crawler whose leases all ended has no heartbeat either: nothing to wait for.
        self._others = any(beats)
        returned = 0
        for name, beat in zip(others, beats):
            if beat:
                continue
            leased = await self.link.call(self.link.client.eval, CLAIM, 2, self._hash(name), self._beat(name))
            if leased is None:
                continue  # it came back meanwhile
            await self.link.call(self.link.client.srem, self.index, name)
            returned += self._give_back(name, leased)
        return returned

    def _give_back(self, name: str, leased: list[bytes]) -> int:
        spider = self.crawler.spider
        serializer = self._serializer()
        count = 0
        for value in leased:
            try:
                request = request_from_dict(serializer.loads(value), spider=spider)
            except Exception as exc:
                self._inc("leases_unreadable")
                logger.warning(
                    "A request leased by crawler %(name)s could not be read back (%(error)s): it is lost",
                    {"name": name, "error": exc},
                    extra={"spider": spider},
                )
                continue
            self.crawler.engine.crawl(request.replace(dont_filter=True))  # type: ignore[union-attr]
            count += 1
        if leased:
            self._inc("leases_returned", count)
            logger.info(
                "Crawler %(name)s stopped (its lease heartbeat expired): %(count)d request(s) it held waiting for "
                "robots.txt or their turn went back to the queue",
                {"name": name, "count": count},
                extra={"spider": spider},
            )
        return count

    def _spider_idle(self) -> None:
        if self._others:
            # Another crawler holds leased requests (its heartbeat lives): if it dies they come
            # back to the queue, and someone must be there to take them.
            raise DontCloseSpider

    async def close(self) -> None:
        """The crawl closed: its hash, heartbeat and place in the set deleted (one try)."""
        for task in self._tasks:
            task.cancel()
        if not self._listed:
            return  # nothing was ever written
        name = self.name

        def build(pipe: Any) -> None:
            pipe.delete(self._hash(name), self._beat(name))
            pipe.srem(self.index, name)

        try:
            await self.link.call(self.link.piped(build))
        except FleetUnavailable:
            return  # its heartbeat expires: another crawler claims what is left, if anything

    def _inc(self, key: str, count: int = 1) -> None:
        if count:
            self.crawler.stats.inc_value(f"robotstxt/fleet/{key}", count)
