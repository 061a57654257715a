"""``X-Robots-Tag`` (legacy) and ``Robots-Tag`` (structured field) headers, for one crawler.

Legacy (Google's grammar, kept by draft-illyes-repext as ``X-Robots-Tag``): a comma list
of directives, where ``name: `` starts the part that applies to the crawler ``name`` only
(``googlebot: noindex, nofollow``; ``otherbot: noarchive``), until the next such name; the
part before any name applies to every crawler. Several headers add up.

``Robots-Tag`` (draft-illyes-repext-03): an RFC 9651 List of tokens, each a product token
or ``*``, whose parameters are the directives: ``Robots-Tag: *;nosnippet, ExampleBot;noindex``.
A malformed value is ignored as a whole (the RFC's rule), never a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from scrapy_robots.directives.rules import NONE, WITH_VALUE, Directives, read_directives
from scrapy_robots.utils.sfv import parse_sf_list

LEGACY: Final = "X-Robots-Tag"
STRUCTURED: Final = "Robots-Tag"
# A crawler's name is whatever comes before the colon: ``googlebot*: noindex`` names a
# crawler "googlebot*" (no wildcard is read in a name, as Google reads it), which is no
# product token, so its part applies to nobody instead of spilling onto every crawler.
_SCOPE: Final = re.compile(r"\s*([^\s:,]+)\s*:(.*)", re.S)


def header_directives(
    legacy: Iterable[str], structured: Iterable[str], token: str, malformed: list[str] | None = None
) -> Directives:
    """What the headers' values say to the crawler whose product token is ``token``.
    What is ignored as malformed is said in ``malformed``, when given."""
    found = NONE
    mine = token.lower()
    for value in legacy:
        found = found | read_directives(_legacy_items(value, mine), LEGACY, malformed)
    for value in structured:
        items = _structured_items(value, mine)
        if items is None:
            if malformed is not None:
                malformed.append(f"{STRUCTURED}: {value!r} is not a structured-field list")
            continue
        found = found | read_directives(items, STRUCTURED, malformed)
    return found


def _legacy_items(value: str, mine: str) -> list[str]:
    return [item for scope, item in _legacy_scoped(value) if scope is None or scope.lower() == mine]


def _legacy_scoped(value: str) -> list[tuple[str | None, str]]:
    """Each item of one value with the crawler it names (as written), None for every crawler."""
    items: list[tuple[str | None, str]] = []
    scope: str | None = None
    for piece in _pieces(value):
        match = _SCOPE.fullmatch(piece)
        if match and match.group(1).lower() not in WITH_VALUE:
            scope, piece = match.group(1), match.group(2)
        if piece.strip():
            items.append((scope, piece.strip()))
    return items


def _pieces(value: str) -> list[str]:
    """The comma list, where an ``unavailable_after`` date may hold a comma itself
    (RFC 850: ``Monday, 25-Jun-10 15:00:00 PST``)."""
    pieces: list[str] = []
    for piece in value.split(","):
        if pieces and pieces[-1].strip().lower().startswith("unavailable_after:") and _continues_date(pieces[-1]):
            pieces[-1] += "," + piece
        else:
            pieces.append(piece)
    return pieces


def _continues_date(piece: str) -> bool:
    # "unavailable_after: Monday" alone: a weekday, the date follows the comma.
    return bool(re.fullmatch(r"\s*unavailable_after\s*:\s*[A-Za-z]+\s*", piece, re.I))


def _structured_items(value: str, mine: str) -> list[str] | None:
    members = _structured_scoped(value)
    if members is None:
        return None
    return [item for scope, items in members if scope.lower() in ("*", mine) for item in items]


def _structured_scoped(value: str) -> list[tuple[str, list[str]]] | None:
    """Each member of the list: the crawler it names (as written, or ``*``) and its directives."""
    members = parse_sf_list(value)
    if members is None:
        return None
    scoped: list[tuple[str, list[str]]] = []
    for item, parameters in members:
        if not isinstance(item, str):
            continue
        items: list[str] = []
        for name, param in parameters.items():
            if param is True:
                items.append(name)
            elif isinstance(param, str):
                items.append(f"{name}:{param}")
        scoped.append((item, items))
    return scoped


def other_crawlers_in_headers(
    legacy: Iterable[str], structured: Iterable[str], token: str
) -> list[tuple[str, str, str]]:
    """What the headers say to crawlers other than ``token``'s, as written:
    ``(crawler, directive, source)`` triples, in the headers' order (``scrapy robots --page``
    shows them). A malformed ``Robots-Tag`` names nobody: :func:`header_directives` says so."""
    mine = token.lower()
    found: list[tuple[str, str, str]] = []
    for value in legacy:
        found += [(scope, item, LEGACY) for scope, item in _legacy_scoped(value) if scope and scope.lower() != mine]
    for value in structured:
        for scope, items in _structured_scoped(value) or []:
            if scope.lower() not in ("*", mine):
                found += [(scope, item, STRUCTURED) for item in items]
    return found
