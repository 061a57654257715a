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

    Non-ASCII characters become the ``%XX`` of their UTF-8 bytes; ``%xx`` of an
    unreserved character (letters, digits, ``-._~``) is decoded; any other
    ``%xx`` is upper-cased. ``%2F`` and ``/`` stay different, as do ``%2A`` and
    the ``*`` wildcard.
    """
    if not path.isascii():
        # str.translate does the bytes in C; the "%XX" it writes are upper case
        # escapes of reserved octets, which the loop below leaves as they are.
        path = path.encode("utf-8", "surrogatepass").decode("latin-1").translate(_ESCAPE_HIGH)
    if "%" not in path:
        return path
    pieces = path.split("%")
    for index in range(1, len(pieces)):
        piece = pieces[index]
        replacement = _PERCENT_DIGITS.get(piece[:2])
        pieces[index] = "%" + piece if replacement is None else replacement + piece[2:]
    return "".join(pieces)
