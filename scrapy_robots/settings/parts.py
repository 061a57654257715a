"""Each part's own settings, read and checked by :meth:`RobotsConfig.from_settings
<scrapy_robots.settings.config.RobotsConfig.from_settings>` and handed to the part: the
fleet, the page backoff, the compliance record, the page directives, the usage
declaration. A part never reads a ``ROBOTSTXT_*`` setting itself; a plug-in that Scrapy
builds from a crawler alone (a storage, a parser) takes its part from
``RobotsConfig.of(crawler)``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit

from scrapy_robots.record.writer import FORMATS
from scrapy_robots.settings.defaults import default
from scrapy_robots.settings.readers import choice, configured_user_agent, default_user_agent, number, read_bool
from scrapy_robots.usage import ALIASES, MODES, PURPOSES, UsageConfig, canonical_purpose
from scrapy_robots.useragent import product_token, request_agent

if TYPE_CHECKING:
    from scrapy.http import Response
    from scrapy.settings import BaseSettings

#: What ``noindex`` does to a page's items (ROBOTSTXT_DIRECTIVES_NOINDEX).
NOINDEX_ACTIONS: Final = ("mark", "drop", "ignore")
_REDIS_SCHEMES = ("redis", "rediss", "unix")


@dataclass(frozen=True)
class FleetConfig:
    """The settings of the Redis-backed fleet (``scrapy_robots.fleet``)."""

    redis_url: str
    prefix: str
    timeout: float
    connections: int
    lock_ttl: float
    lock_wait: float
    pacing: bool
    pacing_margin: float
    #: what each crawler does while Redis is away: "spread", "hold" or "alone"
    outage: str = "spread"
    #: ROBOTSTXT_REDIS_URL names one node of a Redis Cluster
    cluster: bool = False
    #: Redis Sentinel: (host, port) of each Sentinel (empty: ``redis_url`` names the server),
    #: and the name of the primary they monitor
    sentinels: tuple[tuple[str, int], ...] = ()
    sentinel_service: str = "mymaster"
    #: seconds a site's record stays in Redis after it expired (ROBOTSTXT_FLEET_KEEP_AFTER_EXPIRY)
    keep_after_expiry: float = 172800.0
    #: the requests waiting in this crawler are leased in Redis (ROBOTSTXT_FLEET_LEASES),
    #: and given back by another crawler when its heartbeat (ROBOTSTXT_FLEET_LEASE_TTL) stops
    leases: bool = False
    lease_ttl: float = 15.0

    def where(self) -> str:
        """The fleet's Redis as the start-up line names it: the deployment and its
        address, never its password."""
        if self.sentinels:
            sentinels = ", ".join(f"{host}:{port}" for host, port in self.sentinels)
            return f"Redis Sentinel (the primary {self.sentinel_service!r} of {sentinels})"
        if self.cluster:
            return f"Redis Cluster (through the node {without_password(self.redis_url)})"
        return f"a single Redis ({without_password(self.redis_url)})"

    @classmethod
    def from_settings(cls, settings: BaseSettings, fetch_timeout: float) -> FleetConfig:
        lock_ttl = number(settings, "ROBOTSTXT_FLEET_LOCK_TTL", float, minimum=1)
        lock_wait = number(
            settings,
            "ROBOTSTXT_FLEET_LOCK_WAIT",
            float,
            minimum=0,
            default=default("ROBOTSTXT_FLEET_LOCK_WAIT", settings, fetch_timeout, lock_ttl),
        )
        redis_url = _redis_url(settings)
        cluster = read_bool(settings, "ROBOTSTXT_REDIS_CLUSTER")
        sentinels = _sentinels(settings)
        if cluster and sentinels:
            raise ValueError(
                "ROBOTSTXT_REDIS_CLUSTER = True and ROBOTSTXT_REDIS_SENTINELS name two deployments: a Redis Cluster "
                "fails over by itself, Sentinels watch one primary; set one of them"
            )
        if cluster and urlsplit(redis_url).scheme.lower() == "unix":
            raise ValueError(
                f"ROBOTSTXT_REDIS_CLUSTER = True needs a node's TCP address in ROBOTSTXT_REDIS_URL (a Redis Cluster "
                f"speaks TCP), not {redis_url!r}: give one such as 'redis://10.0.0.5:7000'"
            )
        if sentinels and urlsplit(redis_url).scheme.lower() == "unix":
            raise ValueError(
                f"ROBOTSTXT_REDIS_SENTINELS is set: the Sentinels name the primary's host and port, and "
                f"ROBOTSTXT_REDIS_URL gives only its db and password, so it cannot be a socket ({redis_url!r}); "
                f"give 'redis://:password@/0' or leave it unset"
            )
        return cls(
            redis_url=redis_url,
            prefix=settings.get("ROBOTSTXT_REDIS_KEY_PREFIX") or default("ROBOTSTXT_REDIS_KEY_PREFIX", settings),
            timeout=number(settings, "ROBOTSTXT_REDIS_TIMEOUT", float, minimum=0.01),
            connections=number(settings, "ROBOTSTXT_REDIS_CONNECTIONS", int, minimum=1),
            lock_ttl=lock_ttl,
            lock_wait=lock_wait,
            pacing=read_bool(settings, "ROBOTSTXT_FLEET_PACING"),
            pacing_margin=number(settings, "ROBOTSTXT_FLEET_PACING_MARGIN", float, minimum=0),
            outage=choice(settings, "ROBOTSTXT_FLEET_OUTAGE", ("spread", "hold", "alone")),
            cluster=cluster,
            sentinels=sentinels,
            sentinel_service=_sentinel_service(settings),
            keep_after_expiry=number(settings, "ROBOTSTXT_FLEET_KEEP_AFTER_EXPIRY", float, minimum=0),
            leases=_leases(settings),
            lease_ttl=number(settings, "ROBOTSTXT_FLEET_LEASE_TTL", float, minimum=1),
        )


def _leases(settings: BaseSettings) -> bool:
    if settings.get("ROBOTSTXT_FLEET_LEASES") in (None, ""):
        return bool(default("ROBOTSTXT_FLEET_LEASES", settings))
    return read_bool(settings, "ROBOTSTXT_FLEET_LEASES")


def without_password(url: str) -> str:
    """``url`` without the password of its user part or its query (``?password=``)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    user = parts.username
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k.lower() != "password"])
    # Written out: urlunsplit drops the "//" of an empty host (unix:///run/redis.sock).
    netloc = f"{user}@{host}" if user else host
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")


