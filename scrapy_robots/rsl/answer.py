"""What an RSL document says of a URL for one usage token, or for one of the crawl's
declared purposes (``ROBOTSTXT_USAGE``).

RSL 1.0's evaluation (3.1.1, 3.5, 3.6), as this package reads it:

1. every ``<content>`` whose ``url`` matches the URL takes part (order does not matter);
2. a narrower scope beats a broader one: the most specific content (the longest pattern,
   as RFC 9309 ranks rules) that *speaks of the token* decides; one whose licenses neither
   permit nor prohibit the token leaves it to the broader ones (so that ``/`` permitting
   ``all`` and ``/articles/`` prohibiting ``ai-train`` leave ``search`` licensed under
   ``/articles/``); when none speaks of it, the most specific content decides, and a
   license that restricts nothing licenses everything;
3. a token both permitted and prohibited is not licensed;
4. a ``<permits type="usage">`` licenses the listed tokens only;
5. when in doubt, rights are never expanded: contents of equal rank that disagree give
   the most restrictive answer; a ``server`` on any matching content at least as specific
   as the deciding one makes a licensed use "license required".

The tokens nest: ``all`` covers ``ai-all`` and ``search``, ``ai-all`` covers ``ai-train``,
``ai-input`` and ``ai-index``. A permission of a token licenses the tokens it covers; a
prohibition of a token, or of any token it covers, leaves it not licensed.

Several ``<license>`` elements in one content are offers: the use is licensed if one of them
licenses it for free (no payment, ``free`` or ``attribution``), "license required" if one
licenses it against a payment, else not licensed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from scrapy_robots.rfc9309 import normalize_url_path, path_of
from scrapy_robots.rsl.document import USAGE_PARENTS, Content, License, RslDocument, origin_of
from scrapy_robots.usage import canonical_purpose

#: An answer's ``verdict``.
LICENSED: Final = "licensed"
NOT_LICENSED: Final = "not-licensed"
LICENSE_REQUIRED: Final = "license-required"
UNSTATED: Final = "unstated"
#: The verdicts from the least to the most restrictive.
_RESTRICTION: Final = {UNSTATED: 0, LICENSED: 1, LICENSE_REQUIRED: 2, NOT_LICENSED: 3}

#: The package's declared purposes (``scrapy_robots.usage.PURPOSES``) as RSL usage
#: tokens: a purpose is licensed only if every token it maps to is. ``ai-use`` (vocab-08:
#: using content in an AI system) is RSL's ``ai-input`` (answers, grounding) and
#: ``ai-index`` (the AI system's retrieval store), which such a use builds.
PURPOSE_TOKENS: Final = {
    "search": ("search",),
    "train-ai": ("ai-train",),
    "train-genai": ("ai-train",),
    "ai-use": ("ai-input", "ai-index"),
}


@dataclass(frozen=True)
class RslAnswer:
    """What a document says of one URL for one ``token`` (or purpose).

    ``verdict``: ``LICENSED``, ``NOT_LICENSED``, ``LICENSE_REQUIRED`` (a
    license server's token or a payment first), ``UNSTATED`` (no content matches, no
    usable document). ``content``: the deciding ``<content>``'s index (1-based);
    ``reason``: one sentence naming it and its element; ``server``: the RSL License Server
    whose token the URL needs, even when not licensed; ``payment``: the deciding license's;
    ``conditions``: the license's ``user`` and ``geo`` terms, which a crawl cannot check
    itself; ``problems``: what was read leniently on the way.
    """

    token: str
    verdict: str
    reason: str
    content: int | None = None
    server: str | None = None
    payment: str | None = None
    conditions: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def licensed(self) -> bool:
        return self.verdict == LICENSED

    @property
    def stated(self) -> bool:
        return self.verdict != UNSTATED

    def __str__(self) -> str:
        return f"{self.token}: {self.verdict}: {self.reason}"


def covers(token: str, other: str) -> bool:
    """Whether ``token`` covers ``other`` (itself, or a token nested under it)."""
    at: str | None = other
    while at is not None:
        if at == token:
            return True
        at = USAGE_PARENTS.get(at)
    return False


def evaluate(document: RslDocument, url: str, token: str) -> RslAnswer:
    """What ``document`` says of ``url`` (an absolute URL, or a path from ``/``) for the
    usage ``token`` (one of RSL 1.0's: ``all``, ``ai-all``, ``ai-train``, ``ai-input``,
    ``ai-index``, ``search``; ValueError for another)."""
    if token not in USAGE_PARENTS:
        raise ValueError(f"{token!r} is not an RSL 1.0 usage token ({', '.join(USAGE_PARENTS)})")
    if document.error is not None:
        return RslAnswer(token, UNSTATED, f"no usable RSL document ({document.error}): nothing is licensed by it")
    path = normalize_url_path(path_of(url))
    origin = origin_of(url)
    matched = sorted(
        ((rank, content) for content in document.contents if (rank := content.rank(origin, path)) is not None),
        key=lambda pair: -pair[0],
    )
    if not matched:
        return RslAnswer(token, UNSTATED, f"no <content> of the RSL document matches {path}")
    speaking = [(rank, content) for rank, content in matched if any(_speaks(lic, token) for lic in content.licenses)]
    deciders = speaking or matched
    top = deciders[0][0]
    answers = [_content_answer(content, token) for rank, content in deciders if rank == top]
    answer = max(answers, key=lambda found: _RESTRICTION[found.verdict])
    # A license server on any matching content as specific as the decider, or more.
    server = next((content.server for rank, content in matched if rank >= top and content.server), None)
    if server is not None:
        answer = _with_server(answer, server)
    return answer


def purpose_answer(document: RslDocument, url: str, purpose: str) -> RslAnswer:
    """What ``document`` says of ``url`` for a declared purpose (a name
    ``ROBOTSTXT_USAGE`` accepts): the most restrictive of its tokens' answers
    (``PURPOSE_TOKENS``)."""
    purpose = canonical_purpose(purpose)
    answers = [evaluate(document, url, token) for token in PURPOSE_TOKENS[purpose]]
    # Unstated only if every token is; else the most restrictive stated one.
    return max(answers, key=lambda found: _RESTRICTION[found.verdict])


def _speaks(license: License, token: str) -> bool:
    """Whether a license permits or prohibits ``token`` (or a token covering or covered by it)."""
    if "usage" in license.permits:
        return True  # a permits list licenses its tokens and no other
    return any(covers(p, token) or covers(token, p) for p in license.prohibits.get("usage", ()))


def _license_verdict(license: License, token: str) -> tuple[str, str]:
    """``(verdict, why)`` of one license for ``token``."""
    prohibited = next(
        (p for p in sorted(license.prohibits.get("usage", ())) if covers(p, token) or covers(token, p)), None
    )
    permits = license.permits.get("usage")
    permitted = permits is None or _permitted(permits, token)
    if prohibited is not None:
        both = " and permits it (both: not licensed)" if permits is not None and permitted else ""
        return NOT_LICENSED, f'<prohibits type="usage">{prohibited}</prohibits>{both}'
    if not permitted:
        assert permits is not None
        return NOT_LICENSED, f'<permits type="usage">{" ".join(sorted(permits))}</permits> does not list it'
    why = (
        f'<permits type="usage">{" ".join(sorted(permits))}</permits>' if permits is not None else "no usage restricted"
    )
    if license.payment is not None and not license.payment.free:
        return LICENSE_REQUIRED, f"{why}, against {license.payment}"
    return LICENSED, why


def _permitted(permits: frozenset[str], token: str) -> bool:
    if any(covers(p, token) for p in permits):
        return True
    children = [child for child, parent in USAGE_PARENTS.items() if parent == token]
    return bool(children) and all(_permitted(permits, child) for child in children)


def _content_answer(content: Content, token: str) -> RslAnswer:
    if not content.licenses:
        return RslAnswer(token, LICENSED, f"{content.where} states no license: nothing restricted", content.index)
    found = []
    for license in content.licenses:
        verdict, why = _license_verdict(license, token)
        found.append((verdict, why, license))
    # Offers: the least restrictive one the crawl could take.
    verdict, why, license = min(found, key=lambda item: _RESTRICTION[item[0]])
    at = f" (license at line {license.line})" if license.line is not None and len(content.licenses) > 1 else ""
    conditions = tuple(
        f'<{name} type="{kind}">{" ".join(sorted(tokens))}</{name}>'
        for name, terms in (("permits", license.permits), ("prohibits", license.prohibits))
        for kind, tokens in terms.items()
        if kind != "usage"
    )
    if license.payment is not None and license.payment.type == "attribution":
        conditions += ("payment attribution",)
    return RslAnswer(
        token,
        verdict,
        f"{content.where}{at}: {why}",
        content.index,
        None,
        str(license.payment) if license.payment is not None else None,
        conditions,
        (*content.problems, *license.problems),
    )


def _with_server(answer: RslAnswer, server: str) -> RslAnswer:
    reason = f"{answer.reason}; license server {server}: a license token is required to fetch it"
    verdict = LICENSE_REQUIRED if answer.verdict == LICENSED else answer.verdict
    return RslAnswer(
        answer.token,
        verdict,
        reason,
        answer.content,
        server,
        answer.payment,
        answer.conditions,
        answer.problems,
    )
