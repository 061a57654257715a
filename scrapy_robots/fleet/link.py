"""RedisLink: one asyncio Redis client, short timeouts, a bound on the calls in flight,
and a circuit breaker.

While Redis answers, every call goes to it, at most ``connections`` at a time
(``ROBOTSTXT_REDIS_CONNECTIONS``; the pool holds one more, for the PING below): the
others wait their turn, so many sites at once or a slow Redis cost time and are never
taken for an unreachable Redis.

The first call that fails takes the link down: one WARNING, and the pool's idle
connections are dropped (a restarted server has closed them). While down, calls fail
fast with :class:`FleetUnavailable` (the caller falls back to local behaviour) and one
PING at a time asks whether Redis is back: ``FIRST_BACKOFF`` after the failure, then
after twice as long for each PING that fails, up to ``MAX_BACKOFF``. The PING that
answers brings the link back: one WARNING, and the calls go to Redis again at once.

A failure moves the link only if the call started since the link last changed: the
calls in flight when Redis went away fail together and count as one outage (one rung
of the backoff), and a call started before Redis came back cannot take it down again.

A timeout is Redis's only if the event loop was listening when it came: a loop blocked
past a call's deadline (a large robots.txt parsed, a crawl starting) finds Redis's answer
and its own timer due together, and the timer wins. A call that times out later than
``LATE`` past its deadline is made once more (``robotstxt/fleet/redis_late``), so a busy
loop is not taken for a hung Redis. Every call is made again whole: a pipeline is passed
as a function that builds and sends it (:meth:`RedisLink.piped`), and the calls that
change something are safe to repeat (a lock's SET NX that had landed is found holding the
caller's own token, a second reservation only spaces the slot more).

On a Redis Cluster (:func:`redis_client`, ``ROBOTSTXT_REDIS_CLUSTER``) the link is one for
the whole cluster: a node that fails takes it down, and it comes back when the whole
cluster answers. redis-py re-reads the cluster's slot map only when a single command fails
or a pipeline is retried, and neither happens here (no retries: a pipeline would go on to
a dead primary long after its replica took over), and its PING goes to one node. So the
link's PING on a cluster is two steps (:meth:`RedisLink._answers`): the slot map read anew
from a node that answers, then a PING to every primary it names, and only all of them
answering brings the link back. The map is read once per PING of the backoff, never per
call: within about a second of a promoted replica answering, the link is back, once.

Any exception from redis-py is an outage, whatever its class: a connection that another
call of the cluster client closed under this one fails with ``AttributeError``, and no
error of the client ever reaches a request.

With Redis Sentinel (``ROBOTSTXT_REDIS_SENTINELS``) the client is redis-py's
``Sentinel(...).master_for(service)``: each new connection asks the Sentinels where the
primary is. A failover is an outage like any other: the calls to the dead primary fail,
the link drops the pool's connections, and the PING that answers went, on a new
connection, to the primary the Sentinels name. A demoted primary (a replica now) answers
a write with READONLY, which redis-py turns into a connection error: the same outage.

A Redis of another kind than the settings say is no outage (:func:`mismatch`): a cluster
node without ``ROBOTSTXT_REDIS_CLUSTER`` (it answers ``MOVED`` for the keys of the other
nodes), the setting against a plain server, a Sentinel address that is no Sentinel, a
service the Sentinels do not know. The link asks what Redis is once, at start-up
(:meth:`RedisLink.verify`) or, if Redis is away then, at the PING that first reaches it;
a ``MOVED`` or ``ASK`` reply says it wherever it comes. Then one ERROR names the setting
and the fix, ``on_misconfigured`` is told (the crawl stops: ``MISCONFIGURED``), and every
call fails at once without a word: no outage, no PING, no "reachable again".
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from scrapy_robots.fleet.client import _options, _single, drop_connections, redis_client
from scrapy_robots.fleet.kind import MISCONFIGURED, Mismatch, misconfiguration, mismatch
from scrapy_robots.settings.parts import without_password

if TYPE_CHECKING:
    from scrapy_robots.settings.parts import FleetConfig

logger = logging.getLogger(__name__)

T = TypeVar("T")
FIRST_BACKOFF = 0.25
#: Small: a PING a second is nothing to a Redis that is down, and the fleet's pace is
#: back within about a second of Redis answering.
MAX_BACKOFF = 1.0
#: Seconds past its deadline after which a timeout is the busy loop's, not Redis's.
LATE = 0.1
#: ROBOTSTXT_REDIS_CONNECTIONS' default (redis-py's pool refuses a 101st connection).
DEFAULT_CONNECTIONS = 50


class FleetUnavailable(Exception):
    """Redis cannot be used right now; do the local thing."""


__all__ = ["MISCONFIGURED", "FleetUnavailable", "RedisLink", "redis_client"]


class RedisLink:
    def __init__(
        self,
        url: str,
        timeout: float,
        stats: Any = None,
        clock: Callable[[], float] = time.monotonic,
        connections: int = DEFAULT_CONNECTIONS,
        client: Any = None,
        sentinel: Any = None,
        where: str | None = None,
        cluster: bool = False,
        service: str = "",
        on_misconfigured: Callable[[str], object] | None = None,
    ):
        """``client``: the fleet's asyncio client (:func:`redis_client`); by default one
        Redis at ``url``. ``sentinel``: the Sentinel client that names its primary
        (``service``), closed with it; ``where``: how the log names the server (default
        ``url`` without its password); ``cluster``: ``client`` is a cluster client; ``on_misconfigured``: told
        once, with the ERROR line's words, when Redis is not the kind the settings say."""
        self.url = where or without_password(url)  # the log's name for it: never its password
        self.cluster = cluster
        self.service = service
        self.on_misconfigured = on_misconfigured
        #: what the settings get wrong about Redis, once found (then every call fails at once)
        self.misconfigured: str | None = None
        #: Redis was asked what it is (mismatch) and answered
        self.verified = False
        self._verifying: asyncio.Future[None] | None = None
        self.timeout = timeout
        self.client = client if client is not None else _single(url, _options(timeout, connections))
        self._sentinel = sentinel
        import redis

        # Every exception of the client: not only RedisError, RedisClusterException (a slot
        # no node serves, ...) and OSError, but an AttributeError from a connection that
        # another call closed under this one (redis-py's cluster client does that).
        self._errors: tuple[type[BaseException], ...] = (Exception,)
        self._timeouts = (redis.exceptions.TimeoutError, asyncio.TimeoutError)
        #: The primary's address while the link was last up (Sentinel only).
        self._primary: tuple[str, int] | None = None
        self._turns = asyncio.Semaphore(connections)
        self.stats = stats
        self.clock = clock
        self.down = False
        self.down_since = 0.0
        self.retry_at = 0.0
        self.backoff = FIRST_BACKOFF
        self._changes = 0  # how often the link went down or came back
        self._probing = False

    @classmethod
    def of(
        cls, fleet: FleetConfig, stats: Any = None, on_misconfigured: Callable[[str], object] | None = None
    ) -> RedisLink:
        """The link to the fleet's Redis as its settings say (:func:`redis_client`)."""
        client, sentinel = redis_client(fleet)
        where = None
        if fleet.sentinels:
            sentinels = ",".join(f"{host}:{port}" for host, port in fleet.sentinels)
            where = f"{fleet.sentinel_service} (the primary of Sentinels {sentinels})"
        return cls(
            fleet.redis_url,
            fleet.timeout,
            stats=stats,
            connections=fleet.connections,
            client=client,
            sentinel=sentinel,
            where=where,
            cluster=fleet.cluster,
            service=fleet.sentinel_service,
            on_misconfigured=on_misconfigured,
        )

    def available(self) -> bool:
        """Whether a call would go to Redis now (the link is up, or a PING is due)."""
        if self.misconfigured is not None:
            return False
        return not self.down or (not self._probing and self.clock() >= self.retry_at)

    async def verify(self) -> str | None:
        """What the settings get wrong about Redis (the ERROR said), or None: asked once,
        before the link's first call (the storage asks at start-up). A Redis away now is an
        outage; the PING that first reaches it asks again."""
        if self._verifying is None:
            self._verifying = asyncio.ensure_future(self._first_check())
        await asyncio.shield(self._verifying)
        return self.misconfigured

    async def _first_check(self) -> None:
        try:
            await self._call(self._check)
        except FleetUnavailable:
            pass

    async def _check(self) -> None:
        wrong = await mismatch(self.client, self.cluster, self._sentinel, self.service)
        if wrong is not None:
            raise Mismatch(wrong)
        self.verified = True

    def misconfiguration(self, exc: BaseException) -> str | None:
        """What ``exc`` says the settings get wrong about Redis, or None (an outage)."""
        return misconfiguration(exc, self.cluster, self._sentinel is not None)

    def _misconfigured(self, wrong: str) -> None:
        if self.misconfigured is not None:
            return
        self.misconfigured = wrong
        logger.error(
            "The fleet's Redis at %(url)s is not what its settings say: %(wrong)s. The crawl stops (close reason "
            "%(reason)s): it would not share what its settings say it shares",
            {"url": self.url, "wrong": wrong, "reason": MISCONFIGURED},
        )
        if self.on_misconfigured is not None:
            self.on_misconfigured(wrong)

    async def call(self, method: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        if not self.verified and not self.down and self.misconfigured is None:
            await self.verify()  # a plain client on a cluster node would answer some keys, not all
        return await self._call(method, *args, **kwargs)

    async def _call(self, method: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        if self.misconfigured is not None:
            raise FleetUnavailable(self.misconfigured)
        if self.down and not await self._probe():
            raise FleetUnavailable(f"Redis at {self.url} is unreachable")
        if self._turns.locked():
            self._inc("redis_waits")
        async with self._turns:
            if self.down:  # it went down while this call waited for its turn
                raise FleetUnavailable(f"Redis at {self.url} is unreachable")
            changes = self._changes
            for again in (False, True):
                started = self.clock()
                try:
                    return await method(*args, **kwargs)
                except self._timeouts as exc:
                    if not again and self.clock() - started > self.timeout + LATE and changes == self._changes:
                        self._inc("redis_late")
                        continue
                    error: BaseException = exc
                except (*self._errors, Mismatch) as exc:
                    wrong = self.misconfiguration(exc)
                    if wrong is not None:
                        self._misconfigured(wrong)
                        raise FleetUnavailable(wrong) from exc
                    error = exc
                self._inc("redis_errors")
                if changes == self._changes:
                    await self._went_down(error)
                raise FleetUnavailable(_describe(error)) from error
            raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def piped(self, build: Callable[[Any], object]) -> Callable[[], Awaitable[list[Any]]]:
        """A pipeline (no transaction) that :meth:`call` can send again whole: ``build``
        adds its commands to a new pipeline at each sending (a sent one is emptied, even
        when its answer never came)."""

        def send() -> Awaitable[list[Any]]:
            pipe = self.client.pipeline(transaction=False)
            build(pipe)
            return pipe.execute()

        return send

    async def _went_down(self, exc: BaseException) -> None:
        self.down = True
        self._changes += 1
        self.down_since = self.clock()
        self.backoff = FIRST_BACKOFF
        self.retry_at = self.down_since + self.backoff
        self._inc("redis_unreachable")
        logger.warning(
            "Redis at %(url)s is unreachable (%(error)s): this crawler uses its local robots.txt "
            "cache, and paces as ROBOTSTXT_FLEET_OUTAGE says, until it returns",
            {"url": self.url, "error": _describe(exc)},
        )
        self._primary = getattr(getattr(self.client, "connection_pool", None), "master_address", None)
        await drop_connections(self.client)

    async def _probe(self) -> bool:
        """Whether Redis answers again: one PING at a time, when the backoff allows."""
        if not self.available():
            return False
        self._probing = True
        try:
            await self._answers()
        except (*self._errors, Mismatch) as exc:
            wrong = self.misconfiguration(exc)
            if wrong is not None:
                self._misconfigured(wrong)
                return False
            self._inc("redis_errors")
            self.backoff = min(self.backoff * 2, MAX_BACKOFF)
            self.retry_at = self.clock() + self.backoff
            return False
        finally:
            self._probing = False
        self.down = False
        self._changes += 1
        logger.warning(
            "Redis at %(url)s is reachable again (unreachable for %(seconds).1f s): the fleet cache and pacing resume",
            {"url": self.url, "seconds": self.clock() - self.down_since},
        )
        primary = getattr(getattr(self.client, "connection_pool", None), "master_address", None)
        if self._primary is not None and primary is not None and primary != self._primary:
            self._inc("redis_failover")
            logger.warning(
                "Redis Sentinel moved %(url)s from %(was)s to %(now)s (a failover): robots.txt locks and records "
                "written in the last moment before it may be lost (see 'Failover with Sentinel' in the fleet docs)",
                {"url": self.url, "was": _address(self._primary), "now": _address(primary)},
            )
        return True

    async def _answers(self) -> None:
        """Raises unless Redis answers: the PING of a link that is down."""
        if not self.verified:
            # The first PING that reaches Redis asks what it is, if start-up could not.
            await self._check()
            if not self.cluster:
                return
        if not self.cluster:
            await self.client.ping()
            return
        # The slot map as the cluster says it now (a replica promoted), then every primary
        # in it: a plain ping() asks one node, and would say yes while a primary is dead.
        await self.client.nodes_manager.initialize()
        await self.client.ping(target_nodes=self.client.PRIMARIES)

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"robotstxt/fleet/{key}")

    async def close(self) -> None:
        try:
            await self.client.aclose()
            if self._sentinel is not None and hasattr(self._sentinel, "aclose"):  # redis-py >= 6
                await self._sentinel.aclose()
        except self._errors:
            pass


def _address(address: tuple[str, int]) -> str:
    return f"{address[0]}:{address[1]}"


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
