"""An RSL document (``license.xml``): its ``<content>`` elements and their licenses, read
once per site into a frozen model. Pure: no Scrapy import.

:func:`parse_rsl` never raises on any bytes. A document that cannot be used (too large,
not XML, an HTML page, another vocabulary, a ``DOCTYPE``) is an :class:`RslDocument`
whose ``error`` (an :class:`RslError`: ``kind`` and a message naming the fix) says why,
with no content: every URL reads unstated. What was read leniently or ignored inside a
usable document is in ``warnings`` and each element's ``problems``.

XML is parsed by the standard library's expat, driven here with the ``DOCTYPE`` refused:
defusedxml is not a dependency of the package, and a license file needs no document type,
so a document that declares one (the carrier of entity expansion, "billion laughs", and of
external entities) is ``DOCTYPE`` and not read at all.
"""

from __future__ import annotations

import re
import xml.parsers.expat
from dataclasses import dataclass, field
from typing import Final
from xml.etree.ElementTree import Element, TreeBuilder

from scrapy_robots.decoding import starts_as_html
from scrapy_robots.rfc9309 import Options, path_of
from scrapy_robots.rfc9309._matcher import CompiledRules

#: The RSL namespace (RSL 1.0, "Namespace").
NAMESPACE: Final = "https://rslstandard.org/rsl"
#: The media type of an RSL document.
MEDIA_TYPE: Final = "application/rsl+xml"
#: The bytes of a document parsed at most: robots.txt's floor (RFC 9309 2.5), as for
#: ``tdmrep.json``. A longer document is ``TOO_LARGE``, not parsed (XML cut short is
#: no XML).
MAX_BYTES: Final = 500 * 1024

#: The kinds of :class:`RslError`.
TOO_LARGE: Final = "too-large"
NOT_XML: Final = "not-xml"
DOCTYPE: Final = "doctype"
NOT_RSL: Final = "not-rsl"
HTML_PAGE: Final = "html-page"
EMPTY: Final = "empty"

#: RSL 1.0's usage tokens (3.4.1.1) and the one each is part of: ``all`` covers
#: everything, ``ai-all`` the AI uses.
USAGE_PARENTS: Final = {
    "all": None,
    "ai-all": "all",
    "ai-train": "ai-all",
    "ai-input": "ai-all",
    "ai-index": "ai-all",
    "search": "all",
}
#: ``<permits>`` / ``<prohibits>`` types.
TYPES: Final = ("usage", "user", "geo")
USER_TOKENS: Final = frozenset({"commercial", "non-commercial", "education", "government", "personal"})
#: ``<payment type>`` values; absent is ``free``. 0.9's ``inference`` is 1.0's ``use``.
PAYMENT_TYPES: Final = frozenset(
    {"purchase", "subscription", "training", "crawl", "use", "contribution", "attribution", "free"}
)
#: The payments under which a use needs no license bought first.
FREE_PAYMENTS: Final = frozenset({"free", "attribution"})
#: AI-preference labels (IETF aipref) that RSL's own guides print where 1.0 says
#: ``ai-train``: read as ``ai-train`` in a ``<prohibits>`` only (a prohibition is not
#: dropped over a misspelling; a permission is never granted by one).
PROHIBIT_ALIASES: Final = {"train-ai": "ai-train", "train-genai": "ai-train"}

_ROOT: Final = f"{{{NAMESPACE}}}rsl"
_SEPARATORS: Final = re.compile(r"[\s,]+")
_DEFAULT_PORTS: Final = {"http": "80", "https": "443"}
_ORIGIN: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(//[^/?#]*)?")


@dataclass(frozen=True)
class RslError:
    """Why a document cannot be used: ``kind`` is one of ``TOO_LARGE``,
    ``NOT_XML``, ``DOCTYPE``, ``NOT_RSL``, ``HTML_PAGE``, ``EMPTY``;
    ``message`` says what was found and what the document should be."""

    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True)
