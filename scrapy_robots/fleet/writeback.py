"""The fleet's robots.txt records written back after Redis lost them.

A FLUSHALL, or a Redis restarted without its data, empties the fleet's records while
the crawlers still hold fresh copies in their local tiers (and answer from there
without asking Redis): without a write-back, every other crawler would download those
robots.txt files again. Each crawler notices the loss through an epoch key, which the
first crawler to find it missing sets to a new value: on one Redis,
``<prefix>:robots-epoch``; on a Redis Cluster, one per primary,
``<prefix>:robots-epoch:{<n>}`` with the first ``n`` whose hash slot that primary serves
(from the client's slot map, so every crawler picks the same keys), so that a loss on any
node is noticed. A crawler reads them every ``CHECK_INTERVAL`` seconds (one pipelined
round trip; on a cluster, one per node, in parallel), and when one changed, writes back
each fresh entry of its local tier that Redis lacks, ``BATCH`` sites per pipelined round
trip, never over a record that another crawler wrote meanwhile. It says so in one line
and the ``robotstxt/fleet/records_lost`` (nodes found emptied) and
``robotstxt/fleet/written_back`` stats.

An entry this crawler saved while Redis was away (an outage, a failover, a first call
that timed out) is written back the same way at the next check that Redis answers: the
crawlers that waited for its fetch read it then, instead of downloading it again.

Not noticed on a cluster: a node that lost its data and whose slots then moved before
any crawler read its epoch key (the key moves with the slot, missing: read as a node
met for the first time, which writes back too, without the WARNING).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from scrapy_robots.fleet.link import FleetUnavailable, RedisLink

if TYPE_CHECKING:
    from scrapy_robots.cache import RobotsEntry

logger = logging.getLogger(__name__)

#: Seconds between two reads of the epoch key.
CHECK_INTERVAL = 1.0
#: Sites written back per round trip.
BATCH = 100
#: The most hash tags tried for a primary's epoch key (a primary serves 1 slot in 16384 at least).
TAGS = 1 << 17

# The epoch: the value found, or a new one set now. Returns the epoch.
EPOCH = """
local found = redis.call('GET', KEYS[1])
if found then
  return found
