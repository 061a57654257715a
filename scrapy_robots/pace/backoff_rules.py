"""A site that says "slow down" on a page: 429, or 503 with ``Retry-After``; the rules.

robots.txt is one way a site sets a crawler's pace; the answer to a page is the other:
``429 Too Many Requests`` (RFC 6585 4), or ``503 Service Unavailable`` with
``Retry-After`` (RFC 9110 15.6.4, 10.2.3). :class:`Backoff` turns those answers into
what the downloader slot of the site must do, the shape of TCP's congestion control:

- a **pause**: no request of the slot starts before the time the server asked
  (``Retry-After``, seconds or an HTTP date), bounded by ``ROBOTSTXT_BACKOFF_MAX_PAUSE``;
  without the header, ``ROBOTSTXT_BACKOFF_PAUSE`` doubled at each consecutive throttle,
  lengthened by a random quarter at most (so that crawlers paused together do not come
  back together), bounded the same way;
- a **raised floor** (multiplicative decrease of the rate): the slot's delay is
  multiplied by ``ROBOTSTXT_BACKOFF_FACTOR`` from at least ``MIN_DELAY``, and comes back
  to the configured pace (``DOWNLOAD_DELAY``, Crawl-delay) in ``ROBOTSTXT_BACKOFF_RECOVERY``
  equal steps, one per answer that is not a throttle (additive increase).

Answers in flight when a throttle came (several requests sent together, throttled
together) are one event: they may lengthen the pause, never raise the floor again.

Pure state, keyed by the downloader slot (Scrapy's per-host pace): the time is passed
in, the random draw too; so are the words of the log lines. The extension that hears the
answers is :mod:`scrapy_robots.pace.backoff`; the pace that holds the pause is
:mod:`scrapy_robots.pace.pacing`, applied to the slot by :mod:`scrapy_robots.pace.slots`.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy_robots.status.retry_after import QUOTED, parse_retry_after

if TYPE_CHECKING:
    from scrapy_robots.settings.parts import BackoffConfig


#: Statuses that pause a site with or without Retry-After; any other listed status
#: pauses only when it carries one.
ALWAYS = frozenset({429})
#: The least delay a raised floor starts from: a site crawled at no delay that throttles
#: is paced at 1 s, then 2 s, ...
MIN_DELAY = 1.0
#: The largest random lengthening of a pause without Retry-After, as a fraction of it.
JITTER = 0.25
#: Slots whose state is kept at most (a broad crawl's throttling sites); the oldest
#: recovered one goes first.
MAX_SLOTS = 10_000


@dataclass(frozen=True)
class Pause:
    """A throttle's outcome, for the slot and the log line."""

    until: float  #: no request of the slot starts before (the caller's clock)
    seconds: float  #: the pause, from the answer
    asked: float | None  #: what Retry-After asked (before the bound), None without one
    floor: float  #: the slot's delay from now on
    was: float  #: the slot's delay before this answer: the configured one, or a floor raised before
    first: bool  #: a new event, not an answer to a request sent before the last one (one INFO line each)


@dataclass
class _SlotState:
    throttles: int = 0  #: consecutive throttles (events, not answers)
    since: float = 0.0  #: when the last throttle event began
    until: float = 0.0
    floor: float = 0.0  #: the raised delay, 0 when none
    step: float = 0.0  #: what each answer that is not a throttle takes off the floor


