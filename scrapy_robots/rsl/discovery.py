"""Where a site points to its RSL document: ``License:`` lines of robots.txt, a ``Link``
header field, a page's ``<link>`` element. Each returns :class:`LicenseLink` values in the
order found; none fetches anything, none raises on what a site sends.

- robots.txt (RSL 1.0 4.4): ``License: <absolute URL>``, in or out of a group. The lines of
  the group(s) the crawler obeys count, if they have any; else the lines before the first
  ``User-agent`` (global). Groups are formed as RFC 9309 forms them (the tokenizer's
  events, :mod:`scrapy_robots.rfc9309`), so a ``License`` line after a group's rules is
  that group's, as a ``Crawl-delay`` there is. Several lines that apply all apply (a
  crawler reads every document; the most restrictive answer wins).
- HTTP (4.5): ``Link: <https://example.com/license.xml>; rel="license";
  type="application/rsl+xml"``: ``rel`` must hold ``license`` and ``type`` must be RSL's
  media type (a ``rel="license"`` link without it points to a human-readable license).
- HTML (4.6): ``<link rel="license" type="application/rsl+xml" href="...">`` in the head,
  read by :mod:`scrapy_robots.utils.html_head`. An inline ``<script
  type="application/rsl+xml">`` is not read.

A URL that is not absolute is resolved against ``base`` when one is given, and said in
``note``; without a base it is dropped, and said.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin

from scrapy_robots.decoding import decode_robotstxt
from scrapy_robots.rfc9309 import GroupBuilder, parse_robotstxt
from scrapy_robots.rfc9309._agents import scan_groups
from scrapy_robots.rsl.document import MEDIA_TYPE
from scrapy_robots.utils.headers import header_values
from scrapy_robots.utils.html_head import head_link_tags

if TYPE_CHECKING:
    from scrapy_robots.rfc9309 import Group

#: :attr:`LicenseLink.source` values.
ROBOTSTXT: Final = "robots.txt"
LINK_HEADER: Final = "link header"
PAGE: Final = "page"

_ABSOLUTE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# One link-value of a Link field (RFC 8288 3): "<target>" then ";"-separated parameters,
# a value a token or a quoted string.
_LINK_VALUE: Final = re.compile(
    r'\s*<([^>]*)>((?:\s*;\s*[^;,=\s]+(?:\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^;,\s]*))?)*)\s*(?:,|$)'
)
_PARAMETER: Final = re.compile(r';\s*([^;,=\s]+)(?:\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;,\s]*)))?')


@dataclass(frozen=True)
class LicenseLink:
    """One pointer to an RSL document: its absolute ``url``, where it was found
    (``source``: ``ROBOTSTXT``, ``LINK_HEADER``, ``PAGE``), the robots.txt
    ``line`` (else ``None``), the ``text`` as written, and a ``note`` when it was read
    leniently."""

    url: str
    source: str
    text: str
    line: int | None = None
    note: str | None = None


class LicenseLines(GroupBuilder):
    """The robots.txt groups as RFC 9309 forms them, with each ``License`` line kept where
    it stands: ``global_licenses`` before any ``User-agent``, ``group_licenses`` by group."""

    def __init__(self) -> None:
        super().__init__()
        self.global_licenses: list[tuple[int, str]] = []
        self.group_licenses: dict[int, list[tuple[int, str]]] = {}

    def handle_license(self, line: int, value: str) -> None:
        if self._group is None:
            self.global_licenses.append((line, value))
        else:
            self.group_licenses.setdefault(id(self._group), []).append((line, value))

    def licenses_for(self, groups: tuple[Group, ...]) -> list[tuple[int, str]]:
        """The lines that apply to a crawler obeying ``groups``: theirs, else the global ones."""
        own = sorted(entry for group in groups for entry in self.group_licenses.get(id(group), ()))
        return own or list(self.global_licenses)


def robotstxt_licenses(body: bytes | str, user_agent: str = "*", base: str | None = None) -> tuple[LicenseLink, ...]:
    """The RSL documents a robots.txt points ``user_agent`` to (its product token or a full
    ``User-Agent``), in file order; ``base``: the robots.txt's URL, for a relative value."""
    text = decode_robotstxt(body) if isinstance(body, bytes) else body
    builder = LicenseLines()
    parse_robotstxt(text, builder)
    found = []
    for line, value in builder.licenses_for(scan_groups(builder.groups, user_agent)):
        link = _link(value, ROBOTSTXT, f"License: {value}", base, line)
        if link is not None:
            found.append(link)
    return tuple(found)


def license_urls(body: bytes | str, user_agent: str = "*", base: str | None = None) -> tuple[str, ...]:
    """The URLs of :func:`robotstxt_licenses`, and none, at the cost of one search, for the
    files (most) that have no ``License`` line: what a crawl keeps per site."""
    lowered = body.lower()
    if (b"license" if isinstance(lowered, bytes) else "license") not in lowered:
        return ()
    return tuple(link.url for link in robotstxt_licenses(body, user_agent, base))


def header_licenses(headers: Any, base: str | None = None) -> tuple[LicenseLink, ...]:
    """The RSL documents a response's ``Link`` header fields point to; ``headers`` as
    ``scrapy_robots.utils.headers.header_values`` takes them, ``base`` the response's URL."""
    found = []
    for value in header_values(headers, "link"):
        for target, parameters in _link_values(value):
            rels = parameters.get("rel", "").lower().split()
            if "license" in rels and parameters.get("type", "").strip().lower() == MEDIA_TYPE:
                link = _link(target, LINK_HEADER, f'Link: <{target}>; rel="{parameters["rel"]}"', base)
                if link is not None:
                    found.append(link)
    return tuple(found)


def page_licenses(body: bytes, base: str | None = None) -> tuple[LicenseLink, ...]:
    """The RSL documents a page's head links to (``<link rel="license"
    type="application/rsl+xml" href="...">``); ``base``: the page's URL."""
    found = []
    for attributes in head_link_tags(body):
        rels = attributes.get(b"rel", b"").decode("latin-1").lower().split()
        kind = attributes.get(b"type", b"").decode("latin-1").strip().lower()
        href = html.unescape(attributes.get(b"href", b"").decode("utf-8", "replace")).strip()
        if "license" in rels and kind == MEDIA_TYPE and href:
            link = _link(href, PAGE, f'<link rel="license" type="{MEDIA_TYPE}" href="{href}">', base)
            if link is not None:
                found.append(link)
    return tuple(found)


def _link(value: str, source: str, text: str, base: str | None, line: int | None = None) -> LicenseLink | None:
    value = value.strip()
    if _ABSOLUTE.match(value):
        return LicenseLink(value, source, text, line)
    if not value or base is None:
        return None
    url = urljoin(base, value)
    return LicenseLink(url, source, text, line, f"{value!r} is not an absolute URL: read as {url}")


def _link_values(value: str) -> list[tuple[str, dict[str, str]]]:
    """``(target, {parameter: value})`` of each link-value of one Link field; parameter
    names lower case, the first of a repeated one kept (RFC 8288 3.3: ``rel``)."""
    found = []
    at = 0
    while at < len(value):
        match = _LINK_VALUE.match(value, at)
        if match is None or match.end() == at:
            break  # garbled: the link-values read so far stand
        parameters: dict[str, str] = {}
        for parameter in _PARAMETER.finditer(match.group(2)):
            quoted = parameter.group(2)
            text = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else parameter.group(3) or ""
            parameters.setdefault(parameter.group(1).lower(), text)
        found.append((match.group(1).strip(), parameters))
        at = match.end()
    return found
