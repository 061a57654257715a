"""SitePacing: a site's robots.txt delay becomes the floor of its downloader slot.

The middleware makes one call per allowed request, ``pace(entry, request)``, whatever
paces the site: this class (the slot alone), or the fleet's
(:class:`scrapy_robots.fleet.pacing.SharedPacing`, chosen when the storage shares a
pace). A call returns None when the request may go on at once, else an awaitable to
wait for first; the local pace never waits, so the hot path awaits nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.pace.slots import SlotPacer
    from scrapy_robots.policyfiles.fetch import FetchResult

logger = logging.getLogger(__name__)


class SitePacing:
    def __init__(self, crawler: Crawler, slots: SlotPacer):
        self.crawler = crawler
        self.slots = slots

    def pace(self, entry: RobotsEntry, request: Request) -> Awaitable[None] | None:
        if entry.delay is None and entry.site not in self.slots.paced_sites:
            return None
        try:
            # None: the site's robots.txt dropped its Crawl-delay since.
            self.slots.apply_crawl_delay(request, entry.site, entry.delay.applied if entry.delay else None)
        except Exception:
            # Scrapy's downloader changed under us (see pace/slots.py): say so loudly, but
            # do not turn a pacing failure into a lost request.
            logger.exception(
                "Could not set the download delay of %(site)s",
                {"site": entry.site},
                extra={"spider": self.crawler.spider},
            )
            self.crawler.stats.inc_value("robotstxt/crawl_delay/error")
        return None

    def fetched(self, entry: RobotsEntry, result: FetchResult) -> Awaitable[object] | None:
        """The site's robots.txt was just downloaded: a start in its pace, which a pace
        shared with other crawlers counts (the local slot counted it already)."""
        return None

    def slowed_down(self, key: str, delay: float, seconds: float) -> Awaitable[object] | None:
        """Slot ``key`` was told to slow down (scrapy_robots.pace.backoff): a pause of ``seconds``,
        then ``delay``; what a pace shared with other crawlers tells them (the local slot
        has it already)."""
        return None

    def shared_pauses(self) -> Awaitable[list[tuple[str, float, float]] | None] | None:
        """The pauses other crawlers sharing the pace were told (slot, seconds left,
        delay); None: no pace is shared."""
        return None
