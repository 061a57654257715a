"""A policy file's download as data: the result, the site it is for, the meta key that marks
the package's own requests. The pace, the cache and the record read them without the
fetcher (:mod:`scrapy_robots.policyfiles.fetch`, which makes them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy.utils.httpobj import urlparse_cached

if TYPE_CHECKING:
    from scrapy.http import Request, Response

#: Meta key marking our robots.txt requests (the size cap only applies to them); its value
#: is the path fetched, ``/robots.txt`` or another policy file's (TDMRep's).
FETCH_META = "robotstxt_fetch"
ROBOTS_TXT = "/robots.txt"
# Decompression is bounded separately (Scrapy's HttpCompressionMiddleware reads the
# request's download_maxsize): a gzip bomb fails the fetch instead of filling memory.
DECOMPRESSED_FACTOR = 10


@dataclass
class FetchResult:
    """A robots.txt download: a response, or the exception that ended it."""

    requested_url: str
    url: str
    response: Response | None = None
    error: BaseException | None = None
    body: bytes = b""
    truncated: bool = False
    redirects: int = 0  #: redirects followed to reach ``url``
    started: float = 0.0  #: time.monotonic() when the download was asked for
    site: str = ""  #: the site key the robots.txt is for
    #: the request was conditional: it sent the stored copy's validators
    #: (``If-None-Match``, ``If-Modified-Since``), and a 304 means the copy is current
    conditional: bool = False


_DEFAULT_PORTS = {"http": 80, "https": 443}


def robots_url(site: str) -> str:
    """The robots.txt URL of a site key, without a default port (it would reach the
    server in the Host header)."""
    return site_url(site, ROBOTS_TXT)


def site_url(site: str, path: str) -> str:
    """The URL of ``path`` at a site key, without a default port; ``path`` itself when it is
    an absolute URL (a policy file another one names, on any host)."""
    if "://" in path:
        return path
    scheme = site.split("://", 1)[0]
    default = f":{_DEFAULT_PORTS.get(scheme, 0)}"
    return f"{site[: -len(default)] if site.endswith(default) else site}{path}"


def site_of(request: Request) -> str:
    """The cache key of a request's site: ``scheme://host:port`` (RFC 9309 2.3)."""
    parts = urlparse_cached(request)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
    except ValueError:
        port = _DEFAULT_PORTS.get(scheme, 0)
    return f"{scheme}://{host}:{port}"
