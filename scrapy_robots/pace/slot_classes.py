"""The subclasses of Scrapy's downloader ``Slot`` that :mod:`scrapy_robots.pace.slots` gives a
live slot (by changing its ``__class__``): a delay never under a floor, or a fleet's exact
interval; and how a slot's delay and jitter are read, across Scrapy's versions.

Only ``slots.py`` installs them; together the two are the code that knows Scrapy's ``Slot``.
"""

from __future__ import annotations

from collections import deque
from typing import Any


def jitter_of(slot: Any) -> float:
    """The magnitude of the random variation of ``slot``'s delay: ``jitter`` (Scrapy 2.17 on),
    0.5 for ``randomize_delay`` (before)."""
    jitter = getattr(type(slot), "jitter", None)
    if jitter is not None:  # a field of the dataclass: read it on the slot
        return float(slot.jitter or 0.0)
    return 0.5 if getattr(slot, "randomize_delay", False) else 0.0


def floored_slot_class(slot_class: Any, floor: float) -> type:
    """A subclass of Scrapy's ``Slot`` whose delay never drops below ``floor``.

    ``Slot`` has ``__slots__``, so the floor is a class attribute (one class per
    distinct delay) and the live slot only changes its ``__class__``: its queue,
    timers and bookkeeping stay as Scrapy holds them.

    Its delay is the least its jitter could draw, and no draw: the package's line
    (pace/lines.py) draws each gap, at least that, and hands the slot its next request
    when the gap has passed, so Scrapy's own check lets it go at once. A request that
    skips the line (``dont_obey_robotstxt``) still keeps the floor.
    """

    def download_delay(self: Any) -> float:
        # AutoThrottle acts on top of the floor: it may lengthen a gap, never shorten it
        # below what robots.txt asked.
        return max(floor, self.delay * (1.0 - min(jitter_of(self), 1.0)))

    return type(
        f"Floored{slot_class.__name__}",
        (slot_class,),
        {"__slots__": (), "floor": floor, "download_delay": download_delay, "unfloored": slot_class},
    )


def fleet_slot_class(slot_class: Any, floor: float) -> type:
    """A ``Slot`` for a site the fleet paces: exactly ``floor`` between its own starts.

    The fleet's reservations space the crawlers; this slot only keeps this crawler's
    own starts a floor apart (across a Redis outage and back), with no jitter nor
    AutoThrottle, which would push a start towards another crawler's reservation.
    """

    def download_delay(self: Any) -> float:
        return floor

    return type(
        f"FleetPaced{slot_class.__name__}",
        (slot_class,),
        {"__slots__": (), "floor": floor, "fleet": True, "download_delay": download_delay, "unfloored": slot_class},
    )


class _StartingQueue(deque):  # type: ignore[type-arg]
    """A slot's queue that remembers the requests it handed out until their download starts."""

    def __init__(self, items: Any = ()) -> None:
        super().__init__(items)
        self.starting: set[Any] = set()

    def popleft(self) -> Any:
        item = super().popleft()
        self.starting.add(item[0])
        return item


class _Transferring(set):  # type: ignore[type-arg]
    """A slot's transfers, counting those its queue handed out and that have not started yet."""

    def __init__(self, items: Any, starting: set[Any]) -> None:
        super().__init__(items)
        self.starting = starting

    def add(self, request: Any) -> None:
        self.starting.discard(request)
        super().add(request)

    def __len__(self) -> int:
        return super().__len__() + len(self.starting)


def count_starts(slot: Any) -> Any:
    """Make ``slot`` count a request as transferring from the moment its queue hands it out.

    Scrapy 2.16 on (asyncio) starts each download as a task: ``_process_queue`` pops requests
    ``while slot.free_transfer_slots() > 0``, and a popped request joins ``transferring`` only
    when its task runs, a turn later. Requests that reach a slot in one turn (those that
    waited for the site's robots.txt, released together) would all leave at once, past
    ``CONCURRENT_REQUESTS_PER_DOMAIN``. Counted from the pop, the limit holds. Scrapy's
    ``Slot`` has ``__slots__``: its ``queue`` and ``transferring`` are replaced, their
    contents kept. Returns ``slot``.
    """
    queue = getattr(slot, "queue", None)
    if isinstance(queue, _StartingQueue) or not isinstance(queue, deque):
        return slot
    transferring = getattr(slot, "transferring", None)
    if not isinstance(transferring, set):
        return slot
    counted = _StartingQueue(queue)
    slot.queue = counted
    slot.transferring = _Transferring(transferring, counted.starting)
    return slot


def take_queued(slot: Any) -> Any:
    """The first (request, deferred) of ``slot``'s queue, taken out without counting a start
    (it leaves the slot; it is not downloaded from here)."""
    return deque.popleft(slot.queue)


def least_delay(slot: Any) -> float:
    """The least delay ``slot`` keeps between two starts: its floor, or its delay less its jitter."""
    floor = getattr(type(slot), "floor", None)
    if floor is not None:
        return float(slot.download_delay())  # the floored classes draw nothing
    return float(slot.delay) * (1.0 - min(jitter_of(slot), 1.0))
