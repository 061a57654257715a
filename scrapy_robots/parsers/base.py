"""The parser interface every ``ROBOTSTXT_PARSER`` backend implements."""

from __future__ import annotations

import inspect
from abc import ABCMeta, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from scrapy_robots.decoding import decode_robotstxt
from scrapy_robots.settings.errors import SettingError
from scrapy_robots.settings.readers import default_user_agent as default_user_agent  # documented here
from scrapy_robots.settings.readers import object_name
from scrapy_robots.useragent import product_token

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

#: Directive names, as :meth:`RobotParser.supports` takes them.
ALLOW = "allow"
CRAWL_DELAY = "crawl-delay"
REQUEST_RATE = "request-rate"
SITEMAP = "sitemap"
HOST = "host"
#: The usage preference lines, ``Content-Signal`` and ``Content-Usage`` (see docs/usage.rst).
CONTENT_USAGE = "content-usage"
#: Every directive a backend may read: what :meth:`RobotParser.supports` is asked about.
DIRECTIVES = (ALLOW, CRAWL_DELAY, REQUEST_RATE, SITEMAP, HOST, CONTENT_USAGE)


class DirectiveNotSupported(NotImplementedError):
    """Raised by a parser asked for a directive its library cannot read.

    Not the same answer as ``None``, which means "the file does not set it".
    """

    def __init__(self, parser: object, directive: str):
        self.parser_name = type(parser).__name__
        self.directive = directive
        super().__init__(f"{self.parser_name} cannot read the {directive!r} directive")


class RequestRate(NamedTuple):
    """``Request-rate: 3/10s``: at most ``requests`` requests per ``seconds`` seconds."""

    requests: int
    seconds: float


class RobotParser(metaclass=ABCMeta):
    """A parsed robots.txt.

    ``from_crawler(crawler, robotstxt_body)`` has the signature of Scrapy's own
    :class:`scrapy.robotstxt.RobotParser`, so classes are interchangeable in
    ``ROBOTSTXT_PARSER``. Every query takes an optional ``user_agent`` (a product
    token or a full ``User-Agent`` header); without one, the agent given at
    construction is used.

    A subclass lists the directives it reads in ``SUPPORTED``; the methods of the
    others raise :class:`DirectiveNotSupported`.
    """

    SUPPORTED: ClassVar[frozenset[str]] = frozenset({ALLOW})

    def __init__(self, robotstxt_body: bytes | str, user_agent: str = "*"):
        self.user_agent = user_agent

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> Self:
        from scrapy_robots.settings.config import RobotsConfig

        return cls(robotstxt_body, user_agent=RobotsConfig.of(crawler).default_user_agent)

    @classmethod
    def supports(cls, directive: str) -> bool:
        """Whether this backend can read ``directive`` (one of :data:`~scrapy_robots.parsers.DIRECTIVES`)."""
        return directive in cls.SUPPORTED

    @abstractmethod
    def allowed(self, url: str | bytes, user_agent: str | bytes | None = None) -> bool:
        """Whether ``user_agent`` may fetch the absolute ``url``."""

    def crawl_delay(self, user_agent: str | bytes | None = None) -> float | None:
        """``Crawl-delay`` in seconds for ``user_agent``, or ``None`` if the file has none."""
        raise DirectiveNotSupported(self, CRAWL_DELAY)

    def request_rate(self, user_agent: str | bytes | None = None) -> RequestRate | None:
        """``Request-rate`` for ``user_agent``, or ``None`` if the file has none."""
        raise DirectiveNotSupported(self, REQUEST_RATE)

    def sitemaps(self) -> list[str]:
        """The ``Sitemap`` URLs, in file order."""
        raise DirectiveNotSupported(self, SITEMAP)

    def preferred_host(self) -> str | None:
        """The ``Host`` directive (Yandex), or ``None`` if the file has none."""
        raise DirectiveNotSupported(self, HOST)

    def usage_preferences(self, user_agent: str | bytes | None = None) -> tuple[tuple[int, str, str], ...]:
        """``(line, "Content-Signal" | "Content-Usage", value)`` of the group(s) ``user_agent``
        obeys. The middleware reads them with our parser whatever the backend."""
        raise DirectiveNotSupported(self, CONTENT_USAGE)

    def reduce(self, user_agent: str | bytes) -> tuple[Any, str] | None:
        """What ``user_agent`` obeys in this file and nothing else, and its text form;
        None (the default) when the backend cannot say it alone.

        A crawl keeps, for every site, what its agent obeys rather than the whole parse:
        an object with ``allowed(url)`` and the ``crawl_delay`` and ``request_rate``
        attributes that answers as this parser does for ``user_agent``. The text form is
        stored with the body, and :meth:`restore` builds the object again from it, so a
        site that left memory is not parsed again. An object that also has ``compile()``,
        ``release()`` and ``rules`` (how many rules it holds) is kept compiled only for the
        sites asked last (see :class:`~scrapy_robots.cache.RobotsCache`), like
        :class:`~scrapy_robots.rfc9309.AgentRules`. A parser that returns None is kept
        whole, for ``ROBOTSTXT_CACHE_PARSED`` sites, and parsed again when its site comes back.
        """
        return None

    @classmethod
    def restore(cls, form: str) -> Any | None:
        """:meth:`reduce`'s object built again from its text form; None if it cannot be."""
        return None

    # Helpers for the adapters: the one place where arguments are normalised.
    @staticmethod
    def _text(body: bytes | str) -> str:
        return decode_robotstxt(body)

    def _token(self, user_agent: str | bytes | None) -> str:
        return product_token(user_agent if user_agent else self.user_agent)

    @staticmethod
    def _url(url: str | bytes) -> str:
        return url.decode("utf-8", "replace") if isinstance(url, bytes) else url

    @staticmethod
    def _seconds(delay: Any) -> float | None:
        return None if delay is None else float(delay)

    @staticmethod
    def _rate(rate: Any) -> RequestRate | None:
        """A library's request-rate object (``.requests``, ``.seconds``) as ours."""
        return None if rate is None else RequestRate(int(rate.requests), float(rate.seconds))


