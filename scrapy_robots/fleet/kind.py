"""Whether the fleet's Redis is the kind its settings say: one Redis, a Redis Cluster node,
or a primary named by Redis Sentinel. A mismatch is a configuration error (the link says
it once and stops sharing: ``link.py``), never an outage: a cluster node answers a plain
client MOVED for the keys of the other nodes, a plain server refuses the cluster client's
slot map, an address that is no Sentinel does not know the SENTINEL command.
"""

from __future__ import annotations

from typing import Any

#: The crawl's close reason when its Redis is not the kind its settings say.
MISCONFIGURED = "robotstxt_redis_misconfigured"


class Mismatch(Exception):
    """Redis is not the kind the settings say; the message names the setting and the fix."""


async def mismatch(client: Any, cluster: bool, sentinel: Any = None, service: str = "") -> str | None:
    """What the fleet's settings get wrong about the Redis that ``client`` reaches, or None.
    Raises redis-py's errors when Redis cannot be asked (:meth:`RedisLink.misconfiguration`
    names those that are a mismatch too)."""
    if cluster:
        # redis-py's cluster client reads the slot map first: a plain server refuses it
        # (RedisClusterException, "Cluster mode is not enabled on this node").
        await client.ping()
        return None
    try:
        mode = (await client.info("server")).get("redis_mode", "standalone")
    except _master_not_found() as exc:
        if sentinel is not None and not await _known_service(sentinel, service):
            return (
                f"the Sentinels of ROBOTSTXT_REDIS_SENTINELS know no service {service!r}: set "
                "ROBOTSTXT_REDIS_SENTINEL_SERVICE to the name of their 'sentinel monitor' line"
            )
        raise exc
    if mode == "cluster":
        return _NOT_CLUSTER_SETTING
    if mode == "sentinel":
        return (
            "ROBOTSTXT_REDIS_URL names a Redis Sentinel, not a Redis server: list the Sentinels in "
            "ROBOTSTXT_REDIS_SENTINELS (and the service in ROBOTSTXT_REDIS_SENTINEL_SERVICE)"
        )
    return None


_NOT_CLUSTER_SETTING = (
    "Redis is a Redis Cluster node but ROBOTSTXT_REDIS_CLUSTER is off (a plain client is answered MOVED for "
    "the keys of the other nodes): set ROBOTSTXT_REDIS_CLUSTER = True"
)
_NOT_A_CLUSTER = (
    "ROBOTSTXT_REDIS_CLUSTER is on but Redis is not a Redis Cluster node (Cluster mode is not enabled on this "
    "node): set ROBOTSTXT_REDIS_CLUSTER = False, or name a node of the cluster"
)
_NOT_SENTINELS = (
    "ROBOTSTXT_REDIS_SENTINELS names a server that is not a Redis Sentinel (it does not know the SENTINEL "
    "command): list the Sentinels' addresses (port 26379 by default), not the Redis servers'"
)


def _master_not_found() -> type[BaseException]:
    from redis.asyncio.sentinel import MasterNotFoundError

    return MasterNotFoundError


async def _known_service(sentinel: Any, service: str) -> bool:
    """Whether a Sentinel that answers knows ``service`` (True when none answers: an outage)."""
    import redis

    answered = False
    for each in sentinel.sentinels:
        try:
            masters = await each.sentinel_masters()
        except (TimeoutError, redis.exceptions.RedisError, OSError):
            continue
        answered = True
        if service in masters:
            return True
    return not answered


def misconfiguration(exc: BaseException, cluster: bool, sentinel: bool) -> str | None:
    """What ``exc``, an error of a call, says the settings get wrong about Redis, or None
    (an outage). ``cluster``: the client is a cluster client; ``sentinel``: Sentinels name
    the primary."""
    import redis

    if isinstance(exc, Mismatch):
        return str(exc)
    if isinstance(exc, redis.exceptions.AskError) and not cluster:  # MOVED too (a subclass)
        return _NOT_CLUSTER_SETTING
    message = str(exc)
    if cluster and "Cluster mode is not enabled" in message:
        return _NOT_A_CLUSTER
    if sentinel and "unknown command 'SENTINEL'" in message:
        return _NOT_SENTINELS
    return None
