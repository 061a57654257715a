"""RobotsEntry: what is known of one site's robots.txt, and its compact stored form.

An entry is plain data (a storage keeps it as bytes: a JSON record, the stored rules and
the body, compressed together, see :func:`pack`) plus what each crawler makes of it with its own parser class: ``rules``
(what the crawl's agent obeys, when the parser can say it alone) or ``parser`` (the
whole file), and ``delay``. ``agents`` keeps ``rules`` in text form, so that a crawler
restoring the entry builds them again without parsing the body.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from scrapy_robots.cache._zdict import DICTIONARY_1
from scrapy_robots.status.policy import Action

if TYPE_CHECKING:
    from scrapy_robots.parsers import RobotParser
    from scrapy_robots.parsers.delay import SiteDelay
    from scrapy_robots.rfc9309 import RobotsTxt


@dataclass(slots=True)  # an entry is kept for every site of a crawl: no __dict__
class RobotsEntry:
    """One site's robots.txt outcome."""

    site: str  #: "scheme://host:port", the key
    action: Action
    fetched_at: float
    expires_at: float
    status: int | None = None  #: final HTTP status, None for a network error
    url: str | None = None  #: the robots.txt URL after redirects
    redirects: int = 0  #: redirects followed to reach ``url``
    size: int = 0  #: bytes parsed (after the ROBOTSTXT_MAXSIZE cap)
    truncated: bool = False
    error: str | None = None  #: the network error, for "unreachable"
    failures: int = 0  #: consecutive unreachable outcomes
    unreachable_since: float | None = None
    #: seconds the server's Retry-After asked from ``fetched_at`` (a 429 or 503), or None
    retry_after: float | None = None
    #: the response's ``Content-Type`` ("" when it had none), to answer the spider's own
    #: robots.txt request (policyfiles/serving.py); None when no response gave one, or in a record of
    #: a version that did not keep it
    content_type: str | None = None
    #: when the retry schedule makes an unreachable site's last attempt (policyfiles/retry_after.py:
    #: ``schedule_ends``), kept so that a Retry-After that lengthened one attempt does not
    #: push the bound later; None out of an unreachable streak, or in an older record
    schedule_end: float | None = None
    #: the SHA-256 (hex) of the policy file version that governs the site now, and when
    #: that version was fetched (a stale copy kept in use keeps its own): set when the
    #: compliance record is on (scrapy_robots.record), None otherwise or in an older record
    version: str | None = None
    version_fetched_at: float | None = None
    #: the fetched body stated no robots.txt line (:func:`~scrapy_robots.policyfiles.reader.states_no_rules`:
    #: an HTML page served as robots.txt, say): ``body`` is kept empty, ``size`` and ``version``
    #: are the fetched file's, and the spider's own robots.txt request is downloaded
    body_dropped: bool = False
    #: the validators of the response the body came from (RFC 9110 8.8): its ``ETag`` (a weak
    #: one too, ``W/"..."``) and its ``Last-Modified``, as sent; a refresh of the file sends
    #: them back (``If-None-Match``, ``If-Modified-Since``) and a 304 keeps the copy. None
    #: when the response had none, or in an older record
    etag: str | None = None
    last_modified: str | None = None
    #: the UTF-8 body the rules come from (``action`` parse): what a storage keeps
    body: bytes | None = field(default=None, repr=False, compare=False)
    #: built from ``body`` by this crawler's ROBOTSTXT_PARSER, when it cannot answer
    #: for one agent alone (see ``rules``); never stored
    parser: RobotParser | None = field(default=None, repr=False, compare=False)
    #: what the crawl's agent obeys, alone (``RobotParser.reduce``): kept instead of
    #: ``parser``; built from ``agents`` or from the body; never stored
    rules: Any = field(default=None, repr=False, compare=False)
    #: the same for the other agents requests asked as (a per-request User-Agent); never stored
    others: dict[Any, Any] | None = field(default=None, repr=False, compare=False)
    #: ``rules`` in text form, by parser, options and agent (``RobotsReader.key``): stored
    agents: dict[str, str] | None = field(default=None, repr=False, compare=False)
    delay: SiteDelay | None = field(default=None, compare=False)  #: Crawl-delay / Request-rate
    #: the usage preference lines (ROBOTSTXT_USAGE set), read from ``body`` by our
    #: parser whatever ROBOTSTXT_PARSER is; None when the file states none; never stored
    usage: RobotsTxt | None = field(default=None, repr=False, compare=False)
    #: the RSL license documents its ``License`` lines point the crawl's agent to (absolute
    #: URLs, file order), read from ``body`` with ROBOTSTXT_RSL on; never stored
    licenses: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def fresh(self, now: float) -> bool:
        return now < self.expires_at