def _redis_url(settings: BaseSettings) -> str:
    """The fleet's Redis URL: ROBOTSTXT_REDIS_URL, else scrapy-redis' REDIS_URL, checked
    as redis-py reads it (it would fail later, naming neither setting)."""
    name = "ROBOTSTXT_REDIS_URL" if settings.get("ROBOTSTXT_REDIS_URL") else "REDIS_URL"
    value = settings.get("ROBOTSTXT_REDIS_URL") or default("ROBOTSTXT_REDIS_URL", settings)
    example = "such as 'redis://127.0.0.1:6379/0', 'rediss://user:password@host:6380' or 'unix:///run/redis.sock'"
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a Redis URL {example}, not {value!r}")
    parts = urlsplit(value.strip())
    if parts.scheme.lower() not in _REDIS_SCHEMES:
        raise ValueError(f"{name} = {value!r} is not a Redis URL: give one {example}")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ValueError(f"{name} = {value!r} has an invalid port: give a Redis URL {example}") from None
    if parts.scheme.lower() == "unix" and not parts.path:
        raise ValueError(f"{name} = {value!r} names no socket path: give a Redis URL {example}")
    return value.strip()


def _sentinels(settings: BaseSettings) -> tuple[tuple[str, int], ...]:
    """ROBOTSTXT_REDIS_SENTINELS: "host:port" of each Sentinel, as a list, a comma-separated
    string or a JSON list (``-s``)."""
    raw = settings.get("ROBOTSTXT_REDIS_SENTINELS")
    if raw is None or raw == "":
        raw = default("ROBOTSTXT_REDIS_SENTINELS", settings)
    example = "such as ['10.0.0.1:26379', '10.0.0.2:26379', '10.0.0.3:26379']"
    if isinstance(raw, str) and raw.strip().startswith("["):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise ValueError(f"ROBOTSTXT_REDIS_SENTINELS is not a valid JSON list ({exc}): {raw!r}") from None
    if isinstance(raw, str):
        raw = [value for value in raw.split(",") if value.strip()]
    if not isinstance(raw, (list, tuple)):
        raise ValueError(f"ROBOTSTXT_REDIS_SENTINELS must list the Sentinels as 'host:port' {example}, not {raw!r}")
    found = []
    for value in raw:
        host, _, port = value.strip().rpartition(":") if isinstance(value, str) else ("", "", "")
        host = host.strip("[]")  # an IPv6 address in brackets
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"ROBOTSTXT_REDIS_SENTINELS: {value!r} is not a Sentinel's 'host:port' ({example})")
        found.append((host, int(port)))
    return tuple(found)


