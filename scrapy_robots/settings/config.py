"""The ROBOTSTXT_* settings, read and checked once into typed objects.

:class:`RobotsConfig` is what the middleware reads. The plug-ins read their own keys
with the same readers (:func:`cache_size`, :func:`cache_path`, :meth:`FleetConfig.from_settings`),
never the whole configuration. The classes that settings name are loaded here and
checked beside their interfaces (``parsers.base``, ``cache.storage``), by whoever builds them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from weakref import WeakKeyDictionary

from scrapy.utils.misc import load_object

from scrapy_robots.parsers import SHORT_NAMES
from scrapy_robots.policyfiles.policy import StatusPolicy
from scrapy_robots.rfc9309 import AGENT_MATCHINGS, EMPTY_RULES, PRECEDENCES, PRODUCT_TOKENS, Options
from scrapy_robots.settings.readers import choice, domains, number, read_bool
from scrapy_robots.usage import TDM_PURPOSES, UsageConfig
from scrapy_robots.useragent import default_user_agent

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

#: The parser used when the project leaves ROBOTSTXT_PARSER at Scrapy's default.
DEFAULT_PARSER = "scrapy_robots.parsers.RFC9309Parser"
MEMORY_STORAGE = "scrapy_robots.cache.MemoryRobotsStorage"
DISK_STORAGE = "scrapy_robots.cache.SqliteRobotsStorage"
#: The SQLite file's name under JOBDIR.
JOBDIR_FILE = "robotstxt.sqlite3"
DAY = 24 * 3600.0
#: Set by ``scrapy robots``, not by projects: a one-shot run, which fetches each site
#: once (its own retries aside) and ends; the log promises no later attempt.
ONE_SHOT_SETTING = "_ROBOTSTXT_ONE_SHOT"


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

    @classmethod
    def from_settings(cls, settings: BaseSettings, fetch_timeout: float) -> FleetConfig:
        # The holder renews its lock every third of the TTL while its fetch runs: a dead
        # crawler's lock expires within the TTL, a live one keeps it.
        lock_ttl = number(settings, "ROBOTSTXT_FLEET_LOCK_TTL", 10.0, float, minimum=1)
        # The hard bound on one holder: a fetch may follow redirects, each bounded by the
        # fetch timeout; past this, a live holder is taken over too.
        lock_wait = number(
            settings, "ROBOTSTXT_FLEET_LOCK_WAIT", max(2 * fetch_timeout + 10, lock_ttl), float, minimum=0
        )
        return cls(
            redis_url=_redis_url(settings),
            prefix=settings.get("ROBOTSTXT_REDIS_KEY_PREFIX")
            or f"scrapy_robots:{settings.get('BOT_NAME') or 'scrapybot'}",
            timeout=number(settings, "ROBOTSTXT_REDIS_TIMEOUT", 0.5, float, minimum=0.01),
            connections=number(settings, "ROBOTSTXT_REDIS_CONNECTIONS", 50, int, minimum=1),
            lock_ttl=lock_ttl,
            lock_wait=lock_wait,
            pacing=read_bool(settings, "ROBOTSTXT_FLEET_PACING", True),
            pacing_margin=number(settings, "ROBOTSTXT_FLEET_PACING_MARGIN", 0.05, float, minimum=0),
            outage=choice(settings, "ROBOTSTXT_FLEET_OUTAGE", ("spread", "hold", "alone")),
        )


@dataclass(frozen=True)
class RobotsConfig:
    parser_class: type  #: a RobotParser, a Scrapy parser class, or the user's own
    user_agent: str | None  #: ROBOTSTXT_USER_AGENT: obeyed whatever a request's User-Agent
    #: the agent robots.txt is read as when a request names none (ROBOTSTXT_USER_AGENT, USER_AGENT, "*")
    default_user_agent: str
    maxsize: int
    timeout: float
    status_policy: StatusPolicy
    retry_delay: float
    retry_max_delay: float
    retry_times: int
    allow_after: float
    cache_ttl: float
    cache_size: int
    cache_parsed: int
    cache_path: str | None
    storage_class: type
    excluded_domains: tuple[str, ...]
    max_waiting: int
    #: parked requests go back to a scheduler that keeps its queue when the crawl closes
    requeue_on_close: bool
    crawl_delay: bool
    max_crawl_delay: float
    crawl_delay_exceeded: str
    fleet: FleetConfig
    usage: UsageConfig | None  #: ROBOTSTXT_USAGE: None, the default, when no purpose is declared
    #: ROBOTSTXT_RFC9309_*: how our parser reads files; checked whatever ROBOTSTXT_PARSER is
    rfc9309: Options
    #: a one-shot run (:data:`ONE_SHOT_SETTING`): no site is tried again once the run gives up
    one_shot: bool = False
    #: ROBOTSTXT_SERVE: the spider's own robots.txt requests answered from the fetch (policyfiles/serving.py)
    serve: bool = True
    #: the declared purposes (ROBOTSTXT_USAGE) that TDMRep speaks for, when ROBOTSTXT_TDMREP
    #: leaves it on; empty: tdmrep.json is never fetched, the tdm-* headers and tags not read
    tdmrep: tuple[str, ...] = ()

    @property
    def parser_name(self) -> str:
        # A class that wraps another (``scrapy robots``' RecordingParser) names it.
        wrapped = getattr(self.parser_class, "parser_name", None)
        return wrapped if isinstance(wrapped, str) else getattr(self.parser_class, "__name__", str(self.parser_class))

    def excludes(self, site: str) -> bool:
        """Is ``site`` (``scheme://host:port``) under ROBOTSTXT_EXCLUDED_DOMAINS?"""
        if not self.excluded_domains:
            return False
        host = site.split("://", 1)[1].rsplit(":", 1)[0]
        return any(host == d or host.endswith("." + d) for d in self.excluded_domains)

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RobotsConfig:
        timeout = fetch_timeout(settings)
        usage = UsageConfig.from_settings(settings)
        return cls(
            parser_class=_parser_class(settings),
            user_agent=settings.get("ROBOTSTXT_USER_AGENT") or None,
            default_user_agent=default_user_agent(settings),
            maxsize=number(settings, "ROBOTSTXT_MAXSIZE", 500 * 1024, int, minimum=1),
            timeout=timeout,
            status_policy=_status_policy(settings),
            retry_delay=number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_DELAY", 30.0, float, minimum=0),
            retry_max_delay=number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY", 3600.0, float, minimum=0),
            retry_times=number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_TIMES", 3, int, minimum=0),
            allow_after=number(settings, "ROBOTSTXT_UNREACHABLE_ALLOW_AFTER", 30 * DAY, float, minimum=0),
            cache_ttl=number(settings, "ROBOTSTXT_CACHE_TTL", DAY, float, minimum=0),
            cache_size=cache_size(settings),
            cache_parsed=number(settings, "ROBOTSTXT_CACHE_PARSED", 256, int, minimum=1),
            cache_path=cache_path(settings),
            storage_class=load_class(settings, "ROBOTSTXT_CACHE_STORAGE", _default_storage(settings)),
            excluded_domains=domains(settings, "ROBOTSTXT_EXCLUDED_DOMAINS"),
            max_waiting=number(settings, "ROBOTSTXT_MAX_WAITING", _default_max_waiting(settings), int, minimum=0),
            requeue_on_close=bool(settings.get("JOBDIR")) or settings.getbool("SCHEDULER_PERSIST"),
            crawl_delay=read_bool(settings, "ROBOTSTXT_CRAWL_DELAY", True),
            max_crawl_delay=number(settings, "ROBOTSTXT_MAX_CRAWL_DELAY", 60.0, float, minimum=0),
            crawl_delay_exceeded=choice(settings, "ROBOTSTXT_CRAWL_DELAY_EXCEEDED", ("clamp", "skip")),
            fleet=FleetConfig.from_settings(settings, timeout),
            usage=usage,
            rfc9309=rfc9309_options(settings),
            one_shot=settings.getbool(ONE_SHOT_SETTING),
            serve=read_bool(settings, "ROBOTSTXT_SERVE", True),
            tdmrep=tdmrep_purposes(settings, usage),
        )

    @classmethod
    def of(cls, crawler: Crawler) -> RobotsConfig:
        """The crawl's configuration, read and checked once per crawler (whose settings are
        frozen by the time its components are built): the downloader middleware, the spider
        middlewares and the command's crawl take their parts from this one object."""
        config = _OF.get(crawler)
        if config is None:
            config = _OF[crawler] = cls.from_settings(crawler.settings)
        return config


#: Each crawler's configuration (:meth:`RobotsConfig.of`).
_OF: WeakKeyDictionary[Crawler, RobotsConfig] = WeakKeyDictionary()


def tdmrep_purposes(settings: BaseSettings, usage: UsageConfig | None) -> tuple[str, ...]:
    """The purposes of ROBOTSTXT_USAGE (``usage``) that TDMRep speaks for
    (:data:`TDM_PURPOSES`), unless ROBOTSTXT_TDMREP is False; empty when none is declared."""
    on = read_bool(settings, "ROBOTSTXT_TDMREP", True)
    if not on or usage is None:
        return ()
    return tuple(purpose for purpose in usage.purposes if purpose in TDM_PURPOSES)


def _default_max_waiting(settings: BaseSettings) -> int:
    # A queue shared by a fleet (scrapy-redis, SCHEDULER_PERSIST): what a crawler parks
    # is taken out of it, and lost if the crawler dies; no more than it can download.
    if settings.getbool("SCHEDULER_PERSIST"):
        return max(settings.getint("CONCURRENT_REQUESTS"), 1)
    return 10_000


def fetch_timeout(settings: BaseSettings) -> float:
    """ROBOTSTXT_TIMEOUT: DOWNLOAD_TIMEOUT, at most 30 s, unless set."""
    return number(settings, "ROBOTSTXT_TIMEOUT", min(settings.getfloat("DOWNLOAD_TIMEOUT", 180), 30.0), float)


def cache_size(settings: BaseSettings) -> int:
    """ROBOTSTXT_CACHE_SIZE: the sites a storage keeps."""
    return int(number(settings, "ROBOTSTXT_CACHE_SIZE", 100_000, int, minimum=1))


def _parser_class(settings: BaseSettings) -> type:
    # Scrapy always has a ROBOTSTXT_PARSER (Protego); only a value the project or the
    # spider set itself (priority above "default") overrides our own parser.
    value = settings.get("ROBOTSTXT_PARSER")
    if value is None or (settings.getpriority("ROBOTSTXT_PARSER") or 0) <= 0:
        value = DEFAULT_PARSER
    return _load_value("ROBOTSTXT_PARSER", value)


def cache_path(settings: BaseSettings) -> str | None:
    """Where the disk storage keeps its file: ROBOTSTXT_CACHE_PATH, else under JOBDIR."""
    path = settings.get("ROBOTSTXT_CACHE_PATH")
    if path:
        return str(path)
    jobdir = settings.get("JOBDIR")
    return os.path.join(jobdir, JOBDIR_FILE) if jobdir else None


def _default_storage(settings: BaseSettings) -> str:
    # A crawl with a JOBDIR (or a path given) keeps robots.txt with the job: resumed,
    # it fetches nothing again. Otherwise nothing is written to disk.
    return DISK_STORAGE if cache_path(settings) else MEMORY_STORAGE


def load_class(settings: BaseSettings, name: str, default: str) -> type:
    return _load_value(name, settings.get(name) or default)


#: What a setting that holds a class names, for the error that says what to give.
_EXAMPLES = {
    "ROBOTSTXT_PARSER": "'scrapy_robots.parsers.ProtegoParser'",
    "ROBOTSTXT_CACHE_STORAGE": f"{MEMORY_STORAGE!r} or 'scrapy_robots.fleet.RedisRobotsStorage'",
}


def _load_value(name: str, value: Any) -> Any:
    """The object a setting names: an import path, or the object itself. Whether it
    can serve is checked beside its interface, by whoever builds it."""
    if not isinstance(value, str):
        return value
    try:
        return load_object(value)
    except (ImportError, NameError, ValueError, AttributeError) as exc:
        short = SHORT_NAMES.get(value.strip().lower()) if name == "ROBOTSTXT_PARSER" else None
        if short is not None:
            raise ValueError(
                f"{name} = {value!r} cannot be loaded: short names such as {value!r} are taken by "
                f"`scrapy robots --parser`; {name} takes an import path such as {short!r}"
            ) from exc
        raise ValueError(
            f"{name} = {value!r} cannot be loaded ({exc}). Set it to an import path such as "
            f"{_EXAMPLES.get(name, repr(value))}, or install the package that provides it."
        ) from exc


def _status_policy(settings: BaseSettings) -> StatusPolicy:
    """A preset name, a dict, or a dict as JSON (``-s``, as Scrapy reads dict settings)."""
    raw = settings.get("ROBOTSTXT_STATUS_POLICY")
    if isinstance(raw, str) and raw.strip().startswith("{"):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise ValueError(f"ROBOTSTXT_STATUS_POLICY is not valid JSON ({exc}): {raw!r}") from None
    elif hasattr(raw, "copy_to_dict"):  # a dict set with priorities (BaseSettings)
        raw = raw.copy_to_dict()
    return StatusPolicy.from_setting(raw)


_REDIS_SCHEMES = ("redis", "rediss", "unix")


def _redis_url(settings: BaseSettings) -> str:
    """The fleet's Redis URL: ROBOTSTXT_REDIS_URL, else scrapy-redis' REDIS_URL, checked
    as redis-py reads it (it would fail later, naming neither setting)."""
    for name in ("ROBOTSTXT_REDIS_URL", "REDIS_URL"):
        value = settings.get(name)
        if not value:
            continue
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
    return "redis://127.0.0.1:6379"


#: Scrapy setting -> (Options field, allowed values or None for a boolean).
RFC9309_SETTINGS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "ROBOTSTXT_RFC9309_PRECEDENCE": ("precedence", PRECEDENCES),
    "ROBOTSTXT_RFC9309_WILDCARDS": ("wildcards", None),
    "ROBOTSTXT_RFC9309_EMPTY_RULES": ("empty_rules", EMPTY_RULES),
    "ROBOTSTXT_RFC9309_AGENT_MATCHING": ("agent_matching", AGENT_MATCHINGS),
    "ROBOTSTXT_RFC9309_PRODUCT_TOKENS": ("product_tokens", PRODUCT_TOKENS),
}


def rfc9309_options(settings: BaseSettings) -> Options:
    """Read the ``ROBOTSTXT_RFC9309_*`` settings; a bad value raises ``ValueError``
    naming the setting and the values it accepts."""
    values: dict[str, Any] = {}
    for setting, (field, choices) in RFC9309_SETTINGS.items():
        if settings.get(setting) is None:
            continue
        if choices is None:
            try:
                values[field] = settings.getbool(setting)
            except ValueError:
                raise ValueError(
                    f"{setting} = {settings.get(setting)!r} is not a boolean: set it to True or False"
                ) from None
            continue
        value = settings.get(setting)
        if isinstance(value, str):
            value = value.strip().lower()
        if value not in choices:
            expected = " or ".join(repr(choice) for choice in choices)
            raise ValueError(f"{setting} = {settings.get(setting)!r} is not valid: set it to {expected}")
        values[field] = value
    return Options(**values)
