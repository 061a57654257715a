"""A policy file version as the record keeps it, and a decision as one JSON object."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any

ROBOTS_TXT = "robots.txt"
TDMREP_JSON = "tdmrep.json"
#: The headers of a response body kept decoded: they described the bytes on the wire.
_TRANSPORT_HEADERS = frozenset((b"content-encoding", b"transfer-encoding", b"content-length"))


#: One object as one line of JSON, as ``json.dumps(obj, separators=(",", ":"))`` writes it,
#: with the encoder made once (json.dumps makes one per call: a quarter of a decision row's cost).
encode_line = json.JSONEncoder(separators=(",", ":")).encode


def sha256_of(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


@dataclass
class PolicyVersion:
    """One download of a site's robots.txt or tdmrep.json, and what the crawl made of it."""

    file: str  #: "robots.txt" or "tdmrep.json"
    site: str  #: "scheme://host:port"
    url: str  #: the URL fetched, after redirects
    requested_url: str
    fetched_at: float
    expires_at: float
    status: int | None  #: None: no response (a network error: ``error``)
    action: str  #: the decision class: parse, allow, deny, unreachable
    size: int  #: bytes of the body kept (after ROBOTSTXT_MAXSIZE)
    sha256: str  #: of the body as received (decoded from its transfer, cut at the size cap)
    #: the SHA-256 of the version that governs the site after this download: ``sha256``,
    #: or the previous version's while robots.txt is unreachable and its last copy kept
    governs: str | None
    truncated: bool = False
    error: str | None = None
    failures: int = 0  #: consecutive unreachable outcomes, this one included
    retry_after: float | None = None  #: seconds the server's Retry-After asked
    parser: str = ""  #: the ROBOTSTXT_PARSER that read it (robots.txt)
    body: bytes = field(default=b"", repr=False)
    #: the response's status line reason and headers, the request's headers (for WARC)
    headers: list[tuple[bytes, bytes]] = field(default_factory=list, repr=False)
    request_headers: list[tuple[bytes, bytes]] = field(default_factory=list, repr=False)

    def fields(self) -> dict[str, Any]:
        """Everything but the body and the headers: one JSON object."""
        return {name: getattr(self, name) for name in _FIELDS}


def response_headers(headers: Any) -> list[tuple[bytes, bytes]]:
    """A Scrapy ``Headers`` as (name, value) pairs, the transport's own left out (the body
    kept is decoded), a Content-Length for the body kept added by the writer."""
    pairs: list[tuple[bytes, bytes]] = []
    for name, values in (headers or {}).items():
        if name.lower() in _TRANSPORT_HEADERS:
            continue
        pairs.extend((name, value) for value in values)
    return pairs


_FIELDS = tuple(f.name for f in fields(PolicyVersion) if f.name not in ("body", "headers", "request_headers"))
