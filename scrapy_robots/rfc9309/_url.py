"""URL paths as robots.txt compares them: extraction and percent-encoding.

Both sides of a comparison, the rule's path pattern and the URL's path, go
through :func:`normalize` so that equivalent spellings compare equal
(RFC 9309, section 2.2.2).
"""

from __future__ import annotations

import re
from typing import Final

# Scheme (optional) and authority; what follows is the path, params and query.
# Mirrors Google's GetPathParamsQuery: the path starts at the first '/', '?' or
# ';' after "scheme://host". urlsplit() would do the same job five times slower.
_AUTHORITY: Final = re.compile(r"(?://)?(?:[^/?;]*://)?[^/?;]*")

_UNRESERVED: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX_DIGITS: Final = "0123456789abcdefABCDEF"
# The two hex digits after a "%", in any case -> what replaces the three
# characters: the character itself if unreserved, else "%" and upper case.
_PERCENT_DIGITS: Final = {
    high + low: chr(octet) if octet in _UNRESERVED else f"%{octet:02X}"
    for high in _HEX_DIGITS
    for low in _HEX_DIGITS
    for octet in (int(high + low, 16),)
}
# RFC 9309 2.2.3: a pattern's "%2A" and "%24" stand for a literal "*" and "$" in
# the URL. A URL is compared with both decoded, so that "/a-%2A.html" and
# "/a-*.html" are one path; the matcher keeps a pattern's "%2A" and "%24" from
# being read as a wildcard or an anchor.
_URL_PERCENT_DIGITS: Final = {**_PERCENT_DIGITS, "2A": "*", "2a": "*", "24": "$"}
# A byte >= 0x80, as a character of the UTF-8 decoded as latin-1 -> "%XX".
_ESCAPE_HIGH: Final = {octet: f"%{octet:02X}" for octet in range(0x80, 0x100)}


def path_of(url: str) -> str:
    """The path, params and query of ``url``, starting with ``/``; no fragment.

    Accepts absolute URLs, scheme-relative ``//host/path`` and bare paths.
    """
    start = _AUTHORITY.match(url).end()  # type: ignore[union-attr]  # matches "" at worst
    hash_at = url.find("#")
    if hash_at < 0:
        path = url[start:]
    elif hash_at < start:
        return "/"
    else:
        path = url[start:hash_at]
    if not path:
        return "/"
    if path[0] != "/":
        return "/" + path
    return path


def normalize(path: str) -> str:
    """Percent-encode ``path`` the one way both patterns and URLs are compared.

    Non-ASCII characters become the ``%XX`` of their UTF-8 bytes (a U+DC80 to
    U+DCFF from Python's ``surrogateescape`` is the byte it stands for); ``%xx``
    of an unreserved character (letters, digits, ``-._~``) is decoded; any other
    ``%xx`` is upper-cased. ``%2F`` and ``/`` stay different, as do ``%2A`` and
    the ``*`` wildcard.
    """
    return _normalize(path, _PERCENT_DIGITS)


def normalize_url_path(path: str) -> str:
    """:func:`normalize` for the URL's side: ``%2A`` and ``%24`` are decoded too,
    so that the literal ``*`` and ``$`` a pattern spells ``%2A`` and ``%24`` match
    either spelling (RFC 9309, section 2.2.3)."""
    return _normalize(path, _URL_PERCENT_DIGITS)


def _normalize(path: str, digits: dict[str, str]) -> str:
    if not path.isascii():
        # str.translate does the bytes in C; the "%XX" it writes are upper case
        # escapes of reserved octets, which the loop below leaves as they are.
        path = _utf8(path).decode("latin-1").translate(_ESCAPE_HIGH)
    if "%" not in path:
        return path
    pieces = path.split("%")
    for index in range(1, len(pieces)):
        piece = pieces[index]
        replacement = digits.get(piece[:2])
        pieces[index] = "%" + piece if replacement is None else replacement + piece[2:]
    return "".join(pieces)


def _utf8(text: str) -> bytes:
    try:
        # Text read with errors="surrogateescape" keeps each undecodable byte as
        # U+DC80..U+DCFF: the byte itself is what Google would percent-encode.
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # another lone surrogate: encode it as it is
        return text.encode("utf-8", "surrogatepass")
