"""The ``<meta>`` and ``<link>`` tags of a document's head, read from its bytes with regular
expressions, no DOM: what the page directives (:mod:`scrapy_robots.directives.head`), TDMRep
(:mod:`scrapy_robots.tdmrep.page`) and RSL (:mod:`scrapy_robots.rsl.discovery`) read from a page.

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
#: What the scan meets: a comment or a script (skipped to its end), or the head's end.
_EVENT: Final = re.compile(rb"<!--|<script\b|</head\s*>|<body[\s>]", re.I)
_COMMENT_END: Final = re.compile(rb"-->")
_SCRIPT_END: Final = re.compile(rb"</script\s*>", re.I)
_META: Final = re.compile(rb"<meta\s([^>]*)>", re.I)
_LINK: Final = re.compile(rb"<link\s([^>]*)>", re.I)
_ATTRIBUTE: Final = re.compile(rb"""([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""")


def head_meta_tags(body: bytes) -> list[dict[bytes, bytes]]:
    """The attributes of each ``<meta>`` tag of the head, in document order: names lower
    case, values as written (``b""`` for an empty one)."""
    return _tags(_META, body)


def head_link_tags(body: bytes) -> list[dict[bytes, bytes]]:
    """The attributes of each ``<link>`` tag of the head, as :func:`head_meta_tags`."""
    return _tags(_LINK, body)


def _tags(tag_pattern: re.Pattern[bytes], body: bytes) -> list[dict[bytes, bytes]]:
    head = _head(body)
    return [
        {
            match.group(1).lower(): (match.group(2) or match.group(3) or match.group(4) or b"")
            for match in _ATTRIBUTE.finditer(tag.group(1))
        }
        for tag in tag_pattern.finditer(head)
    ]


def _head(body: bytes) -> bytes:
    """The head's text, comments and scripts left out: read up to ``</head>`` or ``<body``
    (one that is not inside a comment or a script), at most :data:`HEAD_BYTES`."""
    text = body[:HEAD_BYTES]
    pieces: list[bytes] = []
    at = 0
    while True:
        event = _EVENT.search(text, at)
        if event is None:
            pieces.append(text[at:])
            break
        pieces.append(text[at : event.start()])
        kind = event.group()[1:2]
        if kind not in (b"!", b"s", b"S"):  # </head> or <body: the head ends
            break
        end = (_COMMENT_END if kind == b"!" else _SCRIPT_END).search(text, event.end())
        if end is None:  # never closed: the rest is inside it
            break
        at = end.end()
    return b" ".join(pieces)


def meta_name(attributes: dict[bytes, bytes]) -> str:
    """A tag's ``name``, stripped and lower case (``""`` when it has none)."""
    return attributes.get(b"name", b"").decode("latin-1").strip().lower()
