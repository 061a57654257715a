"""The crawl behind ``scrapy robots``: a spider that asks the enabled middleware about
each URL (``robots_for``), answers with the crawl's own :func:`~scrapy_robots.verdict.verdict`,
and downloads nothing but robots.txt; and the components the command adds to that crawl
(a recording parser, a local robots.txt file, the raw bodies for ``--lint``).
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Spider
from scrapy.http import Request, Response
from scrapy.utils.misc import build_from_crawler, load_object

from scrapy_robots.commands.page import fetch_page
from scrapy_robots.commands.robots_text import (
    UNSUPPORTED,
)
from scrapy_robots.commands.summary import summarize_robotstxt
from scrapy_robots.decoding import charset_from_content_type, cut_at_maxsize
from scrapy_robots.grounds import Grounds, grounds
from scrapy_robots.lint import Finding, lint_robotstxt
from scrapy_robots.pace.slots import slot_delay
from scrapy_robots.pace.slots import user_delay as slot_user_delay
from scrapy_robots.parsers import (
    SHORT_NAMES,
    DirectiveNotSupported,
    RobotParser,
    as_robot_parser,
)
from scrapy_robots.policyfiles.retry_after import delayed_by_server
from scrapy_robots.record.version import sha256_of
from scrapy_robots.settings.config import RobotsConfig
from scrapy_robots.settings.readers import default_user_agent
from scrapy_robots.status.policy import Action
from scrapy_robots.status.result import FETCH_META, ROBOTS_TXT, robots_url
from scrapy_robots.useragent import product_token
from scrapy_robots.verdict import user_agent, verdict

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.middleware import RobotsTxtMiddleware
    from scrapy_robots.policyfiles.stated import Heard

#: ``--parser`` short names, in the order ``--compare`` prints them.
BACKENDS: dict[str, str] = SHORT_NAMES

# Settings through which the command hands objects to the components it adds.
PARSER_SETTING = "ROBOTS_COMMAND_PARSER"
MIDDLEWARE_SETTING = "ROBOTS_COMMAND_MIDDLEWARE"
FILE_SETTING = "ROBOTS_COMMAND_FILE"
#: --file's folder: the site's other policy files are read from their paths under it, when there
FOLDER_SETTING = "ROBOTS_COMMAND_FOLDER"
LOCAL_FILE_MIDDLEWARE = "scrapy_robots.commands.query.LocalRobotsFile"
# After HttpCompressionMiddleware (590) has decompressed the response.
RAW_BODIES_MIDDLEWARE = "scrapy_robots.commands.query.RawRobotsBodies"


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


def recording_parser(chosen: Any) -> type[RecordingParser]:
    """The ``ROBOTSTXT_PARSER`` of the command's crawl: a :class:`RecordingParser` that
    the crawl's log names by the parser it builds (``parser_name``)."""
    return type("RecordingParser", (RecordingParser,), {"parser_name": class_name(chosen), "__module__": __name__})


class LocalRobotsFile:
    """``--file``: a downloader middleware that answers the middleware's robots.txt
    request with the local file (HTTP 200), and another policy file's with the file at its
    path under the same folder (``.well-known/tdmrep.json`` beside ``robots.txt``), so the
    size cap, the status policy, the parser and the delay stay the crawl's own, and nothing
    touches the network."""

    def __init__(self, body: bytes, folder: str | None = None):
        self.body = body
        self.folder = folder

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> LocalRobotsFile:
        return cls(crawler.settings[FILE_SETTING], crawler.settings.get(FOLDER_SETTING))

    def process_request(self, request: Request, spider: Spider | None = None) -> Response | None:
        fetched = request.meta.get(FETCH_META)
        if not fetched:
            return None
        if fetched != ROBOTS_TXT:  # another policy file: the one beside, if given
            local = local_copy(self.folder, fetched)
            if local is None:
                return Response(request.url, status=404, request=request)
            return Response(request.url, status=200, body=local.read_bytes(), request=request)
        return Response(
            request.url, status=200, headers={"Content-Type": "text/plain"}, body=self.body, request=request
        )