def _sentinel_service(settings: BaseSettings) -> str:
    name = "ROBOTSTXT_REDIS_SENTINEL_SERVICE"
    service = settings.get(name) or default(name, settings)
    if not isinstance(service, str) or not service.strip():
        raise ValueError(f"{name} must name the primary the Sentinels monitor, such as 'mymaster', not {service!r}")
    return service.strip()


@dataclass(frozen=True)
class BackoffConfig:
    """The page backoff's settings (``scrapy_robots.pace.backoff``)."""

    enabled: bool
    codes: frozenset[int]
    pause: float  #: the first pause without Retry-After
    max_pause: float
    factor: float
    recovery: int  #: answers to come back to the configured pace

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> BackoffConfig:
        codes = settings.getlist("ROBOTSTXT_BACKOFF_HTTP_CODES", default("ROBOTSTXT_BACKOFF_HTTP_CODES", settings))
        try:
            statuses = frozenset(int(code) for code in codes)
        except (TypeError, ValueError):
            raise ValueError(f"ROBOTSTXT_BACKOFF_HTTP_CODES must list HTTP statuses, not {codes!r}") from None
        if any(not 100 <= status <= 599 for status in statuses):
            raise ValueError(f"ROBOTSTXT_BACKOFF_HTTP_CODES must list HTTP statuses (100-599), not {codes!r}")
        return cls(
            enabled=read_bool(settings, "ROBOTSTXT_BACKOFF"),
            codes=statuses,
            pause=number(settings, "ROBOTSTXT_BACKOFF_PAUSE", float, minimum=0),
            max_pause=number(settings, "ROBOTSTXT_BACKOFF_MAX_PAUSE", float, minimum=0),
            factor=number(settings, "ROBOTSTXT_BACKOFF_FACTOR", float, minimum=1),
            recovery=number(settings, "ROBOTSTXT_BACKOFF_RECOVERY", int, minimum=1),
        )


@dataclass(frozen=True)
class RecordConfig:
    """The compliance record's settings (``scrapy_robots.record``); the folder is made,
    and checked writable, when the crawl's record opens it."""

    folder: str
    format: str
    flush_interval: float
    batch: int

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RecordConfig | None:
        """None when ROBOTSTXT_RECORD names no folder."""
        # Each checked whatever else is set: a typo fails now, not when the record is turned on.
        format = choice(settings, "ROBOTSTXT_RECORD_FORMAT", FORMATS)
        flush_interval = number(settings, "ROBOTSTXT_RECORD_FLUSH_INTERVAL", float, minimum=0.01)
        batch = number(settings, "ROBOTSTXT_RECORD_BATCH", int, minimum=1)
        folder = settings.get("ROBOTSTXT_RECORD")
        if folder is None or folder == "" or folder is False:
            return None
        if not isinstance(folder, str):
            raise ValueError(f"ROBOTSTXT_RECORD must be a folder path, not {folder!r}")
        if format == "warc":
            from scrapy_robots.record.warc import check_warcio

            check_warcio()
        return cls(folder=folder, format=format, flush_interval=flush_interval, batch=batch)


