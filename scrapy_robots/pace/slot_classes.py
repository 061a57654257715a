"""The subclasses of Scrapy's downloader ``Slot`` that :mod:`scrapy_robots.pace.slots` gives a
live slot (by changing its ``__class__``): a delay never under a floor, or a fleet's exact
interval; and how a slot's delay and jitter are read, across Scrapy's versions.

Only ``slots.py`` installs them; together the two are the code that knows Scrapy's ``Slot``.
"""

from __future__ import annotations

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


def least_delay(slot: Any) -> float:
    """The least delay ``slot`` keeps between two starts: its floor, or its delay less its jitter."""
    floor = getattr(type(slot), "floor", None)
    if floor is not None:
        return float(slot.download_delay())  # the floored classes draw nothing
    return float(slot.delay) * (1.0 - min(jitter_of(slot), 1.0))
