"""The one answer to "may I fetch this, and on what grounds?" (issue #40).

:func:`grounds` is :func:`~scrapy_robots.verdict.verdict` (the crawl's own decision,
the same code) with everything it rests on, for one URL at one time. :class:`Grounds`
keeps the inputs as they were at the decision (the entries of the site's robots.txt and of
its other policy files that state preferences, the agent, the configuration) and builds its
:attr:`~Grounds.sources` only when asked: the robots.txt version (its SHA-256, as the
compliance record names versions) and its deciding line (where the parser can say: our RFC
9309 parser's ``explain``), the status policy's row, the usage preferences, what each other
policy file says (policyfiles/preference.py: iterated, never named) and, with a page at
hand (:class:`PageReading`), its headers, meta tags and ``noai``.

The crawl's hot path calls :func:`~scrapy_robots.verdict.verdict` alone; the compliance
record freezes its inputs and writes :func:`decision_row` of them (no :class:`Grounds` made
per decision; the sources are built from the row's versions when asked); ``scrapy robots`` prints
:func:`grounds` (live, ``--file``, ``--page``, and ``--record``, from the versions
recorded): the three cannot say different things.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from scrapy_robots.cache.entry import Action
from scrapy_robots.decoding import size_text
from scrapy_robots.record import ITEMS_DROPPED, TAGGED
from scrapy_robots.usage import Preference, preference
from scrapy_robots.verdict import Verdict, user_agent, verdict

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scrapy.http import Request

    from scrapy_robots.cache import RobotsEntry
    from scrapy_robots.policyfiles.stated import Heard
    from scrapy_robots.rfc9309 import Explanation
    from scrapy_robots.settings.config import RobotsConfig


@dataclass(frozen=True)
class Source:
    """One thing an answer rests on: what it says of the URL, and the version it was read from."""

    #: "robots.txt" (its rules), "status policy" (what robots.txt's fetch came to), the
    #: setting "ROBOTSTXT_EXCLUDED_DOMAINS", "usage" (robots.txt's usage lines), another policy
    #: file's name ("tdmrep.json", "license.xml"), or a page's own: "header" (Content-Usage),
    #: "directive" (``noai``), "tdm header", "tdm meta"
    name: str
    says: str  #: one line
    #: the SHA-256 of the file version read (robots.txt's or another file's, as the compliance
    #: record names versions); None when no version was read (none fetched, or a page)
    sha256: str | None = None
    allowed: bool | None = None  #: what it says of the URL; None: nothing stated
    decides: bool = False  #: the source the verdict rests on
    purpose: str | None = None  #: a usage source's purpose (another file's: those it speaks for)
    line: int | None = None  #: the deciding line of robots.txt, where the parser can say
    text: str | None = None  #: that line as written
    #: robots.txt: the User-agent lines, ``(line, value)``, of the group obeyed
    group: tuple[tuple[int, str], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "says": self.says,
            "sha256": self.sha256,
            "allowed": self.allowed,
            "decides": self.decides,
            "purpose": self.purpose,
            "line": self.line,
            "text": self.text,
        }


@dataclass(frozen=True)
class PageReading:
    """A fetched page as the crawl's spider middlewares read it (``response.meta`` after
    DirectivesMiddleware and UsageMiddleware): the strictest preference for each declared
    purpose, what drops its items, if anything does, and what the page itself denies
    (its header, meta tag or directive), whether its items are dropped or only tagged."""

    tags: Mapping[str, Mapping[str, Any]]  #: purpose -> :meth:`Preference.as_meta`
    drop: tuple[str, str] | None = None  #: ``(purpose, what denies it)``
    denied: Preference | None = None  #: the page's own preference that denies a declared purpose

    @property
    def did(self) -> str:
        """What a crawl does with a page that denies a purpose: drops its items (deny mode)
        or keeps them, the page's meta tagged (tag mode)."""
        return ITEMS_DROPPED if self.drop is not None else TAGGED


#: The sources a page's answer names (its own); robots.txt's and the other files' are the site's.
PAGE_SOURCES = frozenset(("header", "directive", "tdm header", "tdm meta", "license link"))


