"""Requests waiting for their slot's turn, outside Scrapy's downloader.

A slot that keeps a delay (robots.txt's Crawl-delay or Request-rate, a "slow down"'s
pause or raised floor) starts one request per delay. Left to Scrapy, every request the
engine hands the downloader waits in the slot's queue: each holds one of
``CONCURRENT_REQUESTS`` places that no other site can use, and the crawl's close waits
for all of them (a Ctrl-C at Crawl-delay 3 took 56 s, one page every 3 s meanwhile).

Here they wait in a line per slot (:class:`SlotLines`), parked in the waiting room
(:mod:`scrapy_robots.pace.waiting`): outside the downloader's count, released at once
when the crawl closes (back to a ``JOBDIR``'s queue, else ignored with the reason), and
counted among their slot's active requests, as Scrapy counts the requests queued in a
slot, so that the downloader-aware queue sees the slot busy and the slot is not
collected. The head of the line leaves when the slot's turn has come (its last start
plus a gap drawn as Scrapy draws it, :meth:`~scrapy_robots.pace.turns.SlotTurns.drawn_gap`),
and Scrapy's own check then lets it start at once; the middleware judges it against
robots.txt again as it leaves.

What waits is bounded as what waits for robots.txt is (``ROBOTSTXT_MAX_WAITING``, the
room's bound): a request beyond it goes back to the scheduler, one priority lower, so
that a slow site cannot draw the whole scheduler into memory.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred

from scrapy_robots.pace.waiting import RoomFull

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from scrapy.http import Request

    from scrapy_robots.pace.slots import SlotPacer
    from scrapy_robots.pace.turns import SlotTurns
    from scrapy_robots.pace.waiting import WaitingRoom

#: What a request in a slot's line waits for (the close's reason names it).
TURN = "{site}'s turn in its pace had not come"


class _Line:
    """One slot's requests in the order they came, and the timer of its next turn."""

    __slots__ = ("timer", "waiters")

    def __init__(self) -> None:
        self.waiters: deque[Deferred[None]] = deque()
        self.timer: Any = None


class SlotLines:
    def __init__(self, slots: SlotPacer, turns: SlotTurns, room: WaitingRoom):
        self.slots = slots
        self.turns = turns
        self.room = room
        self.stats = room.stats
        # slot key -> its line; a line lives from a start until the slot's next turn
        self._lines: dict[str, _Line] = {}

    def __len__(self) -> int:
        """Requests waiting in the lines."""
        return sum(len(line.waiters) for line in self._lines.values())

    def waiting(self, key: str) -> int:
        """Requests waiting in slot ``key``'s line."""
        line = self._lines.get(key)
        return 0 if line is None else len(line.waiters)

    def turn(self, request: Request, site: str, state: str = TURN) -> Awaitable[None] | None:
        """None when ``request`` may start now (its slot's turn has come and nobody is ahead
        of it), else what it waits for in its slot's line (``state``: what the close's
        reason says it waited for)."""
        key = self.slots.key(request)
        line = self._lines.get(key)
        if line is None:
            now = self.slots.now()
            at = self.turns.next_start(key)
            if at <= now:
                self._started(key, None)
                return None
            line = self._lines[key] = _Line()
            self._arm(key, line, self.turns.next_start(key, self.turns.drawn_gap(key)) - now)
        return self._wait(key, line, request, site, state)

    async def _wait(self, key: str, line: _Line, request: Request, site: str, state: str) -> None:
        if self.room.full():  # ROBOTSTXT_MAX_WAITING: back to the scheduler (the middleware's overflow)
            raise RoomFull
        self.stats.inc_value("robotstxt/pace/waited")
        turn: Deferred[None] = Deferred()
        line.waiters.append(turn)
        try:
            with self.slots.holding_slot(request):
                await self.room.wait(request, site, state, turn)
        finally:
            if turn in line.waiters:  # released by the close, not by its turn
                line.waiters.remove(turn)

    def _wake(self, key: str) -> None:
        line = self._lines.get(key)
        if line is None:
            return
        line.timer = None
        waiters = line.waiters
        while waiters and waiters[0].called:  # the close released it (its source cancelled)
            waiters.popleft()
        if not waiters:
            del self._lines[key]  # the turn passed unused: the next request goes at once
            return
        now = self.slots.now()
        at = self.turns.next_start(key)
        if at > now:  # a request that skipped the line started meanwhile, or a pause came
            self._arm(key, line, at - now)
            return
        self._started(key, line)
        waiters.popleft().callback(None)

    def _started(self, key: str, line: _Line | None) -> None:
        """A request of slot ``key`` starts now: the slot's next turn is one drawn gap
        later; until then, whoever comes waits in the line."""
        gap = self.turns.drawn_gap(key)
        if gap <= 0:  # a slot without a delay, its pause over: no line
            if line is not None and not line.waiters:
                del self._lines[key]
            elif line is not None:
                self._arm(key, line, 0.0)
            return
        if line is None:
            line = self._lines[key] = _Line()
        self._arm(key, line, gap)

    def _arm(self, key: str, line: _Line, seconds: float) -> None:
        from twisted.internet import reactor  # not at import: Scrapy 2.13 installs its reactor later

        if line.timer is not None and line.timer.active():
            line.timer.cancel()
        line.timer = reactor.callLater(max(0.0, seconds), self._wake, key)

    def close(self) -> None:
        """The crawl closed: no timer left behind (the waiting room released the waiters)."""
        for line in self._lines.values():
            if line.timer is not None and line.timer.active():
                line.timer.cancel()
        self._lines.clear()
