"""``<meta name="robots" content="...">`` and ``<meta name="BOTNAME" content="...">``,
read from a document's head bytes without a DOM (:mod:`scrapy_robots.utils.html_head`: the
first ``HEAD_BYTES`` up to ``</head>``, comments and scripts skipped). Entities in the
content are not expected in a directive list and are left as they are.
"""

from __future__ import annotations

from collections.abc import Iterator

from scrapy_robots.directives.rules import NONE, Directives, read_directives
from scrapy_robots.utils.html_head import HEAD_BYTES, head_meta_tags, meta_name

__all__ = ["HEAD_BYTES", "meta_directives", "other_crawlers_in_head"]


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
    for attributes in head_meta_tags(body):
        content = attributes.get(b"content")
        yield meta_name(attributes), content.decode("utf-8", "replace") if content is not None else None
