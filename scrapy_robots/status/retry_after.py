"""A 429 or 503's ``Retry-After`` read: seconds or an HTTP date (RFC 9110 10.2.3), a
malformed value ignored. Pure functions, the time passed in: the unreachable backoff of a
policy file (:mod:`scrapy_robots.policyfiles.retry_after`) and a page's "slow down"
(:mod:`scrapy_robots.pace.backoff_rules`) read the header the same way."""

from __future__ import annotations

from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any

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
