"""``<meta name="robots" content="...">`` and ``<meta name="BOTNAME" content="...">``,
read from a document's head bytes with one regular expression, no DOM.

The scan stops at ``</head>`` or ``<body``, and reads at most ``HEAD_BYTES`` bytes: a
robots meta tag belongs in the head (HTML: "metadata content"), and a page whose head
is larger than that is rare enough not to pay a whole-page scan for. Comments and
scripts are skipped (a tag commented out says nothing). Attributes in any
order, any case, quoted with ``"`` or ``'`` or not at all; entities in the content are not
expected in a directive list and are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from scrapy_robots.directives.rules import NONE, Directives, read_directives

#: The bytes of a document read for its head.
HEAD_BYTES: Final = 64 * 1024
_END: Final = re.compile(rb"</head\s*>|<body[\s>]", re.I)
#: A comment (a tag commented out is no tag) and a script's text, up to their end or the cut.
_SKIP: Final = re.compile(rb"<!--.*?(?:-->|\Z)|<script\b.*?(?:</script\s*>|\Z)", re.I | re.S)
_META: Final = re.compile(rb"<meta\s([^>]*)>", re.I)
_ATTRIBUTE: Final = re.compile(rb"""([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""")


def meta_directives(body: bytes, token: str, malformed: list[str] | None = None) -> Directives:
    """What the head's robots meta tags say to the crawler whose product token is
    ``token``: ``name="robots"`` (every crawler) and ``name="<token>"`` (this one).
    A tag of these names without ``content`` is ignored, and said in ``malformed``."""
    found = NONE
    names = {"robots", token.lower()}
    for name, content in _meta_tags(body):
        if name not in names:
            continue
        if content is None:
            if malformed is not None:
                malformed.append(f'meta name="{name}" without content')
            continue
        found = found | read_directives(content.split(","), f'meta name="{name}"', malformed)
    return found


def other_crawlers_in_head(body: bytes, token: str) -> list[tuple[str, str, str]]:
    """The head's meta tags named for crawlers other than ``token``'s whose content holds
    directives (``<meta name="googlebot" content="noindex">``): ``(crawler, directive,
    source)`` triples. A tag whose content reads as no directive (``name="viewport"``)
    is no crawler's."""
    mine = token.lower()
    found: list[tuple[str, str, str]] = []
    for name, content in _meta_tags(body):
        if name in ("robots", mine) or not name or content is None:
            continue
        read = read_directives(content.split(","), f'meta name="{name}"')
        found += [(name, directive, f'meta name="{name}"') for directive in read.names]
        if read.unavailable_after is not None:
            found.append((name, "unavailable_after", f'meta name="{name}"'))
    return found


def _meta_tags(body: bytes) -> Iterator[tuple[str, str | None]]:
    """Each meta tag of the head: its name (lower case) and its content (None: none given)."""
    head = body[:HEAD_BYTES]
    if b"<!--" in head or b"<script" in head or b"<SCRIPT" in head:
        head = _SKIP.sub(b" ", head)
    end = _END.search(head)
    if end is not None:
        head = head[: end.start()]
    for tag in _META.finditer(head):
        attributes = {
            match.group(1).lower(): (match.group(2) or match.group(3) or match.group(4) or b"")
            for match in _ATTRIBUTE.finditer(tag.group(1))
        }
        name = attributes.get(b"name", b"").decode("latin-1").strip().lower()
        content = attributes.get(b"content")
        yield name, content.decode("utf-8", "replace") if content is not None else None