class Payment:
    """A ``<payment>``: its ``type`` (``free`` when absent) and its ``<amount>`` values as
    written (``"0.015 USD"``)."""

    type: str = "free"
    amounts: tuple[str, ...] = ()

    @property
    def free(self) -> bool:
        return self.type in FREE_PAYMENTS

    def __str__(self) -> str:
        return f"payment {self.type}" + (f" ({', '.join(self.amounts)})" if self.amounts else "")


@dataclass(frozen=True)
class License:
    """A ``<license>``: ``permits`` and ``prohibits`` as ``{type: tokens}`` (a type with no
    element is absent; ``usage`` tokens are RSL's, unknown ones dropped and said),
    ``payment`` (``None``: none stated, which is free), ``line`` in the document."""

    permits: dict[str, frozenset[str]]
    prohibits: dict[str, frozenset[str]]
    payment: Payment | None = None
    line: int | None = None
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Content:
    """A ``<content>``: ``index`` its position (1-based), ``url`` as written, ``origin``
    (``host[:port]`` of a full URL, lower case; ``None`` for a path) and ``pattern`` (the
    path pattern matched, RFC 9309's ``*`` and ``$``; ``None``: matches nothing),
    ``server`` (an RSL License Server: a license must be obtained, even a free one),
    ``encrypted``, ``lastmod`` as written, its ``licenses`` and ``line``."""

    index: int
    url: str | None
    origin: str | None
    pattern: str | None
    server: str | None = None
    encrypted: bool = False
    lastmod: str | None = None
    licenses: tuple[License, ...] = ()
    line: int | None = None
    problems: tuple[str, ...] = ()
    _matcher: CompiledRules | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The robots.txt matcher, so that "*", "$" and percent-encoding read as RFC 9309
        # says (RSL 1.0: "follows the URL-matching rules of the Robots Exclusion Protocol").
        matcher = CompiledRules([(self.index, True, self.pattern)], Options()) if self.pattern is not None else None
        object.__setattr__(self, "_matcher", matcher)

    def rank(self, origin: str | None, path: str) -> int | None:
        """How specifically this content matches (``path`` normalised, ``origin`` the
        URL's ``host[:port]`` or ``None`` for a bare path): the matched pattern's rank
        (longer is narrower), ``None`` when it does not match."""
        if self._matcher is None:
            return None
        if self.origin is not None and origin is not None and not _origin_matches(self.origin, origin):
            return None
        entry = self._matcher.decide(path)
        return None if entry is None else entry[0]

    @property
    def where(self) -> str:
        at = f" (line {self.line})" if self.line is not None else ""
        return f'<content url="{self.url}">{at}'


@dataclass(frozen=True)
class RslDocument:
    """A parsed RSL document: its ``contents`` in document order, the ``error`` that made
    it unusable (then no content), ``max_age`` in days (``<rsl max-age>``, ``None`` when
    not stated: the spec's default is 30), ``warnings`` about the document as a whole."""

    contents: tuple[Content, ...] = ()
    error: RslError | None = None
    max_age: int | None = None
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_rsl(body: bytes, max_bytes: int = MAX_BYTES) -> RslDocument:
    """The contents of an RSL document's bytes; never raises.

    Read whatever the response's ``Content-Type`` (RSL: a document is recognised by its
    namespace). The root must be ``<rsl>`` in the RSL namespace; an ``<rsl>`` without a
    namespace is read, and said, rather than dropped with its prohibitions.
    """
    if not body.strip():
        return _unusable(EMPTY, 'an empty body; an RSL document is <rsl xmlns="https://rslstandard.org/rsl">...')
    if starts_as_html(body):
        return _unusable(HTML_PAGE, "an HTML page, not an RSL document: no license is stated there")
    if len(body) > max_bytes:
        return _unusable(TOO_LARGE, f"{len(body):,} bytes, over the {max_bytes:,} read")
    try:
        root, lines = _parse_xml(body)
    except _Refused as exc:
        return _unusable(DOCTYPE, f"{exc}: refused (entity expansion); an RSL document needs no DOCTYPE")
    except xml.parsers.expat.ExpatError as exc:
        return _unusable(NOT_XML, f"not well-formed XML ({exc}); an RSL document is XML 1.0")
    except (ValueError, LookupError) as exc:  # an encoding expat does not know
        return _unusable(NOT_XML, f"not readable as XML ({exc})")
    warnings: list[str] = []
    if root.tag == "rsl":
        warnings.append(f'<rsl> without xmlns="{NAMESPACE}": read as RSL')
        namespace = ""
    elif root.tag == _ROOT:
        namespace = f"{{{NAMESPACE}}}"
    else:
        found = root.tag.replace("{", "").replace("}", " ")
        return _unusable(NOT_RSL, f'the root element is <{found}>, not <rsl xmlns="{NAMESPACE}">')
    max_age = _max_age(root.get("max-age"), warnings)
    contents: list[Content] = []
    for child in root:
        if child.tag == f"{namespace}content":
            contents.append(_content(len(contents) + 1, child, namespace, lines))
        elif (namespace and child.tag.startswith(namespace)) or (not namespace and "{" not in child.tag):
            warnings.append(f"unknown element <{_local(child.tag)}> under <rsl> (line {lines.get(child)}): ignored")
    if not contents:
        warnings.append("no <content> element: the document licenses nothing")
    return RslDocument(tuple(contents), None, max_age, tuple(warnings))


