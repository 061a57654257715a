"""Crawl-delay and Request-rate become one per-site delay: read from any parser, validated, bounded."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from scrapy_robots.parsers.base import DirectiveNotSupported, RobotParser

logger = logging.getLogger(__name__)

CLAMP, SKIP = "clamp", "skip"


@dataclass(frozen=True)
class SiteDelay:
    """What robots.txt asked and what the crawl will apply."""

    asked: float  #: max(Crawl-delay, Request-rate seconds / requests)
    #: ``asked``, or ROBOTSTXT_MAX_CRAWL_DELAY when clamped; None when the site is skipped
    #: (no request of it goes: verdict.py ignores them all, and no slot is paced)
    applied: float | None
    clamped: bool = False
    skip: bool = False  #: above the maximum with ROBOTSTXT_CRAWL_DELAY_EXCEEDED = "skip"


def read_site_delay(parser: RobotParser, user_agent: str | bytes, maximum: float, exceeded: str) -> SiteDelay | None:
    """The delay ``parser``'s file asks of ``user_agent``, or None. Never raises:
    values that are not a usable number of seconds (NaN, inf, negative) are ignored."""
    return site_delay(_ask(parser.crawl_delay, user_agent), _ask(parser.request_rate, user_agent), maximum, exceeded)


def site_delay(delay: Any, rate: Any, maximum: float, exceeded: str) -> SiteDelay | None:
    """The delay asked by a ``Crawl-delay`` and a ``Request-rate`` (``(requests, seconds)``),
    either None, as :func:`read_site_delay` reads them."""
    candidates = []
    if _usable(delay):
        candidates.append(float(delay))
    if rate is not None:
        try:
            requests, seconds = float(rate[0]), float(rate[1])
        except (TypeError, ValueError, IndexError):
            requests = seconds = math.nan
        if requests > 0 and _usable(seconds):
            candidates.append(seconds / requests)
    if not candidates:
        return None
    asked = max(candidates)
    if asked <= maximum:
        return SiteDelay(asked=asked, applied=asked)
    if exceeded == SKIP:
        return SiteDelay(asked=asked, applied=None, skip=True)
    return SiteDelay(asked=asked, applied=maximum, clamped=True)


def _ask(method: Any, user_agent: str | bytes) -> Any:
    try:
        return method(user_agent)
    except DirectiveNotSupported:
        return None
    except Exception:  # a parser bug must not break the crawl
        logger.exception("%s raised on %s", type(method.__self__).__name__, method.__name__)
        return None


def _usable(value: Any) -> bool:
    try:
        return value is not None and math.isfinite(float(value)) and float(value) > 0
    except (TypeError, ValueError):
        return False
