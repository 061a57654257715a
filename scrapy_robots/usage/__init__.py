"""AI usage preferences: what a site says fetched content may be used for.

Two vocabularies, read from the same robots.txt as the rules:

- ``Content-Signal: search=yes, ai-input=yes, ai-train=no`` (Cloudflare's Content
  Signals Policy, draft-romm-aipref-contentsignals-00), in a group or before the
  first ``User-agent`` (read for every crawler: sites disagree on the placement);
- ``Content-Usage: [path] train-ai=n`` (IETF AI Preferences: draft-ietf-aipref-vocab-08
  for the labels, draft-ietf-aipref-attach-05 for robots.txt and the HTTP header).

:func:`preference` answers for one crawler, one path and one purpose, and quotes
the deciding line; :func:`header_preference` reads a ``Content-Usage`` response
header. The mapping between the vocabularies, the drafts' section for each rule and
every choice made where they are silent are in ``docs/usage.rst``. No Scrapy import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from scrapy_robots.decoding import decode_robotstxt
from scrapy_robots.rfc9309 import GroupBuilder, RobotsTxt, normalize, normalize_url_path, parse_robotstxt, path_of
from scrapy_robots.utils.sfv import Token, parse_sf_dictionary

#: The start of an IgnoreRequest message for a request denied for a declared purpose.
DENIED_REASON: Final = "Forbidden by robots.txt usage preference"

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from scrapy_robots.rfc9309 import Options

#: The purposes a crawl may declare, and the names accepted for them. ``train-genai``
#: is kept for the settings written for earlier drafts: vocab-08's ``train-ai`` is
#: generative AI training (section 4.1), so both read the same labels.
PURPOSES: Final = ("search", "train-ai", "train-genai", "ai-use")
ALIASES: Final = {"ai-train": "train-ai", "ai-input": "ai-use"}

#: The Content-Usage labels of vocab-08 (section 6.1; case-sensitive). There is no
#: hierarchy (section 3): no label speaks for another.
USAGE_LABELS: Final = frozenset({"train-ai", "ai-use", "search"})


class LegacyLabel(NamedTuple):
    """A label of an earlier vocabulary draft that sites still serve."""

    drafts: str  #: where it came from
    meaning: str  #: what it meant there
    #: the vocab-08 label it is read as (an extension, vocab-08 section 6.4), or None:
    #: ignored, as vocab-08 ignores every unknown label
    read_as: str | None


#: Labels of earlier drafts. Only a label naming exactly a vocab-08 category is read
#: (as that category); a broader one (an umbrella, or every AI training, generative or
#: not) would fill a specific category from a general one: the nesting vocab-07
#: removed and vocab-08 keeps out.
LEGACY_LABELS: Final = {
    "genai": LegacyLabel("vocab-01", "generative AI training", "train-ai"),
    "train-genai": LegacyLabel("vocab-02 and -03", "generative AI training", "train-ai"),
    "ai": LegacyLabel("vocab-01", "AI training of any model, generative or not", None),
    "tdm": LegacyLabel("vocab-01", "text and data mining, the umbrella of every category", None),
    "inference": LegacyLabel("vocab-01", "input to any trained model", None),
    "all": LegacyLabel("vocab-02", "automated processing, the umbrella of every category", None),
    "bots": LegacyLabel("vocab-03 and -04", "automated processing, the umbrella of every category", None),
    "ai-output": LegacyLabel("vocab-04", "output of any AI system, search results included", None),
}

#: The Content-Usage labels each purpose reads: its vocab-08 label and the legacy
#: labels read as it. Each stated one is a statement; a ``n`` among them wins.
_LABELS_OF: Final = {
    "search": ("search",),
    "train-ai": ("train-ai", "train-genai", "genai"),
    "train-genai": ("train-ai", "train-genai", "genai"),
    "ai-use": ("ai-use",),
}
#: Content-Signal names (contentsignals-00) and the purpose each one speaks for.
SIGNALS: Final = frozenset({"search", "ai-input", "ai-train"})
_SIGNAL_OF: Final = {"search": "search", "train-ai": "ai-train", "train-genai": "ai-train", "ai-use": "ai-input"}
#: How the deciding text of a Content-Signal line before any User-agent says its reading.
FILE_WIDE: Final = "before any User-agent: read for every crawler"

ALLOW: Final = "allow"
DENY: Final = "deny"
MODES: Final = ("deny", "tag")


def canonical_purpose(name: str) -> str:
    """``name`` as one of :data:`PURPOSES`; ValueError for an unknown one."""
    purpose = ALIASES.get(name, name)
    if purpose not in PURPOSES:
        raise ValueError(name)
    return purpose


@dataclass(frozen=True)
class Preference:
    """What a site prefers for one purpose, and which line says so."""

    purpose: str
    decision: str  #: ``"allow"`` or ``"deny"``; nothing stated is ``"allow"``
    stated: bool  #: whether any line or header spoke for the purpose
    line: int | None = None  #: the deciding robots.txt line; None for the header or nothing
    text: str | None = None  #: the deciding line or header, as ``Name: value``
    #: ``"robots.txt"``, ``"header"`` (Content-Usage), ``"directive"`` (a page's ``noai``),
    #: or TDMRep's (:data:`TDM_SOURCES`)
    source: str = "robots.txt"
    #: TDMRep's ``tdm-policy`` URL beside a reservation
    policy: str | None = None

    @property
    def denied(self) -> bool:
        return self.decision == DENY

    @property
    def reason(self) -> str:
        if not self.stated:
            return f"nothing is stated for {self.purpose}: allowed"
        if self.source in TDM_SOURCES:
            said = "reserves TDM rights" if self.denied else "does not reserve TDM rights"
            policy = f" (tdm-policy {self.policy})" if self.policy else ""
            return f"{self.text} {said}{policy}: {'denies' if self.denied else 'allows'} {self.purpose}"
        if self.line is not None:
            where = f"line {self.line} ({self.text})"
        elif self.source == "directive":
            where = f"the page's {self.text}"
        elif self.source == "header":
            where = f"the response header {self.text}"
        else:  # another policy file's (policyfiles/preference.py): its words name it
            where = self.text or self.source
        return f"{where} {'denies' if self.denied else 'allows'} {self.purpose}"

    def as_meta(self) -> dict[str, Any]:
        """The plain-data form carried in ``request.meta["robotstxt_usage"]``."""
        meta = {
            "decision": self.decision,
            "stated": self.stated,
            "line": self.line,
            "text": self.text,
            "source": self.source,
        }
        if self.policy is not None:
            meta["policy"] = self.policy
        return meta

    def __str__(self) -> str:
        return f"{self.decision}: {self.reason}"


def parse_content_signal(value: str) -> dict[str, bool] | None:
    """``search=yes, ai-train=no`` as ``{"search": True, "ai-train": False}``.

    None when the line is malformed (not a dictionary once lower-cased). A
    value other than ``yes`` / ``no`` leaves its signal unstated.
    """
    parsed = parse_sf_dictionary(value.lower())
    if parsed is None:
        return None
    return {key: item == "yes" for key, item in parsed.items() if isinstance(item, Token) and item in ("yes", "no")}


def parse_content_usage(value: str) -> dict[str, bool] | None:
    """``train-ai=n, search=y`` as ``{"train-ai": False, "search": True}``; None when malformed.

    vocab-08 section 6.5: an RFC 9651 Dictionary (a key given twice keeps its last value),
    parameters disregarded, the Token ``y`` allows and ``n`` denies; any other value
    leaves its label unstated. Every label is kept: ``usage_statement()`` reads the
    ones a purpose knows and so ignores the others (section 6.4).
    """
    parsed = parse_sf_dictionary(value)
    if parsed is None:
        return None
    return {key: item == "y" for key, item in parsed.items() if isinstance(item, Token) and item in ("y", "n")}


def usage_statement(usage: Mapping[str, bool] | None, purpose: str) -> bool | None:
    """What one parsed Content-Usage value says for ``purpose``: False (disallowed), True
    (allowed) or None (unknown: nothing, or a value that did not parse, vocab-08 6.5.1).
    Its labels for the purpose combine as separate statements (vocab-08 5.1)."""
    if not usage:
        return None
    said = [usage[label] for label in _LABELS_OF[canonical_purpose(purpose)] if label in usage]
    return None if not said else all(said)


def split_usage_rule(value: str) -> tuple[str | None, str]:
    """A robots.txt ``Content-Usage`` value as ``(path pattern or None, preferences)``.

    attach-05 section 3.2: a value starting with ``/`` has a path, which ends at the first
    SP or HTAB; any other value is all preference (``*.pdf train-ai=n`` too, which then
    fails to parse).
    """
    if value.startswith("/"):
        match = _PATH_END.search(value)
        if match is None:
            return value, ""
        return value[: match.start()], value[match.end() :]
    return None, value


_PATH_END: Final = re.compile(r"[ \t]+")


def _scope_length(scope: str | None, path: str) -> int:
    """How specific a path pattern matching ``path`` is (bytes of the encoded pattern,
    attach-05 3.1); -1 when it does not match. No pattern: 0, below any path's."""
    if scope is None:
        return 0
    pattern = normalize(scope)  # the pattern side, as for Allow and Disallow
    if "*" not in pattern and not pattern.endswith("$"):
        return len(pattern) if path.startswith(pattern) else -1
    regex = re.escape(pattern.rstrip("$")).replace(r"\*", ".*") + ("$" if pattern.endswith("$") else "")
    return len(pattern) if re.match(regex, path) else -1


