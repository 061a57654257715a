"""AgentRules: what one agent obeys in a robots.txt, and nothing else.

A crawler asks a site's robots.txt as one agent (at most a few): its merged group, as
one line of text per rule, compiled for verdicts only (no line numbers, no rule texts)
when asked, its ``Crawl-delay`` and ``Request-rate``. That is a few hundred bytes where
the whole parse of the file is about 14 KB, so a broad crawl keeps it for every site and
never parses a file twice (:meth:`RobotsTxt.agent_rules
<scrapy_robots.rfc9309.RobotsTxt.agent_rules>` builds it).

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
from scrapy_robots.rfc9309._scan import ScannedRules
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


#: ``_check`` of AgentRules whose rules are not compiled (None means "no rule applies").
_UNCOMPILED: Final = object()
#: ``_check`` of AgentRules that are not compiled and whose text a question reads as it
#: is (see :class:`ScannedRules`): compiled only when asked to be (:meth:`AgentRules.compile`).
_SCANNED: Final = object()
#: One Options object for every AgentRules read with the same options.
_OPTIONS: dict[tuple[str, bool, str], Options] = {}


class AgentRules:
    """The verdicts, delay and rate of one agent in one robots.txt.

    What it keeps for good is its rules as one line of text each (``A/path``,
    ``D/path``): about 20 bytes a rule, one string, which answers a question by reading
    it (``ScannedRules``). The structure that decides a path in O(log n) (a few
    times that size) is compiled and released (``compile()``, ``release()``) by
    the crawl's ready tier, for the sites it crawls right now, within
    ``ROBOTSTXT_CACHE_PARSED``; rules whose paths must be normalised first (a
    percent-encoded or non-ASCII pattern) are compiled on their first question.
    """

    # No "_origin" of its own (RobotsTxt remembers its last URL's "scheme://host/" to skip
    # a regular expression): a crawl keeps one of these for every site. They share one.
    __slots__ = ("_check", "_text", "_options", "crawl_delay", "request_rate", "rules")

    def __init__(
        self,
        rules: Sequence[RawRule] | str,
        options: Options,
        crawl_delay: float | None = None,
        request_rate: RequestRate | None = None,
    ):
        if not isinstance(rules, str):
            rules = "\n".join([("A" if allow else "D") + pattern for _, allow, pattern in rules])
        self._text = rules
        key = (options.precedence, options.wildcards, options.empty_rules)
        self._options = _OPTIONS.setdefault(key, options)
        self._check: Any = _uncompiled(rules, self._options)
        #: ``Crawl-delay`` in seconds, or None.
        self.crawl_delay = crawl_delay
        #: ``Request-rate``, or None.
        self.request_rate = request_rate
        #: How many Allow/Disallow rules the agent obeys (what the compiled form weighs).
        self.rules = rules.count("\n") + 1 if rules else 0

    def allowed(self, url: str | bytes) -> bool:
        """Whether the agent may fetch ``url`` (absolute, or a path): the same answer
        as :meth:`RobotsTxt.allowed` for that agent."""
        check = self._check
        if check is _SCANNED:
            # Not compiled: the text answers (a site asked once in a while, by a broad
            # crawl's frontier, costs no compiled structure; see RobotsCache).
            check = ScannedRules(self._text, self._options)
        elif check is _UNCOMPILED:
            check = self.compile()
        return check_allows(None, check, url)

    @property
    def compiled(self) -> bool:
        return self._check is not _UNCOMPILED and self._check is not _SCANNED

    def compile(self) -> CompiledRules | None:
        """Build the structure that decides paths (done by the first question otherwise)."""
        check = self._check
        if check is _UNCOMPILED or check is _SCANNED:
            text = self._text
            lines = text.split("\n") if text else ()
            check = CompiledRules(
                [(n, line[0] == "A", line[1:]) for n, line in enumerate(lines, 1)], self._options, False
            )
            self._check = check = check if len(check) else None
        return check

    def release(self) -> None:
        """Drop the compiled structure; the next question reads the text, or builds it again."""
        self._check = _uncompiled(self._text, self._options)

    def dumps(self) -> str:
        """The text form (see the module's docstring): what a storage keeps."""
        options = self._options
        rate = self.request_rate
        header = [
            FORM,
            options.precedence,
            options.wildcards,
            options.empty_rules,
            self.crawl_delay,
            None if rate is None else list(rate),
        ]
        return json.dumps(header, separators=(",", ":")) + "\n" + self._text

    @classmethod
    def loads(cls, form: str) -> AgentRules:
        """Build from :meth:`dumps`'s text. Raises ValueError on anything else."""
        header, _, text = form.partition("\n")
        try:
            tag, precedence, wildcards, empty_rules, crawl_delay, rate = json.loads(header)
            if tag != FORM:
                raise ValueError(f"not an {FORM} form: {tag!r}")
            options = Options(precedence, wildcards, empty_rules)
            request_rate = None if rate is None else RequestRate(int(rate[0]), float(rate[1]))
            delay = None if crawl_delay is None else float(crawl_delay)
        except (TypeError, IndexError, json.JSONDecodeError) as exc:
            raise ValueError(f"not an {FORM} form: {exc}") from exc
        if text and ("\n\n" in text or _NOT_A_RULE(text)):
            raise ValueError(f"not an {FORM} form: a rule line must start with A or D")
        return cls(text, options, delay, request_rate)


def _uncompiled(text: str, options: Options) -> object:
    """How uncompiled rules answer: :data:`_SCANNED` when :class:`ScannedRules` can read their
    text as it is (no percent-encoding or non-ASCII pattern to normalise first), else
    :data:`_UNCOMPILED`."""
    return _UNCOMPILED if "%" in text or not text.isascii() else _SCANNED


#: A line of the rules' text that does not start with A or D.
_NOT_A_RULE: Final = re.compile(r"(?m)^[^AD\n]").search


def check_allows(holder: Any, check: CompiledRules | None, url: str | bytes) -> bool:
    """Whether ``check`` (one agent's compiled rules; None: no rule applies) allows
    ``url``: :class:`RobotsTxt` and :class:`~scrapy_robots.rfc9309.AgentRules` both
    answer here, the one hot path. ``holder._origin`` remembers the "scheme://host/" of
    the last absolute URL (see below): a RobotsTxt's own, or, without a holder, one shared
    by every AgentRules (any origin will do: it only spares the regular expression)."""
    if check is None:
        # No rule applies to this agent: every URL is allowed, parsed or not.
        return True
    # (Not isinstance(): this is the hot path, and the test costs less.)
    text: str = url if url.__class__ is str else url.decode("utf-8", PERCENT_ERRORS)  # type: ignore[union-attr]
    # The URLs asked of one robots.txt are nearly all on its own site: once one
    # has been seen, the path of the next starts where the same "scheme://host"
    # ends, found with no regular expression.
    if holder is None:
        holder = _SHARED
    origin = holder._origin
    if origin and text.startswith(origin):
        path = text[len(origin) - 1 :]
        if "#" in path:
            path = path[: path.index("#")]
    else:
        match: Any = PATH(text)  # matches "" at worst
        path = match.group(1)
        if not path or path[0] != "/":
            path = "/" + path
        elif match.start(1):
            holder._origin = text[: match.start(1) + 1]
    if "%" in path or not path.isascii():
        path = normalize_url_path(path)
    # RFC 9309 2.2.2: /robots.txt itself is always allowed. Asked only of a
    # path the rules disallow, which most are not.
    return check.allows(path) or (path.startswith(ROBOTS_TXT) and (len(path) == 11 or path[11] == "?"))


class _Origin:
    __slots__ = ("_origin",)

    def __init__(self) -> None:
        self._origin = ""


#: The "scheme://host/" of the last URL an AgentRules was asked about, whichever.
_SHARED: Final = _Origin()
