"""The fleet's one robots.txt fetch per site: a lock in Redis that its holder renews.

The crawler that fetches a site's robots.txt for the fleet holds
``<prefix>:site:{<site>}:lock`` (``SET NX PX``, the lock's TTL; beside the site's record,
in its hash slot) and renews it every third
of the TTL while its fetch runs: a live fetch keeps its lock however long it takes, a
dead crawler's lock expires within the TTL. The others wait while the lock is there and
read the record when it lands. A lock that disappears without a record is taken over by
exactly one of them (``SET NX`` again); a holder that keeps renewing without a result
past ``ROBOTSTXT_FLEET_LOCK_WAIT`` is taken over by one of them too (a compare-and-set on
its token), so that no crawler waits forever. A waiter never downloads without the lock:
robots.txt is downloaded once per holder, and there is one holder at a time. A crawler
that closes gives back the locks it still holds (fetches cut short by the close).

Redis away while a crawler waits (a failover, a restart) is waited through for up to the
lock's TTL: the holder's fetch goes on, its record is shared as soon as Redis answers
again (:mod:`scrapy_robots.fleet.writeback`), and the waiter reads it then: the holder
whose record could not be shared leaves its lock to expire instead of giving it back, so
that no waiter takes the fetch over meanwhile. Only a longer outage makes the waiter
download the file itself (the fleet's outage behaviour). A Redis that comes back without
the lock (restarted empty, a replica promoted before the lock reached it) is given a moment
(:attr:`FetchLock._renewed_within`, about 1.6 s) for the holder to set its lock again (its
renewal is retried every ``RENEW_RETRY`` while Redis is away) or to write its record back,
before a waiter takes the fetch over.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from scrapy_robots.fleet.link import MAX_BACKOFF, FleetUnavailable, RedisLink

if TYPE_CHECKING:
    from scrapy_robots.cache import RobotsEntry

logger = logging.getLogger(__name__)

#: How often a waiter looks at the lock and the record (one round trip).
POLL_INTERVAL = 0.1
#: How often a holder tries to renew its lock again while Redis is away.
RENEW_RETRY = 0.25

# Keep the lock if this crawler still holds it. A lock that is gone (a FLUSHALL, an
# empty restart, a renewal late past the TTL that no one took over) is taken again.
# Returns 1 if held, 0 if another crawler holds it now.
RENEW = """
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if not held and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0
"""

# Take the lock from the holder the waiter has watched (ARGV[1]) past the wait: one
# waiter wins, the others see a new holder and wait for it.
TAKE_FROM = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
"""

# Delete the lock only if this crawler still holds it.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

#: Why a waiter took a site's fetch over.
STOPPED = "stopped"  # the lock expired: its holder stopped renewing it
RELEASED = "released"  # gone with more than a third of its TTL left, and no result
OVERDUE = "overdue"  # the holder kept renewing past ROBOTSTXT_FLEET_LOCK_WAIT
#: The lock holds this crawler's own token: its SET, sent again after a late timeout
#: (scrapy_robots.fleet.link), had landed the first time.
OURS = "ours"