class _PreferenceBuilder(GroupBuilder):
    """The parser's groups, and the ``Content-Signal`` lines before any ``User-agent``
    told apart from stray ``Content-Usage`` lines (the builder keeps both as nobody's)."""

    def __init__(self) -> None:
        super().__init__()
        self.file_signals: list[tuple[int, str]] = []

    def handle_content_signal(self, line: int, value: str) -> None:
        if self._group is None:
            self.file_signals.append((line, value))
        super().handle_content_signal(line, value)


class SitePreferences(RobotsTxt):
    """A robots.txt parsed for its preference lines (``site_preferences()``)."""

    __slots__ = ("file_signals",)

    def __init__(self, builder: GroupBuilder, options: Options | None = None) -> None:
        if options is None:
            super().__init__(builder)
        else:
            super().__init__(builder, options)
        #: ``(line, value)`` of the ``Content-Signal`` lines before any ``User-agent``.
        self.file_signals: tuple[tuple[int, str], ...] = tuple(getattr(builder, "file_signals", ()))

    @classmethod
    def read(cls, body: bytes | str, encoding: str | None = None) -> SitePreferences:
        builder = _PreferenceBuilder()
        parse_robotstxt(decode_robotstxt(body, encoding), builder)
        return cls(builder)


def site_preferences(body: bytes | str, encoding: str | None = None) -> SitePreferences | None:
    """The robots.txt parsed for its preference lines, or None when it has none.

    What a crawl keeps per site: most files state nothing and cost nothing.
    """
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    lowered = text.lower()
    if (
        "content-signal" not in lowered
        and "content-usage" not in lowered
        and "contentsignal" not in lowered
        and "contentusage" not in lowered
    ):
        return None
    robots = SitePreferences.read(body, encoding)
    if not robots.file_signals and not any(group.signals or group.usages for group in robots._groups):
        return None
    return robots


