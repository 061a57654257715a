"""The ROBOTSTXT_* settings, read and checked once into typed objects.

:class:`RobotsConfig` is the crawl's configuration, built once per crawler
(:meth:`RobotsConfig.of`): the middleware's own fields, and each part's sub-config
(``settings/parts.py``: fleet, backoff, record, directives, usage; the RFC 9309
options), which the part is handed or takes from ``RobotsConfig.of(crawler)``. Every
default comes from the table (``settings/defaults.py``). The classes that settings name
are loaded here and checked beside their interfaces (``parsers.base``, ``cache.storage``),
by whoever builds them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy.utils.misc import load_object

from scrapy_robots.rfc9309 import AGENT_MATCHINGS, EMPTY_RULES, PRECEDENCES, PRODUCT_TOKENS, Options
from scrapy_robots.settings.defaults import (
    DEFAULT_PARSER,
    DISK_STORAGE,
    MEMORY_STORAGE,
    ONE_SHOT_SETTING,
    SHORT_NAMES,
    default,
)
from scrapy_robots.settings.errors import PACKAGE, SettingError, starting
from scrapy_robots.settings.parts import (
    BackoffConfig,
    DirectivesConfig,
    FleetConfig,
    RecordConfig,
    usage_config,
)
from scrapy_robots.settings.readers import choice, configured_user_agent, default_user_agent, domains, number, read_bool
from scrapy_robots.settings.signing import SigningConfig
from scrapy_robots.status.policy import StatusPolicy
from scrapy_robots.usage import TDM_PURPOSES, UsageConfig

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

__all__ = ["DEFAULT_PARSER", "DISK_STORAGE", "MEMORY_STORAGE", "ONE_SHOT_SETTING", "FleetConfig", "RobotsConfig"]


@dataclass(frozen=True)
class RobotsConfig:
    obey: bool  #: ROBOTSTXT_OBEY: the middleware is off without it
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
    cache_size: int  #: ROBOTSTXT_CACHE_SIZE: the sites a storage keeps
    cache_parsed: int
    #: where the disk storage keeps its file: ROBOTSTXT_CACHE_PATH, else under JOBDIR
    cache_path: str | None
    storage_class: type
    #: ROBOTSTXT_REVALIDATE: a refresh of a known policy file sends its stored validators
    revalidate: bool
    excluded_domains: tuple[str, ...]
    max_waiting: int
    #: parked requests go back to a scheduler that keeps its queue when the crawl closes
    requeue_on_close: bool
    crawl_delay: bool
    max_crawl_delay: float
    crawl_delay_exceeded: str
    fleet: FleetConfig
    backoff: BackoffConfig
    record: RecordConfig | None  #: ROBOTSTXT_RECORD: None, the default, when no folder is named
    directives: DirectivesConfig
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
    #: ROBOTSTXT_RSL, with a purpose declared: a site's RSL license document (its robots.txt
    #: ``License`` line) decides too
    rsl: bool = False
    #: ROBOTSTXT_RSL_TOKEN: the license token sent (``Authorization: License <token>``) where
    #: RSL requires one; None: such URLs are denied for the purposes it covers
    rsl_token: str | None = None
    #: ROBOTSTXT_POLICY_FILES: the classes of the policy files that state preferences, loaded
    #: (each says whether the crawl reads it: ``PreferenceFile.wanted``)
    policy_files: tuple[Any, ...] = ()
    #: ROBOTSTXT_SIGNATURE_*: how requests are signed (Web Bot Auth); None: not signed
    signing: SigningConfig | None = None

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
        """Every ROBOTSTXT_* setting read and checked; ``ValueError`` naming the first bad one."""
        timeout = number(settings, "ROBOTSTXT_TIMEOUT", float, default=default("ROBOTSTXT_TIMEOUT", settings))
        cache_path = settings.get("ROBOTSTXT_CACHE_PATH") or default("ROBOTSTXT_CACHE_PATH", settings)
        usage = usage_config(settings)
        return cls(
            obey=read_bool(settings, "ROBOTSTXT_OBEY"),
            parser_class=_parser_class(settings),
            user_agent=configured_user_agent(settings),
            default_user_agent=default_user_agent(settings),
            maxsize=number(settings, "ROBOTSTXT_MAXSIZE", int, minimum=1),
            timeout=timeout,
            status_policy=_status_policy(settings),
            retry_delay=number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_DELAY", float, minimum=0),
            retry_max_delay=number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY", float, minimum=0),
            retry_times=number(settings, "ROBOTSTXT_UNREACHABLE_RETRY_TIMES", int, minimum=0),
            allow_after=number(settings, "ROBOTSTXT_UNREACHABLE_ALLOW_AFTER", float, minimum=0),
            cache_ttl=number(settings, "ROBOTSTXT_CACHE_TTL", float, minimum=0),
            cache_size=int(number(settings, "ROBOTSTXT_CACHE_SIZE", int, minimum=1)),
            cache_parsed=number(settings, "ROBOTSTXT_CACHE_PARSED", int, minimum=1),
            cache_path=None if cache_path is None else str(cache_path),
            storage_class=_load_value(
                "ROBOTSTXT_CACHE_STORAGE",
                settings.get("ROBOTSTXT_CACHE_STORAGE") or default("ROBOTSTXT_CACHE_STORAGE", settings, cache_path),
            ),
            revalidate=read_bool(settings, "ROBOTSTXT_REVALIDATE"),
            excluded_domains=domains(settings, "ROBOTSTXT_EXCLUDED_DOMAINS"),
            max_waiting=number(
                settings, "ROBOTSTXT_MAX_WAITING", int, minimum=0, default=default("ROBOTSTXT_MAX_WAITING", settings)
            ),
            requeue_on_close=bool(settings.get("JOBDIR")) or settings.getbool("SCHEDULER_PERSIST"),
            crawl_delay=read_bool(settings, "ROBOTSTXT_CRAWL_DELAY"),
            max_crawl_delay=number(settings, "ROBOTSTXT_MAX_CRAWL_DELAY", float, minimum=0),
            crawl_delay_exceeded=choice(settings, "ROBOTSTXT_CRAWL_DELAY_EXCEEDED", ("clamp", "skip")),
            fleet=FleetConfig.from_settings(settings, timeout),
            backoff=BackoffConfig.from_settings(settings),
            record=RecordConfig.from_settings(settings),
            directives=DirectivesConfig.from_settings(settings),
            usage=usage,
            rfc9309=rfc9309_options(settings),
            one_shot=settings.getbool(ONE_SHOT_SETTING),
            serve=read_bool(settings, "ROBOTSTXT_SERVE"),
            tdmrep=_tdmrep_purposes(settings, usage),
            rsl=usage is not None and read_bool(settings, "ROBOTSTXT_RSL"),
            rsl_token=_rsl_token(settings),
            policy_files=_policy_files(settings),
            signing=SigningConfig.from_settings(settings),
        )

    @classmethod
    def of(cls, crawler: Crawler) -> RobotsConfig:
        """The crawl's configuration, read and checked once per crawler (whose settings are
        frozen by the time its components are built): the downloader middleware, the spider
        middlewares, the storages, our parser and the command's crawl take their parts from
        this one object. A bad setting raises :class:`SettingError`, naming it, said once
        as the package's ERROR line: whichever component Scrapy builds first reads them."""
        config = _OF.get(crawler)
        if config is None:
            with starting(PACKAGE):
                try:
                    config = _OF[crawler] = cls.from_settings(crawler.settings)
                except SettingError:
                    raise
                except ValueError as exc:
                    raise SettingError(str(exc)) from None
        return config


