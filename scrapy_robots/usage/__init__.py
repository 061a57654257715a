"""AI usage preferences: what a site says fetched content may be used for.

Two vocabularies, read from the same robots.txt groups as the rules:

- ``Content-Signal: search=yes, ai-input=yes, ai-train=no`` (the Content Signals
  Policy, draft-romm-aipref-contentsignals-00);
- ``Content-Usage: [path] train-ai=n`` (IETF AI Preferences: draft-ietf-aipref-vocab-08
  for the labels, draft-ietf-aipref-attach-05 for robots.txt and the HTTP header).

:func:`preference` answers for one crawler, one path and one purpose, and quotes
the deciding line; :func:`header_preference` reads a ``Content-Usage`` response
header. The mapping between the vocabularies and every choice made where the
drafts are silent are in ``docs/usage.rst``. No Scrapy import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from scrapy_robots.rfc9309 import RobotsTxt, normalize_url_path, path_of
from scrapy_robots.utils.sfv import Token, parse_sf_dictionary

#: The start of an IgnoreRequest message for a request denied for a declared purpose.
DENIED_REASON: Final = "Forbidden by robots.txt usage preference"

if TYPE_CHECKING:
    from collections.abc import Mapping

#: The purposes a crawl may declare, and the names accepted for them.
PURPOSES: Final = ("search", "train-ai", "train-genai", "ai-use")
ALIASES: Final = {"ai-train": "train-ai", "ai-input": "ai-use"}

#: Content-Usage labels (vocab-08); a purpose reads its own label, then its
#: parents' ("check the parent" in the vocabulary's processing model).
USAGE_LABELS: Final = frozenset({"bots", "train-ai", "train-genai", "ai-use", "search"})
_USAGE_CHAIN: Final = {
    "search": ("search", "bots"),
    "train-ai": ("train-ai", "bots"),
    "train-genai": ("train-genai", "train-ai", "bots"),
    "ai-use": ("ai-use", "bots"),
}
#: Content-Signal names (contentsignals-00) and the purpose each one speaks for.
SIGNALS: Final = frozenset({"search", "ai-input", "ai-train"})
_SIGNAL_OF: Final = {"search": "search", "train-ai": "ai-train", "train-genai": "ai-train", "ai-use": "ai-input"}

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
        else:
            where = f"the response header {self.text}"
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

    A value other than the tokens ``y`` / ``n`` leaves its label unstated (vocab-08).
    """
    parsed = parse_sf_dictionary(value)
    if parsed is None:
        return None
    return {key: item == "y" for key, item in parsed.items() if isinstance(item, Token) and item in ("y", "n")}


def split_usage_rule(value: str) -> tuple[str | None, str]:
    """A robots.txt ``Content-Usage`` value as ``(path scope or None, preferences)``."""
    if value.startswith("/"):
        scope, _, rest = value.partition(" ")
        if not rest and "\t" in scope:
            scope, _, rest = scope.partition("\t")
        return scope, rest.strip(" \t")
    return None, value


def _scope_length(scope: str | None, path: str) -> int:
    """How specific a scope matching ``path`` is; -1 when it does not match."""
    if scope is None:
        return 0
    pattern = normalize_url_path(scope)
    if "*" not in pattern and not pattern.endswith("$"):
        return len(pattern) if path.startswith(pattern) else -1
    regex = re.escape(pattern.rstrip("$")).replace(r"\*", ".*") + ("$" if pattern.endswith("$") else "")
    return len(pattern) if re.match(regex, path) else -1


def site_preferences(body: bytes | str, encoding: str | None = None) -> RobotsTxt | None:
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
    robots = RobotsTxt.parse(body, encoding=encoding)
    if not any(group.signals or group.usages for group in robots._groups):
        return None
    return robots


def preference(robots: RobotsTxt | bytes | str | None, user_agent: str, url: str, purpose: str) -> Preference:
    """What robots.txt prefers for ``purpose`` when ``user_agent`` fetches ``url``.

    Reads the ``Content-Signal`` and ``Content-Usage`` lines of the group(s) the
    agent obeys (the same groups as its rules). ``Content-Usage`` lines scoped to
    a path that matches compete by specificity, the longest scope winning; every
    ``Content-Signal`` line of the group counts. Among the lines that apply, a
    ``no`` wins over a ``yes`` (vocab-08: allow + deny = deny); nothing stated
    is ``allow``.
    """
    purpose = canonical_purpose(purpose)
    if robots is None:
        return Preference(purpose, ALLOW, False)
    if not isinstance(robots, RobotsTxt):
        robots = RobotsTxt.parse(robots)
    path = normalize_url_path(path_of(url)) if "://" in url or url.startswith("/") else url
    lines = robots.preference_lines(user_agent)
    votes: list[tuple[bool, int, str]] = []
    signal = _SIGNAL_OF[purpose]
    best = -1
    usage_votes: list[tuple[bool, int, str]] = []
    for line, name, value in lines:
        if name == "Content-Signal":
            signals = parse_content_signal(value)
            if signals is not None and signal in signals:
                votes.append((signals[signal], line, f"Content-Signal: {value}"))
            continue
        scope, prefs = split_usage_rule(value)
        usage = parse_content_usage(prefs)
        if usage is None:
            continue
        stated = next((usage[label] for label in _USAGE_CHAIN[purpose] if label in usage), None)
        if stated is None:
            continue
        length = _scope_length(scope, path)
        if length < 0 or length < best:
            continue
        if length > best:
            best, usage_votes = length, []
        usage_votes.append((stated, line, f"Content-Usage: {value}"))
    votes.extend(usage_votes)
    if not votes:
        return Preference(purpose, ALLOW, False)
    votes.sort(key=lambda vote: (vote[0], vote[1]))  # a "no" first, then file order
    allowed, line, text = votes[0]
    return Preference(purpose, ALLOW if allowed else DENY, True, line, text)


def header_preference(value: str | None, purpose: str) -> Preference | None:
    """What a ``Content-Usage`` response header says for ``purpose``.

    None when the header is malformed; unstated when it is absent or silent.
    """
    purpose = canonical_purpose(purpose)
    if value is None:
        return Preference(purpose, ALLOW, False, source="header")
    usage = parse_content_usage(value)
    if usage is None:
        return None
    stated = next((usage[label] for label in _USAGE_CHAIN[purpose] if label in usage), None)
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
        found = preference(robots, user_agent, url, purpose)
        other = also.get(purpose) if also else None
        if other is not None:
            found = stricter(found, other)
        tags[purpose] = found.as_meta()
        if found.denied and denied is None:
            denied = found
    return denied if config.mode == "deny" else None