class FetchLock:
    """The fetch lock of every site, for one crawler: ``run`` fetches a site's
    robots.txt for the fleet, or waits for the crawler that does.

    ``read_meta(site)`` returns the site's record as stored (bytes, cheap to compare),
    ``load_fresh(site)`` the fresh entry or None; both raise
    :class:`~scrapy_robots.fleet.link.FleetUnavailable`, which ``run`` lets through."""

    def __init__(
        self,
        link: RedisLink,
        ttl: float,
        wait: float,
        count: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ):
        self.link = link
        self.ttl = ttl
        self.wait = wait
        self.count = count
        self.clock = clock
        self._renew: Any = link.client.register_script(RENEW)
        self._take_from: Any = link.client.register_script(TAKE_FROM)
        self._release: Any = link.client.register_script(RELEASE)
        #: The locks this crawler holds now, and their tokens.
        self.held: dict[str, str] = {}
        self._renewing: set[asyncio.Future[None]] = set()
        #: Locks left to expire rather than given back (:meth:`keep`).
        self._kept: set[str] = set()

    @property
    def _px(self) -> int:
        return max(int(self.ttl * 1000), 1)

    async def run(
        self,
        site: str,
        key: str,
        fetch: Callable[[], Awaitable[RobotsEntry]],
        load_fresh: Callable[[str], Awaitable[RobotsEntry | None]],
    ) -> RobotsEntry:
        """The site's entry: fetched by this crawler under the lock (``fetch`` saves it),
        or another crawler's, read from Redis."""
        lock = f"{key}:lock"
        token = uuid.uuid4().hex
        took_over: tuple[str, float] | None = None
        waited = False
        while True:
            if took_over is not None and took_over[0] in (OVERDUE, OURS):
                held = True  # TAKE_FROM set it, or our own SET had
            else:
                self.held[lock] = token  # before the SET: a close while it is on the wire gives it back
                held = bool(await self.link.call(self.link.client.set, lock, token, nx=True, px=self._px))
            if held:
                self.held[lock] = token
                # Another crawler may have published and released the lock between our
                # miss and this SET: look once more before fetching.
                try:
                    entry = await load_fresh(site)
                except BaseException:
                    await self._give_back(lock, token)
                    raise
                if entry is not None:
                    await self._give_back(lock, token)
                    return entry
                if took_over is not None and took_over[0] != OURS:
                    self._say_taken_over(site, *took_over)
                return await self._fetch(site, lock, token, fetch)
            self.held.pop(lock, None)
            if not waited:
                waited = True
                self.count("lock_wait")
            outcome = await self._wait(site, key, lock, token, load_fresh)
            if not isinstance(outcome, tuple):
                return outcome
            took_over = outcome

    async def _wait(
        self,
        site: str,
        key: str,
        lock: str,
        token: str,
        load_fresh: Callable[[str], Awaitable[RobotsEntry | None]],
    ) -> RobotsEntry | tuple[str, float]:
        """Wait while another crawler holds the lock: its entry once it lands, or why
        the lock can be taken over and how long this crawler waited."""
        started = self.clock()
        holder: bytes | None = None
        holder_since = started
        remaining: int | None = None  # the lock's last TTL seen, in ms
        record: Any = object()  # the record last seen: read again only when it changes
        away: float | None = None  # since when Redis has not answered this wait
        back: float | None = None  # when Redis answered again after being away in this wait
        while True:
            await asyncio.sleep(POLL_INTERVAL)
            try:
                meta, current, pttl = await self._look(key, lock)
                if meta is not None and meta != record:
                    record = meta
                    entry = await load_fresh(site)
                    if entry is not None:
                        return entry
            except FleetUnavailable:
                # Redis away (a failover, a restart): the holder's fetch goes on, and its
                # record is shared when Redis answers again (the write-back of what could
                # not be shared). Wait through an outage shorter than the lock's TTL, in
                # which the lock would have expired anyway; past it, the caller fetches alone.
                away = self.clock() if away is None else away
                if self.clock() - away >= self.ttl:
                    raise
                continue
            if away is not None:
                away, back = None, self.clock()
            if current == token.encode():
                return OURS, self.clock() - started
            if current is None and meta is None and back is not None and self.clock() - back < self._renewed_within:
                # Redis came back without the lock or the record (restarted empty, or a
                # replica promoted before the lock reached it): a live holder sets its lock
                # again at its next renewal (RENEW), within this; its fetch is not taken
                # over meanwhile (#49: the site in flight at an empty restart was downloaded
                # twice in every run).
                continue
            if current is None:
                # A live holder renews its lock every third of the TTL: a lock last seen
                # with less than a third left had stopped being renewed.
                why = STOPPED if remaining is not None and remaining < self._px / 3 else RELEASED
                return why, self.clock() - started
            if current != holder:
                holder, holder_since = current, self.clock()
            elif self.clock() - holder_since >= self.wait:
                if await self.link.call(self._take_from, keys=[lock], args=[holder, token, self._px]):
                    return OVERDUE, self.clock() - started
                holder = None  # another waiter took it first: wait for that one
            remaining = pttl if isinstance(pttl, int) and pttl >= 0 else None

    async def _look(self, key: str, lock: str) -> list[Any]:
        """The record as stored, the lock's holder and its TTL in ms: one round trip."""

        def build(pipe: Any) -> None:
            pipe.get(key)
            pipe.get(lock)
            pipe.pttl(lock)

        return await self.link.call(self.link.piped(build))

    async def _fetch(
        self, site: str, lock: str, token: str, fetch: Callable[[], Awaitable[RobotsEntry]]
    ) -> RobotsEntry:
        self.count("fetch")
        renewing = asyncio.ensure_future(self._keep(site, lock, token))
        self._renewing.add(renewing)
        try:
            return await fetch()
        finally:
            renewing.cancel()
            self._renewing.discard(renewing)
            await self._give_back(lock, token)

    @property
    def _renewed_within(self) -> float:
        """The longest a live holder's lock (or, its fetch done, its record) stays missing
        after Redis answers this crawler again: the holder's link tries Redis again at most
        MAX_BACKOFF after this one's; then its renewal, tried again every RENEW_RETRY while
        Redis was away (:meth:`_keep`), or the write-back of its record; a few polls of slack."""
        return min(MAX_BACKOFF + min(self.ttl / 3, RENEW_RETRY) + 4 * POLL_INTERVAL, self.ttl)

    async def _keep(self, site: str, lock: str, token: str) -> None:
        """Renew the lock every third of its TTL while the fetch runs; while Redis is away,
        try again every RENEW_RETRY, so that a lock Redis lost (an empty restart) is set
        again as soon as Redis answers, before the waiters take the fetch over."""
        pause = self.ttl / 3
        while True:
            await asyncio.sleep(pause)
            try:
                kept = await self.link.call(self._renew, keys=[lock], args=[token, self._px])
            except FleetUnavailable:
                pause = min(self.ttl / 3, RENEW_RETRY)
                continue  # Redis is away: so are the others; the lock's expiry decides
            pause = self.ttl / 3
            if not kept:
                self.count("lock_lost")
                logger.warning(
                    "robots.txt for %(site)s: another crawler took this crawler's fleet lock over (it was not "
                    "renewed within ROBOTSTXT_FLEET_LOCK_TTL = %(ttl)gs, or held past ROBOTSTXT_FLEET_LOCK_WAIT); "
                    "this fetch's result is still shared",
                    {"site": site, "ttl": self.ttl},
                )
                return

    def keep(self, key: str) -> None:
        """The fetch of the record at ``key`` ends unshared (Redis away): its lock is not
        given back but left to expire, so that the waiters keep waiting for the record,
        which the write-back shares when Redis answers, instead of taking the fetch over."""
        self._kept.add(f"{key}:lock")

    async def _give_back(self, lock: str, token: str) -> None:
        if self.held.get(lock) == token:
            del self.held[lock]
        if lock in self._kept:
            self._kept.discard(lock)
            return
        try:
            await self.link.call(self._release, keys=[lock], args=[token])
        except FleetUnavailable:
            pass  # the lock's expiry frees it

    async def release_all(self) -> None:
        """Give back every lock still held (the crawl closes): one round trip."""
        for renewing in self._renewing:
            renewing.cancel()  # a renewal would take a given-back lock again
        held, self.held = self.held, {}
        if not held:
            return

        def build(pipe: Any) -> None:
            for lock, token in held.items():
                pipe.eval(RELEASE, 1, lock, token)  # EVAL: a cluster's pipeline refuses EVALSHA

        try:
            await self.link.call(self.link.piped(build))
        except FleetUnavailable:
            pass  # their expiry frees them

    def _say_taken_over(self, site: str, why: str, waited: float) -> None:
        self.count("lock_takeover")
        if why == OVERDUE:
            self.count("lock_timeout")
            logger.warning(
                "robots.txt for %(site)s: the crawler fetching it has kept its fleet lock for %(wait)gs without a "
                "result (ROBOTSTXT_FLEET_LOCK_WAIT); this crawler takes the fetch over after waiting %(waited).1fs",
                {"site": site, "wait": self.wait, "waited": waited},
            )
        elif why == STOPPED:
            logger.warning(
                "robots.txt for %(site)s: the crawler fetching it stopped renewing its fleet lock (killed, stalled "
                "or cut off from Redis); this crawler takes the fetch over after waiting %(waited).1fs",
                {"site": site, "waited": waited},
            )
        else:
            logger.info(
                "robots.txt for %(site)s: the fleet lock of the crawler fetching it is gone without a result (given "
                "up, or lost by Redis); this crawler takes the fetch over after waiting %(waited).1fs",
                {"site": site, "waited": waited},
            )
