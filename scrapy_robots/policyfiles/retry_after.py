"""A server's ``Retry-After`` on an unreachable robots.txt: when the next attempt may come.

A 429 (RFC 6585 4) or a 503 (RFC 9110 15.6.4) answer may say how long to wait before
asking again: ``Retry-After: 120`` (seconds) or ``Retry-After: Fri, 31 Dec 1999 23:59:59
GMT`` (an HTTP date), RFC 9110 10.2.3. The next attempt at the site is then not before
it, never later than ``ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY`` (a hostile value cannot
park a site for days), and never earlier than the retry schedule says. On any other
status the header has no such meaning, and is not read (the header itself is read by
:mod:`scrapy_robots.status.retry_after`). Pure functions: the time is passed in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robots.status.policy import Action

if TYPE_CHECKING:
    from scrapy_robots.cache.entry import RobotsEntry
    from scrapy_robots.settings.config import RobotsConfig

#: What says why an attempt the schedule timed comes past its last: an earlier attempt's
#: Retry-After moved the attempts after it.
EARLIER = " (an earlier Retry-After moved the attempts later)"
#: Seconds of rounding allowed between the next attempt and the schedule's last.
SLACK = 1e-3


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
    """When the schedule makes an unreachable site's last attempt: the longest its
    requests are held (ROBOTSTXT_UNREACHABLE_RETRY_DELAY, ROBOTSTXT_UNREACHABLE_RETRY_TIMES),
    whatever the server asks. Set at the first failure; each later attempt moves it by
    the time that attempt came and downloaded after it was due (a timeout, a crawl that
    needed the site later), never by a Retry-After (``entry.schedule_end``). A record of
    a version that did not keep it: counted from the first failure."""
    if entry.schedule_end is not None:
        return entry.schedule_end
    since = entry.unreachable_since if entry.unreachable_since is not None else entry.fetched_at
    return since + schedule_total(config)


def schedule_total(config: RobotsConfig) -> float:
    """Seconds from an unreachable site's first failure to its last attempt, by the schedule."""
    return sum(scheduled_delay(attempt, config) for attempt in range(1, config.retry_times + 1))


def next_schedule_end(previous: RobotsEntry | None, now: float, config: RobotsConfig) -> float:
    """``schedule_ends`` of an unreachable outcome at ``now`` after ``previous``."""
    if previous is None or not previous.failures:
        return now + schedule_total(config)
    if previous.schedule_end is not None:
        ends = previous.schedule_end
    else:  # a record of a version that did not keep it: the attempts so far were on time
        remaining = range(previous.failures + 1, config.retry_times + 1)
        ends = previous.expires_at + sum(scheduled_delay(attempt, config) for attempt in remaining)
    # The attempt was due at previous.expires_at: the time it took to come and to
    # download moves the schedule; a Retry-After that lengthened the wait does not.
    return ends + max(0.0, now - previous.expires_at)


def given_up_for_retry_after(entry: RobotsEntry, config: RobotsConfig) -> bool:
    """An unreachable site's requests would wait for its next attempt (within
    ROBOTSTXT_UNREACHABLE_RETRY_TIMES), but it comes past the schedule's last attempt:
    they are ignored at once instead of held (:func:`decision.worth_waiting`). Only a
    Retry-After does that, this attempt's or an earlier one's (the attempts after a
    lengthened one keep the schedule's delays, and so come later). A Retry-After within
    the schedule's time is waited for."""
    if entry.action is not Action.UNREACHABLE or entry.failures > config.retry_times:
        return False
    if entry.schedule_end is None:  # a record of a version that did not keep it
        return delayed_by_server(entry, config) and entry.expires_at > schedule_ends(entry, config)
    return entry.expires_at > entry.schedule_end + SLACK


def delay_source(entry: RobotsEntry, config: RobotsConfig) -> str:
    """What a log line adds after the next attempt's delay when the server set it:
    `` (Retry-After)``, or the value it asked when the maximum bounded it."""
    if not delayed_by_server(entry, config):
        return ""
    assert entry.retry_after is not None
    if entry.retry_after > config.retry_max_delay:
        return f" (Retry-After asks {entry.retry_after:.0f}s, bounded by ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY)"
    return " (Retry-After)"