class ScrapyRobotParser(RobotParser):
    """Wraps a parser written for Scrapy's interface (only ``allowed``, maybe
    ``crawl_delay``) so it can stand wherever a :class:`RobotParser` is expected.

    It passes the user agent through unchanged, as Scrapy's middleware does.
    """

    def __init__(self, wrapped: Any, user_agent: str = "*"):
        super().__init__(b"", user_agent)
        self.wrapped = wrapped
        supported = {ALLOW}
        if _implements_crawl_delay(type(wrapped)):
            supported.add(CRAWL_DELAY)
        self._supported = frozenset(supported)

    def supports(self, directive: str) -> bool:  # type: ignore[override]
        return directive in self._supported

    def allowed(self, url: str | bytes, user_agent: str | bytes | None = None) -> bool:
        return bool(self.wrapped.allowed(url, user_agent or self.user_agent))

    def crawl_delay(self, user_agent: str | bytes | None = None) -> float | None:
        if CRAWL_DELAY not in self._supported:
            raise DirectiveNotSupported(self.wrapped, CRAWL_DELAY)
        return self._seconds(self.wrapped.crawl_delay(user_agent or self.user_agent))

    def request_rate(self, user_agent: str | bytes | None = None) -> RequestRate | None:
        raise DirectiveNotSupported(self.wrapped, REQUEST_RATE)

    def sitemaps(self) -> list[str]:
        raise DirectiveNotSupported(self.wrapped, SITEMAP)

    def preferred_host(self) -> str | None:
        raise DirectiveNotSupported(self.wrapped, HOST)


def _implements_crawl_delay(cls: type) -> bool:
    method = getattr(cls, "crawl_delay", None)
    if method is None:
        return False
    try:
        from scrapy.robotstxt import RobotParser as ScrapyBase
    except ImportError:  # pragma: no cover - Scrapy is a dependency
        return True
    # Scrapy's base class answers None for "unsupported"; only an override reads the file.
    return method is not getattr(ScrapyBase, "crawl_delay", None)


def as_robot_parser(parser: Any, user_agent: str = "*") -> RobotParser:
    """Return ``parser`` if it implements our interface, else wrap it."""
    if isinstance(parser, RobotParser):
        return parser
    if not callable(getattr(parser, "allowed", None)):
        raise TypeError(f"{type(parser).__name__} has no allowed(url, user_agent) method")
    return ScrapyRobotParser(parser, user_agent)


def check_parser_class(name: str, cls: Any) -> None:
    """Fail at start-up, naming the setting ``name``, unless ``cls`` can serve as a
    parser class: built with ``from_crawler(crawler, robotstxt_body)`` (or
    ``cls(robotstxt_body)``), then asked ``allowed(url, user_agent)``, as Scrapy's
    ``RobotParser`` interface says."""
    # A setting is "NAME = value"; a command-line option (--parser) is "--parser value".
    what = f"{name} {object_name(cls)}" if name.startswith("-") else f"{name} = {object_name(cls)}"
    fix = (
        "Use a parser class: one of scrapy_robots.parsers (RFC9309Parser, ProtegoParser, PythonParser for "
        "urllib.robotparser, RerpParser, ReppyParser, GoogleParser), one of scrapy.robotstxt, or your own with "
        "from_crawler(crawler, robotstxt_body) and allowed(url, user_agent)."
    )
    if not isinstance(cls, type):
        raise SettingError(f"{what} is not a class. {fix}")
    allowed = getattr(cls, "allowed", None)
    if not callable(allowed):
        raise SettingError(f"{what} has no allowed(url, user_agent) method: it cannot answer. {fix}")
    if inspect.isabstract(cls):
        abstract = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        raise SettingError(f"{what} is abstract ({abstract}). {fix}")
    try:
        signature = inspect.signature(allowed)
    except (TypeError, ValueError):  # a builtin: nothing to check
        return
    # Looked up on the class, a plain method takes the instance first.
    instance = () if isinstance(inspect.getattr_static(cls, "allowed"), (staticmethod, classmethod)) else (None,)
    try:
        signature.bind(*instance, "https://example.com/", "agent")
    except TypeError:
        raise SettingError(
            f"{what}: its allowed{signature} cannot be called as allowed(url, user_agent). {fix}"
        ) from None