def content_pattern(url: str) -> tuple[str | None, str, str | None]:
    """``(origin, path pattern, note)`` of a ``<content url>``: a full URL stands for its
    host (``host[:port]``, lower case, default port dropped; the scheme is not compared, so
    that ``http://`` fetches read the ``https://`` terms) and its path; a path from ``/``
    or ``*`` is a pattern as robots.txt reads it; a relative path is read from the root,
    and said; an empty ``url`` (RSL: "the association's scope") is the whole site."""
    url = url.strip()
    if not url:
        return None, "/", 'url="" read as the whole site, "/"'
    if url[0] in "/*":
        return None, url, None
    match = _ORIGIN.match(url)
    if match is not None and match.group(2):
        return _origin_of(url), path_of(url) if url[match.end() :] else "/", None
    return None, "/" + url, f"url {url!r} does not start with '/': read as '/{url}'"


def origin_of(url: str) -> str | None:
    """The ``host[:port]`` of an absolute URL, lower case, default port dropped; ``None``
    for a path."""
    match = _ORIGIN.match(url)
    return _origin_of(url) if match is not None and match.group(2) else None


def _origin_of(url: str) -> str:
    match = _ORIGIN.match(url)
    assert match is not None and match.group(2)
    authority = match.group(2)[2:].rpartition("@")[2].lower()
    host, colon, port = authority.rpartition(":") if not authority.endswith("]") else (authority, "", "")
    if colon and (port == _DEFAULT_PORTS.get(match.group(1).lower()) or not port):
        return host
    return authority


def _origin_matches(pattern: str, origin: str) -> bool:
    if "*" not in pattern:
        return pattern == origin
    regex = "[^/]*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, origin) is not None


class _Refused(Exception):
    pass


def _parse_xml(body: bytes) -> tuple[Element, dict[Element, int]]:
    """The element tree, with each element's line, by expat with every DOCTYPE refused."""
    builder = TreeBuilder()
    lines: dict[Element, int] = {}
    parser = xml.parsers.expat.ParserCreate(namespace_separator="}")
    parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def refuse(*args: object) -> None:
        raise _Refused(f"a DOCTYPE at line {parser.CurrentLineNumber}")

    def refuse_entity(*args: object) -> None:
        raise _Refused(f"an entity declaration at line {parser.CurrentLineNumber}")

    def start(tag: str, attributes: dict[str, str]) -> None:
        element = builder.start(_clark(tag), {_clark(name): value for name, value in attributes.items()})
        lines[element] = parser.CurrentLineNumber

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse_entity
    parser.UnparsedEntityDeclHandler = refuse_entity
    parser.ExternalEntityRefHandler = refuse_entity  # type: ignore[assignment]
    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: builder.end(_clark(tag))
    parser.CharacterDataHandler = builder.data
    parser.Parse(body, True)
    return builder.close(), lines


