"""Every ROBOTSTXT_* setting, read once into one typed object."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

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
            redis_url=_redis_url(settings),
            prefix=settings.get("ROBOTSTXT_REDIS_KEY_PREFIX") or f"scrapy_robots:{settings.get('BOT_NAME') or 'scrapybot'}",
            timeout=_number(settings, "ROBOTSTXT_REDIS_TIMEOUT", 0.5, float, minimum=0.01),
            lock_ttl=lock_ttl,
            lock_wait=_number(settings, "ROBOTSTXT_FLEET_LOCK_WAIT", lock_ttl, float, minimum=0),
            pacing=read_bool(settings, "ROBOTSTXT_FLEET_PACING", True),
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
            status_policy=_status_policy(settings),
            retry_delay=_number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_DELAY", 30.0, float, minimum=0),
            retry_max_delay=_number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY", 3600.0, float, minimum=0),
            retry_times=_number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_TIMES", 3, int, minimum=0),
            allow_after=_number(settings, "ROBOTSTXT_UNREACHABLE_ALLOW_AFTER", 30 * DAY, float, minimum=0),
            cache_ttl=_number(settings, "ROBOTSTXT_CACHE_TTL", DAY, float, minimum=0),
            cache_size=_number(settings, "ROBOTSTXT_CACHE_SIZE", 100_000, int, minimum=1),
            cache_parsed=_number(settings, "ROBOTSTXT_CACHE_PARSED", 256, int, minimum=1),
            cache_path=_cache_path(settings),
            storage_class=_load(settings, "ROBOTSTXT_CACHE_STORAGE", _default_storage(settings)),
            excluded_domains=_domains(settings, "ROBOTSTXT_EXCLUDED_DOMAINS"),
            max_waiting=_number(settings, "ROBOTSTXT_MAX_WAITING", 10_000, int, minimum=0),
            crawl_delay=read_bool(settings, "ROBOTSTXT_CRAWL_DELAY", True),
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


#: What a setting that holds a class names, for the error that says what to give.
_EXAMPLES = {
    "ROBOTSTXT_PARSER": "'scrapy_robots.parsers.ProtegoParser'",
    "ROBOTSTXT_CACHE_STORAGE": f"{MEMORY_STORAGE!r} or 'scrapy_robots.fleet.RedisRobotsStorage'",
}


def _load_value(name: str, value: Any) -> Any:
    """The class a setting names (an import path or the class), checked against the
    interface the middleware calls, so that a class that builds but cannot answer fails
    at start-up, not at every request."""
    if isinstance(value, str):
        try:
            value = load_object(value)
        except (ImportError, NameError, ValueError, AttributeError) as exc:
            raise ValueError(
                f"{name} = {value!r} cannot be loaded ({exc}). Set it to an import path such as "
                f"{_EXAMPLES.get(name, repr(value))}, or install the package that provides it."
            ) from exc
    check = _INTERFACES.get(name)
    if check is not None:
        check(name, value)
    return value


def _check_parser_class(name: str, cls: Any) -> None:
    """A ``ROBOTSTXT_PARSER`` class: built with ``from_crawler(crawler, robotstxt_body)``
    (or ``cls(robotstxt_body)``), then asked ``allowed(url, user_agent)``, as Scrapy's
    ``RobotParser`` interface says."""
    import inspect

    what = _object_name(cls)
    fix = (
        "Use a parser class: one of scrapy_robots.parsers (RFC9309Parser, ProtegoParser, PythonParser for "
        "urllib.robotparser, RerpParser, ReppyParser, GoogleParser), one of scrapy.robotstxt, or your own with "
        "from_crawler(crawler, robotstxt_body) and allowed(url, user_agent)."
    )
    if not isinstance(cls, type):
        raise ValueError(f"{name} = {what} is not a class. {fix}")
    allowed = getattr(cls, "allowed", None)
    if not callable(allowed):
        raise ValueError(f"{name} = {what} has no allowed(url, user_agent) method: it cannot answer. {fix}")
    if inspect.isabstract(cls):
        raise ValueError(f"{name} = {what} is abstract ({', '.join(sorted(getattr(cls, '__abstractmethods__', ())))}). {fix}")
    try:
        signature = inspect.signature(allowed)
    except (TypeError, ValueError):  # a builtin: nothing to check
        return
    # Looked up on the class, a plain method takes the instance first.
    instance = () if isinstance(inspect.getattr_static(cls, "allowed"), (staticmethod, classmethod)) else (None,)
    try:
        signature.bind(*instance, "https://example.com/", "agent")
    except TypeError:
        raise ValueError(
            f"{name} = {what}: its allowed{signature} cannot be called as allowed(url, user_agent). {fix}"
        ) from None


def _check_storage_class(name: str, cls: Any) -> None:
    """A ``ROBOTSTXT_CACHE_STORAGE`` class: a RobotsStorage, or a class with the two
    methods a storage must have, ``async load(site)`` and ``async save(entry)``."""
    import inspect

    from scrapy_robots.cache.storage import RobotsStorage

    what = _object_name(cls)
    fix = (
        "Use scrapy_robots.cache.MemoryRobotsStorage, scrapy_robots.fleet.RedisRobotsStorage, or a subclass of "
        "scrapy_robots.cache.RobotsStorage that implements async load(site) and async save(entry)."
    )
    if not isinstance(cls, type):
        raise ValueError(f"{name} = {what} is not a class. {fix}")
    subclass = issubclass(cls, RobotsStorage)
    for method in ("load", "save"):
        found = getattr(cls, method, None)
        if subclass and found is getattr(RobotsStorage, method):
            raise ValueError(f"{name} = {what} does not implement {method}(). {fix}")
        if not subclass and not inspect.iscoroutinefunction(found):
            raise ValueError(f"{name} = {what} has no async {method}() method. {fix}")


_INTERFACES = {"ROBOTSTXT_PARSER": _check_parser_class, "ROBOTSTXT_CACHE_STORAGE": _check_storage_class}


def _object_name(value: Any) -> str:
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def _number(settings: BaseSettings, name: str, default: Any, kind: type, minimum: float = 0) -> Any:
    """A number; one that would change on the way in (a fraction where a whole number
    is needed, True for 1) is refused, never rounded."""
    raw = settings.get(name)
    if raw is None or raw == "":
        return default
    noun = "whole number" if kind is int else "number"
    if isinstance(raw, bool):
        raise ValueError(f"{name} must be a {noun}, not {raw!r}")
    try:
        number = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a {noun}, not {raw!r}") from None
    if not math.isfinite(number) or number < minimum:
        raise ValueError(f"{name} must be a finite {noun} >= {minimum:g}, not {raw!r}")
    if kind is int:
        if not number.is_integer():
            raise ValueError(f"{name} must be a whole number, not {raw!r}")
        return raw if isinstance(raw, int) else int(number)
    return number


def read_bool(settings: BaseSettings, name: str, default: bool) -> bool:
    """True or False, as Scrapy's getbool reads them (True/False, 1/0, "true"/"false"),
    with the setting's name in the error; anything else (2, 0.5, "yes") is refused."""
    raw = settings.get(name)
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str) and raw.strip().lower() in ("1", "true", "0", "false"):
        return raw.strip().lower() in ("1", "true")
    raise ValueError(f"{name} must be True or False, not {raw!r}")


