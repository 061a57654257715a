"""The fleet's Redis client as its settings build it (:func:`redis_client`): one Redis, a
Redis Cluster or the primary that Redis Sentinel names, with short timeouts and no retries
inside redis-py (the link, ``link.py``, decides what a failure means); and
:func:`drop_connections`, what an outage does to the client's pools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy_robots.settings.parts import FleetConfig


def redis_client(fleet: FleetConfig) -> tuple[Any, Any]:
    """The fleet's asyncio client, and the Sentinel client or None: one Redis at
    ``ROBOTSTXT_REDIS_URL``; with ``ROBOTSTXT_REDIS_CLUSTER`` redis-py's cluster client,
    which learns the cluster's other nodes and slot map from that one; with
    ``ROBOTSTXT_REDIS_SENTINELS`` the primary they name ``ROBOTSTXT_REDIS_SENTINEL_SERVICE``
    (the URL then gives its db, user and password only)."""
    options = _options(fleet.timeout, fleet.connections)
    if fleet.cluster:
        from redis.asyncio.cluster import RedisCluster

        # max_connections is per node; on a MOVED the client refreshes its slot map itself.
        return RedisCluster.from_url(fleet.redis_url, **options), None
    if fleet.sentinels:
        return _sentinel_primary(fleet.redis_url, options, fleet.sentinels, fleet.sentinel_service)
    return _single(fleet.redis_url, options), None


def _single(url: str, options: dict[str, Any]) -> Any:
    import redis.asyncio

    return redis.asyncio.Redis.from_url(url, retry_on_timeout=False, **options)


def _sentinel_primary(
    url: str, options: dict[str, Any], sentinels: tuple[tuple[str, int], ...], service: str
) -> tuple[Any, Any]:
    from redis.asyncio.connection import parse_url
    from redis.asyncio.sentinel import Sentinel

    primary = {k: v for k, v in parse_url(url).items() if k not in ("host", "port", "path", "connection_class")}
    if url.lower().startswith("rediss:"):
        primary["ssl"] = True
    # The Sentinels are asked with the same short timeouts, without the primary's password.
    pool = {"max_connections": options["max_connections"]}
    asked = {k: v for k, v in options.items() if k != "max_connections"}
    sentinel = Sentinel(list(sentinels), sentinel_kwargs=asked, retry_on_timeout=False, **asked)
    return sentinel.master_for(service, **pool, **primary), sentinel


def _options(timeout: float, connections: int) -> dict[str, Any]:
    try:
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "The Redis fleet storage needs the redis package: pip install 'scrapy-robots[redis]'"
        ) from exc
    # No retry inside redis-py: a call answers or takes the link down, and a hung
    # Redis costs one timeout per call (redis-py's own default retries with backoff).
    return {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "retry": Retry(NoBackoff(), 0),
        "max_connections": connections + 1,  # the PING of a link that is down
    }


async def drop_connections(client: Any) -> None:
    """After an outage, whatever comes uses new connections (with Sentinel, to the primary
    they name then): the idle ones are closed now, the ones in use when given back (one on a
    demoted primary would take the link down again at its next write). A connection that
    fails to close is closed enough."""
    try:
        pool = getattr(client, "connection_pool", None)
        if pool is not None:
            await pool.disconnect(inuse_connections=False)
            if hasattr(pool, "update_active_connections_for_reconnect"):  # redis-py >= 7
                await pool.update_active_connections_for_reconnect()
        else:  # a cluster: a pool per node
            for node in client.get_nodes():
                await node.disconnect_free_connections()
    except Exception:
        pass