def _clark(name: str) -> str:
    # expat gives "uri}local"; ElementTree's spelling is "{uri}local".
    return "{" + name if "}" in name else name


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _content(index: int, element: Element, ns: str, lines: dict[Element, int]) -> Content:
    problems: list[str] = []
    url = element.get("url")
    origin = pattern = None
    if url is None:
        problems.append("no url attribute: the content matches nothing")
    else:
        origin, pattern, note = content_pattern(url)
        if note:
            problems.append(note)
    server = (element.get("server") or "").strip() or None
    if server is not None and "://" not in server:
        problems.append(f"server {server!r} is not an absolute URL")
    encrypted = (element.get("encrypted") or "false").strip()
    if encrypted not in ("true", "false"):
        problems.append(f"encrypted={encrypted!r} is neither true nor false: read as true")
    licenses = tuple(_license(child, ns, lines) for child in element if child.tag == f"{ns}license")
    return Content(
        index,
        url,
        origin,
        pattern,
        server,
        encrypted != "false",
        element.get("lastmod"),
        licenses,
        lines.get(element),
        tuple(problems),
    )


def _license(element: Element, ns: str, lines: dict[Element, int]) -> License:
    problems: list[str] = []
    permits: dict[str, frozenset[str]] = {}
    prohibits: dict[str, frozenset[str]] = {}
    payment = None
    for child in element:
        name = _local(child.tag) if child.tag.startswith(ns) else None
        if name in ("permits", "prohibits"):
            kind = (child.get("type") or "").strip()
            target = permits if name == "permits" else prohibits
            if kind not in TYPES:
                problems.append(f"<{name} type={kind!r}> (line {lines.get(child)}): not usage, user or geo: ignored")
                continue
            tokens = _tokens(child.text or "", kind, name, problems)
            if kind in target:
                problems.append(f"a second <{name} type={kind!r}> in one license: both read")
                tokens |= target[kind]
            target[kind] = tokens
        elif name == "payment":
            payment = _payment(child, ns, problems)
    return License(permits, prohibits, payment, lines.get(element), tuple(problems))


def _tokens(text: str, kind: str, element: str, problems: list[str]) -> frozenset[str]:
    if "," in text:
        problems.append(f"<{element} type={kind!r}>{text.strip()}<...>: commas (RSL 0.9); 1.0 separates by spaces")
    found: set[str] = set()
    for token in filter(None, _SEPARATORS.split(text.strip())):
        if kind == "geo":
            found.add(token.upper())
            continue
        token = token.lower()
        if kind == "usage" and token not in USAGE_PARENTS:
            alias = PROHIBIT_ALIASES.get(token) if element == "prohibits" else None
            if alias is not None:
                problems.append(f"<prohibits> {token!r} is not an RSL 1.0 usage token: read as {alias!r}")
                token = alias
            else:
                problems.append(f"<{element}> {token!r} is not an RSL 1.0 usage token: it grants and prohibits nothing")
                continue
        elif kind == "user" and token not in USER_TOKENS:
            problems.append(f"<{element} type='user'> {token!r} is not an RSL 1.0 user token")
        found.add(token)
    return frozenset(found)


def _payment(element: Element, ns: str, problems: list[str]) -> Payment:
    kind = (element.get("type") or "free").strip().lower()
    if kind == "inference":
        problems.append("payment type 'inference' (RSL 0.9) is 1.0's 'use'")
        kind = "use"
    elif kind not in PAYMENT_TYPES:
        problems.append(f"payment type {kind!r} is not RSL 1.0's: read as a payment due")
    amounts = tuple(
        f"{(amount.text or '').strip()} {amount.get('currency', '')}".strip()
        for amount in element
        if amount.tag == f"{ns}amount"
    )
    return Payment(kind, amounts)


def _max_age(value: str | None, warnings: list[str]) -> int | None:
    if value is None:
        return None
    try:
        days = int(value.strip())
    except ValueError:
        days = -1
    if days < 0:
        warnings.append(f"max-age={value!r} is not a number of days: the default, 30, applies")
        return None
    return days


def _unusable(kind: str, message: str) -> RslDocument:
    return RslDocument(error=RslError(kind, message))
