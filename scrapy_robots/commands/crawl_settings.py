"""The settings of the command's crawl: the project's (and ``--spider``'s), then what a
question changes: one attempt and no retries, nothing written (no JOBDIR, no shared cache,
no compliance record), the agent, parser and purposes asked, the recording parser, and
``--file``'s body served in place of the network. Every ``ROBOTSTXT_*`` setting is checked
here, with the middleware's own messages."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.settings import SETTINGS_PRIORITIES

from scrapy_robots.cache import check_storage_class
from scrapy_robots.commands.inputs import NameTheFile, parser_option, usage_option
from scrapy_robots.commands.project import choose_middleware
from scrapy_robots.commands.query import (
    FILE_SETTING,
    FOLDER_SETTING,
    LOCAL_FILE_MIDDLEWARE,
    MIDDLEWARE_SETTING,
    PARSER_SETTING,
    RAW_BODIES_MIDDLEWARE,
    recording_parser,
)
from scrapy_robots.parsers import check_parser_class
from scrapy_robots.settings.config import MEMORY_STORAGE, ONE_SHOT_SETTING, RobotsConfig
from scrapy_robots.settings.parts import usage_config

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import BaseSettings

CMDLINE = SETTINGS_PRIORITIES["cmdline"]


def unless_given(settings: BaseSettings, name: str, value: Any) -> None:
    """``name`` set to ``value`` for the command, unless the command line gave it."""
    if (settings.getpriority(name) or 0) < CMDLINE:
        settings.set(name, value, priority="cmdline")


def prepare_settings(
    settings: BaseSettings, opts: argparse.Namespace, body: bytes | None, notes: list[str]
) -> int | str:
    """Settings as the crawl would have them, then what the command changes. Returns the
    robots.txt size cap (``ROBOTSTXT_MAXSIZE``), or the problem that stops the command;
    what the user should know goes to ``notes``."""
    # A command line answers now: one attempt, no unreachable retries.
    unless_given(settings, "ROBOTSTXT_UNREACHABLE_RETRY_TIMES", 0)
    settings.set(ONE_SHOT_SETTING, True, priority="cmdline")  # and its log says so
    # A question writes nothing: not into the project's JOBDIR (its scheduler queue,
    # spider state, robots.txt cache), not into a shared cache.
    unless_given(settings, "JOBDIR", None)
    unless_given(settings, "ROBOTSTXT_CACHE_STORAGE", MEMORY_STORAGE)
    # Nor a line into the crawls' compliance record, whoever set it: an answer given here is
    # no crawl's, and --record would take the copy fetched for it for one a crawl saw.
    record = settings.get("ROBOTSTXT_RECORD")
    if record:
        notes.append(
            f"ROBOTSTXT_RECORD = {str(record)!r} is not used: the command writes nothing into a crawl's "
            "compliance record (--record DIR reads one)"
        )
    settings.set("ROBOTSTXT_RECORD", None, priority=max(CMDLINE, settings.getpriority("ROBOTSTXT_RECORD") or 0))
    try:
        middleware = choose_middleware(settings, notes)
    except ValueError as exc:  # ROBOTSTXT_OBEY neither true nor false
        return str(exc)
    if opts.user_agent and len(opts.user_agent) == 1:
        settings.set("ROBOTSTXT_USER_AGENT", opts.user_agent[0], priority="cmdline")
    elif opts.user_agent:
        # Each check carries its agent as its User-Agent header (see RobotsQuerySpider).
        settings.set("ROBOTSTXT_USER_AGENT", None, priority="cmdline")
    if opts.parser:
        path, problem = parser_option(opts.parser)
        if problem is not None:
            return problem
        settings.set("ROBOTSTXT_PARSER", path, priority="cmdline")
    if opts.usage:
        problem = usage_option(opts.usage)
        if problem is not None:
            return problem
    try:
        # Every ROBOTSTXT_* setting checked now, with the middleware's own messages.
        config = RobotsConfig.from_settings(settings)
        chosen = config.parser_class
        check_parser_class("ROBOTSTXT_PARSER", chosen)
        check_storage_class("ROBOTSTXT_CACHE_STORAGE", config.storage_class)
        if opts.usage:
            settings.set("ROBOTSTXT_USAGE", opts.usage, priority="cmdline")
            settings.set("ROBOTSTXT_USAGE_MODE", "deny", priority="cmdline")
        if usage_config(settings) is not None and not opts.page:
            # With --page, the page is read by the crawl's own spider middlewares (page.py).
            notes.append(
                "the usage answers (--usage, ROBOTSTXT_USAGE) come from the site's files alone (robots.txt, "
                "and tdmrep.json for an AI purpose): a page's Content-Usage and tdm-reservation headers, its "
                "tdm-reservation meta tag and its noai directive, which a crawl obeys too, are not checked "
                "(the command downloads no page; --page does)"
            )
    except ValueError as exc:
        return str(exc)
    # ROBOTSTXT_MAX_WAITING bounds the requests a crawl parks in its downloader; the
    # command's questions are no downloads, and each must wait for its answer.
    settings.set("ROBOTSTXT_MAX_WAITING", sys.maxsize, priority="cmdline")
    settings.set(PARSER_SETTING, chosen, priority="cmdline")
    settings.set(MIDDLEWARE_SETTING, middleware, priority="cmdline")
    settings.set("ROBOTSTXT_PARSER", recording_parser(chosen), priority="cmdline")
    # The bodies as received: the versions the answers name (their SHA-256), and --lint's bytes.
    settings["DOWNLOADER_MIDDLEWARES"].set(RAW_BODIES_MIDDLEWARE, 580, priority="cmdline")
    if body is not None:
        NameTheFile(opts.file).install()
        settings.set(FILE_SETTING, body, priority="cmdline")
        if opts.file != "-":  # the site's other policy files, where given beside it
            settings.set(FOLDER_SETTING, str(Path(opts.file).resolve().parent), priority="cmdline")
        settings["DOWNLOADER_MIDDLEWARES"].set(LOCAL_FILE_MIDDLEWARE, 1, priority="cmdline")
    return config.maxsize
