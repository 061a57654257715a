"""The values of the non-rule directives: Crawl-delay, Request-rate, Visit-time, Clean-param.

Each parser returns ``None`` for a value it cannot read; a malformed line is
skipped, never an error.
"""

from __future__ import annotations

import math
import re
from datetime import time
from typing import Final, NamedTuple


class RequestRate(NamedTuple):
    """``Request-rate: 3/10s``: at most ``requests`` requests per ``seconds`` seconds."""

    requests: int
    seconds: float


class VisitTime(NamedTuple):
    """``Visit-time: 0100-0545``: crawl only between ``start`` and ``end`` (UTC)."""

    start: time
    end: time


class CleanParam(NamedTuple):
    """``Clean-param: ref&sid /forum/``: query parameters that do not change the
    page, for URLs whose path starts with ``path`` (every URL when ``None``)."""

    params: tuple[str, ...]
    path: str | None


_RATE: Final = re.compile(r"\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)\s*([smhd]?)", re.IGNORECASE)
_UNIT_SECONDS: Final = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_TIME_RANGE: Final = re.compile(r"\s*(\d\d):?(\d\d)\s*[- ]\s*(\d\d):?(\d\d)")


def parse_crawl_delay(value: str) -> float | None:
    try:
        delay = float(value)
    except ValueError:
        return None
    if not math.isfinite(delay) or delay < 0:
        return None
    return delay


def parse_request_rate(value: str) -> RequestRate | None:
    match = _RATE.match(value)
    if not match:
        return None
    requests = int(match.group(1))
    seconds = float(match.group(2)) * _UNIT_SECONDS[match.group(3).lower()]
    if requests <= 0 or seconds <= 0 or not math.isfinite(seconds):
        return None
    return RequestRate(requests, seconds)


def parse_visit_time(value: str) -> VisitTime | None:
    match = _TIME_RANGE.match(value)
    if not match:
        return None
    h1, m1, h2, m2 = (int(part) for part in match.groups())
    if h1 > 23 or h2 > 23 or m1 > 59 or m2 > 59:
        return None
    return VisitTime(time(h1, m1), time(h2, m2))


def parse_clean_param(value: str) -> CleanParam | None:
    words = value.split()
    if not words:
        return None
    params = tuple(param for param in words[0].split("&") if param)
    if not params:
        return None
    return CleanParam(params, words[1] if len(words) > 1 else None)
