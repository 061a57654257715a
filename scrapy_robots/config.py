"""Every ROBOTSTXT_* setting, read once into one typed object."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy.utils.misc import load_object

from scrapy_robots.policy import StatusPolicy

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: The parser used when the project leaves ROBOTSTXT_PARSER at Scrapy's default.
DEFAULT_PARSER = "scrapy_robots.parsers.RFC9309Parser"
MEMORY_STORAGE = "scrapy_robots.cache.MemoryRobotsStorage"
DISK_STORAGE = "scrapy_robots.cache.SqliteRobotsStorage"
#: The SQLite file's name under JOBDIR.
JOBDIR_FILE = "robotstxt.sqlite3"
DAY = 24 * 3600.0


@dataclass(frozen=True)
class FleetConfig:
    """The settings of the Redis-backed fleet (``scrapy_robots.fleet``)."""

    redis_url: str
    prefix: str
    timeout: float
    lock_ttl: float
    lock_wait: float
    pacing: bool
    pacing_margin: float

    @classmethod
    def from_settings(cls, settings: BaseSettings, fetch_timeout: float) -> FleetConfig:
        # A fetch may follow redirects, each bounded by the fetch timeout; the lock
        # must outlive an honest fetch, and expire soon after a crawler dies.
        lock_ttl = _number(settings, "ROBOTSTXT_FLEET_LOCK_TTL", 2 * fetch_timeout + 10, float, minimum=1)
        return cls(
            redis_url=settings.get("ROBOTSTXT_REDIS_URL") or settings.get("REDIS_URL") or "redis://127.0.0.1:6379",
            prefix=settings.get("ROBOTSTXT_REDIS_KEY_PREFIX") or f"scrapy_robots:{settings.get('BOT_NAME') or 'scrapybot'}",
            timeout=_number(settings, "ROBOTSTXT_REDIS_TIMEOUT", 0.5, float, minimum=0.01),
            lock_ttl=lock_ttl,
            lock_wait=_number(settings, "ROBOTSTXT_FLEET_LOCK_WAIT", lock_ttl, float, minimum=0),
            pacing=settings.getbool("ROBOTSTXT_FLEET_PACING", True),
            pacing_margin=_number(settings, "ROBOTSTXT_FLEET_PACING_MARGIN", 0.05, float, minimum=0),
        )


@dataclass(frozen=True)
class RobotsConfig:
    parser_class: Any
    user_agent: str | None
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
    storage_class: Any
    excluded_domains: tuple[str, ...]
    max_waiting: int
    crawl_delay: bool
    max_crawl_delay: float
    crawl_delay_exceeded: str
    fleet: FleetConfig

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RobotsConfig:
        timeout = _number(settings, "ROBOTSTXT_TIMEOUT", min(settings.getfloat("DOWNLOAD_TIMEOUT", 180), 30.0), float)
        return cls(
            parser_class=_parser_class(settings),
            user_agent=settings.get("ROBOTSTXT_USER_AGENT") or None,
            default_user_agent=settings.get("USER_AGENT") or "Scrapy",
            maxsize=_number(settings, "ROBOTSTXT_MAXSIZE", 500 * 1024, int, minimum=1),
            timeout=timeout,
            status_policy=StatusPolicy.from_setting(settings.get("ROBOTSTXT_STATUS_POLICY")),
            retry_delay=_number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_DELAY", 30.0, float, minimum=0),
            retry_max_delay=_number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY", 3600.0, float, minimum=0),
            retry_times=_number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_TIMES", 3, int, minimum=0),
            allow_after=_number(settings, "ROBOTSTXT_UNREACHABLE_ALLOW_AFTER", 30 * DAY, float, minimum=0),
            cache_ttl=_number(settings, "ROBOTSTXT_CACHE_TTL", DAY, float, minimum=0),
            cache_size=_number(settings, "ROBOTSTXT_CACHE_SIZE", 100_000, int, minimum=1),
            cache_parsed=_number(settings, "ROBOTSTXT_CACHE_PARSED", 256, int, minimum=1),
            cache_path=_cache_path(settings),
            storage_class=_load(settings, "ROBOTSTXT_CACHE_STORAGE", _default_storage(settings)),
            excluded_domains=_domains(settings.getlist("ROBOTSTXT_EXCLUDED_DOMAINS")),
            max_waiting=_number(settings, "ROBOTSTXT_MAX_WAITING", 10_000, int, minimum=0),
            crawl_delay=settings.getbool("ROBOTSTXT_CRAWL_DELAY", True),
            max_crawl_delay=_number(settings, "ROBOTSTXT_MAX_CRAWL_DELAY", 60.0, float, minimum=0),
            crawl_delay_exceeded=_choice(settings, "ROBOTSTXT_CRAWL_DELAY_EXCEEDED", ("clamp", "skip")),
            fleet=FleetConfig.from_settings(settings, timeout),
        )


def _parser_class(settings: BaseSettings) -> Any:
    # Scrapy always has a ROBOTSTXT_PARSER (Protego); only a value the project or the
    # spider set itself (priority above "default") overrides our own parser.
    value = settings.get("ROBOTSTXT_PARSER")
    if value is None or (settings.getpriority("ROBOTSTXT_PARSER") or 0) <= 0:
        value = DEFAULT_PARSER
    return _load_value("ROBOTSTXT_PARSER", value)


def _cache_path(settings: BaseSettings) -> str | None:
    """Where the disk storage keeps its file: ROBOTSTXT_CACHE_PATH, else under JOBDIR."""
    import os

    path = settings.get("ROBOTSTXT_CACHE_PATH")
    if path:
        return str(path)
    jobdir = settings.get("JOBDIR")
    return os.path.join(jobdir, JOBDIR_FILE) if jobdir else None


def _default_storage(settings: BaseSettings) -> str:
    # A crawl with a JOBDIR (or a path given) keeps robots.txt with the job: resumed,
    # it fetches nothing again. Otherwise nothing is written to disk.
    return DISK_STORAGE if _cache_path(settings) else MEMORY_STORAGE


def _load(settings: BaseSettings, name: str, default: str) -> Any:
    return _load_value(name, settings.get(name) or default)


def _load_value(name: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return load_object(value)
    except (ImportError, NameError, ValueError, AttributeError) as exc:
        raise ValueError(
            f"{name} = {value!r} cannot be loaded ({exc}). Set it to an import path such as "
            f"'scrapy_robots.parsers.ProtegoParser', or install the package that provides it."
        ) from exc


def _number(settings: BaseSettings, name: str, default: Any, kind: type, minimum: float = 0) -> Any:
    raw = settings.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = kind(float(raw)) if kind is int else kind(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, not {raw!r}") from None
    if isinstance(value, float) and not math.isfinite(value) or value < minimum:
        raise ValueError(f"{name} must be a finite number >= {minimum}, not {raw!r}")
    return value


def _choice(settings: BaseSettings, name: str, choices: tuple[str, ...]) -> str:
    value = str(settings.get(name) or choices[0]).strip().lower()
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, not {settings.get(name)!r}")
    return value


def _domains(values: list[str]) -> tuple[str, ...]:
    return tuple(sorted({v.strip().strip(".").lower() for v in values if v and v.strip(". ")}))
