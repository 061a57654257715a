"""The public facade: a parsed robots.txt that answers questions about it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from scrapy_robots.decoding import PERCENT_ERRORS, decode_robotstxt
from scrapy_robots.rfc9309._agent import ROBOTS_TXT as _ROBOTS_TXT
from scrapy_robots.rfc9309._agent import AgentRules, check_allows
from scrapy_robots.rfc9309._agents import index_groups, scan_groups, select_groups
from scrapy_robots.rfc9309._groups import GroupBuilder
from scrapy_robots.rfc9309._matcher import CompiledRules, Rule, rule_of
from scrapy_robots.rfc9309._names import token_of
from scrapy_robots.rfc9309._options import (
    DEFAULT_OPTIONS,
    AgentMatching,
    EmptyRules,
    Options,
    Precedence,
    ProductTokens,
)
from scrapy_robots.rfc9309._tokenizer import parse_robotstxt
from scrapy_robots.rfc9309._url import normalize_url_path, path_of
from scrapy_robots.useragent import product_token

if TYPE_CHECKING:
    from typing import Self

    from scrapy_robots.rfc9309._groups import Group
    from scrapy_robots.rfc9309._values import CleanParam, RequestRate, VisitTime

# A crawler asks as one or two agents; a bound keeps a caller that passes a
# new string every time from growing the caches without limit.
_CACHE_MAX: Final = 256
_UNSEEN: Final = object()


@dataclass(frozen=True)
class Explanation:
    """Why :meth:`RobotsTxt.explain` allows or disallows a URL."""

    #: The verdict, always the same as :meth:`RobotsTxt.allowed`'s.
    allowed: bool
    #: The path that was matched, normalised (percent-encoding, see the docs).
    path: str
    #: The agent that was matched: the product token, or the full string in
    #: ``"substring"`` agent matching.
    user_agent: str
    #: The ``(line, value)`` of each ``User-agent`` line that selected the
    #: group(s) obeyed; empty when no group applies.
    group_lines: tuple[tuple[int, str], ...]
    #: The rule that decided, or ``None`` when none matched.
    rule: Rule | None
    #: One sentence saying the above.
    reason: str
    #: The usage preference lines of the group(s) obeyed, as
    #: ``(line, "Content-Signal" | "Content-Usage", value)``, in file order;
    #: :mod:`scrapy_robots.usage` says what they decide for a purpose.
    preferences: tuple[tuple[int, str, str], ...] = ()

    def __str__(self) -> str:
        return f"{'allowed' if self.allowed else 'disallowed'}: {self.reason}"


class RobotsTxt:
    """A parsed robots.txt.

    Build one with :meth:`parse`. Queries take a ``user_agent``: a product
    token (``FooBot``) or a full ``User-Agent`` header, reduced to its product
    token by :func:`scrapy_robots.useragent.product_token`; ``"*"`` asks as
    an agent that no group names.
    """

    __slots__ = (
        "options",
        "sitemaps",
        "host",
        "clean_params",
        "stray_preferences",
        "_groups",
        "_index",
        "_rules",
        "_checks",
        "_selected",
        "_origin",
    )

    def __init__(self, builder: GroupBuilder, options: Options = DEFAULT_OPTIONS):
        if builder.product_tokens != options.product_tokens:
            # The groups' keys are the builder's reading of the User-agent lines.
            raise ValueError(
                f"the builder read User-agent lines with product_tokens={builder.product_tokens!r}, "
                f"the options say {options.product_tokens!r}: build it with GroupBuilder({options.product_tokens!r})"
            )
        self.options = options
        #: ``Sitemap`` URLs, in file order.
        self.sitemaps: tuple[str, ...] = tuple(builder.sitemaps)
        #: The ``Host`` directive (Yandex), the first one, or ``None``.
        self.host: str | None = builder.host
        #: ``Clean-param`` directives (Yandex), in file order.
        self.clean_params: tuple[CleanParam, ...] = tuple(builder.clean_params)
        #: ``(line, value)`` of ``Content-Signal`` / ``Content-Usage`` lines outside any group.
        self.stray_preferences: tuple[tuple[int, str], ...] = tuple(builder.stray_preferences)
        self._groups: tuple[Group, ...] = tuple(builder.groups)
        self._index: dict[str, tuple[Group, ...]] | None = None
        self._rules: dict[str, CompiledRules] = {}
        # What allowed() asks per agent: the compiled rules, or None when no rule
        # applies to the agent.
        self._checks: dict[str, CompiledRules | None] = {}
        self._selected: dict[str, tuple[Group, ...]] = {}
        # "scheme://host/" of the last absolute URL asked about (see allowed()).
        self._origin = ""

    @classmethod
    def parse(
        cls,
        body: str | bytes,
        *,
        encoding: str | None = None,
        precedence: Precedence = "longest",
        wildcards: bool = True,
        empty_rules: EmptyRules = "ignore",
        agent_matching: AgentMatching = "token",
        product_tokens: ProductTokens = "names",
    ) -> Self:
        """Parse a robots.txt body; never raises on any body.

        ``bytes`` are decoded with :func:`scrapy_robots.decoding.decode_robotstxt`
        (``encoding`` is the response's charset, if known). The keyword options
        are those of :class:`Options`; a bad value raises :class:`ValueError`.
        """
        options = Options(precedence, wildcards, empty_rules, agent_matching, product_tokens)
        builder = GroupBuilder(product_tokens)
        parse_robotstxt(decode_robotstxt(body, encoding), builder)
        return cls(builder, options)

    def allowed(self, url: str | bytes, user_agent: str = "*") -> bool:
        """Whether ``user_agent`` may fetch ``url`` (absolute, or a path).

        ``url`` should be percent-encoded as on the wire; non-ASCII characters
        are encoded as UTF-8 first, and bytes that are not UTF-8 as themselves.
        """
        check: Any = self._checks.get(user_agent, _UNSEEN)
        if check is _UNSEEN:
            check = self._check_for(user_agent)
        return check_allows(self, check, url)

    def explain(self, url: str | bytes, user_agent: str = "*") -> Explanation:
        """Which group and which rule decide whether ``user_agent`` may fetch ``url``."""
        if isinstance(url, bytes):
            url = url.decode("utf-8", PERCENT_ERRORS)
        path = normalize_url_path(path_of(url))
        groups = self._select(user_agent)
        if self.options.agent_matching == "substring":
            agent = user_agent
            lowered = agent.lower()
            group_lines = tuple(
                (line, value)
                for g in groups
                for line, value, key in g.agents
                if key not in ("", "*") and key in lowered
            )
        else:
            agent = product_token(user_agent)
            token = token_of(user_agent, self.options.product_tokens)
            group_lines = tuple((line, value) for g in groups for line, value, key in g.agents if key == token)
        if not group_lines:
            group_lines = tuple((line, value) for g in groups for line, value, key in g.agents if key == "*")
        preferences = self.preference_lines(user_agent)
        if path.startswith(_ROBOTS_TXT) and (len(path) == 11 or path[11] == "?"):
            return Explanation(
                True, path, agent, group_lines, None, "/robots.txt is always allowed (RFC 9309, 2.2.2)", preferences
            )
        rules = self._rules.get(user_agent) or self._compile(user_agent)
        entry = rules.decide(path)
        rule = None if entry is None else rule_of(entry)
        if not groups:
            reason = f"no group names {agent!r} and there is no '*' group"
        else:
            where = ", ".join(f"line {line} (User-agent: {value})" for line, value in group_lines)
            if rule is None:
                reason = f"no rule of the group at {where} matches {path}"
            else:
                reason = f"line {rule.line} ({rule.text}) of the group at {where} matches {path}"
        return Explanation(rule is None or rule.allow, path, agent, group_lines, rule, reason, preferences)

    def preference_lines(self, user_agent: str = "*") -> tuple[tuple[int, str, str], ...]:
        """``(line, "Content-Signal" | "Content-Usage", value)`` of the group(s) ``user_agent`` obeys."""
        lines = [
            (line, name, value)
            for group in self._select(user_agent)
            for name, found in (("Content-Signal", group.signals), ("Content-Usage", group.usages))
            for line, value in found
        ]
        return tuple(sorted(lines))

    def crawl_delay(self, user_agent: str = "*") -> float | None:
        """``Crawl-delay`` in seconds for ``user_agent``, or ``None``."""
        return next((g.crawl_delay for g in self._select(user_agent) if g.crawl_delay is not None), None)

    def request_rate(self, user_agent: str = "*") -> RequestRate | None:
        """``Request-rate`` for ``user_agent``, or ``None``."""
        return next((g.request_rate for g in self._select(user_agent) if g.request_rate is not None), None)

    def visit_time(self, user_agent: str = "*") -> VisitTime | None:
        """``Visit-time`` for ``user_agent``, or ``None``."""
        return next((g.visit_time for g in self._select(user_agent) if g.visit_time is not None), None)

    def agent_rules(self, user_agent: str = "*") -> tuple[AgentRules, str]:
        """What ``user_agent`` obeys here and nothing else, ready to answer (the same
        verdicts as :meth:`allowed`, its ``Crawl-delay`` and ``Request-rate``), and its
        text form (:meth:`AgentRules.loads` builds it again without this file)."""
        groups = self._select(user_agent)
        rules = groups[0].rules if len(groups) == 1 else sorted(rule for group in groups for rule in group.rules)
        agent = AgentRules(rules, self.options, self.crawl_delay(user_agent), self.request_rate(user_agent))
        return agent, agent.dumps()

    @property
    def agents(self) -> tuple[str, ...]:
        """Every ``User-agent`` value in the file, as written, without duplicates."""
        return tuple(dict.fromkeys(value for group in self._groups for _, value, _ in group.agents))

    def _select(self, user_agent: str) -> tuple[Group, ...]:
        groups = self._selected.get(user_agent)
        if groups is None:
            if len(self._selected) >= _CACHE_MAX:
                self._selected.clear()
            if self.options.agent_matching == "token":
                groups = scan_groups(self._groups, user_agent, self.options.product_tokens)
            else:
                if self._index is None:
                    self._index = index_groups(self._groups)
                groups = select_groups(self._index, user_agent, "substring", self.options.product_tokens)
            self._selected[user_agent] = groups
        return groups

    def _check_for(self, user_agent: str) -> CompiledRules | None:
        rules = self._rules.get(user_agent)
        if rules is None:
            rules = self._compile(user_agent)
        if len(self._checks) >= _CACHE_MAX:
            self._checks.clear()
        # Not a bound method: one object less per agent for the garbage collector.
        check = self._checks[user_agent] = rules if len(rules) else None
        return check

    def _compile(self, user_agent: str) -> CompiledRules:
        groups = self._select(user_agent)
        # Agents that select the same groups share one compiled structure.
        for other, other_groups in self._selected.items():
            if other_groups == groups and other in self._rules:
                rules = self._rules[other]
                break
        else:
            # Several groups for one agent merge into one, in file order (RFC 9309 2.2.1).
            if len(groups) == 1:
                merged = groups[0].rules
            else:
                merged = sorted(rule for group in groups for rule in group.rules)
            rules = CompiledRules(merged, self.options)
        if len(self._rules) >= _CACHE_MAX:
            self._rules.clear()
        self._rules[user_agent] = rules
        return rules
