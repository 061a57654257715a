"""One robots.txt fetch per site, through the crawler's engine.

The request goes through Scrapy's downloader and its middlewares (proxies, TLS,
redirects, decompression), with a timeout of its own and a size cap: the body is
read up to ``ROBOTSTXT_MAXSIZE`` bytes, then the download is stopped and what was
read is parsed, never more.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import StopDownload
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import maybe_deferred_to_future

from scrapy_robots.decoding import cut_at_maxsize
from scrapy_robots.pace.slots import DOWNLOAD_SLOT, SlotPacer, robots_txt_done, robots_txt_download, robots_txt_slot
from scrapy_robots.status.result import DECOMPRESSED_FACTOR, FETCH_META, ROBOTS_TXT, FetchResult, site_url

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_robots.settings.config import RobotsConfig

logger = logging.getLogger(__name__)

_RECEIVED_META = "_robotstxt_bytes_received"
#: Meta keys the robots.txt request copies from the request that needs it: a site that
#: the crawl reaches through a proxy (``meta["proxy"]``, set by the spider) or from a
#: given local address (``meta["bindaddress"]``) has its robots.txt fetched the same way.
#: Scrapy's stock middleware copies nothing: its robots.txt request goes direct.
COPIED_META = ("proxy", "bindaddress")


class RobotsFetcher:
    DOWNLOAD_PRIORITY = 1000

    def __init__(self, crawler: Crawler, config: RobotsConfig):
        self.crawler = crawler
        self.maxsize = config.maxsize
        self.timeout = config.timeout
        self.slots = SlotPacer(crawler)
        # The size cap's receivers run on every download of the crawl while connected:
        # connected only while a robots.txt download is in flight (pages cost nothing).
        self._in_flight = 0

    def request_for(
        self,
        site: str,
        via: Request | None = None,
        path: str = ROBOTS_TXT,
        conditional: Mapping[str, str] | None = None,
    ) -> Request:
        """The robots.txt request of ``site`` (or of another policy file of the site at
        ``path``, such as TDMRep's); ``via`` is the request that needs it, whose
        ``meta["proxy"]`` the robots.txt request takes (see COPIED_META); ``conditional``,
        the stored copy's validators as request headers (``If-None-Match``...)."""
        copied = {key: via.meta[key] for key in COPIED_META if key in via.meta} if via is not None else {}
        if conditional:
            # The book is this file's cache: Scrapy's HttpCacheMiddleware, if enabled, would
            # answer a conditional request with its own stored 200 (a parse the 304 spares),
            # or store the empty 304 and replay it to a later unconditional request.
            copied["dont_cache"] = True
        return Request(
            site_url(site, path),
            headers=dict(conditional) if conditional else None,
            priority=self.DOWNLOAD_PRIORITY,
            callback=NO_CALLBACK,
            meta={
                "dont_obey_robotstxt": True,
                # The robots.txt of a site the spider reaches (allow_offsite, dont_filter)
                # must not be refused by Scrapy's OffsiteMiddleware (2.11.2+).
                "allow_offsite": True,
                # Our own unreachable backoff retries later; Scrapy's immediate retries
                # would only hold the site's waiting requests longer.
                "dont_retry": True,
                "download_timeout": self.timeout,
                "download_maxsize": self.maxsize * DECOMPRESSED_FACTOR,
                # A slot of its own: a robots.txt that hangs holds no transfer place of
                # the slot its site's pages share with other sites.
                DOWNLOAD_SLOT: robots_txt_slot(site),
                FETCH_META: path,
                **copied,
            },
        )

    async def fetch(
        self,
        site: str,
        via: Request | None = None,
        path: str = ROBOTS_TXT,
        conditional: Mapping[str, str] | None = None,
    ) -> FetchResult:
        request = self.request_for(site, via, path, conditional)
        started = time.monotonic()
        self._listen(+1)
        try:
            if via is None:
                response = await self._download(request)
            else:
                with robots_txt_download(self.slots, request, via):
                    response = await self._download(request)
        except Exception as exc:
            return FetchResult(
                requested_url=request.url,
                url=request.url,
                error=exc,
                started=started,
                site=site,
                conditional=bool(conditional),
            )
        finally:
            self._listen(-1)
            robots_txt_done(self.slots, site)
        body = response.body
        truncated = len(body) > self.maxsize or "download_stopped" in response.flags
        body = cut_at_maxsize(body, self.maxsize)
        redirects = len(response.meta.get("redirect_urls", ())) if response.request is not None else 0
        return FetchResult(
            requested_url=request.url,
            url=response.url,
            response=response,
            body=body,
            truncated=truncated,
            redirects=redirects,
            started=started,
            site=site,
            conditional=bool(conditional),
        )

    def _listen(self, change: int) -> None:
        signal_manager = self.crawler.signals
        self._in_flight += change
        if change > 0 and self._in_flight == 1:
            signal_manager.connect(self._headers_received, signal=signals.headers_received)
            signal_manager.connect(self._bytes_received, signal=signals.bytes_received)
        elif change < 0 and self._in_flight == 0:
            signal_manager.disconnect(self._headers_received, signal=signals.headers_received)
            signal_manager.disconnect(self._bytes_received, signal=signals.bytes_received)

    async def _download(self, request: Request) -> Response:
        engine = self.crawler.engine
        assert engine is not None
        if hasattr(engine, "download_async"):  # Scrapy 2.14+
            return await engine.download_async(request)
        return await maybe_deferred_to_future(engine.download(request))  # pragma: no cover

    def _headers_received(self, headers: Any, body_length: int, request: Request, **kwargs: Any) -> None:
        if not request.meta.get(FETCH_META):
            return
        # A large uncompressed robots.txt is read up to the cap, not refused: lift the
        # handler's Content-Length check (it reads the meta key after this signal) and
        # let _bytes_received stop the transfer at ROBOTSTXT_MAXSIZE.
        # body_length is Twisted's UNKNOWN_LENGTH (a string) when the answer is chunked
        # or close-delimited: then nothing is known yet, and _bytes_received counts.
        if (
            isinstance(body_length, int)
            and body_length > request.meta["download_maxsize"]
            and not headers.get(b"Content-Encoding")
        ):
            request.meta["download_maxsize"] = 0

    def _bytes_received(self, data: bytes, request: Request, **kwargs: Any) -> None:
        if not request.meta.get(FETCH_META):
            return
        received = request.meta.get(_RECEIVED_META, 0) + len(data)
        request.meta[_RECEIVED_META] = received
        if received > self.maxsize:
            raise StopDownload(fail=False)