class Backoff:
    """What the throttling answers of each slot ask of it."""

    def __init__(self, config: BackoffConfig, draw: Callable[[], float] = random.random):
        self.config = config
        self.draw = draw
        self._slots: OrderedDict[str, _SlotState] = OrderedDict()

    def throttles(self, status: int, retry_after: bytes | None) -> bool:
        """Is this answer a "slow down"? A 429 (and any status of ALWAYS), or another
        status of ROBOTSTXT_BACKOFF_HTTP_CODES that carries Retry-After."""
        if status not in self.config.codes:
            return False
        return status in ALWAYS or retry_after is not None

    def throttled(
        self, key: str, base: float, retry_after: bytes | None, sent: float, now: float, wall: float
    ) -> Pause:
        """A throttling answer for slot ``key``, whose configured delay is ``base``, to a
        request sent at ``sent`` (``now``'s clock); ``wall`` is ``time.time()``, which an
        HTTP-date Retry-After is read against."""
        config = self.config
        state = self._slots.get(key)
        if state is None:
            state = self._slots[key] = _SlotState()
            self._trim()
        was = max(base, state.floor)
        asked = None
        if retry_after is not None:
            asked = parse_retry_after(retry_after.decode("latin-1"), wall)
        same_event = state.throttles and sent < state.since
        if not same_event:
            state.throttles += 1
            state.since = now
            raised = max(base, state.floor, MIN_DELAY) * config.factor
            state.floor = min(raised, max(config.max_pause, base))
            state.step = (state.floor - base) / config.recovery
        if asked is not None:
            seconds = asked
        else:
            seconds = config.pause * 2 ** (state.throttles - 1) * (1 + JITTER * self.draw())
        seconds = min(seconds, config.max_pause)
        state.until = max(state.until, now + seconds)
        return Pause(state.until, seconds, asked, state.floor, was, not same_event)

    def answered(self, key: str, base: float, sent: float) -> float | None:
        """An answer of slot ``key`` that is not a throttle, to a request sent at
        ``sent``: one step back toward the configured delay ``base``. The floor left (None
        when back at the pace). An answer to a request sent before the last throttle
        says nothing of the site now: it changes nothing."""
        state = self._slots.get(key)
        if state is None:
            return None
        if sent < state.since:
            return state.floor or None
        state.throttles = 0
        state.floor -= state.step
        if state.floor <= base:
            del self._slots[key]
            return None
        return state.floor

    def paused_until(self, key: str) -> float:
        state = self._slots.get(key)
        return state.until if state is not None else 0.0

    def floor(self, key: str) -> float | None:
        state = self._slots.get(key)
        return state.floor if state is not None and state.floor else None

    def __len__(self) -> int:
        return len(self._slots)

    def export(self, now: float, wall: float) -> dict[str, dict[str, float]]:
        """Every slot still paused or slowed, as JSON data: the pause's end in wall time
        (``wall`` is ``now`` on the wall clock) and the floor (its steps back are counted
        again from the configured delay when restored: :meth:`adopt`)."""
        return {
            key: {"until": wall + state.until - now, "floor": state.floor}
            for key, state in self._slots.items()
            if state.until > now or state.floor
        }

    def exported(self, data: dict[str, Any], wall: float) -> list[tuple[str, float, float]]:
        """The slots of :meth:`export` (another run's), as (key, floor, seconds of pause
        left, within ROBOTSTXT_BACKOFF_MAX_PAUSE). A malformed item is skipped."""
        found = []
        for key, item in data.items():
            try:
                left = float(item["until"]) - wall
                floor = float(item["floor"])
            except (KeyError, TypeError, ValueError):
                continue
            if isinstance(key, str) and floor >= 0:
                found.append((key, floor, min(max(left, 0.0), self.config.max_pause)))
        return found

    def adopt(self, key: str, base: float, floor: float, left: float, now: float) -> float | None:
        """Slot ``key`` paused ``left`` seconds, then paced at ``floor`` (back to ``base`` in
        the usual steps), unless it is paused longer or slower already: the floor now."""
        state = self._slots.get(key)
        if state is None:
            state = self._slots[key] = _SlotState()
            self._trim()
        state.throttles = max(state.throttles, 1)
        state.since = max(state.since, now)
        state.until = max(state.until, now + min(left, self.config.max_pause))
        if floor > max(state.floor, base):
            state.floor = floor
            state.step = (floor - base) / self.config.recovery
        return state.floor or None

    def _trim(self) -> None:
        while len(self._slots) > MAX_SLOTS:
            self._slots.popitem(last=False)


#: The INFO line of a slot told to slow down, once per event; its arguments: :func:`slowed_down`.
SLOWED_DOWN = (
    "%(site)s says slow down (HTTP %(status)d): its requests paused %(seconds).1fs (%(source)s), "
    "then at a delay of %(floor)gs (was %(was)gs); %(slot)s"
)
#: The INFO line of a slot's first answer after its pause.
ANSWERS_AGAIN = (
    "%(site)s answers again after its pause (%(paused).1fs since the first slow down): its delay "
    "is %(floor)s, back to %(base)gs in equal steps (ROBOTSTXT_BACKOFF_RECOVERY); %(slot)s"
)


def slowed_down(site: str, status: int, pause: Pause, retry_after: bytes | None, slot: str) -> dict[str, Any]:
    """The arguments of :data:`SLOWED_DOWN`: ``site``'s answer ``status`` with ``retry_after``
    made ``pause``; ``slot`` is :func:`slot_text`'s."""
    doubled = "ROBOTSTXT_BACKOFF_PAUSE, doubled per consecutive slow down"
    if pause.asked is None and retry_after is not None:
        value = retry_after.decode("latin-1")[:QUOTED]
        source = f"Retry-After {value!r} ignored: neither seconds nor an HTTP date; {doubled}"
    elif pause.asked is None:
        source = f"no Retry-After: {doubled}"
    elif pause.asked > pause.seconds:
        source = f"Retry-After asks {pause.asked:g}s, bounded by ROBOTSTXT_BACKOFF_MAX_PAUSE"
    else:
        source = "Retry-After"
    return {
        "site": site,
        "status": status,
        "seconds": pause.seconds,
        "source": source,
        "floor": pause.floor,
        "was": pause.was,
        "slot": slot,
    }


def slot_text(key: str, host: str | None, what: str) -> str:
    """The pause holds the downloader slot ``key``, not one site: say which, and what it
    spans (Scrapy's default slot is the host: every port and scheme of it)."""
    spans = "every port of the host" if key == host else "every request Scrapy puts in it"
    return f"the slot {key!r} {what} ({spans})"
