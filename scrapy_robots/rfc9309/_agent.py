"""AgentRules: what one agent obeys in a robots.txt, ready to answer, and nothing else.

A crawler asks a site's robots.txt as one agent (at most a few): its merged group,
compiled for verdicts only (no line numbers, no rule texts), its ``Crawl-delay`` and
``Request-rate``. That is a few hundred bytes where the whole parse of the file is
about 14 KB, so a broad crawl keeps it for every site and never parses a file twice
(:meth:`RobotsTxt.agent_rules <scrapy_robots.rfc9309.RobotsTxt.agent_rules>` builds it).

It has a text form (:meth:`AgentRules.dumps`, :meth:`AgentRules.loads`) that a storage
keeps beside the body: a site restored from SQLite or Redis comes back as this, built
from its rules, not from a parse of its file. The form is::

    ["agent-rules/1", precedence, wildcards, empty_rules, crawl_delay, [requests, seconds] | null]
    A/allowed/path
    D/disallowed/path*

one rule per line, in file order (which the ``"first"`` precedence needs).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

from scrapy_robots.decoding import PERCENT_ERRORS
from scrapy_robots.rfc9309._matcher import CompiledRules
from scrapy_robots.rfc9309._options import Options
from scrapy_robots.rfc9309._url import normalize_url_path
from scrapy_robots.rfc9309._values import RequestRate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy_robots.rfc9309._groups import RawRule

FORM: Final = "agent-rules/1"
# Same grammar as _url.path_of, inlined into allowed(): a function call is a
# measurable share of a check. The group is the path, without the fragment;
# neither the scheme nor the authority crosses a "#", so a "#" before the path
# leaves the group empty, as path_of() returns "/" then.
PATH: Final = re.compile(r"(?://)?(?:[^/?;#]*://)?[^/?;#]*([^#]*)").match
ROBOTS_TXT: Final = "/robots.txt"


class AgentRules:
    """The verdicts, delay and rate of one agent in one robots.txt."""

    # No "_origin" (RobotsTxt remembers the last URL's "scheme://host/" to skip a regular
    # expression): a crawl keeps one of these for every site, and that string per site
    # weighs more than the match costs.
    __slots__ = ("_check", "crawl_delay", "request_rate", "rules")

    def __init__(
        self,
        rules: Sequence[RawRule],
        options: Options,
        crawl_delay: float | None = None,
        request_rate: RequestRate | None = None,
    ):
        check = CompiledRules(rules, options, lines=False)
        self._check = check if len(check) else None
        #: ``Crawl-delay`` in seconds, or None.
        self.crawl_delay = crawl_delay
        #: ``Request-rate``, or None.
        self.request_rate = request_rate
        #: How many Allow/Disallow rules the agent obeys (what the compiled form weighs).
        self.rules = len(rules)

    def allowed(self, url: str | bytes) -> bool:
        """Whether the agent may fetch ``url`` (absolute, or a path): the same answer
        as :meth:`RobotsTxt.allowed` for that agent."""
        return check_allows(None, self._check, url)

    @staticmethod
    def dumps(
        rules: Sequence[RawRule],
        options: Options,
        crawl_delay: float | None = None,
        request_rate: RequestRate | None = None,
    ) -> str:
        """The text form of the AgentRules these arguments build."""
        header = [
            FORM,
            options.precedence,
            options.wildcards,
            options.empty_rules,
            crawl_delay,
            None if request_rate is None else list(request_rate),
        ]
        lines = [json.dumps(header, separators=(",", ":"))]
        lines += [("A" if allow else "D") + pattern for _, allow, pattern in rules]
        return "\n".join(lines)

    @classmethod
    def loads(cls, form: str) -> AgentRules:
        """Build from :meth:`dumps`'s text. Raises ValueError on anything else."""
        header, *lines = form.split("\n")
        try:
            tag, precedence, wildcards, empty_rules, crawl_delay, rate = json.loads(header)
            if tag != FORM:
                raise ValueError(f"not an {FORM} form: {tag!r}")
            options = Options(precedence, wildcards, empty_rules)
            request_rate = None if rate is None else RequestRate(int(rate[0]), float(rate[1]))
            delay = None if crawl_delay is None else float(crawl_delay)
        except (TypeError, IndexError, json.JSONDecodeError) as exc:
            raise ValueError(f"not an {FORM} form: {exc}") from exc
        if any(line[:1] not in ("A", "D") for line in lines):
            raise ValueError(f"not an {FORM} form: a rule line must start with A or D")
        rules = [(number, line[0] == "A", line[1:]) for number, line in enumerate(lines, 1)]
        return cls(rules, options, delay, request_rate)


def check_allows(holder: Any, check: CompiledRules | None, url: str | bytes) -> bool:
    """Whether ``check`` (one agent's compiled rules; None: no rule applies) allows
    ``url``: :class:`RobotsTxt` and :class:`~scrapy_robots.rfc9309.AgentRules` both
    answer here, the one hot path. ``holder._origin``, when a holder is given, remembers
    the "scheme://host/" of the last absolute URL (see below)."""
    if check is None:
        # No rule applies to this agent: every URL is allowed, parsed or not.
        return True
    # (Not isinstance(): this is the hot path, and the test costs less.)
    text: str = url if url.__class__ is str else url.decode("utf-8", PERCENT_ERRORS)  # type: ignore[union-attr]
    # The URLs asked of one robots.txt are nearly all on its own site: once one
    # has been seen, the path of the next starts where the same "scheme://host"
    # ends, found with no regular expression.
    origin = holder._origin if holder is not None else ""
    if origin and text.startswith(origin):
        path = text[len(origin) - 1 :]
        if "#" in path:
            path = path[: path.index("#")]
    else:
        match: Any = PATH(text)  # matches "" at worst
        path = match.group(1)
        if not path or path[0] != "/":
            path = "/" + path
        elif match.start(1) and holder is not None:
            holder._origin = text[: match.start(1) + 1]
    if "%" in path or not path.isascii():
        path = normalize_url_path(path)
    # RFC 9309 2.2.2: /robots.txt itself is always allowed. Asked only of a
    # path the rules disallow, which most are not.
    return check.allows(path) or (path.startswith(ROBOTS_TXT) and (len(path) == 11 or path[11] == "?"))
