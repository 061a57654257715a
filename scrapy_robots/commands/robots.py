"""``scrapy robots``: may I fetch this URL, how fast, and which line of robots.txt decided?

The answers come from the crawl's own machinery: a real crawl whose spider asks the
enabled :class:`~scrapy_robots.middleware.RobotsTxtMiddleware` (``robots_for`` then
``verdict``), so the fetch, the status policy, the parser and the delay are the ones
``scrapy crawl`` would use with the same settings. ``--file`` answers the middleware's
robots.txt request with a local file instead of the network; nothing else changes.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Spider
from scrapy.commands import ScrapyCommand
from scrapy.http import Request, Response
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.misc import build_from_crawler, load_object

from scrapy_robots.addon import OURS, STOCK, Addon
from scrapy_robots.commands.robots_text import (
    UNSUPPORTED,
    Paint,
    format_brief,
    format_compare,
    format_lint,
    format_report,
    format_summary,
)
from scrapy_robots._settings import read_bool
from scrapy_robots.cache import check_storage_class
from scrapy_robots.config import MEMORY_STORAGE, RobotsConfig
from scrapy_robots.decoding import charset_from_content_type, decode_robotstxt
from scrapy_robots.fetch import FETCH_META, robots_url
from scrapy_robots.lint import Finding, lint_robotstxt, looks_binary
from scrapy_robots.usage import UsageConfig
from scrapy_robots.parsers import (
    DirectiveNotSupported,
    RobotParser,
    as_robot_parser,
    check_parser_class,
    default_user_agent,
)
from scrapy_robots.policy import Action
from scrapy_robots.rfc9309 import GroupBuilder, parse_robotstxt
from scrapy_robots.slots import slot_delay, user_delay as slot_user_delay
from scrapy_robots.useragent import product_token
from scrapy_robots.verdict import user_agent, verdict

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.middleware import RobotsTxtMiddleware

#: ``--parser`` short names, in the order ``--compare`` prints them.
BACKENDS: dict[str, str] = {
    "rfc9309": "scrapy_robots.parsers.RFC9309Parser",
    "protego": "scrapy_robots.parsers.ProtegoParser",
    "python": "scrapy_robots.parsers.PythonParser",
    "rerp": "scrapy_robots.parsers.RerpParser",
    "reppy": "scrapy_robots.parsers.ReppyParser",
    "google": "scrapy_robots.parsers.GoogleParser",
}

#: Exit statuses, as ``grep``'s: all allowed, some denied, an error.
EXIT_ALLOWED, EXIT_DENIED, EXIT_ERROR = 0, 1, 2

# Settings through which the command hands objects to the components it adds.
PARSER_SETTING = "ROBOTS_COMMAND_PARSER"
MIDDLEWARE_SETTING = "ROBOTS_COMMAND_MIDDLEWARE"
FILE_SETTING = "ROBOTS_COMMAND_FILE"
ADDON = "scrapy_robots.Addon"
LOCAL_FILE_MIDDLEWARE = "scrapy_robots.commands.robots.LocalRobotsFile"
# After HttpCompressionMiddleware (590) has decompressed the response.
RAW_BODIES_MIDDLEWARE = "scrapy_robots.commands.robots.RawRobotsBodies"
RECORDING_PARSER = "scrapy_robots.commands.robots.RecordingParser"
# A bare path given with --file is checked as a URL of this site.
FILE_SITE = "https://example.com"

CMDLINE = SETTINGS_PRIORITIES["cmdline"]

# The names a project may give the middlewares. Matched as text: importing ours (or a
# project's middlewares) before Scrapy installs its reactor would install the default one.
OUR_MIDDLEWARE_NAMES = frozenset({OURS, "scrapy_robots.RobotsTxtMiddleware"})
OUR_ADDON_NAMES = frozenset({ADDON, "scrapy_robots.addon.Addon"})
#: The answers the command gives: ours, or those of Scrapy's own middleware.
SCRAPY_ROBOTS, SCRAPY_STOCK = "scrapy_robots.RobotsTxtMiddleware", STOCK
# What the command changes to answer as Scrapy's own middleware does: it parses the
# body whatever the status, allows all on a network error, reads no Crawl-delay and
# excludes no domain.
STOCK_BEHAVIOUR = {
    "ROBOTSTXT_STATUS_POLICY": "scrapy",
    "ROBOTSTXT_CRAWL_DELAY": False,
    "ROBOTSTXT_EXCLUDED_DOMAINS": [],
}


class RecordingParser(RobotParser):
    """Builds the chosen ``ROBOTSTXT_PARSER`` class on the body the middleware hands
    it, exactly as the middleware would, and keeps that body: ``--compare`` and
    ``--lint`` then read the very bytes the crawl parsed (after the size cap and the
    charset decoding), from one fetch."""

    def __init__(self, robotstxt_body: bytes, parser: RobotParser):
        super().__init__(robotstxt_body, parser.user_agent)
        self.body = robotstxt_body
        self.parser = parser

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> RecordingParser:
        built = build_from_crawler(crawler.settings[PARSER_SETTING], crawler, robotstxt_body)
        return cls(robotstxt_body, as_robot_parser(built, default_user_agent(crawler.settings)))

    def supports(self, directive: str) -> bool:  # type: ignore[override]
        return self.parser.supports(directive)

    def allowed(self, url: str | bytes, user_agent: str | bytes | None = None) -> bool:
        return self.parser.allowed(url, user_agent)

    def crawl_delay(self, user_agent: str | bytes | None = None) -> float | None:
        return self.parser.crawl_delay(user_agent)

    def request_rate(self, user_agent: str | bytes | None = None) -> Any:
        return self.parser.request_rate(user_agent)

    def sitemaps(self) -> list[str]:
        return self.parser.sitemaps()

    def preferred_host(self) -> str | None:
        return self.parser.preferred_host()


class LocalRobotsFile:
    """``--file``: a downloader middleware that answers the middleware's robots.txt
    request with the local file (HTTP 200), so the size cap, the status policy, the
    parser and the delay stay the crawl's own, and nothing touches the network."""

    def __init__(self, body: bytes):
        self.body = body

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> LocalRobotsFile:
        return cls(crawler.settings[FILE_SETTING])

    def process_request(self, request: Request, spider: Spider | None = None) -> Response | None:
        if not request.meta.get(FETCH_META):
            return None
        return Response(
            request.url, status=200, headers={"Content-Type": "text/plain"}, body=self.body, request=request
        )