def preference(
    robots: RobotsTxt | bytes | str | None,
    user_agent: str,
    url: str,
    purpose: str,
    *,
    crawlable: bool | None = None,
) -> Preference:
    """What robots.txt prefers for ``purpose`` when ``user_agent`` fetches ``url``.

    Reads the preference lines of the group(s) the agent obeys (the same groups as its
    rules) and the ``Content-Signal`` lines before any ``User-agent`` (when ``robots`` is
    a body or ``site_preferences()``'s result). Of the ``Content-Usage`` rules, those
    with the longest path matching ``url`` apply (attach-05 3.1); each applying line is a
    statement, and they combine as vocab-08 5.1 says: a ``no`` wins, else a ``yes``,
    else nothing is stated (``allow``). A URL the file's rules disallow has no
    preference (attach-05 3.1); ``crawlable`` says it when the caller has asked its own
    parser (True: the crawl's verdict), else this file's rules are asked.
    """
    purpose = canonical_purpose(purpose)
    if robots is None:
        return Preference(purpose, ALLOW, False)
    if not isinstance(robots, RobotsTxt):
        robots = SitePreferences.read(robots)
    if crawlable is None:
        crawlable = robots.allowed(url, user_agent)
    if not crawlable:
        return Preference(purpose, ALLOW, False)
    path = normalize_url_path(path_of(url)) if "://" in url or url.startswith("/") else url
    signal = _SIGNAL_OF[purpose]
    votes: list[tuple[bool, int, str]] = []
    for line, value in getattr(robots, "file_signals", ()):
        signals = parse_content_signal(value)
        if signals is not None and signal in signals:
            votes.append((signals[signal], line, f"Content-Signal: {value} ({FILE_WIDE})"))
    best = -1
    applying: list[tuple[int, str, str]] = []
    for line, name, value in robots.preference_lines(user_agent):
        if name == "Content-Signal":
            signals = parse_content_signal(value)
            if signals is not None and signal in signals:
                votes.append((signals[signal], line, f"Content-Signal: {value}"))
            continue
        scope, prefs = split_usage_rule(value)
        # The rule is chosen by its path alone: one that says nothing of the purpose (or
        # does not parse) still hides a shorter one, as a longer Allow hides a Disallow.
        length = _scope_length(scope, path)
        if length < 0 or length < best:
            continue
        if length > best:
            best, applying = length, []
        applying.append((line, value, prefs))
    for line, value, prefs in applying:
        stated = usage_statement(parse_content_usage(prefs), purpose)
        if stated is not None:
            votes.append((stated, line, f"Content-Usage: {value}"))
    return _combined(purpose, votes)