#: Each crawler's configuration (:meth:`RobotsConfig.of`).
_OF: WeakKeyDictionary[Crawler, RobotsConfig] = WeakKeyDictionary()


def _tdmrep_purposes(settings: BaseSettings, usage: UsageConfig | None) -> tuple[str, ...]:
    """The purposes of ROBOTSTXT_USAGE (``usage``) that TDMRep speaks for
    (:data:`TDM_PURPOSES`), unless ROBOTSTXT_TDMREP is False; empty when none is declared."""
    on = read_bool(settings, "ROBOTSTXT_TDMREP")
    if not on or usage is None:
        return ()
    return tuple(purpose for purpose in usage.purposes if purpose in TDM_PURPOSES)


def _rsl_token(settings: BaseSettings) -> str | None:
    """ROBOTSTXT_RSL_TOKEN: a license token (a string), or None."""
    token = settings.get("ROBOTSTXT_RSL_TOKEN")
    if token is None or token == "":
        return None
    if not isinstance(token, str) or any(c in token for c in "\r\n"):
        raise ValueError(f"ROBOTSTXT_RSL_TOKEN must be the license token, a string on one line, not {token!r}")
    return token.strip()


def _policy_files(settings: BaseSettings) -> tuple[Any, ...]:
    """ROBOTSTXT_POLICY_FILES: the classes named (import paths, or the classes), loaded."""
    raw = settings.get("ROBOTSTXT_POLICY_FILES")
    paths = default("ROBOTSTXT_POLICY_FILES", settings) if raw is None else settings.getlist("ROBOTSTXT_POLICY_FILES")
    return tuple(_load_value("ROBOTSTXT_POLICY_FILES", path) for path in paths)


def _parser_class(settings: BaseSettings) -> type:
    # Scrapy always has a ROBOTSTXT_PARSER (Protego); only a value the project or the
    # spider set itself (priority above "default") overrides our own parser.
    value = settings.get("ROBOTSTXT_PARSER")
    if value is None or (settings.getpriority("ROBOTSTXT_PARSER") or 0) <= 0:
        value = DEFAULT_PARSER
    return _load_value("ROBOTSTXT_PARSER", value)


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
    raw = settings.get("ROBOTSTXT_STATUS_POLICY") or default("ROBOTSTXT_STATUS_POLICY", settings)
    if isinstance(raw, str) and raw.strip().startswith("{"):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise ValueError(f"ROBOTSTXT_STATUS_POLICY is not valid JSON ({exc}): {raw!r}") from None
    elif hasattr(raw, "copy_to_dict"):  # a dict set with priorities (BaseSettings)
        raw = raw.copy_to_dict()
    return StatusPolicy.from_setting(raw)


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
            values[field] = default(setting, settings)
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