class RawRobotsBodies:
    """``--lint``: keeps each robots.txt response's body as it came (decompressed), with
    its ``Content-Type``: the linter reads the bytes, before the middleware re-encodes
    them as UTF-8 for the parser (bytes that are not UTF-8 are a finding)."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RawRobotsBodies:
        return cls(crawler)

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        if request.meta.get(FETCH_META):
            bodies = getattr(self.crawler.spider, "raw_bodies", None)
            if bodies is not None:
                bodies[response.url] = (response.body, response.headers.get(b"Content-Type"))
        return response


class RobotsQuerySpider(Spider):
    """Asks the enabled middleware about each URL; downloads nothing but robots.txt."""

    name = "robots"

    def __init__(
        self,
        checks: list[tuple[str, str | None]],
        results: list[dict[str, Any]],
        compare: bool = False,
        lint: bool = False,
        summary: bool = False,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.checks = checks  # (absolute URL, user agent or None: the crawl's own)
        self.results = results
        self.compare = compare
        self.lint = lint
        self.summary = summary
        self._by_site: dict[str, dict[str, Any]] = {}
        self._backends: tuple[dict[str, Any], dict[str, str]] | None = None
        #: robots.txt URL -> (body as received, Content-Type), filled by RawRobotsBodies.
        self.raw_bodies: dict[str, tuple[bytes, bytes | None]] = {}

    async def start(self) -> AsyncIterator[Any]:
        from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
        from twisted.internet.defer import DeferredList

        from scrapy_robots.middleware import RobotsTxtMiddleware

        mw = self.crawler.get_downloader_middleware(RobotsTxtMiddleware)
        # The crawl's settings, as the middleware read them: the verdict needs them.
        self.config = RobotsConfig.from_settings(self.crawler.settings)
        if mw is None:
            message = "scrapy_robots' RobotsTxtMiddleware is not enabled"
            self.results[:] = [_error(url, message) for url, _ in self.checks]
            return
        # Sites are fetched concurrently, as a crawl would; answers keep the input order.
        await maybe_deferred_to_future(
            DeferredList([deferred_from_coro(self._check(mw, i, *check)) for i, check in enumerate(self.checks)])
        )
        return
        yield  # pragma: no cover - an async generator that yields no request

    async def _check(self, mw: RobotsTxtMiddleware, index: int, url: str, agent: str | None) -> None:
        try:
            # An agent of its own goes as the request's User-Agent, which the middleware
            # obeys as when ROBOTSTXT_USER_AGENT is not set (the command unsets it then).
            request = Request(url, dont_filter=True, headers={"User-Agent": agent} if agent else None)
            entry = await mw.robots_for(request)
            self.results[index] = self._report(mw, url, request, entry)
        except Exception as exc:  # noqa: BLE001 - one line per URL, never a traceback
            self.results[index] = _error(url, f"{type(exc).__name__}: {exc}", agent)

    def _report(self, mw: RobotsTxtMiddleware, url: str, request: Request, entry: RobotsEntry) -> dict[str, Any]:
        from scrapy_robots.delay import read_site_delay

        config = self.config
        agent = _text(user_agent(request, config))
        recorded = entry.parser if isinstance(entry.parser, RecordingParser) else None
        parser = recorded.parser if recorded is not None else entry.parser
        if entry.action is Action.PARSE and parser is not None and config.crawl_delay:
            # The site's delay was read for the crawl's agent; this one may have its own group.
            delay = read_site_delay(parser, agent, config.max_crawl_delay, config.crawl_delay_exceeded)
            entry = replace(entry, delay=delay)
        answer = verdict(entry, request, config)
        user_delay = slot_user_delay(self.crawler, request)
        applied = entry.delay is not None and config.crawl_delay and not entry.delay.skip
        report: dict[str, Any] = {
            "url": url,
            "allowed": answer.allowed,
            "reason": answer.reason,
            "error": None,
            "user_agent": agent,
            "product_token": product_token(agent),
            "parser": _class_name(self.crawler.settings[PARSER_SETTING]),
            "middleware": self.crawler.settings[MIDDLEWARE_SETTING],
            "robots_txt": {
                "url": entry.url or robots_url(entry.site),
                "status": entry.status,
                "redirects": entry.redirects,
                "size": entry.size,
                "truncated": entry.truncated,
                "policy": entry.action.value,
                "error": entry.error,
            },
            "decision": _decision(parser, url, agent) if entry.action is Action.PARSE else None,
            "usage": request.meta.get("robotstxt_usage"),  # ROBOTSTXT_USAGE / --usage, set by the verdict
            "crawl_delay": _ask(parser, "crawl_delay", agent),
            "request_rate": _ask(parser, "request_rate", agent),
            "delay": asdict(entry.delay) if entry.delay is not None else None,
            "user_delay": user_delay,
            "slot_delay": slot_delay(user_delay, entry.delay.applied if applied and entry.delay else None),
            "max_crawl_delay": config.max_crawl_delay,
            "sitemaps": _ask(parser, "sitemaps"),
        }
        site = self._by_site.setdefault(entry.site, {})
        if self.compare:
            report["compare"] = self._compare(mw, site, request, entry, agent, recorded)
            report["not_installed"] = self._backends[1] if self._backends else {}
        if self.lint:
            if "lint" not in site:
                site["lint"] = (
                    [asdict(f) for f in self._lint(entry, recorded)] if recorded is not None else None
                )
            report["lint"] = site["lint"]
        if self.summary:
            if "summary" not in site:
                site["summary"] = summarize_robotstxt(recorded.body) if recorded is not None else None
            report["summary"] = site["summary"]
        return report

    def _lint(self, entry: RobotsEntry, recorded: RecordingParser) -> list[Finding]:
        raw = self.raw_bodies.get(entry.url or "")
        if raw is None:
            return lint_robotstxt(recorded.body, truncated=entry.truncated)
        # The bytes the crawl parsed: those received, up to the size cap.
        body, content_type = raw
        return lint_robotstxt(
            body[: entry.size], encoding=charset_from_content_type(content_type), truncated=entry.truncated
        )

    def _compare(
        self, mw: RobotsTxtMiddleware, site: dict[str, Any], request: Request, entry: RobotsEntry, agent: str,
        recorded: RecordingParser | None,
    ) -> dict[str, Any]:
        from scrapy_robots.delay import read_site_delay

        if self._backends is None:
            self._backends = installed_backends(self.crawler)
        columns = self._backends[0]
        if "parsers" not in site:
            # Every backend reads the bytes the crawl parsed; built once per site.
            site["parsers"] = {
                name: _build(self.crawler, cls, recorded.body) if recorded is not None else None
                for name, cls in columns.items()
            }
        answers: dict[str, Any] = {}
        config = self.config
        for name, parser in site["parsers"].items():
            if isinstance(parser, str):  # it could not parse this file
                answers[name] = {"allowed": None, "crawl_delay": None, "error": parser}
                continue
            if parser is None:  # nothing parsed: the status policy decided, for every parser
                answers[name] = {"allowed": verdict(entry, request, config).allowed, "crawl_delay": None, "error": None}
                continue
            delay = read_site_delay(parser, agent, config.max_crawl_delay, config.crawl_delay_exceeded)
            answer = verdict(replace(entry, parser=parser, delay=delay if config.crawl_delay else None), request, config)
            answers[name] = {"allowed": answer.allowed, "crawl_delay": _ask(parser, "crawl_delay", agent), "error": None}
        return answers


def installed_backends(crawler: Crawler) -> tuple[dict[str, Any], dict[str, str]]:
    """The ``--compare`` columns, every backend whose library is installed here (and
    the chosen parser when it is none of them); and the others, with the reason.

    A backend whose library is missing is no answer about the file: an "error" in
    every row would mark every row as a disagreement."""
    backends: dict[str, Any] = {}
    missing: dict[str, str] = {}
    for name, path in BACKENDS.items():
        try:
            cls = load_object(path)
            # reppy is imported when a file is parsed, not when its adapter is.
            build_from_crawler(cls, crawler, b"")
        except ImportError as exc:  # an optional library (reppy, google)
            missing[name] = str(exc)
            continue
        except Exception:  # noqa: BLE001 - installed: its answer on the real file says more
            pass
        backends[name] = cls
    chosen = crawler.settings[PARSER_SETTING]
    if chosen not in backends.values():
        backends[_class_name(chosen)] = chosen
    return backends, missing


def _build(crawler: Crawler, cls: Any, body: bytes) -> RobotParser | str:
    try:
        return as_robot_parser(build_from_crawler(cls, crawler, body), default_user_agent(crawler.settings))
    except Exception as exc:  # noqa: BLE001 - shown in its column
        return f"{type(exc).__name__}: {exc}"


def _decision(parser: RobotParser | None, url: str, agent: str) -> dict[str, Any] | None:
    explain = getattr(parser, "explain", None)
    if explain is None:
        return None
    explanation = explain(url, agent)
    rule = explanation.rule
    return {
        "group": [{"line": line, "user_agent": value} for line, value in explanation.group_lines],
        "rule": {"line": rule.line, "text": rule.text, "allow": rule.allow} if rule is not None else None,
        "explanation": explanation.reason,
    }


def _ask(parser: RobotParser | None, method: str, *args: Any) -> Any:
    if parser is None:
        return None
    try:
        value = getattr(parser, method)(*args)
    except DirectiveNotSupported:
        return UNSUPPORTED
    if method == "request_rate" and value is not None:
        return {"requests": value.requests, "seconds": value.seconds}
    return value


class _Summary(GroupBuilder):
    """The parser's own groups, with the line of every record and sitemap kept."""

    def __init__(self) -> None:
        super().__init__()
        self.records: dict[int, list[dict[str, Any]]] = {}
        self.sitemap_lines: list[dict[str, Any]] = []
        self.orphans: list[int] = []

    def _record(self, line: int, text: str) -> None:
        if self._group is None:
            self.orphans.append(line)
        else:
            self.records.setdefault(id(self._group), []).append({"line": line, "text": text})

    def handle_allow(self, line: int, value: str) -> None:
        if self._rules is None:
            self.orphans.append(line)
        super().handle_allow(line, value)

    def handle_disallow(self, line: int, value: str) -> None:
        if self._rules is None:
            self.orphans.append(line)
        super().handle_disallow(line, value)

    def handle_crawl_delay(self, line: int, value: str) -> None:
        self._record(line, f"Crawl-delay: {value}")
        super().handle_crawl_delay(line, value)

    def handle_request_rate(self, line: int, value: str) -> None:
        self._record(line, f"Request-rate: {value}")
        super().handle_request_rate(line, value)

    def handle_visit_time(self, line: int, value: str) -> None:
        self._record(line, f"Visit-time: {value}")
        super().handle_visit_time(line, value)

    def handle_sitemap(self, line: int, value: str) -> None:
        if value:
            self.sitemap_lines.append({"line": line, "url": value})
        super().handle_sitemap(line, value)


