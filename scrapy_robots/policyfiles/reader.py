"""RobotsReader: a robots.txt body becomes what the crawl asks of it.

The one place where an entry is made ready, whether its body was just fetched or
comes back from the storage: what the crawl's agent obeys (``rules``, when the parser
the project chose, ``ROBOTSTXT_PARSER``, can say it alone: see
:meth:`~scrapy_robots.parsers.RobotParser.reduce`), else the whole parser; the usage
preferences (``ROBOTSTXT_USAGE``, read by our own parser whatever the backend) and the
site's delay (``ROBOTSTXT_CRAWL_DELAY``).

A body is parsed once per site (``robotstxt/parsed`` counts it): the entry keeps the
agent's rules in text form (``agents``) beside the body in the storage, and a site that
comes back from the storage is built from them, not parsed again.

A fetched body that states no robots.txt line (:func:`states_no_rules`: an HTML page
served as robots.txt, about half the body bytes of the corpus) is not kept: the entry
keeps an empty body and ``body_dropped``, when the crawl's parser also finds nothing in it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from scrapy.utils.misc import build_from_crawler

from scrapy_robots.decoding import decode_robotstxt
from scrapy_robots.parsers import RobotParser, as_robot_parser, check_parser_class
from scrapy_robots.parsers.delay import read_site_delay, site_delay
from scrapy_robots.rfc9309 import RobotsTxtHandler, parse_robotstxt
from scrapy_robots.rsl.discovery import license_urls
from scrapy_robots.status.policy import Action
from scrapy_robots.usage import site_preferences

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.settings.config import RobotsConfig

logger = logging.getLogger(__name__)

#: Other agents (per-request User-Agent headers) whose rules one entry keeps.
MAX_OTHER_AGENTS = 16


class RobotsReader:
    def __init__(self, crawler: Crawler, config: RobotsConfig):
        self.crawler = crawler
        self.stats = crawler.stats
        self.config = config
        self.agent = config.default_user_agent
        check_parser_class("ROBOTSTXT_PARSER", config.parser_class)
        # A backend that cannot import (reppy not built, say) fails here, at start-up.
        try:
            build_from_crawler(config.parser_class, crawler, b"")
        except Exception as exc:
            raise RuntimeError(f"ROBOTSTXT_PARSER = {config.parser_name} cannot be used: {exc}") from exc
        #: Where this crawler's rules are kept in an entry's ``agents``: the same parser,
        #: options and agent make the same rules of a body. Every option is in the key, so
        #: rules stored under other options, or before an option existed, are not found:
        #: the body is parsed again. (Before product_tokens, "Ai2Bot-Dolma" obeyed
        #: AI2Bot's group too; those rules are keyed "...,token|<agent>" and stay unread.)
        o = config.rfc9309
        options = f"{o.precedence},{o.wildcards:d},{o.empty_rules},{o.agent_matching},{o.product_tokens}"
        self.key = f"{config.parser_name}|{options}|{self.agent}"
        self._restore = getattr(config.parser_class, "restore", None)  # Scrapy-interface classes have none
        self._empty_form: str | None = None  # the rules of an empty file, in text form (reduce)

    def ready(self, entry: RobotsEntry) -> RobotsEntry | None:
        """``entry`` with what the crawl asks of it (rules or parser, usage, delay),
        built once. None for a parsed robots.txt that comes without its rules or its
        body (it left the storage). A body the parser cannot read makes the site
        allowed, as Scrapy's middleware does."""
        if entry.action is not Action.PARSE or entry.parser is not None or entry.rules is not None:
            return entry
        form = entry.agents.get(self.key) if entry.agents else None
        usage = self.config.usage is not None
        # The usage preferences (ROBOTSTXT_USAGE) are read from the body: it must be there.
        if form is not None and self._restore is not None and (not usage or entry.body is not None):
            rules = self._restore(form)
            if rules is not None:
                entry.rules = rules
                entry.delay = self._delay(rules.crawl_delay, rules.request_rate)
                if usage:
                    self._read_usage(entry)
                return entry
        if entry.body is None:
            return None
        self.read(entry)
        return entry

    def read(self, entry: RobotsEntry) -> RobotParser | None:
        """Parse the entry's body and keep what the crawl asks of it. Returns the whole
        parser (for the ``robots_parsed`` receivers), None if it could not parse."""
        assert entry.body is not None
        parser = self.parse(entry.body, entry.url)
        if parser is None:
            entry.action = Action.ALLOW
            return None
        if self.config.usage is not None:
            entry.usage = site_preferences(entry.body)
        if self.config.rsl:
            entry.licenses = license_urls(entry.body, self.agent, entry.url)
        reduced = self._reduce(parser, self.agent)
        if entry.body and not entry.body_dropped and self._says_nothing(entry, parser, reduced):
            # Kept empty: every consumer (the verdict, the usage lines, another agent's or
            # crawler's parser) reads from it what it read from the fetched body: nothing.
            entry.body, entry.body_dropped = b"", True
        if reduced is not None:
            entry.rules, form = reduced
            entry.agents = {**(entry.agents or {}), self.key: form}
            entry.delay = self._delay(entry.rules.crawl_delay, entry.rules.request_rate)
        else:
            entry.parser = parser
            if self.config.crawl_delay:
                config = self.config
                entry.delay = read_site_delay(parser, self.agent, config.max_crawl_delay, config.crawl_delay_exceeded)
        return parser

    def _says_nothing(self, entry: RobotsEntry, parser: RobotParser, reduced: tuple[Any, str] | None) -> bool:
        """Whether ``entry``'s body states no robots.txt line, for our tokenizer and for the
        crawl's parser: its rules for the crawl's agent are an empty file's (a parser that
        reduces), else it allows the site's root and a page, with no delay."""
        assert entry.body is not None
        # The crawl's parser first: most files give the agent rules, which settles it
        # without reading the body a second time.
        try:
            if reduced is not None:
                if self._empty_form is None:
                    empty = self._reduce(
                        as_robot_parser(build_from_crawler(self.config.parser_class, self.crawler, b""), self.agent),
                        self.agent,
                    )
                    self._empty_form = "" if empty is None else empty[1]
                if reduced[1] != self._empty_form:
                    return False
            else:
                root = urljoin(entry.url or entry.site, "/")
                if not (
                    parser.allowed(root, self.agent)
                    and parser.allowed(urljoin(root, "/a/page.html?q=1"), self.agent)
                    and not parser.crawl_delay(self.agent)
                    and not parser.request_rate(self.agent)
                ):
                    return False
        except Exception:  # a directive the parser cannot read, or a parser bug: the body is kept
            return False
        return states_no_rules(entry.body)

    def _read_usage(self, entry: RobotsEntry) -> None:
        """The usage preferences of a restored entry: most files state none, found by a
        look at the text; a file that states some is parsed by our parser, counted."""
        assert entry.body is not None
        entry.usage = site_preferences(entry.body)
        if self.config.rsl:
            entry.licenses = license_urls(entry.body, self.agent, entry.url)
        if entry.usage is not None:
            self.stats.inc_value("robotstxt/parsed")

    def read_other_agent(self, entry: RobotsEntry, body: bytes, agent: str | bytes) -> None:
        """Build what ``agent`` (not the crawl's own) obeys from ``body``, once, and keep
        it beside the entry's rules (``others``)."""
        parser = self.parse(body, entry.url)
        reduced = None if parser is None else self._reduce(parser, agent)
        # A body that no longer parses (it did for the crawl's agent): that agent's rules.
        self.keep_other_agent(entry, agent, entry.rules if reduced is None else reduced[0])

    @staticmethod
    def keep_other_agent(entry: RobotsEntry, agent: str | bytes, rules: Any) -> None:
        others = entry.others
        if others is None or len(others) >= MAX_OTHER_AGENTS:
            others = entry.others = {}
        others[agent] = rules

    def parse(self, body: bytes, url: str | None) -> RobotParser | None:
        self.stats.inc_value("robotstxt/parsed")
        try:
            parser = build_from_crawler(self.config.parser_class, self.crawler, body)
        except Exception:
            logger.exception(
                "%(parser)s could not parse robots.txt from %(url)s; the site is allowed",
                {"parser": self.config.parser_name, "url": url or "?"},
                extra={"spider": self.crawler.spider},
            )
            self.stats.inc_value("robotstxt/parser_error")
            return None
        return as_robot_parser(parser, self.agent)

    def _reduce(self, parser: RobotParser, agent: str | bytes) -> tuple[Any, str] | None:
        try:
            return parser.reduce(agent)
        except Exception:  # a parser bug must not break the crawl: it is kept whole
            logger.exception("%(parser)s failed to reduce robots.txt to one agent", {"parser": self.config.parser_name})
            return None

    def _delay(self, delay: float | None, rate: Any) -> Any:
        config = self.config
        if not config.crawl_delay:
            return None
        return site_delay(delay, rate, config.max_crawl_delay, config.crawl_delay_exceeded)


class _Directives(RobotsTxtHandler):
    """Counts the lines that name a directive (any of them, known to our tokenizer)."""

    def __init__(self) -> None:
        self.found = 0

    def _line(self, line: int, value: str) -> None:
        self.found += 1

    handle_user_agent = handle_allow = handle_disallow = handle_sitemap = _line
    handle_crawl_delay = handle_request_rate = handle_visit_time = handle_host = _line
    handle_clean_param = handle_content_signal = handle_content_usage = _line


def states_no_rules(body: bytes) -> bool:
    """Whether no line of ``body`` is a robots.txt line (``User-agent``, ``Allow``,
    ``Disallow``, ``Sitemap``, ``Crawl-delay``, ``Content-Usage``... in any spelling our
    tokenizer accepts: Google's leniency, a superset of Protego's, the standard library's
    and rerp's): an HTML page, a "Not found" text. Such a body yields no rule, no delay
    and no usage line for any agent."""
    counter = _Directives()
    parse_robotstxt(decode_robotstxt(body), counter)
    return counter.found == 0
