"""RobotsServer: a spider's own robots.txt request, answered from the middleware's fetch.

A spider that reads robots.txt itself (Scrapy's ``SitemapSpider`` started from
``https://example.com/robots.txt``) asks for the file the middleware fetched for the
site. Its request (a ``GET`` of exactly ``/robots.txt``, no query, on the site's
``scheme://host:port``) waits for the site's one fetch like any other request of the
site, then gets a response built from what the storage keeps (memory, SQLite, Redis):

    status          the final status of the fetch (200, 404, 403, 503...)
    url             the robots.txt URL after redirects
    body            the body the crawl read: up to ROBOTSTXT_MAXSIZE, decoded once and
                    written as UTF-8 (decoding.normalize_robotstxt); none for an
                    outcome without rules (a 404, a 403, a 503)
    Content-Type    as fetched, its charset (if it names another) made utf-8
    flags           ["robotstxt"]

Returned from ``process_request``, it goes through the other downloader middlewares'
``process_response`` as a download would. ``robotstxt/served`` counts it.

Nothing is made up. When the fetch gave no answer to pass on (a network error, a
redirect loop, a refusal, a 3xx not followed; a stale copy kept in use, RFC 9309 2.4),
or the storage no longer holds it (evicted, written by an earlier version, a body that
stated no robots.txt line, kept empty: ``RobotsEntry.body_dropped``), or the
copy was cut at ``ROBOTSTXT_MAXSIZE`` (the spider would lose what is past the cut, often
its ``Sitemap:`` lines), or the request asks for the live file (``meta["dont_serve_robotstxt"]``), the request goes on
as any other: ``robotstxt/not_served/<why>`` counts it.
"""

from __future__ import annotations

import logging
import re
import time
from typing import TYPE_CHECKING

from scrapy.http import Headers
from scrapy.responsetypes import responsetypes
from scrapy.utils.httpobj import urlparse_cached

from scrapy_robots.decoding import charset_from_content_type
from scrapy_robots.status.policy import Action

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.policyfiles.robotstxt import SiteBook

logger = logging.getLogger(__name__)

#: The path of the requests answered (the middleware checks ``request.url`` ends with it
#: before asking: a page costs nothing more).
ROBOTS_PATH = "/robots.txt"
#: Meta key: a true value downloads the spider's robots.txt request live.
DONT_SERVE_META = "dont_serve_robotstxt"
#: The flag of a served response (``response.flags``).
FLAG = "robotstxt"

#: Why a robots.txt request was not served (``robotstxt/not_served/<why>``).
ASKED, EXCLUDED, FAILED, NOT_STORED, TRUNCATED = "asked", "excluded", "failed", "not_stored", "truncated"
#: Each reason as the DEBUG line says it.
REASONS = {
    ASKED: f"meta[{DONT_SERVE_META!r}] asks for the live file",
    EXCLUDED: "an excluded site, never fetched",
    FAILED: "the fetch gave no answer to pass on",
    NOT_STORED: "the storage does not hold the answer",
    TRUNCATED: "the copy was cut at ROBOTSTXT_MAXSIZE",
}

_CHARSET = re.compile(r"""charset\s*=\s*("[^"]*"|'[^']*'|[^;\s]*)""", re.IGNORECASE)


def is_robots_request(request: Request) -> bool:
    """A ``GET`` of exactly ``/robots.txt``: no query, no parameters."""
    if request.method != "GET":
        return False
    parts = urlparse_cached(request)
    return parts.path == ROBOTS_PATH and not parts.query and not parts.params


class RobotsServer:
    """Built by the middleware when ``ROBOTSTXT_SERVE`` is true (the default)."""

    def __init__(self, crawler: Crawler, sites: SiteBook):
        self.crawler = crawler
        self.stats = crawler.stats
        self.sites = sites

    async def answer(self, entry: RobotsEntry, request: Request) -> Response | None:
        """The response to ``request`` from its site's ``entry`` (known, fresh), or None:
        the request goes on as any other (the verdict, the pace, the download)."""
        if not is_robots_request(request):
            return None
        stored = None
        if request.meta.get(DONT_SERVE_META):
            why: str | None = ASKED
        elif entry.action is Action.EXCLUDED:  # never fetched: the verdict ignores it
            why = EXCLUDED
        else:
            stored = await self.sites.stored(entry.site)
            why = unservable(stored)
        if why is not None:
            self.stats.inc_value(f"robotstxt/not_served/{why}")
            logger.debug(
                "Not serving %(request)s from the crawl's fetch (%(why)s: %(reason)s): it goes on as any other request",
                {"request": request, "why": why, "reason": REASONS[why]},
                extra={"spider": self.crawler.spider},
            )
            return None
        assert stored is not None
        self.stats.inc_value("robotstxt/served")
        return response_from(stored, request)


def unservable(stored: RobotsEntry | None) -> str | None:
    """Why ``stored`` cannot answer the spider's robots.txt request; None if it can."""
    if stored is None or not stored.fresh(time.time()):
        return NOT_STORED
    status = stored.status
    if status is None or 300 <= status < 400 or (stored.failures and stored.action is not Action.UNREACHABLE):
        # No response to pass on (a network error, a redirect loop, a refusal, a gzip
        # bomb, a 3xx not followed: its Location is not kept), or the last one failed and
        # older rules stay in use (a stale copy) or the site is allowed after
        # ROBOTSTXT_UNREACHABLE_ALLOW_AFTER: the spider asks the site.
        return FAILED
    if stored.truncated:
        # The rules past the cap were not read, and the Sitemap lines that large files
        # list last would be lost: the spider never gets less than the live file.
        return TRUNCATED
    if stored.content_type is None or stored.body_dropped:
        return NOT_STORED  # a record of an earlier version, or a body not kept (no robots.txt line)
    if stored.body is None and (stored.action is Action.PARSE or 200 <= status < 300):
        # A storage that keeps no body, or a 2xx whose body was not kept (a policy that
        # allows it): an empty body would be made up. An error page's body is not kept.
        return NOT_STORED
    return None


def response_from(stored: RobotsEntry, request: Request) -> Response:
    """The response a download of ``request`` would have given, from the stored outcome."""
    headers = Headers()
    if stored.content_type:
        headers[b"Content-Type"] = served_content_type(stored.content_type)
    url = stored.url or request.url
    body = stored.body or b""
    cls = responsetypes.from_args(headers=headers, url=url, body=body)
    assert stored.status is not None
    return cls(url=url, status=stored.status, headers=headers, body=body, request=request, flags=[FLAG])


def served_content_type(content_type: str) -> str:
    """``content_type`` as fetched, its charset made utf-8 if it names another: the body
    served is the UTF-8 the crawl read (``normalize_robotstxt``)."""
    if _CHARSET.search(content_type) and charset_from_content_type(content_type) != "utf-8":
        return _CHARSET.sub("charset=utf-8", content_type, count=1)
    return content_type