def summarize_robotstxt(body: bytes | str) -> dict[str, Any]:
    """The groups of ``body`` as the RFC 9309 parser builds them: each with its
    ``User-agent`` lines, its rules and its records, with line numbers; the sitemaps,
    the ``Host``, and the lines before any ``User-agent`` (they bind no crawler)."""
    summary = _Summary()
    parse_robotstxt(decode_robotstxt(body), summary)
    return {
        "groups": [
            {
                "line": group.agents[0][0],
                "user_agents": [{"line": line, "user_agent": value} for line, value, _ in group.agents],
                "rules": [{"line": line, "allow": allow, "pattern": pattern} for line, allow, pattern in group.rules],
                "records": summary.records.get(id(group), []),
            }
            for group in summary.groups
        ],
        "sitemaps": summary.sitemap_lines,
        "host": summary.host,
        "orphans": summary.orphans,
    }


def _error(url: str, message: str, agent: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"url": url, "allowed": None, "error": message}
    if agent:
        error["user_agent"] = agent
    return error


def _text(value: str | bytes) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _class_name(cls: Any) -> str:
    return getattr(cls, "__name__", str(cls))


def _component_name(key: Any) -> str:
    return key if isinstance(key, str) else f"{getattr(key, '__module__', '')}.{getattr(key, '__qualname__', key)}"