end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
"""

#: A record as the storage writes it: the key's value and TTL in ms. It is written back
#: only where there is none (``SET NX``: another crawler's may be newer).
Value = Callable[["RobotsEntry"], tuple[bytes, int]]


class RecordsWriteBack:
    """Watch the epoch key; write the local tier's fresh entries back when it changed.

    ``entries(sites)`` yields the local tier's entries (of ``sites``, or all), ``key(site)`` names a site's record,
    ``value(entry)`` gives what the storage writes for it."""

    def __init__(
        self,
        link: RedisLink,
        prefix: str,
        entries: Callable[[list[str] | None], Iterable[RobotsEntry]],
        key: Callable[[str], str],
        value: Value,
        count: Callable[[str, int], None],
    ):
        self.link = link
        self.epoch_key = f"{prefix}:robots-epoch"
        #: On a cluster: a primary's name -> the hash tag of its epoch key.
        self._tags: dict[str, int] = {}
        self.entries = entries
        self.key = key
        self.value = value
        self.count = count
        #: epoch key -> the epoch this crawler's entries are known under (none before the first read).
        self.epochs: dict[str, bytes] = {}
        #: Sites whose entry could not be shared when saved (Redis away): shared at the next check.
        self._unshared: dict[str, None] = {}
        self._watch: asyncio.Task[None] | None = None
        #: Called before records are shared (the fleet's pacer writes the starts Redis
        #: missed meanwhile first: whoever waited for a record reserves after them).
        self.before_share: Callable[[], Awaitable[None]] | None = None

    def start(self) -> None:
        """Start watching, once, on the running asyncio loop (Scrapy's reactor's)."""
        if self._watch is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # not on the loop yet: the next call starts it
        self._watch = loop.create_task(self._run())

    def unshared(self, site: str) -> None:
        """``site``'s entry was kept here while Redis was away: share it when Redis answers."""
        self._unshared[site] = None

    async def share_unshared(self) -> None:
        """One try (the crawl closes) at sharing what could not be shared: a crawler that
        closes during an outage leaves those sites to be fetched again by whoever needs them."""
        if not self._unshared:
            return
        sites = list(self._unshared)
        try:
            if self.before_share is not None:
                await self.before_share()
            _, written = await self._write_back(sites)
        except FleetUnavailable:
            return
        self._unshared.clear()
        if written:
            self.count("written_back", written)

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()

    async def _run(self) -> None:
        while True:
            try:
                await self.check()
            except FleetUnavailable:
                pass  # the link says so; the next check tries again
            await asyncio.sleep(CHECK_INTERVAL)

    async def check(self) -> None:
        """Read the epochs; write back what Redis lacks when one changed. Raises
        :class:`~scrapy_robots.fleet.link.FleetUnavailable`."""
        keys = await self._epoch_keys()

        def build(pipe: Any) -> None:
            for key in keys:
                # EVAL, not EVALSHA: a pipeline cannot load a script that a node lost (restarted).
                pipe.eval(EPOCH, 1, key, uuid.uuid4().hex)

        found = dict(zip(keys, await self.link.call(self.link.piped(build))))
        lost = sum(1 for key, epoch in found.items() if key in self.epochs and self.epochs[key] != epoch)
        # A primary met after the first check (its slots moved to it, maybe emptied) is written back to as well.
        met = bool(self.epochs) and any(key not in self.epochs for key in found)
        if lost or met:
            unshared = None  # every fresh entry held
        elif self._unshared:
            unshared = list(self._unshared)  # those saved while Redis was away
        else:
            self.epochs.update(found)
            return
        if self.before_share is not None:
            await self.before_share()
        held, written = await self._write_back(unshared)
        for site in unshared or ():
            self._unshared.pop(site, None)
        self.epochs.update(found)
        if lost:
            self.count("records_lost", lost)
        if written:
            self.count("written_back", written)
        if lost:
            logger.warning(
                "Redis at %(url)s lost the fleet's robots.txt records (flushed, or restarted without its "
                "data%(nodes)s): this crawler wrote back %(written)d of the %(held)d fresh site(s) it holds (the "
                "others were there already)",
                {
                    "url": self.link.url,
                    "written": written,
                    "held": held,
                    "nodes": f"; {lost} of the cluster's {len(keys)} primaries" if len(keys) > 1 else "",
                },
            )
        elif written:
            logger.info(
                "Redis at %(url)s: this crawler shared %(written)d robots.txt record(s) it fetched while Redis "
                "could not be used",
                {"url": self.link.url, "written": written},
            )

    async def _epoch_keys(self) -> list[str]:
        """The epoch keys: one on a single Redis; on a cluster, one per primary, in a hash
        slot it serves (the slot map as the client knows it now)."""
        client = self.link.client
        if not hasattr(client, "get_primaries"):
            return [self.epoch_key]
        if not client.get_primaries():
            await self.link.call(client.initialize)  # the client learns the slot map at its first call
        keys = []
        for node in client.get_primaries():
            tag = self._tags.get(node.name)
            if tag is None or self._node_of(tag) != node.name:
                tag = next((t for t in range(TAGS) if self._node_of(t) == node.name), None)
                if tag is None:
                    continue  # a primary without slots holds no records
                self._tags[node.name] = tag
            keys.append(self._tagged(tag))
        return keys

    def _tagged(self, tag: int) -> str:
        return f"{self.epoch_key}:{{{tag}}}"

    def _node_of(self, tag: int) -> str | None:
        """The name of the primary that serves the tagged key's slot, as the client knows it."""
        from redis.exceptions import SlotNotCoveredError

        try:
            return self.link.client.get_node_from_key(self._tagged(tag)).name
        except SlotNotCoveredError:
            return None  # a slot no node serves now

    async def _write_back(self, sites: list[str] | None = None) -> tuple[int, int]:
        """(fresh entries held, records written): the fresh entries Redis lacks (of
        ``sites``, or all), written."""
        now = time.time()
        held = written = 0
        batch: list[RobotsEntry] = []
        for entry in self.entries(sites):
            if not entry.fresh(now):
                continue
            held += 1
            batch.append(entry)
            if len(batch) == BATCH:
                written += await self._write(batch)
                batch = []
        if batch:
            written += await self._write(batch)
        return held, written

    async def _write(self, batch: list[RobotsEntry]) -> int:

        values = [(self.key(entry.site), *self.value(entry)) for entry in batch]

        def build(pipe: Any) -> None:
            for key, value, ttl_ms in values:
                pipe.set(key, value, nx=True, px=max(ttl_ms, 1))

        # Sent again after a late timeout, a SET that had landed answers None: counted as not written.
        results = await self.link.call(self.link.piped(build))
        return sum(1 for result in results if result)
