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

_PERCENT_OR_NON_ASCII: Final = re.compile(rb"%([0-9A-Fa-f]{2})|[\x80-\xff]")
_UNRESERVED: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


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
    if "%" not in path and path.isascii():
        return path
    raw = path.encode("utf-8", "surrogatepass")
    return _PERCENT_OR_NON_ASCII.sub(_normalize_one, raw).decode("ascii")


def _normalize_one(match: re.Match[bytes]) -> bytes:
    hex_digits = match.group(1)
    if hex_digits is None:
        return b"%%%02X" % match.group()[0]
    octet = int(hex_digits, 16)
    if octet in _UNRESERVED:
        return bytes((octet,))
    return b"%" + hex_digits.upper()