def local_copy(folder: str | None, where: str) -> Path | None:
    """``--file``'s copy of the policy file at ``where`` (its path, or its URL: the URL's
    path), under ``folder``; None when there is none."""
    if folder is None:
        return None
    path = Path(folder) / urlsplit(where).path.lstrip("/")
    return path if path.is_file() else None


class RawRobotsBodies:
    """Keeps each policy file response's body as it came (decompressed), with its
    ``Content-Type``: the answers name the version by the SHA-256 of these bytes, as the
    compliance record does, and ``--lint`` reads them, before the middleware re-encodes
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
    """Asks the enabled middleware about each URL; downloads nothing but robots.txt, and
    with ``--page`` (``pages``) the pages robots.txt allows."""

    name = "robots"

    def __init__(
        self,
        checks: list[tuple[str, str | None]],
        results: list[dict[str, Any]],
        compare: bool = False,
        lint: bool = False,
        summary: bool = False,
        pages: list[bool] | None = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        #: --page: for each check, whether to fetch its page too (when robots.txt allows it).
        self.pages = pages or [False] * len(checks)
        self.checks = checks  # (absolute URL, user agent or None: the crawl's own)
        self.results = results
        self.compare = compare
        self.lint = lint
        self.summary = summary
        self._by_site: dict[str, dict[str, Any]] = {}
        self._backends: tuple[dict[str, Any], dict[str, str]] | None = None
        #: policy file URL -> (body as received, Content-Type), filled by RawRobotsBodies.
        self.raw_bodies: dict[str, tuple[bytes, bytes | None]] = {}
        self.config: RobotsConfig  # the crawl's settings, as the middleware reads them (start)
        self.local_file = False  # --file: robots.txt is a local file, and the only file read (start)

    async def start(self) -> AsyncIterator[Any]:
        from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
        from twisted.internet.defer import DeferredList

        from scrapy_robots.middleware import RobotsTxtMiddleware

        mw = self.crawler.get_downloader_middleware(RobotsTxtMiddleware)
        self.config = RobotsConfig.of(self.crawler)
        self.local_file = self.crawler.settings.get(FILE_SETTING) is not None
        if mw is None:
            message = "scrapy_robots' RobotsTxtMiddleware is not enabled"
            self.results[:] = [error_result(url, message) for url, _ in self.checks]
            return
        # Sites are fetched concurrently, as a crawl would; answers keep the input order.
        await maybe_deferred_to_future(
            # consumeErrors: a check cancelled by Ctrl-C (asyncio's CancelledError is no
            # Exception) is not an unhandled error; the command says it was interrupted.
            DeferredList(
                [deferred_from_coro(self._check(mw, i, *check)) for i, check in enumerate(self.checks)],
                consumeErrors=True,
            )
        )
        return
        yield  # pragma: no cover - an async generator that yields no request

    async def _check(self, mw: RobotsTxtMiddleware, index: int, url: str, agent: str | None) -> None:
        found = None
        try:
            # An agent of its own goes as the request's User-Agent, which the middleware
            # obeys as when ROBOTSTXT_USER_AGENT is not set (the command unsets it then).
            request = Request(url, dont_filter=True, headers={"User-Agent": agent} if agent else None)
            entry = await mw.robots_for(request)
            heard = await mw.heard_for(request, entry)
            if self.local_file:
                # --file: the site's other files only as given beside it, never invented.
                folder = self.crawler.settings.get(FOLDER_SETTING)
                heard = tuple(
                    (file, found if found is not None and local_copy(folder, found.url or file.path) else None)
                    for file, found in heard
                )
            recorded = entry.parser if isinstance(entry.parser, RecordingParser) else None
            found = self._grounds(request, entry, heard, recorded)
            self.results[index] = report = self._report(url, request, found, recorded)
            # An unreachable site's line (its attempt, what a crawl would do next): in the answer.
            report["robots_txt"]["said"] = mw.sites.said.get(entry.site)
        except Exception as exc:
            self.results[index] = error_result(url, f"{type(exc).__name__}: {exc}", agent)
        if self.pages[index]:
            try:
                page = await fetch_page(self.crawler, url, agent, self.results[index])
                if page is not None and found is not None:
                    # The page's headers, meta tags and noai: the answer once it is fetched.
                    self.results[index].update(answer_fields(found.on_page(page)))
            except Exception as exc:  # reading the page failed: said, not a traceback
                self.results[index]["page"] = {
                    "fetched": False,
                    "skipped": None,
                    "error": f"{type(exc).__name__}: {exc}",
                }
                self.results[index]["directives"] = None

    def _grounds(self, request: Request, entry: RobotsEntry, heard: Heard, recorded: RecordingParser | None) -> Grounds:
        """The crawl's answer for ``request``: the entries as the crawl holds them (the
        parser the recording one built), the versions named as a compliance record names
        them (the SHA-256 of the bodies received)."""
        from scrapy_robots.parsers.delay import read_site_delay

        config = self.config
        parser = recorded.parser if recorded is not None else entry.parser
        entry = replace(entry, parser=parser, version=self._version(entry))
        heard = tuple(
            (file, None if found is None else replace(found, version=self._version(found))) for file, found in heard
        )
        if entry.action is Action.PARSE and parser is not None and config.crawl_delay:
            # The site's delay was read for the crawl's agent; this one may have its own group.
            agent = as_text(user_agent(request, config))
            delay = read_site_delay(parser, agent, config.max_crawl_delay, config.crawl_delay_exceeded)
            entry = replace(entry, delay=delay)
        return grounds(entry, request, config, heard)

    def _report(self, url: str, request: Request, found: Grounds, recorded: RecordingParser | None) -> dict[str, Any]:
        config, entry, agent = self.config, found.entry, found.agent
        parser = entry.parser
        user_delay = slot_user_delay(self.crawler, request)
        # The delay the crawl paces the site's slot at: none for a site it skips (SiteDelay).
        applied = entry.delay.applied if entry.delay is not None and config.crawl_delay else None
        report: dict[str, Any] = {
            "url": url,
            "allowed": found.allowed,
            "reason": found.reason,
            "error": None,
            "user_agent": agent,
            "product_token": product_token(agent),
            "parser": class_name(self.crawler.settings[PARSER_SETTING]),
            "middleware": self.crawler.settings[MIDDLEWARE_SETTING],
            "robots_txt": {
                "url": entry.url or robots_url(entry.site),
                "status": entry.status,
                "redirects": entry.redirects,
                "size": entry.size,
                "truncated": entry.truncated,
                "maxsize": config.maxsize,
                "policy": entry.action.value,
                "error": entry.error,
                **_next_attempt(entry, config),
            },
            "decision": _decision(found),
            "usage": {purpose: pref.as_meta() for purpose, pref in found.preferences.items()}
            if config.usage is not None
            else None,
            "crawl_delay": _ask(parser, "crawl_delay", agent),
            "request_rate": _ask(parser, "request_rate", agent),
            "delay": asdict(entry.delay) if entry.delay is not None else None,
            "user_delay": user_delay,
            "slot_delay": slot_delay(user_delay, applied),
            "max_crawl_delay": config.max_crawl_delay,
            "sitemaps": _ask(parser, "sitemaps"),
        }
        # Each other policy file's answer, under its key; the plain output prints their ``text``.
        report["policy_files"] = [file.key for file, _ in found.heard]
        for file, file_entry in found.heard:
            report[file.key] = file.report(file_entry, url, config, "file" if self.local_file else "robots.txt")
        report.update(answer_fields(found))
        site = self._by_site.setdefault(entry.site, {})
        if self.compare:
            report["compare"] = self._compare(site, request, entry, agent, recorded)
            report["not_installed"] = self._backends[1] if self._backends else {}
        if self.lint:
            if "lint" not in site:
                site["lint"] = [asdict(f) for f in self._lint(entry, recorded)] if recorded is not None else None
            report["lint"] = site["lint"]
        if self.summary:
            if "summary" not in site:
                site["summary"] = self._summary(entry, recorded)
            report["summary"] = site["summary"]
        return report

    def _version(self, entry: RobotsEntry) -> str | None:
        """The SHA-256 of the body received for ``entry``, cut at ROBOTSTXT_MAXSIZE: the
        version a compliance record would name (the record's own in a crawl that keeps one)."""
        raw = self.raw_bodies.get(entry.url or "")
        if raw is None:  # no response (a network error), or not fetched (excluded)
            return entry.version
        return sha256_of(cut_at_maxsize(raw[0], self.config.maxsize))

    def _summary(self, entry: RobotsEntry, recorded: RecordingParser | None) -> dict[str, Any] | None:
        if recorded is None:
            return None
        local = self.crawler.settings.get(FILE_SETTING)
        if local is not None:
            # --file: the whole file, its lines past the cap marked as the crawl did not read them.
            return summarize_robotstxt(local, self.config.maxsize)
        # A site: the download stopped at the cap; what follows is not known.
        return summarize_robotstxt(recorded.body, self.config.maxsize, truncated=entry.truncated)

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
        self,
        site: dict[str, Any],
        request: Request,
        entry: RobotsEntry,
        agent: str,
        recorded: RecordingParser | None,
    ) -> dict[str, Any]:
        from scrapy_robots.parsers.delay import read_site_delay

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
            answer = verdict(
                replace(entry, parser=parser, delay=delay if config.crawl_delay else None), request, config
            )
            answers[name] = {
                "allowed": answer.allowed,
                "crawl_delay": _ask(parser, "crawl_delay", agent),
                "error": None,
            }
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
        except Exception:
            pass
        backends[name] = cls
    chosen = crawler.settings[PARSER_SETTING]
    if chosen not in backends.values():
        backends[class_name(chosen)] = chosen
    return backends, missing


