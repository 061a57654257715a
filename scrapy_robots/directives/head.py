"""``<meta name="robots" content="...">`` and ``<meta name="BOTNAME" content="...">``,
read from a document's head bytes without a DOM (:mod:`scrapy_robots.html_head`: the
first ``HEAD_BYTES`` up to ``</head>``, comments and scripts skipped). Entities in the
content are not expected in a directive list and are left as they are.
"""

from __future__ import annotations

from scrapy_robots.directives.rules import NONE, Directives, read_directives
from scrapy_robots.html_head import HEAD_BYTES, head_meta_tags, meta_name

__all__ = ["HEAD_BYTES", "meta_directives"]


def meta_directives(body: bytes, token: str, malformed: list[str] | None = None) -> Directives:
    """What the head's robots meta tags say to the crawler whose product token is
    ``token``: ``name="robots"`` (every crawler) and ``name="<token>"`` (this one).
    A tag of these names without ``content`` is ignored, and said in ``malformed``."""
    found = NONE
    names = {"robots", token.lower()}
    for attributes in head_meta_tags(body):
        name = meta_name(attributes)
        if name not in names:
            continue
        if b"content" not in attributes:
            if malformed is not None:
                malformed.append(f'meta name="{name}" without content')
            continue
        content = attributes[b"content"].decode("utf-8", "replace")
        found = found | read_directives(content.split(","), f'meta name="{name}"', malformed)
    return found