#: The fields a storage keeps (``body`` apart); ``parser`` and ``delay`` are rebuilt.
RECORD_FIELDS = (
    "site",
    "action",
    "fetched_at",
    "expires_at",
    "status",
    "url",
    "redirects",
    "size",
    "truncated",
    "error",
    "failures",
    "unreachable_since",
    "retry_after",
    "content_type",
    "schedule_end",
    "version",
    "version_fetched_at",
    "body_dropped",
    "etag",
    "last_modified",
)
#: The fields of ``RECORD_FIELDS`` that records written by earlier versions lack: read
#: as their default (always the last ones, in ``pack``'s list too, which leaves them out
#: when they hold their default).
LATER_FIELDS = (
    "retry_after",
    "content_type",
    "schedule_end",
    "version",
    "version_fetched_at",
    "body_dropped",
    "etag",
    "last_modified",
)
_REQUIRED = RECORD_FIELDS[: -len(LATER_FIELDS)]
_LATER_DEFAULTS = tuple(RobotsEntry.__dataclass_fields__[name].default for name in LATER_FIELDS)


def record_of(entry: RobotsEntry) -> str:
    """The entry's fields as JSON (data only: a storage never pickles), ``agents`` included."""
    record = {name: getattr(entry, name) for name in RECORD_FIELDS}
    record["action"] = entry.action.value
    if entry.agents:
        record["agents"] = entry.agents
    return json.dumps(record, separators=(",", ":"))


def entry_from_record(record: str | bytes, body: bytes | None) -> RobotsEntry:
    """Raises ValueError on a record that is not one (a corrupt or foreign value)."""
    try:
        fields = json.loads(record)
        entry = RobotsEntry(**{name: fields[name] for name in _REQUIRED})
        # The later fields set one by one: a call with every field as a keyword kept about
        # 400 KB in CPython's free lists over 2,000 loads (seen with tracemalloc; bounded,
        # but past what the SQLite storage promises to hold).
        for name in LATER_FIELDS:
            if name in fields:
                setattr(entry, name, fields[name])
        entry.action = Action(entry.action)
        entry.agents = _agents(fields.get("agents"))  # absent from records written before 0.9
        _check_later_fields(entry)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"not a robots.txt record: {exc}") from exc
    entry.body = body
    return entry


def _check_later_fields(entry: RobotsEntry) -> None:
    if entry.content_type is not None and not isinstance(entry.content_type, str):
        raise TypeError("content_type is not text")
    for name in ("version", "etag", "last_modified"):
        value = getattr(entry, name)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} is not text")
    if not isinstance(entry.body_dropped, bool):
        raise TypeError("body_dropped is not a boolean")
    for name in ("retry_after", "schedule_end", "version_fetched_at"):
        value = getattr(entry, name)
        if value is not None and not isinstance(value, (int, float)):
            raise TypeError(f"{name} is not a number")


def _agents(value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(form, str) for form in value.values()):
        raise TypeError("agents is not a dict of text forms")
    return value


#: The first byte of a packed entry: the format, and the preset dictionary its stream was
#: compressed with (cache/_zdict.py). A new dictionary or layout takes a new marker; the
#: old ones stay readable wherever a stored entry may outlive a release (Redis).
PACKED_1 = b"\x01"


def pack(entry: RobotsEntry) -> bytes:
    """The compact form kept in memory, in Redis and wherever else a storage likes:
    ``PACKED_1``, then one zlib stream (with the preset dictionary ``DICTIONARY_1``) of the
    fields as a JSON list (in ``RECORD_FIELDS`` order, no names, the later fields left
    out while they hold their default), a NUL, ``+`` (a body follows, maybe empty) or
    ``-`` (none), ``agents`` as JSON (or nothing), a NUL and the body. About 0.6 KB a
    site on the corpus: robots.txt compresses about 5 to 1, the rules repeat the body,
    and the dictionary holds the lines most files share."""
    values = [getattr(entry, name) for name in RECORD_FIELDS]
    values[1] = entry.action.value
    # The defaults are None and False: ``is``, so that a 0 or 0.0 is kept.
    while len(values) > len(_REQUIRED) and values[-1] is _LATER_DEFAULTS[len(values) - len(_REQUIRED) - 1]:
        values.pop()
    agents = json.dumps(entry.agents, separators=(",", ":")).encode() if entry.agents else b""
    stream = json.dumps(values, separators=(",", ":")).encode() + b"\0"
    stream += (b"-" if entry.body is None else b"+") + agents + b"\0" + (entry.body or b"")
    compressor = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, DICTIONARY_1)
    return PACKED_1 + compressor.compress(stream) + compressor.flush()