def _build(crawler: Crawler, cls: Any, body: bytes) -> RobotParser | str:
    try:
        return as_robot_parser(build_from_crawler(cls, crawler, body), default_user_agent(crawler.settings))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _decision(found: Grounds) -> dict[str, Any] | None:
    """Which group and rule decided, where the parser can say (its ``explain()``)."""
    explanation = found.explanation
    if explanation is None:
        return None
    rule = explanation.rule
    return {
        "group": [{"line": line, "user_agent": value} for line, value in explanation.group_lines],
        "rule": {"line": rule.line, "text": rule.text, "allow": rule.allow} if rule is not None else None,
        "explanation": found.explained,
    }


def answer_fields(found: Grounds) -> dict[str, Any]:
    """The one answer's own fields in a report: the verdict (allowed, reason, the stat a
    crawl counts it under), the purposes it was judged for, and every source."""
    return {
        "allowed": found.allowed,
        "reason": found.reason,
        "stat": found.stat or None,
        "purposes": list(found.purposes),
        "sources": [source.as_dict() for source in found.sources],
    }


def _next_attempt(entry: RobotsEntry, config: RobotsConfig) -> dict[str, Any]:
    """An unreachable robots.txt: when a crawl tries it again, and what set that time
    (the retry schedule, the server's Retry-After, or the bound on it)."""
    retry_after = round(entry.retry_after, 3) if entry.retry_after is not None else None
    if entry.action is not Action.UNREACHABLE:
        return {"retry_after": retry_after, "next_attempt": None}
    by = "schedule"
    if retry_after is not None and delayed_by_server(entry, config):
        by = "Retry-After" if retry_after <= config.retry_max_delay else "ROBOTSTXT_UNREACHABLE_RETRY_MAX_DELAY"
    return {
        "retry_after": retry_after,
        "next_attempt": {"seconds": round(entry.expires_at - entry.fetched_at, 3), "by": by},
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


def error_result(url: str, message: str, agent: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"url": url, "allowed": None, "error": message}
    if agent:
        error["user_agent"] = agent
    return error


def as_text(value: str | bytes) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def class_name(cls: Any) -> str:
    return getattr(cls, "__name__", str(cls))