def _combined(purpose: str, votes: Iterable[tuple[bool, int, str]]) -> Preference:
    """vocab-08 5.1: a denial wins, else an allowance, else nothing is stated; the deciding
    line is the first (in file order) of the winning kind."""
    ordered = sorted(votes, key=lambda vote: (vote[0], vote[1]))  # a "no" first, then file order
    if not ordered:
        return Preference(purpose, ALLOW, False)
    allowed, line, text = ordered[0]
    return Preference(purpose, ALLOW if allowed else DENY, True, line, text)


def header_preference(value: str | None, purpose: str) -> Preference | None:
    """What a ``Content-Usage`` response header says for ``purpose`` (attach-05 section 2).

    None when the header is malformed; unstated when it is absent or silent.
    """
    purpose = canonical_purpose(purpose)
    if value is None:
        return Preference(purpose, ALLOW, False, source="header")
    usage = parse_content_usage(value)
    if usage is None:
        return None
    stated = usage_statement(usage, purpose)
    if stated is None:
        return Preference(purpose, ALLOW, False, source="header")
    return Preference(purpose, ALLOW if stated else DENY, True, None, f"Content-Usage: {value}", "header")


#: The purposes TDMRep's reservation speaks for (docs/tdmrep.rst): text and data mining, as
#: the DSM directive (EU 2019/790, art. 2(2) and 4) defines it, "any automated analytical
#: technique aimed at analysing text and data ... to generate information", covers
#: training a model and feeding content to an AI system as its input; indexing for a
#: search engine is not read as TDM.
TDM_PURPOSES: Final = frozenset({"train-ai", "train-genai", "ai-use"})
#: The ``source`` of a preference read from TDMRep: the site's file, a response's header
#: fields, the page's meta tags.
TDM_SOURCES: Final = ("tdmrep.json", "tdm header", "tdm meta")
#: The start of an IgnoreRequest message for a request whose TDM rights are reserved.
TDM_DENIED_REASON: Final = "Forbidden by TDMRep reservation"

#: The purposes a page's ``noai`` denies (DeviantArt's directive: no AI training on it).
NOAI_PURPOSES: Final = frozenset({"train-ai", "train-genai"})


def directive_preference(directives: Mapping[str, Any] | None, purpose: str, image: bool) -> Preference | None:
    """What a page's robots directives (``response.meta["robotstxt_directives"]``) say for
    ``purpose``: ``noai`` denies AI training, ``noimageai`` too when the response is an
    image. None when they say nothing for it."""
    if not directives or canonical_purpose(purpose) not in NOAI_PURPOSES:
        return None
    for name in ("noai", "noimageai") if image else ("noai",):
        sources = directives.get(name)
        if sources:
            return Preference(purpose, DENY, True, None, f"{sources[0]}: {name}", "directive")
    return None


def stricter(first: Preference, second: Preference) -> Preference:
    """The preference that wins when both apply: a denial, else a stated allow."""
    if first.denied or (not second.denied and (first.stated or not second.stated)):
        return first
    return second


# -- the crawl's declaration -------------------------------------------------------


@dataclass(frozen=True)
class UsageConfig:
    """``ROBOTSTXT_USAGE`` and ``ROBOTSTXT_USAGE_MODE``, read once (``settings/parts.py``)."""

    purposes: tuple[str, ...]
    mode: str = "deny"


#: Meta key of the preferences, purpose -> :meth:`Preference.as_meta`.
META_KEY: Final = "robotstxt_usage"


def check_request(
    config: UsageConfig,
    robots: RobotsTxt | None,
    url: str,
    user_agent: str,
    meta: dict[str, Any],
    also: Mapping[str, Preference] | None = None,
) -> Preference | None:
    """Tag ``meta`` with the robots.txt preferences for each declared purpose, or the
    stricter of it and ``also``'s for the purpose (TDMRep's); the denying one in ``deny``
    mode (the caller ignores the request), else None."""
    tags = meta.setdefault(META_KEY, {})
    denied = None
    for purpose in config.purposes:
        # The crawl's own parser allowed the URL (the verdict asks the rules first).
        found = preference(robots, user_agent, url, purpose, crawlable=True)
        other = also.get(purpose) if also else None
        if other is not None:
            found = stricter(found, other)
        tags[purpose] = found.as_meta()
        if found.denied and denied is None:
            denied = found
    return denied if config.mode == "deny" else None
