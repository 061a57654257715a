"""The ``<meta>`` tags of a document's head, read from its bytes with regular expressions,
no DOM: what the page directives (:mod:`scrapy_robots.directives.head`) and TDMRep
(:mod:`scrapy_robots.tdmrep.page`) read from a page.

The scan stops at ``</head>`` or ``<body``, and reads at most ``HEAD_BYTES`` bytes: these
tags belong in the head (HTML: "metadata content"), and a page whose head is larger than
that is rare enough not to pay a whole-page scan for. Comments and scripts are skipped (a
tag commented out says nothing). Attributes in any order, any case, quoted with ``"`` or
``'`` or not at all; values are returned as written (entities left to the caller).
"""

from __future__ import annotations

import re
from typing import Final

#: The bytes of a document read for its head.
HEAD_BYTES: Final = 64 * 1024
_END: Final = re.compile(rb"</head\s*>|<body[\s>]", re.I)
#: A comment (a tag commented out is no tag) and a script's text, up to their end or the cut.
_SKIP: Final = re.compile(rb"<!--.*?(?:-->|\Z)|<script\b.*?(?:</script\s*>|\Z)", re.I | re.S)
_META: Final = re.compile(rb"<meta\s([^>]*)>", re.I)
_ATTRIBUTE: Final = re.compile(rb"""([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""")


def head_meta_tags(body: bytes) -> list[dict[bytes, bytes]]:
    """The attributes of each ``<meta>`` tag of the head, in document order: names lower
    case, values as written (``b""`` for an empty one)."""
    head = body[:HEAD_BYTES]
    if b"<!--" in head or b"<script" in head or b"<SCRIPT" in head:
        head = _SKIP.sub(b" ", head)
    end = _END.search(head)
    if end is not None:
        head = head[: end.start()]
    return [
        {
            match.group(1).lower(): (match.group(2) or match.group(3) or match.group(4) or b"")
            for match in _ATTRIBUTE.finditer(tag.group(1))
        }
        for tag in _META.finditer(head)
    ]


def meta_name(attributes: dict[bytes, bytes]) -> str:
    """A tag's ``name``, stripped and lower case (``""`` when it has none)."""
    return attributes.get(b"name", b"").decode("latin-1").strip().lower()
