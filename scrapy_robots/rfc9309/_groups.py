"""The rule-set builder: the tokenizer's events become groups of rules.

A group is a run of ``User-agent`` lines and the records after them, up to
the next ``User-agent`` line that follows a rule (RFC 9309, section 2.1).
Only ``Allow``/``Disallow`` close a run of ``User-agent`` lines: a
``Sitemap`` or any other record between them does not (section 2.2.4; Google
agrees). Rules before the first ``User-agent`` belong to nobody.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robots.rfc9309._names import agent_key
from scrapy_robots.rfc9309._tokenizer import RobotsTxtHandler
from scrapy_robots.rfc9309._values import (
    CleanParam,
    RequestRate,
    VisitTime,
    parse_clean_param,
    parse_crawl_delay,
    parse_request_rate,
    parse_visit_time,
)

if TYPE_CHECKING:
    from scrapy_robots.rfc9309._options import ProductTokens

#: ``(line number, allow?, path pattern as written)``
RawRule = tuple[int, bool, str]
#: ``(line number, value as written, matching key)``; the key is ``"*"`` or a lower-cased token.
RawAgent = tuple[int, str, str]
#: ``(line number, value as written)`` of a ``Content-Signal`` or ``Content-Usage`` line.
RawPreference = tuple[int, str]


class Group:
    __slots__ = ("agents", "rules", "crawl_delay", "request_rate", "visit_time", "signals", "usages")

    def __init__(self) -> None:
        self.agents: list[RawAgent] = []
        self.rules: list[RawRule] = []
        self.crawl_delay: float | None = None
        self.request_rate: RequestRate | None = None
        self.visit_time: VisitTime | None = None
        # Usage preferences (scrapy_robots.usage reads them); like Crawl-delay they
        # do not close a run of User-agent lines.
        self.signals: list[RawPreference] = []
        self.usages: list[RawPreference] = []


class GroupBuilder(RobotsTxtHandler):
    """The groups of a robots.txt, as RFC 9309 forms them: a public extension point.

    Walk a file with ``parse_robotstxt(body, builder)``: each ``handle_*`` method is
    called once per line of that directive, in file order, with the line's number
    (1-based) and its value as written (trimmed, comment removed). After the walk:

    - ``groups``: one :class:`Group` per run of ``User-agent`` lines and the records
      after it (``agents``: ``(line, value, key)``; ``rules``: ``(line, allow?, path)``;
      the group's first ``crawl_delay``, ``request_rate``, ``visit_time``; its
      ``Content-Signal`` and ``Content-Usage`` lines);
    - the file-wide records: ``sitemaps``, the first ``host``, ``clean_params``, and
      ``stray_preferences`` (usage lines before any ``User-agent``: nobody's).

    A subclass that reads robots.txt otherwise (the linter, ``scrapy robots --summary``)
    overrides a ``handle_*`` method, calls ``super()`` to keep the grouping, and adds
    its own bookkeeping: the file is tokenized once, whatever reads it. The builder
    compiles nothing; :class:`~scrapy_robots.rfc9309.RobotsTxt` compiles the groups it
    is asked about, lazily.

    ``product_tokens`` is how a ``User-agent`` line is read into its key (see
    :class:`~scrapy_robots.rfc9309.Options`); a RobotsTxt is built with the same.
    """

    def __init__(self, product_tokens: ProductTokens = "names") -> None:
        self.product_tokens: ProductTokens = product_tokens
        self.groups: list[Group] = []
        self.sitemaps: list[str] = []
        self.host: str | None = None
        self.clean_params: list[CleanParam] = []
        #: ``Content-Signal`` / ``Content-Usage`` lines before any ``User-agent``: nobody's.
        self.stray_preferences: list[RawPreference] = []
        self._group: Group | None = None
        self._rules: list[RawRule] | None = None
        self._closed = False

    def handle_user_agent(self, line: int, value: str) -> None:
        group = self._group
        if group is None or self._closed:
            group = self._group = Group()
            self.groups.append(group)
            self._rules = group.rules
            self._closed = False
        group.agents.append((line, value, agent_key(value, self.product_tokens)))

    def handle_allow(self, line: int, value: str) -> None:
        rules = self._rules
        if rules is not None:
            rules.append((line, True, value))
            self._closed = True

    def handle_disallow(self, line: int, value: str) -> None:
        rules = self._rules
        if rules is not None:
            rules.append((line, False, value))
            self._closed = True

    def handle_sitemap(self, line: int, value: str) -> None:
        if value:
            self.sitemaps.append(value)

    def handle_host(self, line: int, value: str) -> None:
        # Yandex: the first Host directive counts.
        if value and self.host is None:
            self.host = value

    def handle_clean_param(self, line: int, value: str) -> None:
        clean_param = parse_clean_param(value)
        if clean_param is not None:
            self.clean_params.append(clean_param)

    # The first value in a group counts, as in Google's parser for Crawl-delay.
    def handle_crawl_delay(self, line: int, value: str) -> None:
        group = self._group
        if group is not None and group.crawl_delay is None:
            group.crawl_delay = parse_crawl_delay(value)

    def handle_request_rate(self, line: int, value: str) -> None:
        group = self._group
        if group is not None and group.request_rate is None:
            group.request_rate = parse_request_rate(value)

    def handle_visit_time(self, line: int, value: str) -> None:
        group = self._group
        if group is not None and group.visit_time is None:
            group.visit_time = parse_visit_time(value)

    def handle_content_signal(self, line: int, value: str) -> None:
        group = self._group
        if group is None:
            self.stray_preferences.append((line, value))
        else:
            group.signals.append((line, value))

    def handle_content_usage(self, line: int, value: str) -> None:
        group = self._group
        if group is None:
            self.stray_preferences.append((line, value))
        else:
            group.usages.append((line, value))
