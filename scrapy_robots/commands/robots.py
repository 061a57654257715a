"""``scrapy robots``: may I fetch this URL, how fast, and which line of robots.txt decided?

The answers come from the crawl's own machinery: a real crawl whose spider asks the
enabled :class:`~scrapy_robots.middleware.RobotsTxtMiddleware` (``robots_for`` then
``verdict``), so the fetch, the status policy, the parser and the delay are the ones
``scrapy crawl`` would use with the same settings. ``--file`` answers the middleware's
robots.txt request with a local file instead of the network; nothing else changes.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.misc import build_from_crawler

from scrapy_robots.commands.crawl_settings import prepare_settings, unless_given
from scrapy_robots.commands.inputs import (
    check_url,
    read_robotstxt,
    read_urls,
    unknown_options,
    user_agent_option,
)
from scrapy_robots.commands.options import add_robots_options, check_combinations
from scrapy_robots.commands.output import (
    EXIT_ALLOWED,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    Output,
    exit_status,
    quiet_on_closed_pipe,
    unreachable_error,
)
from scrapy_robots.commands.page import NO_SITE, not_fetched
from scrapy_robots.commands.query import (
    PARSER_SETTING,
    RobotsQuerySpider,
    class_name,
    error_result,
)
from scrapy_robots.commands.robots_text import (
    Paint,
)
from scrapy_robots.commands.summary import summarize_robotstxt
from scrapy_robots.lint import lint_robotstxt

if TYPE_CHECKING:
    import argparse


#: The command's log level unless the user gives one: its answers go to standard output.
LOG_LEVEL = "WARNING"


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
            "of its groups and rules). --page fetches each allowed URL's page too and shows its robots directives "
            "(X-Robots-Tag, Robots-Tag, meta robots, rel=nofollow) for this crawler. "
            "Exit status: 0 all URLs allowed, 1 some denied (--lint alone or "
            "--strict: a finding), 2 an error. Docs: docs/command.rst in the source."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        # Scrapy's help gives the project's LOG_LEVEL as -L's default; the command's is its own.
        for action in parser._actions:
            if "--loglevel" in action.option_strings:
                action.help = f"log level (default: {LOG_LEVEL})"
        add_robots_options(parser)
        self.known_options = [option for action in parser._actions for option in action.option_strings]

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        # Scrapy parses known options only and hands the rest over with the URLs.
        unknown = unknown_options(args, self.known_options)
        if unknown:
            raise UsageError(unknown, print_help=False)
        super().process_options(args, opts)
        self.problem: str | None = None
        self.body: bytes | None = None
        self.urls: list[str] = []
        self.notes: list[str] = []
        self.interrupted = False
        # Quiet unless the user asked (-L, --loglevel, -s LOG_LEVEL=...): the answers
        # go to standard output, and a project's DEBUG log would bury them. Logging is
        # set up before run(): this cannot wait.
        assert self.settings is not None
        unless_given(self.settings, "LOG_LEVEL", LOG_LEVEL)
        if opts.strict:
            opts.lint = True
        self.problem = check_combinations(opts) or user_agent_option(opts.user_agent or [])
        if self.problem is not None:
            return
        if opts.file == "-" and opts.urls == "-":
            self.problem = "--file - and --urls - cannot both read standard input"
            return
        if opts.file:
            self.body, self.problem = read_robotstxt(opts.file)
        if opts.urls and self.problem is None:
            self.urls, self.problem = read_urls(opts.urls)

    def _prepare(self, opts: argparse.Namespace) -> None:
        """The crawl's settings (crawl_settings.py): run after the spider's custom_settings
        are in (``--spider`` needs the spider loader)."""
        assert self.settings is not None
        prepared = prepare_settings(self.settings, opts, self.body, self.notes)
        if isinstance(prepared, str):
            self.problem = prepared
        else:
            self.maxsize = prepared

    def _apply_spider(self, name: str) -> None:
        """``--spider``: the spider's ``custom_settings`` (at their own priority, so ``-s``
        still wins) and its ``user_agent`` attribute, which Scrapy sends as USER_AGENT."""
        assert self.crawler_process is not None and self.settings is not None
        try:
            spidercls = self.crawler_process.spider_loader.load(name)
        except KeyError:
            names = sorted(self.crawler_process.spider_loader.list())
            known = (
                f"this project's spiders: {', '.join(names)}" if names else "no spider is found here (not a project?)"
            )
            self.problem = f"--spider {name}: no spider of that name; {known}"
            return
        spidercls.update_settings(self.settings)
        user_agent = getattr(spidercls, "user_agent", None)
        if user_agent:
            self.settings.set("USER_AGENT", user_agent, priority="spider")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if opts.record and self.problem is None:  # from a compliance record, no crawl
            from scrapy_robots.commands import record

            assert self.settings is not None
            self.exitcode = record.run(opts, [*args, *self.urls], self.settings)
            return
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
                results.append(error_result(url, error, agent) if error else {})
        # --page: a bare path given with --file names no site, so no page to fetch.
        pages = [bool(opts.page) and not given.startswith("/") for given in urls for _ in agents]
        pending = [i for i, result in enumerate(results) if not result]
        if pending:
            self._crawl([checks[i] for i in pending], opts, results, pending, summary_only, [pages[i] for i in pending])
        if self.interrupted:
            print("scrapy robots: interrupted", file=sys.stderr)
            self.exitcode = EXIT_INTERRUPTED
            return
        for (given, _), result in zip(((u, a) for u in urls for a in agents), results):
            result["url"] = given  # a bare path given with --file stays a path
            if opts.page and "page" not in result:
                result["page"] = not_fetched(NO_SITE if given.startswith("/") else "no answer from robots.txt")
                result["directives"] = None
            if "robots_txt" in result:
                result["robots_txt"]["file"] = opts.file
                # An answer, and an error all the same: the exit status is 2.
                result["error"] = unreachable_error(result)
        file_lint = lint_robotstxt(self.body) if opts.lint and self.body is not None else None
        output = Output(opts, Paint(opts.color, sys.stdout), several_agents=len(agents) > 1)
        with quiet_on_closed_pipe():
            if summary_only:
                file_summary = (
                    summarize_robotstxt(self.body, self.maxsize) if self.body is not None and not urls else None
                )
                self.exitcode = EXIT_ERROR if any(r.get("error") for r in results) else EXIT_ALLOWED
                output.summaries(results, file_summary)
            else:
                self.exitcode = exit_status(results, file_lint, strict=opts.strict)
                output.answers(results, file_lint)

    def _crawl(
        self,
        checks: list[tuple[str, str | None]],
        opts: argparse.Namespace,
        results: list[dict[str, Any]],
        slots: list[int],
        summary: bool,
        pages: list[bool],
    ) -> None:
        assert self.crawler_process is not None
        answers: list[dict[str, Any]] = [error_result(url, "no answer") for url, _ in checks]
        crawler = self.crawler_process.create_crawler(RobotsQuerySpider)
        assert self.settings is not None
        try:
            # A parser that cannot be built (a bad option, a library missing) fails
            # here with its own message, not as a traceback from inside the crawl.
            build_from_crawler(self.settings[PARSER_SETTING], crawler, b"")
        except Exception as exc:
            parser = (
                f"--parser {opts.parser}"
                if opts.parser
                else f"ROBOTSTXT_PARSER = {class_name(self.settings[PARSER_SETTING])}"
            )
            for slot, (url, _) in zip(slots, checks):
                results[slot] = error_result(url, f"{parser} cannot be used: {exc}")
            return
        self.crawler_process.crawl(
            crawler, checks=checks, results=answers, compare=opts.compare, lint=opts.lint, summary=summary, pages=pages
        )
        self.crawler_process.start()
        # Ctrl-C (SIGINT) or SIGTERM: Scrapy closes the crawl with the reason "shutdown".
        self.interrupted = crawler.stats.get_value("finish_reason") == "shutdown"
        if getattr(self.crawler_process, "bootstrap_failed", False):
            answers = [error_result(url, "the crawl could not start (see the log above)") for url, _ in checks]
        for slot, answer in zip(slots, answers):
            results[slot] = answer

    def _fail(self, message: str) -> None:
        print(f"scrapy robots: error: {message}", file=sys.stderr)
        self.exitcode = EXIT_ERROR