@dataclass(frozen=True)
class Grounds:
    """:func:`~scrapy_robots.verdict.verdict`'s answer for one URL at one time, and everything it rests on.

    The fields are the inputs as they were at the decision (an entry is replaced, never
    changed, when its file is fetched again); :attr:`sources` is built from them on first
    use. ``tags`` and ``file_tags`` are the preferences the verdict wrote into the request's
    meta (robots.txt's, and each other file's by its ``tags_key``), copied then (the
    compliance record keeps them).
    """

    verdict: Verdict
    url: str
    agent: str  #: the agent obeyed (a product token, in a record)
    entry: RobotsEntry  #: the site's robots.txt
    config: RobotsConfig
    #: the site's other policy files that state preferences, each with its entry (None: not read)
    heard: Heard = ()
    at: float = 0.0
    page: PageReading | None = None
    tags: Mapping[str, Any] | None = None
    file_tags: Mapping[str, Any] | None = None

    @property
    def allowed(self) -> bool:
        return self.verdict.allowed

    @property
    def reason(self) -> str | None:
        return self.verdict.reason

    @property
    def stat(self) -> str:
        return self.verdict.stat

    @property
    def purposes(self) -> tuple[str, ...]:
        """What the URL was judged for besides fetching: the declared purposes (ROBOTSTXT_USAGE)."""
        return self.config.usage.purposes if self.config.usage is not None else ()

    @property
    def robots_version(self) -> str | None:
        """The robots.txt version that decided: none for a site unreachable with no copy
        kept, nor for an excluded one (not fetched)."""
        return _robots_version(self.entry)

    @property
    def by(self) -> str:
        """What decided, in one line: the verdict's reason, else what allowed the URL."""
        return self.verdict.reason or self._robots_says()[1]

    @property
    def decided_by(self) -> str:
        """The source the verdict rests on, in one line (a denial for a declared purpose:
        the verdict's reason, which names the purpose and the line)."""
        if self.verdict.usage is not None or self.verdict.stat.startswith(_DROPPED):
            return self.verdict.reason or ""
        return next(source.says for source in self.sources if source.decides)

    def on_page(self, page: PageReading) -> Grounds:
        """The answer once the page is fetched: a page whose items a crawl drops is denied
        for the purpose declared (the crawl fetches it, and keeps nothing of it). The crawl
        (its compliance record's page row), ``--page`` and ``--record`` all answer with it."""
        answer = self.verdict
        if page.drop is not None and answer.allowed:
            purpose, by = page.drop
            answer = Verdict(
                False,
                f"{PAGE_DROPPED}: {by} denies {purpose} (ROBOTSTXT_USAGE)",
                f"{_DROPPED}{purpose}",
            )
        return replace(self, verdict=answer, page=page)

    @property
    def tagged(self) -> tuple[Source, ...]:
        """The sources that deny a declared purpose of a URL the answer allows: a crawl in
        ``tag`` mode (ROBOTSTXT_USAGE_MODE) fetched it and kept its items, the preference
        in ``robotstxt_usage``."""
        if not self.verdict.allowed:
            return ()
        return tuple(s for s in self.sources if s.purpose is not None and s.allowed is False and not s.decides)

    @cached_property
    def sources(self) -> tuple[Source, ...]:
        """Every source, robots.txt's (or the status policy's) first, with its version."""
        denied = self.verdict.usage  # the declared purpose's preference that denied, if one did
        dropped = self.page.drop if self.page is not None and self.verdict.stat.startswith(_DROPPED) else None
        found = [self._robots(denied is None and dropped is None)]
        for purpose, pref in self.preferences.items():
            decides = denied is not None and denied.source == "robots.txt" and denied.purpose == purpose
            found.append(_from_preference("usage", pref, self.robots_version, decides))
        for file, entry in self.heard:
            version = None if entry is None or entry.action is Action.UNREACHABLE else entry.version
            speaks = denied is not None and denied.source in file.sources
            for stated in file.explain(entry, self.url, self.config):
                decides = speaks and denied is not None and denied.purpose in stated.purposes
                found.append(
                    Source(file.name, stated.says, version, stated.allowed, decides, ", ".join(stated.purposes))
                )
        if self.page is not None:
            for purpose, tag in self.page.tags.items():
                if tag.get("source") in PAGE_SOURCES:
                    pref = Preference(purpose, **tag)
                    decides = dropped is not None and dropped[0] == purpose
                    found.append(_from_preference(pref.source, pref, None, decides))
        return tuple(found)

    def _robots(self, decides: bool) -> Source:
        entry, answer = self.entry, self.verdict
        name, says = self._robots_says()
        if name != "robots.txt":  # robots.txt was not parsed: its fetch's outcome decided
            return Source(name, says, self.robots_version, entry.action is Action.ALLOW, decides)
        explanation = self.explanation
        if explanation is None or answer.stat in _SAID_BY_THE_VERDICT:
            # Denied for a declared purpose, or its items dropped: the rules had allowed it.
            return Source(name, says, self.robots_version, answer.allowed or not decides, decides)
        rule = explanation.rule
        return Source(
            name,
            says,
            self.robots_version,
            explanation.allowed,
            decides,
            line=rule.line if rule is not None else None,
            text=rule.text if rule is not None else None,
            group=explanation.group_lines,
        )

    def _robots_says(self) -> tuple[str, str]:
        return robots_says(self.entry, self.verdict, self.explained)

    @cached_property
    def explanation(self) -> Explanation | None:
        """Which group and rule of robots.txt decide the URL, where the parser can say
        (our RFC 9309 parser's ``explain``); None otherwise, or when robots.txt was not parsed."""
        explain = getattr(self.entry.parser, "explain", None) if self.entry.action is Action.PARSE else None
        return None if explain is None else explain(self.url, self.agent)

    @property
    def explained(self) -> str | None:
        """:attr:`explanation`'s sentence, saying so when a rule may lie past ROBOTSTXT_MAXSIZE."""
        explanation = self.explanation
        if explanation is None:
            return None
        says = explanation.reason
        if self.entry.truncated and explanation.rule is None and says.startswith("no "):
            # A rule past the cap was not read: "no rule matches" would say there is none.
            says += f" in the first {size_text(self.config.maxsize)} read (the file is cut at ROBOTSTXT_MAXSIZE)"
        return says

    @cached_property
    def preferences(self) -> dict[str, Preference]:
        """What robots.txt's usage lines prefer for each declared purpose, whatever decided."""
        return {purpose: preference(self.entry.usage, self.agent, self.url, purpose) for purpose in self.purposes}

    def row(self, agent: str) -> dict[str, Any]:
        """The compliance record's line for this decision (``agent``: the product token):
        :func:`decision_row` of its inputs."""
        return decision_row(self.at, self.url, agent, self.entry, self.verdict, self.heard, self.tags, self.file_tags)


