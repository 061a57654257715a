"""The only module that touches Scrapy's downloader internals.

Scrapy is reworking its downloader (an open pull request would replace
``Downloader.slots``); when that lands, this module is the one to change.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request


@contextmanager
def concurrency_released(crawler: Crawler, request: Request) -> Iterator[None]:
    """Let ``request`` wait without holding one of the downloader's
    ``CONCURRENT_REQUESTS`` places.

    A request waiting in a downloader middleware counts in ``Downloader.active``,
    which the engine compares with ``CONCURRENT_REQUESTS`` before it sends anything
    else; requests waiting for a slow site's robots.txt would stall every other site.
    The request leaves the set while it waits and comes back before the
    middleware returns, so Scrapy's own bookkeeping is unchanged.
    """
    engine = crawler.engine
    active = getattr(getattr(engine, "downloader", None), "active", None)
    held = active is not None and request in active
    if held:
        active.discard(request)
    try:
        yield
    finally:
        if held:
            active.add(request)
