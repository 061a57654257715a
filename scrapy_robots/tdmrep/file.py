"""``/.well-known/tdmrep.json``: its rules, read once per site, and which one decides a URL.

A file is parsed to a :class:`TdmRepFile` whatever its bytes: a file that cannot be used
carries a :class:`TdmRepError` (``kind`` and a message naming the fix) and no rule, so
every URL reads unset; nothing raises. The rules keep their position (1-based) and their
JSON, for the reason text: ``tdmrep.json rule 3 ({"location": "/books/*", ...})``.

Matching reuses robots.txt's (:mod:`scrapy_robots.rfc9309`): the same percent-encoding
normalisation of both sides (``%2A`` and ``%24`` in a location are a literal ``*`` and
``$``), the path with its query, case-sensitive, and its compiled matcher under first-match
precedence, so a file of thousands of rules costs a bisection, not a scan.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from scrapy_robots.decoding import starts_as_html
from scrapy_robots.rfc9309 import Options, normalize_url_path, path_of
from scrapy_robots.rfc9309._matcher import CompiledRules
from scrapy_robots.tdmrep.answer import FILE, Answer

#: The bytes of a ``tdmrep.json`` parsed at most: RFC 9309's floor for robots.txt, and
#: some thousands of rules. A longer file is not parsed (JSON cut short is no JSON) but
#: reported as :data:`TOO_LARGE`, for the caller to treat as it treats an unusable file.
MAX_BYTES: Final = 512 * 1024
#: Longer rule texts are cut in reasons.
_REASON_CHARS: Final = 160

#: The kinds of :class:`TdmRepError`.
TOO_LARGE: Final = "too-large"
NOT_UTF8: Final = "not-utf-8"
NOT_JSON: Final = "not-json"
NOT_AN_ARRAY: Final = "not-an-array"
#: An HTML page where the file should be: what a site that answers every path with a page
#: sends, the common case of a site without TDMRep (said as that, not as broken JSON).
HTML_PAGE: Final = "html-page"

_BOM: Final = b"\xef\xbb\xbf"
_OTHER_BOMS: Final = (b"\xff\xfe", b"\xfe\xff")
_FIRST_MATCH: Final = Options(precedence="first")
_VALUES: Final = {0: False, 1: True}


@dataclass(frozen=True)
class TdmRepError:
    """Why a ``tdmrep.json`` cannot be used: ``kind`` is one of :data:`TOO_LARGE`,
    :data:`NOT_UTF8`, :data:`NOT_JSON`, :data:`NOT_AN_ARRAY`, :data:`HTML_PAGE`; ``message`` says what was
    found and what the file should be."""

    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True)
class TdmRule:
    """One object of the array. ``index``: its position, 1-based. ``location``: as
    written (``None`` if missing or not a string); ``pattern``: the path pattern matched,
    ``None`` when the rule cannot match. ``reserved``: ``True``/``False`` for 1/0,
    ``None`` for anything else. ``text``: the object as JSON, for reasons.
    ``problems``: what was ignored or read leniently in it."""

    index: int
    location: str | None
    pattern: str | None
    reserved: bool | None
    policy: str | None
    text: str
    problems: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        return f"{FILE} rule {self.index} ({self.text})"


@dataclass(frozen=True)
class TdmRepFile:
    """A parsed ``tdmrep.json``: its ``rules`` in file order, the ``error`` that made it
    unusable (then no rules), and ``warnings`` about the file as a whole."""

    rules: tuple[TdmRule, ...] = ()
    error: TdmRepError | None = None
    warnings: tuple[str, ...] = ()
    _matcher: CompiledRules | None = field(default=None, init=False, repr=False, compare=False)
    _by_index: dict[int, TdmRule] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        matchable = [(rule.index, False, rule.pattern) for rule in self.rules if rule.pattern is not None]
        # Allow=False everywhere: the matcher's Google extension for "Allow: /x/index.html"
        # concerns allow rules only; the verdict is not used, only the rule's index.
        object.__setattr__(self, "_matcher", CompiledRules(matchable, _FIRST_MATCH) if matchable else None)
        object.__setattr__(self, "_by_index", {rule.index: rule for rule in self.rules})

    @property
    def ok(self) -> bool:
        return self.error is None

    def reservation(self, path_or_url: str) -> Answer:
        """What the file says of ``path_or_url`` (a URL, or a path from ``/``, query
        included): the first rule whose location matches decides, even one whose
        ``tdm-reservation`` is unset (the report: "The most specific match is the first
        in sequence"); no match is unset. The answer is the rule's, as stated:
        :func:`~scrapy_robots.tdmrep.combine` applies the report's processing rules."""
        if self.error is not None and self.error.kind == HTML_PAGE:  # no file: nothing wrong with it
            return Answer(reason=f"{FILE}: {self.error.message}")
        if self.error is not None:
            return Answer(reason=f"{FILE} unusable ({self.error})", problems=(f"{FILE}: {self.error}",))
        path = normalize_url_path(path_of(path_or_url))
        entry = self._matcher.decide(path) if self._matcher is not None else None
        if entry is None:
            return Answer(reason=f"no rule of {FILE} matches {path}")
        index = entry[2][0]  # type: ignore[index]  # built with lines: the raw rule is kept
        rule = self._by_index[index]
        problems = tuple(f"{FILE} rule {rule.index}: {problem}" for problem in rule.problems)
        return Answer(
            reserved=rule.reserved,
            policy=rule.policy,
            source=FILE,
            reason=rule.reason,
            policy_source=FILE if rule.policy is not None else None,
            policy_reason=rule.reason if rule.policy is not None else None,
            rule=rule.index,
            problems=problems,
        )


def parse_tdmrep(body: bytes, max_bytes: int = MAX_BYTES) -> TdmRepFile:
    """The rules of a ``tdmrep.json`` body; never raises on any bytes.

    The body must be UTF-8 JSON (RFC 8259 8.1); a UTF-8 byte-order mark is skipped (RFC
    8259 lets a parser ignore it, and a reservation must not be lost to it) and said in
    ``warnings``; a UTF-16 or UTF-32 one is :data:`NOT_UTF8`. A body over ``max_bytes``
    is :data:`TOO_LARGE`, not parsed. A body that starts as an HTML page is
    :data:`HTML_PAGE`, whatever its size or encoding.
    """
    if starts_as_html(body):
        return _unusable(HTML_PAGE, "an HTML page, not a tdmrep.json: the site does not implement TDMRep")
    if len(body) > max_bytes:
        return _unusable(TOO_LARGE, f"{len(body):,} bytes, over the {max_bytes:,} read")
    warnings: list[str] = []
    if body.startswith(_BOM):
        body = body[len(_BOM) :]
        warnings.append("a UTF-8 byte-order mark before the JSON: skipped")
    elif body.startswith(_OTHER_BOMS):
        return _unusable(NOT_UTF8, "a UTF-16 or UTF-32 byte-order mark; JSON must be UTF-8")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _unusable(NOT_UTF8, f"byte {exc.start} is not UTF-8; JSON must be UTF-8")
    try:
        document = json.loads(text)
    except RecursionError:
        return _unusable(NOT_JSON, "nested too deeply to be a list of rules")
    except ValueError as exc:  # JSONDecodeError, and an integer of more than 4,300 digits
        return _unusable(NOT_JSON, f"{exc}; expected an array of rules, [{{...}}, ...]")
    if not isinstance(document, list):
        found = type(document).__name__.replace("dict", "object").replace("str", "string")
        return _unusable(NOT_AN_ARRAY, f"a JSON {found}; the rules must be in an array, [{{...}}, ...]")
    rules = tuple(_rule(index, item) for index, item in enumerate(document, 1))
    return TdmRepFile(rules, None, tuple(warnings))


def location_pattern(location: str) -> tuple[str | None, str | None]:
    """The path pattern a ``location`` stands for, and a note when it was read leniently.

    The report's locations are paths from ``/`` (``"/directory-b/images/*.jpg"``). A
    location starting with ``/`` (``//x/`` too) or ``*`` is a pattern as robots.txt reads it. A full URL
    (``https://host/books/*``) stands for its path: a well-known file speaks for its own
    origin only (RFC 8615), so the host adds nothing a crawler could act on, and
    ignoring the rule over a host's spelling (www or not, http or https) would drop a
    reservation the publisher meant. A relative path (``books/*``) is read from the
    root, ``/books/*``: the report's locations are the server's paths, and resolving it
    against the file's own URL (``/.well-known/books/*``) would match nothing the
    publisher meant. An empty location matches nothing (``None``), as an empty robots.txt
    rule does.
    """
    location = location.strip()
    if not location:
        return None, "an empty location matches nothing"
    if location[0] in "/*":
        return location, None
    if "://" in location:
        pattern = path_of(location)
        return pattern, f"location {location!r} is a URL: its path {pattern!r} is matched"
    return "/" + location, f"location {location!r} does not start with '/': read as '/{location}'"


def _rule(index: int, item: Any) -> TdmRule:
    text = _shown(item)
    if not isinstance(item, dict):
        return TdmRule(index, None, None, None, None, text, ("not an object: ignored",))
    problems: list[str] = []
    location = item.get("location")
    pattern = None
    if isinstance(location, str):
        pattern, note = location_pattern(location)
        if note:
            problems.append(note)
    else:
        problems.append("no location: the rule matches nothing" if location is None else "location is not a string")
        location = None
    reserved = _reservation(item, problems)
    policy = item.get("tdm-policy")
    if policy is not None and not (isinstance(policy, str) and policy.strip()):
        problems.append(f"tdm-policy {_shown(policy)} is not a URL: ignored")
        policy = None
    elif policy is not None:
        policy = policy.strip()
        if "://" not in policy:
            problems.append(f"tdm-policy {policy!r} is not an absolute URL")
    return TdmRule(index, location, pattern, reserved, policy, text, tuple(problems))


def _reservation(item: dict[str, Any], problems: list[str]) -> bool | None:
    if "tdm-reservation" not in item:
        problems.append("no tdm-reservation: unset")
        return None
    value = item["tdm-reservation"]
    if type(value) is int and value in _VALUES:  # not True/False, which Python counts as 1/0
        return _VALUES[value]
    if isinstance(value, str) and value.strip() in ("0", "1"):
        # The header and meta carry the same values as text; a publisher's quotes are no reason
        # to lose a reservation. Said, so the publisher can be told.
        problems.append(f'tdm-reservation is the string "{value.strip()}": read as {value.strip()}')
        return value.strip() == "1"
    problems.append(f"tdm-reservation {_shown(value)} is neither 0 nor 1: unset")
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= _REASON_CHARS:
        return text
    cut = text.rfind(", ", 0, _REASON_CHARS)
    return text[: cut if cut > 0 else _REASON_CHARS] + (", ...}" if isinstance(value, dict) else " ...")


def _unusable(kind: str, message: str) -> TdmRepFile:
    return TdmRepFile(error=TdmRepError(kind, message))