def crawl_middleware(settings: BaseSettings) -> str | None:
    """The robots.txt middleware ``scrapy crawl`` runs with ``settings``: ours (by the
    add-on or by hand, under either name), Scrapy's own, or None (neither is enabled)."""
    for key, priority in settings["ADDONS"].items():
        if priority is None:
            continue
        if _component_name(key) in OUR_ADDON_NAMES or (isinstance(key, type) and issubclass(key, Addon)):
            return SCRAPY_ROBOTS
    enabled = {
        _component_name(key)
        for key, order in settings.getwithbase("DOWNLOADER_MIDDLEWARES").items()
        if order is not None
    }
    if enabled & OUR_MIDDLEWARE_NAMES:
        return SCRAPY_ROBOTS
    return SCRAPY_STOCK if STOCK in enabled else None


def parser_path(name: str) -> str:
    """``--parser``'s value as an import path: a short name or an import path."""
    return BACKENDS.get(name.strip().lower(), name.strip())


def check_url(url: str, local_file: bool) -> tuple[str | None, str | None]:
    """``(absolute URL, None)``, or ``(None, error)`` for input that names no web page."""
    if local_file and url.startswith("/"):
        return FILE_SITE + url, None
    try:
        parts = urlsplit(url)
        parts.hostname  # noqa: B018 - raises on a bad IPv6 literal ('https://[::1/x')
    except ValueError as exc:
        return None, f"{url!r} is not a valid URL ({exc})"
    if parts.scheme.lower() in ("http", "https") and parts.hostname:
        try:
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            return None, f"{url!r} has an invalid port"
        return url, None
    if not parts.scheme or "." in parts.scheme or not url.partition(":")[2].startswith("//"):
        return None, f"{url!r} is not an absolute http(s) URL (did you mean 'https://{url.lstrip('/')}'?)"
    return None, f"{url!r} is not an http(s) URL"


