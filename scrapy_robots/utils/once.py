"""One INFO line per site and kind of event, DEBUG lines after it: the log rule of every
per-request decision the package takes on its own (items dropped, requests not followed)."""

from __future__ import annotations

import logging
from typing import Final

#: Pairs remembered at most: past it (a broad crawl), a site's first event is not kept, and
#: its next ones are said at INFO too, memory staying flat.
BOUND: Final = 10_000


class OncePerSite:
    def __init__(self, bound: int = BOUND):
        self._said: set[tuple[str, str]] = set()
        self._bound = bound

    def first(self, site: str, what: str) -> bool:
        """Is this the first ``what`` of ``site`` (to be said at INFO)?"""
        key = (site, what)
        if key in self._said:
            return False
        if len(self._said) < self._bound:
            self._said.add(key)
        return True

    def level(self, site: str, what: str, stat: str, level: int = logging.INFO) -> tuple[int, str]:
        """The level of the line for this event, and what the line adds: ``level`` and where
        the rest are counted the first time, DEBUG and nothing after."""
        if self.first(site, what):
            return level, f" (said once per site; {stat} counts them)"
        return logging.DEBUG, ""