ROBOTS_TXT_RULES = "robots.txt rules"
_DROPPED = "robotstxt/usage/items_dropped/"
#: The start of the reason of a page fetched whose items are dropped for a declared purpose.
PAGE_DROPPED = "the page is fetched and its items dropped"
_SAID_BY_THE_VERDICT = frozenset(("robotstxt/denied/crawl_delay", "robotstxt/parser_error"))


def grounds(
    entry: RobotsEntry,
    request: Request,
    config: RobotsConfig,
    heard: Heard = (),
    at: float | None = None,
) -> Grounds:
    """:func:`~scrapy_robots.verdict.verdict`, with what it rests on (``at``: the time it is asked for; now by
    default). Raises OtherAgent only."""
    answer = verdict(entry, request, config, heard)
    agent = user_agent(request, config)
    return Grounds(
        answer,
        request.url,
        agent.decode("latin-1") if isinstance(agent, bytes) else agent,
        entry,
        config,
        heard,
        time.time() if at is None else at,
    )


def _from_preference(name: str, pref: Preference, version: str | None, decides: bool) -> Source:
    return Source(
        name,
        pref.reason,
        version,
        None if not pref.stated else not pref.denied,
        decides,
        pref.purpose,
        pref.line,
        pref.text,
    )


def decision_row(
    at: float,
    url: str,
    agent: str,
    entry: RobotsEntry,
    answer: Verdict,
    heard: Heard,
    tags: Mapping[str, Any] | None,
    file_tags: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A decision as the compliance record writes it: the verdict and the inputs it rests on,
    frozen (the versions by hash, the answers the request carried). :attr:`Grounds.sources`
    are built from them when asked (scrapy robots --record), not for every decision of a
    crawl: the record calls this for each one, with no :class:`Grounds` made. The purposes
    it was judged for are the same for every decision of a crawl: the record's file says
    them once, in its header (record/writer.py), and the reader gives them to each row."""
    action = entry.action
    row: dict[str, Any] = {
        "t": at,
        "url": url,
        "site": entry.site,
        "agent": agent,
        "allowed": answer.allowed,
        "robots": _robots_version(entry),
        "robots_fetched_at": entry.version_fetched_at,
        "action": action.value,
        # The line that decided is read from the version's body when asked (scrapy robots
        # --record): the hot tier keeps compiled rules, not lines.
        "by": answer.reason or robots_says(entry, answer)[1],
        "reason": answer.stat.rpartition("robotstxt/")[2] or ("allowed" if answer.allowed else "denied"),
        "delay": entry.delay.applied if entry.delay is not None and action is Action.PARSE else None,
    }
    for file, found in heard:
        if found is not None:
            row[file.key] = found.version
    if tags:
        row["usage"] = tags
    if file_tags:
        row.update(file_tags)
    if answer.usage is not None:
        pref = answer.usage
        row["usage_denied"] = {"purpose": pref.purpose, "source": pref.source, "text": pref.text, "line": pref.line}
    return row


def page_row(at: float, url: str, site: str, page: PageReading, items: int) -> dict[str, Any]:
    """A page that denied a declared purpose, as the compliance record writes it when the
    crawl has read it (``kind: page``, beside the request's decision row): what it said for
    each purpose, which of its own sources denied which purpose, what the crawl did
    (``items dropped``, with how many, or ``tagged``). :func:`page_reading` reads it back."""
    denied = page.denied
    assert denied is not None
    return {
        "kind": "page",
        "t": at,
        "url": url,
        "site": site,
        "usage": {purpose: dict(tag) for purpose, tag in page.tags.items()},
        "denied": {"purpose": denied.purpose, "source": denied.source, "text": denied.text},
        "did": page.did,
        "items": items,
    }


def page_reading(row: Mapping[str, Any]) -> PageReading:
    """A page row of the compliance record (:func:`page_row`) as the crawl read the page:
    :meth:`Grounds.on_page` answers with it as the crawl did."""
    denied = row["denied"]
    tags = row.get("usage") or {}
    tag = tags.get(denied["purpose"]) or {}
    preference = Preference(
        denied["purpose"], "deny", True, tag.get("line"), denied["text"], denied["source"], tag.get("policy")
    )
    drop = (denied["purpose"], denied["text"]) if row.get("did") == ITEMS_DROPPED else None
    return PageReading(tags, drop, preference)


def robots_says(entry: RobotsEntry, answer: Verdict, explained: str | None = None) -> tuple[str, str]:
    """robots.txt's source and what it says of the URL: the status policy's row, or the
    rules (``explained``: the line that decided, where a parser said it)."""
    action = entry.action
    if action is Action.EXCLUDED:
        return "ROBOTSTXT_EXCLUDED_DOMAINS", "excluded domain: robots.txt not fetched"
    if action is not Action.PARSE:
        outcome = f"HTTP {entry.status}" if entry.status is not None else (entry.error or "no response")
        return "status policy", f"status policy: {outcome} -> {action.value}"
    if answer.stat in _SAID_BY_THE_VERDICT:  # a site skipped for its delay, a parser that failed
        return "robots.txt", answer.reason or ""
    # Compiled rules (the crawl's hot tier) or a parser that cannot say: the rules, as such.
    return "robots.txt", explained or ROBOTS_TXT_RULES


def _robots_version(entry: RobotsEntry) -> str | None:
    action = entry.action
    return None if action is Action.UNREACHABLE or action is Action.EXCLUDED else entry.version