class Command(ScrapyCommand):
    requires_project = False
    default_settings = {
        # A command line must not wait minutes for a site that hangs (a project's own
        # DOWNLOAD_TIMEOUT / ROBOTSTXT_TIMEOUT still wins).
        "DOWNLOAD_TIMEOUT": 15,
        "TELNETCONSOLE_ENABLED": False,
        "LOGSTATS_INTERVAL": 0,
    }

    def syntax(self) -> str:
        return "[options] [URL ...]"

    def short_desc(self) -> str:
        return "Ask robots.txt: may I fetch this URL, how fast, and which line decided?"

    def long_desc(self) -> str:
        return (
            "Fetch each site's robots.txt through Scrapy's downloader and the robots.txt middleware the "
            "project's crawl uses, with the project's settings, and say for each URL whether it may be crawled, "
            "which line of robots.txt decided, the status policy's outcome, the crawl delay the crawl would "
            "apply and the sitemaps listed. --file checks a local robots.txt instead (with no URL: a summary "
            "of its groups and rules). Exit status: 0 all URLs allowed, 1 some denied (--lint alone or "
            "--strict: a finding), 2 an error. Docs: docs/command.rst in the source."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        group = parser.add_argument_group(title="robots.txt")
        group.add_argument(
            "--file", metavar="PATH", help="check this local robots.txt ('-': standard input) instead of the sites'"
        )
        group.add_argument(
            "--urls", metavar="PATH",
            help="check the URLs in this file too, one a line, '-' for standard input (blank lines and # comments "
            "are skipped)",
        )
        group.add_argument(
            "--user-agent", metavar="AGENT", action="append",
            help="the agent to ask as; repeat it to ask as several (default: ROBOTSTXT_USER_AGENT, else USER_AGENT, "
            "as the crawl does)",
        )
        group.add_argument(
            "--parser", metavar="NAME",
            help=f"the parser: {', '.join(BACKENDS)} or an import path (default: ROBOTSTXT_PARSER)",
        )
        group.add_argument(
            "--spider", metavar="NAME", help="use this project spider's custom_settings (and its user_agent)"
        )
        group.add_argument(
            "--compare", action="store_true", help="ask every installed parser and show where they disagree"
        )
        group.add_argument("--lint", action="store_true", help="list the lines no parser rule uses, and why")
        group.add_argument(
            "--usage", metavar="PURPOSE",
            help="answer for this purpose too (train-ai, search, ...; comma-separated): robots.txt Content-Signal / "
            "Content-Usage lines decide, as with ROBOTSTXT_USAGE",
        )
        group.add_argument(
            "--strict", action="store_true", help="--lint, and any finding makes the exit status 1 (for CI)"
        )
        group.add_argument(
            "--summary", action="store_true",
            help="print each robots.txt's groups and rules instead of the answers (the default with --file and no URL)",
        )
        group.add_argument("--brief", action="store_true", help="one line per URL: the verdict and what decided")
        group.add_argument("--json", action="store_true", help="print one JSON object per URL (JSON lines)")
        group.add_argument(
            "--color", choices=("auto", "always", "never"), default="auto",
            help="colour the verdicts: auto (on a terminal, unless NO_COLOR is set), always, never",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        self.problem: str | None = None
        self.body: bytes | None = None
        self.urls: list[str] = []
        self.notes: list[str] = []
        # Quiet unless the user asked (-L, --loglevel, -s LOG_LEVEL=...): the answers
        # go to standard output, and a project's DEBUG log would bury them. Logging is
        # set up before run(): this cannot wait.
        self._unless_given("LOG_LEVEL", "WARNING")
        if opts.strict:
            opts.lint = True
        if opts.file == "-" and opts.urls == "-":
            self.problem = "--file - and --urls - cannot both read standard input"
            return
        if opts.file:
            self.body = self._read_robotstxt(opts.file)
        if opts.urls and self.problem is None:
            self.urls = self._read_urls(opts.urls)

    def _prepare(self, opts: argparse.Namespace) -> None:
        """Settings as the crawl would have them, then what the command changes: run
        after the spider's custom_settings are in (``--spider`` needs the spider loader)."""
        assert self.settings is not None
        settings = self.settings
        # A command line answers now: one attempt, no unreachable retries.
        self._unless_given("ROBOTSTXT_UNREACHABLE_RETRY_TIMES", 0)
        # A question writes nothing: not into the project's JOBDIR (its scheduler queue,
        # spider state, robots.txt cache), not into a shared cache.
        self._unless_given("JOBDIR", None)
        self._unless_given("ROBOTSTXT_CACHE_STORAGE", MEMORY_STORAGE)
        try:
            self.middleware = self._choose_middleware(settings)
        except ValueError as exc:  # ROBOTSTXT_OBEY neither true nor false
            self.problem = str(exc)
            return
        if opts.user_agent and len(opts.user_agent) == 1:
            settings.set("ROBOTSTXT_USER_AGENT", opts.user_agent[0], priority="cmdline")
        elif opts.user_agent:
            # Each check carries its agent as its User-Agent header (see RobotsQuerySpider).
            settings.set("ROBOTSTXT_USER_AGENT", None, priority="cmdline")
        if opts.parser:
            settings.set("ROBOTSTXT_PARSER", parser_path(opts.parser), priority="cmdline")
        try:
            # Every ROBOTSTXT_* setting checked now, with the middleware's own messages.
            config = RobotsConfig.from_settings(settings)
            chosen = config.parser_class
            check_parser_class("ROBOTSTXT_PARSER", chosen)
            check_storage_class("ROBOTSTXT_CACHE_STORAGE", config.storage_class)
            if opts.usage:
                settings.set("ROBOTSTXT_USAGE", opts.usage, priority="cmdline")
                settings.set("ROBOTSTXT_USAGE_MODE", "deny", priority="cmdline")
            UsageConfig.from_settings(settings)
        except ValueError as exc:
            self.problem = str(exc)
            return
        settings.set(PARSER_SETTING, chosen, priority="cmdline")
        settings.set(MIDDLEWARE_SETTING, self.middleware, priority="cmdline")
        settings.set("ROBOTSTXT_PARSER", RECORDING_PARSER, priority="cmdline")
        if opts.lint:
            settings["DOWNLOADER_MIDDLEWARES"].set(RAW_BODIES_MIDDLEWARE, 580, priority="cmdline")
        if self.body is not None:
            settings.set(FILE_SETTING, self.body, priority="cmdline")
            settings["DOWNLOADER_MIDDLEWARES"].set(LOCAL_FILE_MIDDLEWARE, 1, priority="cmdline")

    def _apply_spider(self, name: str) -> None:
        """``--spider``: the spider's ``custom_settings`` (at their own priority, so ``-s``
        still wins) and its ``user_agent`` attribute, which Scrapy sends as USER_AGENT."""
        assert self.crawler_process is not None and self.settings is not None
        try:
            spidercls = self.crawler_process.spider_loader.load(name)
        except KeyError:
            names = sorted(self.crawler_process.spider_loader.list())
            known = f"this project's spiders: {', '.join(names)}" if names else "no spider is found here (not a project?)"
            self.problem = f"--spider {name}: no spider of that name; {known}"
            return
        spidercls.update_settings(self.settings)
        user_agent = getattr(spidercls, "user_agent", None)
        if user_agent:
            self.settings.set("USER_AGENT", user_agent, priority="spider")

    def _choose_middleware(self, settings: BaseSettings) -> str:
        """Answer as the project's crawl would: with Scrapy's own middleware if that is
        the one its settings enable (emulated by ours with Scrapy's behaviour), else
        with ours; ``self.notes`` says so when it matters."""
        from scrapy.utils.project import inside_project

        current = crawl_middleware(settings)
        in_project = inside_project()
        if in_project and not read_bool(settings, "ROBOTSTXT_OBEY", False):
            self.notes.append(
                "ROBOTSTXT_OBEY is False in this project: `scrapy crawl` does not check robots.txt; "
                "these are the answers it would give if it did"
            )
        settings.set("ROBOTSTXT_OBEY", True, priority="cmdline")
        if current != SCRAPY_ROBOTS:
            # The add-on enables ours in place of Scrapy's; a project that enables ours
            # already (under either name) would get it twice, with Scrapy's warning.
            settings["ADDONS"].set(ADDON, 0, priority="cmdline")
        if not in_project or current == SCRAPY_ROBOTS:
            return SCRAPY_ROBOTS
        if current is None:
            self.notes.append(
                "this project enables no robots.txt middleware (DOWNLOADER_MIDDLEWARES): `scrapy crawl` "
                "checks no robots.txt; these are the answers of scrapy_robots.RobotsTxtMiddleware"
            )
            return SCRAPY_ROBOTS
        parser = settings.get("ROBOTSTXT_PARSER")
        settings.set("ROBOTSTXT_PARSER", parser, priority="cmdline")
        for name, value in STOCK_BEHAVIOUR.items():
            settings.set(name, value, priority="cmdline")
        self.notes.append(
            f"this project crawls with Scrapy's own RobotsTxtMiddleware ({STOCK}), so these are its answers: "
            f"robots.txt parsed with {_class_name(parser).rsplit('.', 1)[-1]} whatever the HTTP status, a network "
            "error allows all, no Crawl-delay. For scrapy_robots' answers: "
            "-s 'ADDONS={\"scrapy_robots.Addon\": 0}' (or enable it in settings.py)"
        )
        return SCRAPY_STOCK

    def _unless_given(self, name: str, value: Any) -> None:
        assert self.settings is not None
        if (self.settings.getpriority(name) or 0) < CMDLINE:
            self.settings.set(name, value, priority="cmdline")

    def _read_robotstxt(self, path: str) -> bytes | None:
        body = self._read_bytes(path)
        if body is not None and looks_binary(body):
            self.problem = f"{_where(path)} is binary data, not a robots.txt"
            return None
        return body

    def _read_urls(self, path: str) -> list[str]:
        data = self._read_bytes(path)
        if data is None:
            return []
        lines = (line.strip() for line in data.decode("utf-8", "replace").splitlines())
        return [line for line in lines if line and not line.startswith("#")]

    def _read_bytes(self, path: str) -> bytes | None:
        try:
            return sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        except OSError as exc:
            self.problem = f"cannot read {_where(path)}: {exc.strerror or exc}"
            return None

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if self.problem is None and opts.spider:
            self._apply_spider(opts.spider)
        if self.problem is None:
            self._prepare(opts)
        urls = [*args, *self.urls]
        summary_only = opts.summary or (opts.file is not None and not urls and not opts.lint)
        if self.problem is None and not urls and opts.file is None:
            self.problem = "nothing to check: give one or more URLs (--urls PATH), or --file PATH"
        if self.problem is not None:
            self._fail(self.problem)
            return
        for note in self.notes:
            print(f"scrapy robots: note: {note}", file=sys.stderr)
        agents: list[str | None] = list(opts.user_agent) if opts.user_agent and len(opts.user_agent) > 1 else [None]
        checks: list[tuple[str, str | None]] = []
        results: list[dict[str, Any]] = []
        for url in urls:
            absolute, error = check_url(url, opts.file is not None)
            for agent in agents:
                checks.append((absolute or url, agent))
                results.append(_error(url, error, agent) if error else {})
        pending = [i for i, result in enumerate(results) if not result]
        if pending:
            self._crawl([checks[i] for i in pending], opts, results, pending, summary_only)
        for (given, _), result in zip(((u, a) for u in urls for a in agents), results):
            result["url"] = given  # a bare path given with --file stays a path
            if "robots_txt" in result:
                result["robots_txt"]["file"] = opts.file
                # An answer, and an error all the same: the exit status is 2.
                result["error"] = _unreachable(result)
        file_lint = lint_robotstxt(self.body) if opts.lint and self.body is not None else None
        output = Output(opts, Paint(opts.color, sys.stdout), several_agents=len(agents) > 1)
        if summary_only:
            file_summary = summarize_robotstxt(self.body) if self.body is not None and not urls else None
            output.summaries(results, file_summary)
            self.exitcode = EXIT_ERROR if any(r.get("error") for r in results) else EXIT_ALLOWED
            return
        output.answers(results, file_lint)
        self.exitcode = exit_status(results, file_lint, strict=opts.strict)

    def _crawl(
        self, checks: list[tuple[str, str | None]], opts: argparse.Namespace, results: list[dict[str, Any]],
        slots: list[int], summary: bool,
    ) -> None:
        assert self.crawler_process is not None
        answers: list[dict[str, Any]] = [_error(url, "no answer") for url, _ in checks]
        crawler = self.crawler_process.create_crawler(RobotsQuerySpider)
        assert self.settings is not None
        try:
            # A parser that cannot be built (a bad option, a library missing) fails
            # here with its own message, not as a traceback from inside the crawl.
            build_from_crawler(self.settings[PARSER_SETTING], crawler, b"")
        except Exception as exc:  # noqa: BLE001
            parser = _class_name(self.settings[PARSER_SETTING])
            for slot, (url, _) in zip(slots, checks):
                results[slot] = _error(url, f"ROBOTSTXT_PARSER = {parser} cannot be used: {exc}")
            return
        self.crawler_process.crawl(
            crawler, checks=checks, results=answers, compare=opts.compare, lint=opts.lint, summary=summary
        )
        self.crawler_process.start()
        if getattr(self.crawler_process, "bootstrap_failed", False):
            answers = [_error(url, "the crawl could not start (see the log above)") for url, _ in checks]
        for slot, answer in zip(slots, answers):
            results[slot] = answer

    def _fail(self, message: str) -> None:
        print(f"scrapy robots: error: {message}", file=sys.stderr)
        self.exitcode = EXIT_ERROR


class Output:
    """Prints the answers: JSON lines, a report per URL, one line per URL, a table."""

    def __init__(self, opts: argparse.Namespace, paint: Paint, several_agents: bool):
        self.opts = opts
        self.paint = paint
        self.several_agents = several_agents
        self.local_file = "standard input" if opts.file == "-" else opts.file

    def answers(self, results: list[dict[str, Any]], file_lint: list[Finding] | None) -> None:
        opts = self.opts
        if opts.json:
            if file_lint is not None and not results:
                print(json.dumps({"file": opts.file, "lint": [asdict(f) for f in file_lint]}))
            for result in results:
                if file_lint is not None:
                    result["lint"] = [asdict(f) for f in file_lint]
                print(json.dumps(result))
            return
        lines: list[str] = []
        if opts.brief:
            # One line per URL, errors included, in the order given: a script can paste it.
            width = max((len(r.get("user_agent") or "") for r in results), default=0) if self.several_agents else 0
            lines.extend(format_brief(r, self.paint, width) for r in results)
        else:
            self._errors(results)
            # An unreachable robots.txt is an error with a report (the policy's verdict).
            answered = [r for r in results if "robots_txt" in r]
            if opts.compare:
                lines.append(format_compare(answered, self.paint, self.several_agents))
            else:
                lines.extend(
                    format_report(r, opts.file, self.paint, self.several_agents) for r in answered
                )
        if file_lint is not None:
            lines.append(format_lint(self.local_file, file_lint, self.paint))
        elif opts.lint:
            seen: set[str] = set()
            for result in results:
                where = (result.get("robots_txt") or {}).get("url")
                if where and where not in seen:
                    seen.add(where)
                    lines.append(format_lint(where, result["lint"], self.paint))
        if lines:
            sys.stdout.write("\n".join(lines) + "\n")

    def summaries(self, results: list[dict[str, Any]], file_summary: dict[str, Any] | None) -> None:
        if self.opts.json:
            if file_summary is not None:
                print(json.dumps({"file": self.opts.file, "summary": file_summary}))
            seen: set[str] = set()
            for result in results:
                where = (result.get("robots_txt") or {}).get("url")
                if where is None:
                    print(json.dumps({"url": result["url"], "error": result.get("error")}))
                elif where not in seen:
                    seen.add(where)
                    print(json.dumps({"robots_txt": result["robots_txt"], "summary": result["summary"]}))
            return
        self._errors(results)
        if file_summary is not None:
            print(format_summary(self.local_file, file_summary, self.paint))
        seen = set()
        for result in results:
            where = (result.get("robots_txt") or {}).get("url")
            if where and where not in seen:
                seen.add(where)
                print(format_summary(self.local_file or where, result["summary"], self.paint))

    @staticmethod
    def _errors(results: list[dict[str, Any]]) -> None:
        for result in results:
            error = result.get("error")
            if error:
                where = "" if result["url"] in error else f"{result['url']}: "
                print(f"scrapy robots: error: {where}{error}", file=sys.stderr)


def _where(path: str) -> str:
    return "standard input" if path == "-" else repr(path)


def _unreachable(result: dict[str, Any]) -> str | None:
    robots = result.get("robots_txt") or {}
    if robots.get("policy") != Action.UNREACHABLE.value:
        return None
    outcome = robots["error"] or f"HTTP {robots['status']}"
    return f"{robots['url']} unreachable: {outcome}"


def exit_status(results: list[dict[str, Any]], file_lint: list[Finding] | None = None, strict: bool = False) -> int:
    """2 on any error (an unreachable robots.txt is one), else 1 if a URL is denied
    (or, with only ``--lint``, or with ``--strict``, if a line is at fault), else 0."""
    if any(r.get("error") for r in results):
        return EXIT_ERROR
    if any(not r["allowed"] for r in results):
        return EXIT_DENIED
    if file_lint and (strict or not results):
        return EXIT_DENIED
    if strict and any(r.get("lint") for r in results):
        return EXIT_DENIED
    return EXIT_ALLOWED