def unpack(blob: bytes) -> RobotsEntry:
    """Raises ValueError on bytes that ``pack`` did not write."""
    if blob[:1] != PACKED_1:
        raise ValueError("not a packed robots.txt entry")
    try:
        decompressor = zlib.decompressobj(15, DICTIONARY_1)
        stream = decompressor.decompress(blob[1:]) + decompressor.flush()
        if not decompressor.eof:
            raise ValueError("a packed robots.txt entry cut short")
        record, _, rest = stream.partition(b"\0")
        kind, (agents, _, body) = rest[:1], rest[1:].partition(b"\0")
        values = json.loads(record)
        if not isinstance(values, list) or not len(_REQUIRED) <= len(values) <= len(RECORD_FIELDS):
            raise ValueError("not a packed robots.txt entry")
        if kind not in (b"+", b"-"):
            raise ValueError("not a packed robots.txt entry")
        entry = RobotsEntry(**dict(zip(RECORD_FIELDS, values)))
        entry.action = Action(entry.action)
        _check_later_fields(entry)
        entry.body = body if kind == b"+" else None
        entry.agents = _agents(json.loads(agents)) if agents else None
    except (zlib.error, TypeError, UnicodeDecodeError) as exc:
        raise ValueError(f"corrupt robots.txt entry: {exc}") from exc
    return entry


def validators_from(headers: Any) -> tuple[str | None, str | None]:
    """A response's validators, ``ETag`` and ``Last-Modified``, as sent (None: not sent)."""
    return _header(headers, b"ETag"), _header(headers, b"Last-Modified")


def conditional_headers(entry: RobotsEntry) -> dict[str, str]:
    """What a refresh of ``entry``'s file sends to be answered ``304 Not Modified`` if the
    file has not changed (RFC 9111 4.3.1): the stored ``ETag`` in ``If-None-Match`` (the
    server compares weakly, RFC 9110 13.1.2: a weak tag validates too) and the stored
    ``Last-Modified`` verbatim in ``If-Modified-Since``. Empty when it stores neither, or
    when a 304 could not be honoured: a parsed file whose body is no longer at hand."""
    if entry.action is Action.PARSE and entry.body is None and not entry.body_dropped:
        return {}
    headers = {}
    if entry.etag is not None:
        headers["If-None-Match"] = entry.etag
    if entry.last_modified is not None:
        headers["If-Modified-Since"] = entry.last_modified
    return headers


# Below this, a server's Cache-Control/Expires would make us refetch robots.txt
# for almost every request; RFC 9309 asks crawlers not to.
MIN_HEADER_LIFETIME = 60.0


def lifetime_from_headers(headers: Any, ttl: float, now: float) -> float:
    """The cached copy's lifetime: ``Cache-Control: max-age`` or ``Expires`` when the
    server sends one, never above ``ttl`` (RFC 9309: at most 24 hours) nor below a minute."""
    header_lifetime = None
    cache_control = _header(headers, b"Cache-Control")
    if cache_control:
        for part in cache_control.split(","):
            name, _, value = part.strip().partition("=")
            if name.lower() == "max-age" and value.strip().isdigit():
                header_lifetime = float(value.strip())
    if header_lifetime is None:
        expires = _header(headers, b"Expires")
        if expires:
            try:
                header_lifetime = parsedate_to_datetime(expires).timestamp() - now
            except (TypeError, ValueError, IndexError, OverflowError):
                header_lifetime = None
    if header_lifetime is None:
        return ttl
    return min(ttl, max(header_lifetime, MIN_HEADER_LIFETIME))


def _header(headers: Any, name: bytes) -> str | None:
    if headers is None:
        return None
    value = headers.get(name)
    if not value:
        return None
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)