@dataclass(frozen=True)
class DirectivesConfig:
    """The ``ROBOTSTXT_DIRECTIVES*`` settings (``scrapy_robots.directives``)."""

    enabled: bool
    user_agent: str | None  #: ROBOTSTXT_USER_AGENT
    default_user_agent: str
    nofollow: bool
    rel_nofollow: bool
    noindex: str  #: one of NOINDEX_ACTIONS
    noindex_field: str

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> DirectivesConfig:
        field = settings.get("ROBOTSTXT_DIRECTIVES_NOINDEX_FIELD") or default(
            "ROBOTSTXT_DIRECTIVES_NOINDEX_FIELD", settings
        )
        if not isinstance(field, str) or not field.strip():
            raise ValueError(f"ROBOTSTXT_DIRECTIVES_NOINDEX_FIELD must be a field name, not {field!r}")
        return cls(
            enabled=read_bool(settings, "ROBOTSTXT_DIRECTIVES"),
            user_agent=configured_user_agent(settings),
            default_user_agent=default_user_agent(settings),
            nofollow=read_bool(settings, "ROBOTSTXT_DIRECTIVES_NOFOLLOW"),
            rel_nofollow=read_bool(settings, "ROBOTSTXT_DIRECTIVES_REL_NOFOLLOW"),
            noindex=choice(settings, "ROBOTSTXT_DIRECTIVES_NOINDEX", NOINDEX_ACTIONS),
            noindex_field=field.strip(),
        )

    def token(self, response: Response) -> str:
        """The crawler's product token for ``response``, as robots.txt matching reads it."""
        return product_token(request_agent(response.request, self.user_agent, self.default_user_agent))


def usage_config(settings: BaseSettings | Any) -> UsageConfig | None:
    """``ROBOTSTXT_USAGE`` and ``ROBOTSTXT_USAGE_MODE``: None when the crawl declares no
    purpose. ``settings``: Scrapy's, or any mapping."""
    raw = settings.get("ROBOTSTXT_USAGE")
    mode = settings.get("ROBOTSTXT_USAGE_MODE") or default("ROBOTSTXT_USAGE_MODE", settings)
    if mode not in MODES:
        raise ValueError(f"ROBOTSTXT_USAGE_MODE must be 'deny' or 'tag', not {mode!r}")
    if raw is None or raw == "" or raw == [] or raw == ():
        return None
    if isinstance(raw, str) and raw.lstrip().startswith("["):
        try:  # -s 'ROBOTSTXT_USAGE=["train-ai"]'
            raw = json.loads(raw)
        except ValueError:
            raise ValueError(f"ROBOTSTXT_USAGE = {raw!r} is not a JSON list of purposes") from None
    if isinstance(raw, str):
        names = [part.strip() for part in raw.split(",") if part.strip()]
    elif isinstance(raw, (list, tuple)) and all(isinstance(name, str) for name in raw):
        names = list(raw)
    else:
        raise ValueError(f"ROBOTSTXT_USAGE must be a list of purposes such as ['train-ai'], not {raw!r}")
    purposes = []
    for name in names:
        try:
            purposes.append(canonical_purpose(name))
        except ValueError:
            known = ", ".join([*PURPOSES, *ALIASES])
            raise ValueError(f"ROBOTSTXT_USAGE: unknown purpose {name!r}; known purposes: {known}") from None
    return UsageConfig(tuple(dict.fromkeys(purposes)), mode)
