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
from scrapy_robots.config import MEMORY_STORAGE, RobotsConfig
from scrapy_robots.decoding import charset_from_content_type
from scrapy_robots.fetch import FETCH_META, robots_url
from scrapy_robots.lint import Finding, lint_robotstxt, looks_binary
from scrapy_robots.parsers import DirectiveNotSupported, RobotParser, as_robot_parser, default_user_agent
from scrapy_robots.policy import Action
from scrapy_robots.useragent import product_token

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.middleware import RobotsTxtMiddleware, Verdict

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

#: A parser's answer for a directive its library cannot read.
UNSUPPORTED = "unsupported"

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

    def __init__(self, checks: list[str], results: list[dict[str, Any]], compare: bool, lint: bool, **kwargs: Any):
        super().__init__(**kwargs)
        self.checks = checks
        self.results = results
        self.compare = compare
        self.lint = lint
        self._by_site: dict[str, dict[str, Any]] = {}
        self._backends: tuple[dict[str, Any], dict[str, str]] | None = None
        #: robots.txt URL -> (body as received, Content-Type), filled by RawRobotsBodies.
        self.raw_bodies: dict[str, tuple[bytes, bytes | None]] = {}

    async def start(self) -> AsyncIterator[Any]:
        from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
        from twisted.internet.defer import DeferredList

        from scrapy_robots.middleware import RobotsTxtMiddleware

        mw = self.crawler.get_downloader_middleware(RobotsTxtMiddleware)
        if mw is None:
            self.results[:] = [_error(url, "scrapy_robots' RobotsTxtMiddleware is not enabled") for url in self.checks]
            return
        # Sites are fetched concurrently, as a crawl would; answers keep the input order.
        await maybe_deferred_to_future(
            DeferredList([deferred_from_coro(self._check(mw, i, url)) for i, url in enumerate(self.checks)])
        )
        return
        yield  # pragma: no cover - an async generator that yields no request

    async def _check(self, mw: RobotsTxtMiddleware, index: int, url: str) -> None:
        try:
            request = Request(url, dont_filter=True)
            entry = await mw.robots_for(request)
            self.results[index] = self._report(mw, url, request, entry, mw.verdict(entry, request))
        except Exception as exc:  # noqa: BLE001 - one line per URL, never a traceback
            self.results[index] = _error(url, f"{type(exc).__name__}: {exc}")

    def _report(
        self, mw: RobotsTxtMiddleware, url: str, request: Request, entry: RobotsEntry, verdict: Verdict
    ) -> dict[str, Any]:
        agent = _text(mw.user_agent(request))
        recorded = entry.parser if isinstance(entry.parser, RecordingParser) else None
        parser = recorded.parser if recorded is not None else entry.parser
        user_delay = mw.pacer.user_delay(request)
        applied = entry.delay is not None and mw.config.crawl_delay and not entry.delay.skip
        report: dict[str, Any] = {
            "url": url,
            "allowed": verdict.allowed,
            "reason": verdict.reason,
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
            "crawl_delay": _ask(parser, "crawl_delay", agent),
            "request_rate": _ask(parser, "request_rate", agent),
            "delay": asdict(entry.delay) if entry.delay is not None else None,
            "user_delay": user_delay,
            # SlotPacer.apply_crawl_delay's floor: the user's delay never shortens it.
            "slot_delay": max(user_delay, entry.delay.applied) if applied and entry.delay else user_delay,
            "max_crawl_delay": mw.config.max_crawl_delay,
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
        config = mw.config
        for name, parser in site["parsers"].items():
            if isinstance(parser, str):  # it could not parse this file
                answers[name] = {"allowed": None, "crawl_delay": None, "error": parser}
                continue
            if parser is None:  # nothing parsed: the status policy decided, for every parser
                answers[name] = {"allowed": mw.verdict(entry, request).allowed, "crawl_delay": None, "error": None}
                continue
            delay = read_site_delay(parser, agent, config.max_crawl_delay, config.crawl_delay_exceeded)
            verdict = mw.verdict(replace(entry, parser=parser, delay=delay if config.crawl_delay else None), request)
            answers[name] = {"allowed": verdict.allowed, "crawl_delay": _ask(parser, "crawl_delay", agent), "error": None}
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


def _error(url: str, message: str) -> dict[str, Any]:
    return {"url": url, "allowed": None, "error": message}


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
        return "[options] URL [URL ...]"

    def short_desc(self) -> str:
        return "Ask robots.txt: may I fetch this URL, how fast, and which line decided?"

    def long_desc(self) -> str:
        return (
            "Fetch each site's robots.txt through Scrapy's downloader and the scrapy-robots middleware, "
            "with the project's settings, and say for each URL whether it may be crawled, which line of "
            "robots.txt decided, the status policy's outcome, the crawl delay the crawl would apply and the "
            "sitemaps listed. --file checks a local robots.txt instead. Exit status: 0 all URLs allowed, "
            "1 some denied, 2 an error."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        group = parser.add_argument_group(title="robots.txt")
        group.add_argument(
            "--file", metavar="PATH", help="check this local robots.txt ('-': standard input) instead of the sites'"
        )
        group.add_argument(
            "--user-agent", metavar="AGENT",
            help="the agent to ask as (default: ROBOTSTXT_USER_AGENT, else USER_AGENT, as the crawl does)",
        )
        group.add_argument(
            "--parser", metavar="NAME",
            help=f"the parser: {', '.join(BACKENDS)} or an import path (default: ROBOTSTXT_PARSER)",
        )
        group.add_argument(
            "--compare", action="store_true", help="ask every installed parser and show where they disagree"
        )
        group.add_argument("--lint", action="store_true", help="list the lines no parser rule uses, and why")
        group.add_argument("--json", action="store_true", help="print one JSON object per URL (JSON lines)")

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        settings = self.settings
        self.problem: str | None = None
        self.body: bytes | None = None
        # Quiet unless the user asked (-L, --loglevel, -s LOG_LEVEL=...): the answers
        # go to standard output, and a project's DEBUG log would bury them.
        self._unless_given("LOG_LEVEL", "WARNING")
        # A command line answers now: one attempt, no unreachable retries.
        self._unless_given("ROBOTSTXT_UNREACHABLE_RETRY_TIMES", 0)
        # A question writes nothing: not into the project's JOBDIR (its scheduler queue,
        # spider state, robots.txt cache), not into a shared cache.
        self._unless_given("JOBDIR", None)
        self._unless_given("ROBOTSTXT_CACHE_STORAGE", MEMORY_STORAGE)
        self.middleware = self._choose_middleware(settings)
        if opts.user_agent:
            settings.set("ROBOTSTXT_USER_AGENT", opts.user_agent, priority="cmdline")
        if opts.parser:
            settings.set("ROBOTSTXT_PARSER", parser_path(opts.parser), priority="cmdline")
        try:
            # Every ROBOTSTXT_* setting checked now, with the middleware's own messages.
            chosen = RobotsConfig.from_settings(settings).parser_class
        except ValueError as exc:
            self.problem = str(exc)
            return
        settings.set(PARSER_SETTING, chosen, priority="cmdline")
        settings.set(MIDDLEWARE_SETTING, self.middleware, priority="cmdline")
        settings.set("ROBOTSTXT_PARSER", RECORDING_PARSER, priority="cmdline")
        if opts.lint:
            settings["DOWNLOADER_MIDDLEWARES"].set(RAW_BODIES_MIDDLEWARE, 580, priority="cmdline")
        if opts.file:
            self.body = self._read(opts.file)
            if self.body is not None:
                settings.set(FILE_SETTING, self.body, priority="cmdline")
                settings["DOWNLOADER_MIDDLEWARES"].set(LOCAL_FILE_MIDDLEWARE, 1, priority="cmdline")

    def _choose_middleware(self, settings: BaseSettings) -> str:
        """Answer as the project's crawl would: with Scrapy's own middleware if that is
        the one its settings enable (emulated by ours with Scrapy's behaviour), else
        with ours; ``self.notes`` says so when it matters."""
        from scrapy.utils.project import inside_project

        self.notes: list[str] = []
        current = crawl_middleware(settings)
        in_project = inside_project()
        if in_project and not settings.getbool("ROBOTSTXT_OBEY"):
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

    def _read(self, path: str) -> bytes | None:
        name = "standard input" if path == "-" else repr(path)
        try:
            body = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
        except OSError as exc:
            self.problem = f"cannot read {name}: {exc.strerror or exc}"
            return None
        if looks_binary(body):
            self.problem = f"{name} is binary data, not a robots.txt"
            return None
        return body

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if self.problem is None and not args and not (opts.lint and opts.file):
            self.problem = "nothing to check: give one or more URLs (or --file PATH --lint)"
        if self.problem is not None:
            self._fail(self.problem)
            return
        for note in self.notes:
            print(f"scrapy robots: note: {note}", file=sys.stderr)
        checks: list[str] = []
        results: list[dict[str, Any]] = []
        for url in args:
            absolute, error = check_url(url, opts.file is not None)
            checks.append(absolute or url)
            results.append(_error(url, error) if error else {})
        pending = [i for i, result in enumerate(results) if not result]
        if pending:
            self._crawl([checks[i] for i in pending], opts, results, pending)
        for given, result in zip(args, results):
            result["url"] = given  # a bare path given with --file stays a path
            if "robots_txt" in result:
                result["robots_txt"]["file"] = opts.file
                # An answer, and an error all the same: the exit status is 2.
                result["error"] = _unreachable(result)
        file_lint = None
        if opts.lint and opts.file and self.body is not None:
            file_lint = lint_robotstxt(self.body)
        self._print(results, opts, file_lint)
        self.exitcode = exit_status(results, file_lint)

    def _crawl(self, urls: list[str], opts: argparse.Namespace, results: list[dict[str, Any]], slots: list[int]) -> None:
        assert self.crawler_process is not None
        answers: list[dict[str, Any]] = [_error(url, "no answer") for url in urls]
        crawler = self.crawler_process.create_crawler(RobotsQuerySpider)
        assert self.settings is not None
        try:
            # A parser that cannot be built (a bad option, a library missing) fails
            # here with its own message, not as a traceback from inside the crawl.
            build_from_crawler(self.settings[PARSER_SETTING], crawler, b"")
        except Exception as exc:  # noqa: BLE001
            parser = _class_name(self.settings[PARSER_SETTING])
            for slot, url in zip(slots, urls):
                results[slot] = _error(url, f"ROBOTSTXT_PARSER = {parser} cannot be used: {exc}")
            return
        self.crawler_process.crawl(crawler, checks=urls, results=answers, compare=opts.compare, lint=opts.lint)
        self.crawler_process.start()
        if getattr(self.crawler_process, "bootstrap_failed", False):
            answers = [_error(url, "the crawl could not start (see the log above)") for url in urls]
        for slot, answer in zip(slots, answers):
            results[slot] = answer

    def _fail(self, message: str) -> None:
        print(f"scrapy robots: error: {message}", file=sys.stderr)
        self.exitcode = EXIT_ERROR

    def _print(self, results: list[dict[str, Any]], opts: argparse.Namespace, file_lint: list[Finding] | None) -> None:
        if opts.json:
            if file_lint is not None and not results:
                print(json.dumps({"file": opts.file, "lint": [asdict(f) for f in file_lint]}))
            for result in results:
                if file_lint is not None:
                    result["lint"] = [asdict(f) for f in file_lint]
                print(json.dumps(result))
            return
        for result in results:
            error = result.get("error")
            if error:
                where = "" if result["url"] in error else f"{result['url']}: "
                print(f"scrapy robots: error: {where}{error}", file=sys.stderr)
        # An unreachable robots.txt is an error with a report (the policy's verdict).
        answered = [r for r in results if "robots_txt" in r]
        if opts.compare:
            print(format_compare(answered))
        else:
            for result in answered:
                print(format_report(result, opts.file))
        if file_lint is not None:
            print(format_lint(opts.file if opts.file != "-" else "standard input", file_lint))
        elif opts.lint:
            seen: set[str] = set()
            for result in answered:
                where = result["robots_txt"]["url"]
                if where not in seen:
                    seen.add(where)
                    print(format_lint(where, result["lint"]))


def _unreachable(result: dict[str, Any]) -> str | None:
    robots = result.get("robots_txt") or {}
    if robots.get("policy") != Action.UNREACHABLE.value:
        return None
    outcome = robots["error"] or f"HTTP {robots['status']}"
    return f"{robots['url']} unreachable: {outcome}"


def exit_status(results: list[dict[str, Any]], file_lint: list[Finding] | None = None) -> int:
    """2 on any error (an unreachable robots.txt is one), else 1 if a URL is denied
    (or, with only ``--lint``, if a line is at fault), else 0."""
    if any(r.get("error") or _unreachable(r) for r in results):
        return EXIT_ERROR
    if any(not r["allowed"] for r in results):
        return EXIT_DENIED
    if not results and file_lint:
        return EXIT_DENIED
    return EXIT_ALLOWED


# -- plain text -------------------------------------------------------------------

_POLICY = {
    "parse": "parsed",
    "allow": "allow all",
    "deny": "deny all",
    "unreachable": "unreachable: deny for now, retry later (RFC 9309 2.3.1.4)",
    "excluded": "excluded domain (ROBOTSTXT_EXCLUDED_DOMAINS): robots.txt not fetched",
}


def format_report(result: dict[str, Any], local_file: str | None = None) -> str:
    robots = result["robots_txt"]
    lines = [f"{result['url']}: {'allowed' if result['allowed'] else 'denied'}"]

    def row(label: str, text: str) -> None:
        lines.append(f"  {label:<12} {text}")

    row("user agent", f"{result['user_agent']} (product token {result['product_token']})")
    if result.get("middleware") == SCRAPY_STOCK:
        row("middleware", "Scrapy's own, as the project's crawl: any status parsed, Crawl-delay not read")
    if not result["allowed"]:
        row("reason", result["reason"])
    decision = result["decision"]
    if decision is not None:
        groups = ", ".join(f"line {g['line']} (User-agent: {g['user_agent']})" for g in decision["group"])
        rule = decision["rule"]
        if rule is not None:
            row("rule", f"line {rule['line']}: {rule['text']}")
            row("group", groups)
        else:
            row("rule", decision["explanation"])
    elif robots["policy"] == "parse":
        row("rule", f"{result['parser']} cannot say which line decided (--parser rfc9309 can)")
    source = f"{local_file} (local file)" if local_file else robots["url"]
    if local_file is None:
        status = f"HTTP {robots['status']}" if robots["status"] is not None else robots["error"] or "not fetched"
        redirects = robots["redirects"]
        source += f": {status}, {redirects} redirect{'s' if redirects != 1 else ''}"
    if robots["policy"] != "excluded":
        source += f", {robots['size']:,} bytes{' (truncated at ROBOTSTXT_MAXSIZE)' if robots['truncated'] else ''}"
    row("robots.txt", source)
    policy = _POLICY.get(robots["policy"], robots["policy"])
    if robots["policy"] == "parse":
        policy += f" with {result['parser']}"
    elif robots["policy"] in ("allow", "deny") and robots["status"] is not None:
        policy += f" on HTTP {robots['status']}"
    row("policy", policy)
    row("crawl delay", _delay_text(result))
    sitemaps = result["sitemaps"]
    if sitemaps == UNSUPPORTED:
        row("sitemaps", f"{result['parser']} cannot read Sitemap lines")
    elif sitemaps:
        row("sitemaps", sitemaps[0])
        for url in sitemaps[1:]:
            row("", url)
    elif robots["policy"] == "parse":
        row("sitemaps", "none")
    return "\n".join(lines)


def _delay_text(result: dict[str, Any]) -> str:
    found = []
    for label, value in (("Crawl-delay", result["crawl_delay"]), ("Request-rate", result["request_rate"])):
        if value == UNSUPPORTED:
            found.append(f"{label} not read by {result['parser']}")
        elif isinstance(value, dict):
            found.append(f"{label} {value['requests']}/{value['seconds']:g}s")
        elif value is not None:
            found.append(f"{label} {value:g}s")
    asked = ", ".join(found) if found else "none"
    delay = result["delay"]
    note = ""
    if delay is not None and delay["clamped"]:
        note = f", clamped to ROBOTSTXT_MAX_CRAWL_DELAY {result['max_crawl_delay']:g}s"
    elif delay is not None and delay["skip"]:
        note = f", above ROBOTSTXT_MAX_CRAWL_DELAY {result['max_crawl_delay']:g}s: the site is skipped"
    return f"{asked}{note}; slot delay {result['slot_delay']:g}s (your delay {result['user_delay']:g}s)"


def format_compare(results: list[dict[str, Any]]) -> str:
    if not results:
        return ""
    names = list(results[0]["compare"])
    width = max(len("URL"), *(len(r["url"]) for r in results))
    header = f"{'URL':<{width}}  " + "  ".join(f"{n:<8}" for n in names)
    lines = [header, "-" * len(header)]
    delays: dict[str, dict[str, Any]] = {}
    for result in results:
        cells = []
        verdicts = set()
        for name in names:
            answer = result["compare"][name]
            cell = "error" if answer["error"] else ("allowed" if answer["allowed"] else "denied")
            verdicts.add(cell)
            cells.append(f"{cell:<8}")
        mark = "  <- differ" if len(verdicts) > 1 else ""
        lines.append(f"{result['url']:<{width}}  " + "  ".join(cells) + mark)
        delays.setdefault(result["robots_txt"]["url"], result["compare"])
    for where, answers in delays.items():
        values = [_delay_cell(answers[n]) for n in names]
        if any(v not in ("-", "n/a", "error") for v in values):
            cells = [f"{v:<8}" for v in values]
            shown = {v for v in values if v != "n/a"}
            mark = "  <- differ" if len(shown) > 1 else ""
            lines.append(f"{'Crawl-delay':<{width}}  " + "  ".join(cells) + mark)
    errors = {n: a["error"] for r in results for n, a in r["compare"].items() if a["error"]}
    lines.extend(f"{name}: {error}" for name, error in errors.items())
    # Listed once, outside the table: a missing library says nothing about the file.
    for name, reason in results[0].get("not_installed", {}).items():
        lines.append(f"{name}: not installed, left out ({reason})")
    return "\n".join(lines)


def _delay_cell(answer: dict[str, Any]) -> str:
    value = answer["crawl_delay"]
    if answer["error"]:
        return "error"
    if value is None:
        return "-"
    return "n/a" if value == UNSUPPORTED else f"{value:g}s"


def format_lint(where: str, findings: list[Any] | None) -> str:
    if findings is None:
        return f"lint {where}: no robots.txt body was parsed (see the policy)"
    if not findings:
        return f"lint {where}: no problems found"
    lines = [f"lint {where}: {len(findings)} problem{'s' if len(findings) != 1 else ''}"]
    for finding in findings:
        finding = finding if isinstance(finding, Finding) else Finding(**finding)
        lines.append(f"  {finding}  [{finding.code}]")
    return "\n".join(lines)
