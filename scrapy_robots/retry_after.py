"""A server's ``Retry-After`` on an unreachable robots.txt: when the next attempt may come.

A 429 (RFC 6585 4) or a 503 (RFC 9110 15.6.4) answer may say how long to wait before
asking again: ``Retry-After: 120`` (seconds) or ``Retry-After: Fri, 31 Dec 1999 23:59:59
GMT`` (an HTTP date), RFC 9110 10.2.3. The next attempt at the site is then not before
it, never later than ``ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY`` (a hostile value cannot
park a site for days), and never earlier than the retry schedule says. On any other
status the header has no such meaning, and is not read. Pure functions: the time is
passed in.
"""

from __future__ import annotations

from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from scrapy_robots.policy import Action

if TYPE_CHECKING:
    from scrapy_robots.cache.entry import RobotsEntry
    from scrapy_robots.config import RobotsConfig

#: The statuses whose Retry-After asks a client to wait before it asks again.
STATUSES = frozenset({429, 503})
#: A bound on the seconds read (a 400-digit value is "very long", not an overflow).
LONGEST = float(2**31)
#: The longest malformed value quoted in a log line.
QUOTED = 60


def parse_retry_after(value: str, now: float) -> float | None:
    """Seconds from ``now`` that a ``Retry-After`` value asks to wait: a non-negative
    integer of seconds, or an HTTP date (one in the past: 0). None for anything else
    (``1.5``, ``-1``, ``soon``): a malformed value is ignored."""
    text = value.strip()
    if text.isascii() and text.isdigit():
        return min(float(text), LONGEST)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # asctime's format has no zone: RFC 9110 5.6.7 says GMT
        when = when.replace(tzinfo=UTC)
    return min(max(0.0, when.timestamp() - now), LONGEST)


def read_retry_after(response: Any, now: float) -> tuple[float | None, str | None]:
    """The seconds a 429 or 503 ``response``'s Retry-After asks for, and the value when
    it is malformed (to say it was ignored); (None, None) without one or on another status."""
    if response is None or response.status not in STATUSES:
        return None, None
    raw = response.headers.get(b"Retry-After")
    if raw is None:
        return None, None
    value = raw.decode("latin-1")
    seconds = parse_retry_after(value, now)
    return seconds, (value[:QUOTED] if seconds is None else None)


def scheduled_delay(failures: int, config: RobotsConfig) -> float:
    """Seconds from an unreachable site's attempt number ``failures`` to the next, by
    the schedule: ``ROBOTSTXT_UNREACHABLE_RETRY_DELAY`` doubling, up to the maximum."""
    return min(config.retry_delay * 2 ** (failures - 1), config.retry_max_delay)


def next_delay(failures: int, config: RobotsConfig, retry_after: float | None) -> float:
    """The schedule's delay, or the server's when longer, up to the maximum."""
    scheduled = scheduled_delay(failures, config)
    if retry_after is None or retry_after <= scheduled:
        return scheduled
    return max(scheduled, min(retry_after, config.retry_max_delay))


def delayed_by_server(entry: RobotsEntry, config: RobotsConfig) -> bool:
    """Did the server's Retry-After put the entry's next attempt later than the schedule?"""
    if entry.retry_after is None or not entry.failures:
        return False
    return next_delay(entry.failures, config, entry.retry_after) > scheduled_delay(entry.failures, config)


def schedule_ends(entry: RobotsEntry, config: RobotsConfig) -> float:
    """When the schedule would make an unreachable site's last attempt, counted from its
    first failure: the longest its requests are held (ROBOTSTXT_UNREACHABLE_RETRY_DELAY,
    ROBOTSTXT_UNREACHABLE_RETRY_TIMES), whatever the server asks."""
    since = entry.unreachable_since if entry.unreachable_since is not None else entry.fetched_at
    return since + sum(scheduled_delay(attempt, config) for attempt in range(1, config.retry_times + 1))


def given_up_for_retry_after(entry: RobotsEntry, config: RobotsConfig) -> bool:
    """An unreachable site's requests would wait for its next attempt (within
    ROBOTSTXT_UNREACHABLE_RETRY_TIMES), but the server's Retry-After puts it past the
    schedule's last attempt: they are ignored at once instead of held
    (:func:`decision.worth_waiting`). A Retry-After within the schedule's time is waited for."""
    return (
        entry.action is Action.UNREACHABLE
        and entry.failures <= config.retry_times
        and delayed_by_server(entry, config)
        and entry.expires_at > schedule_ends(entry, config)
    )


def delay_source(entry: RobotsEntry, config: RobotsConfig) -> str:
    """What a log line adds after the next attempt's delay when the server set it:
    `` (Retry-After)``, or the value it asked when the maximum bounded it."""
    if not delayed_by_server(entry, config):
        return ""
    assert entry.retry_after is not None
    if entry.retry_after > config.retry_max_delay:
        return f" (Retry-After asks {entry.retry_after:.0f}s, bounded by ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY)"
    return " (Retry-After)"
