"""The fleet's robots.txt records written back after Redis lost them.

A FLUSHALL, or a Redis restarted without its data, empties the fleet's records while
the crawlers still hold fresh copies in their local tiers (and answer from there
without asking Redis): without a write-back, every other crawler would download those
robots.txt files again. Each crawler notices the loss through one key,
``<prefix>:robots-epoch``, which the first crawler to find it missing sets to a new
value: a crawler reads it every ``CHECK_INTERVAL`` seconds (one round trip), and when it
changed, writes back each fresh entry of its local tier that Redis lacks, ``BATCH``
sites per pipelined round trip, never over a record that another crawler wrote
meanwhile. It says so in one line and the ``robotstxt/fleet/records_lost`` and
``robotstxt/fleet/written_back`` stats.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from scrapy_robots.fleet.link import FleetUnavailable, RedisLink

if TYPE_CHECKING:
    from scrapy_robots.cache import RobotsEntry

logger = logging.getLogger(__name__)

#: Seconds between two reads of the epoch key.
CHECK_INTERVAL = 1.0
#: Sites written back per round trip.
BATCH = 100

# The epoch: the value found, or a new one set now. Returns the epoch.
EPOCH = """
local found = redis.call('GET', KEYS[1])
if found then
  return found
end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
"""

# A record written only where there is none (another crawler's may be newer).
# ARGV: meta, body, '1' if there is a body, the key's TTL in ms. Returns 1 if written.
PUT_ABSENT = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'meta', ARGV[1])
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 'body', ARGV[2])
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
"""

#: A record as the storage writes it: the hash's fields and the key's TTL in ms.
Fields = Callable[["RobotsEntry"], tuple[dict[Any, Any], int]]


class RecordsWriteBack:
    """Watch the epoch key; write the local tier's fresh entries back when it changed.

    ``entries()`` yields the local tier's entries, ``key(site)`` names a site's record,
    ``fields(entry)`` gives what the storage writes for it."""

    def __init__(
        self,
        link: RedisLink,
        prefix: str,
        entries: Callable[[], Iterable[RobotsEntry]],
        key: Callable[[str], str],
        fields: Fields,
        count: Callable[[str, int], None],
    ):
        self.link = link
        self.epoch_key = f"{prefix}:robots-epoch"
        self.entries = entries
        self.key = key
        self.fields = fields
        self.count = count
        #: The epoch this crawler's entries are known under; None before the first read.
        self.epoch: bytes | None = None
        self._epoch: Any = link.client.register_script(EPOCH)
        self._put_absent: Any = link.client.register_script(PUT_ABSENT)
        self._watch: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start watching, once, on the running asyncio loop (Scrapy's reactor's)."""
        if self._watch is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # not on the loop yet: the next call starts it
        self._watch = loop.create_task(self._run())

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
        """Read the epoch; write back what Redis lacks when it changed. Raises
        :class:`~scrapy_robots.fleet.link.FleetUnavailable`."""
        epoch = await self.link.call(self._epoch, keys=[self.epoch_key], args=[uuid.uuid4().hex])
        if epoch == self.epoch:
            return
        # The first read: entries fetched while Redis could not be had are shared now.
        lost = self.epoch is not None
        held, written = await self._write_back()
        self.epoch = epoch
        if lost:
            self.count("records_lost", 1)
        if written:
            self.count("written_back", written)
        if lost:
            logger.warning(
                "Redis at %(url)s lost the fleet's robots.txt records (flushed, or restarted without its data): "
                "this crawler wrote back %(written)d of the %(held)d fresh site(s) it holds (the others were "
                "there already)",
                {"url": self.link.url, "written": written, "held": held},
            )
        elif written:
            logger.info(
                "Redis at %(url)s: this crawler shared %(written)d robots.txt record(s) it fetched while Redis "
                "could not be used",
                {"url": self.link.url, "written": written},
            )

    async def _write_back(self) -> tuple[int, int]:
        """(fresh entries held, records written): the fresh entries Redis lacks, written."""
        now = time.time()
        held = written = 0
        batch: list[RobotsEntry] = []
        for entry in self.entries():
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
        pipe = self.link.client.pipeline(transaction=False)
        for entry in batch:
            mapping, ttl_ms = self.fields(entry)
            body = mapping.get("body")
            await self._put_absent(  # queued on the pipeline: sent with the batch
                keys=[self.key(entry.site)],
                args=[mapping["meta"], body if body is not None else b"", 1 if body is not None else 0, ttl_ms],
                client=pipe,
            )
        results = await self.link.call(pipe.execute)
        return sum(1 for result in results if result == 1)