def _choice(settings: BaseSettings, name: str, choices: tuple[str, ...]) -> str:
    raw = settings.get(name)
    if raw is None or raw == "":
        return choices[0]
    value = raw.strip().lower() if isinstance(raw, str) else None
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, not {raw!r}")
    return value


def _domains(settings: BaseSettings, name: str) -> tuple[str, ...]:
    """Domain names: a list, or a comma-separated string (``-s``). A URL, a path or a
    port would match no host: refused, with the domain to give instead."""
    raw = settings.get(name)
    if raw is None or raw == "":
        return ()
    if isinstance(raw, str):
        values: list[Any] = raw.split(",")
    elif isinstance(raw, (list, tuple, set, frozenset)):
        values = list(raw)
    else:
        raise ValueError(
            f"{name} must be a list of domain names such as ['example.com', 'gov'], not {raw!r}"
        )
    domains = set()
    for value in values:
        if not isinstance(value, str):
            raise ValueError(f"{name}: {value!r} is not a domain name (a string such as 'example.com')")
        domain = value.strip().strip(".").lower()
        if not domain:
            continue
        if any(c in domain for c in "/:@*? \t"):
            # A URL, a host:port or a wildcard would never equal a host: say which domain.
            host = urlsplit(domain if "//" in domain else f"//{domain}").hostname or ""
            host = host.lstrip("*.") or "example.com"
            raise ValueError(
                f"{name}: {value!r} is not a domain name (did you mean {host!r}? A domain covers its subdomains)"
            )
        domains.add(domain)
    return tuple(sorted(domains))


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
