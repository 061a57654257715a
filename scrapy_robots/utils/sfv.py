"""RFC 9651 (Structured Field Values) dictionaries and lists: what ``Content-Signal``,
``Content-Usage`` (robots.txt lines and the response header) and ``Robots-Tag`` use.

Strict, as the RFC asks: any error fails the whole field. No Scrapy import. Every bare
item type is read; what these headers do not use is dropped: the parameters of a
Dictionary's members and of an inner list's items. bench/sfv.py checks it against the
httpwg tests and http-sfv, and says why this subset rather than that library.
"""

from __future__ import annotations

import binascii
import re
from typing import Any, Final


class Token(str):
    """An RFC 9651 token (``y``), told apart from a string (``"y"``)."""


class DisplayString(str):
    """An RFC 9651 Display String (``%"caf%c3%a9"``), decoded, told apart from a string."""


class Date(int):
    """An RFC 9651 Date (``@1659578233``): seconds since the epoch, told apart from an integer."""


_KEY: Final = re.compile(r"[a-z*][a-z0-9_.*-]*")
_TOKEN: Final = re.compile(r"[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*")
# RFC 9651 4.2.4: a Decimal has at most 12 digits before the dot, an Integer 15; what
# follows the longest match (a 13th digit before a dot, a 4th after it) fails the field.
_NUMBER: Final = re.compile(r"-?(?:[0-9]{1,12}\.[0-9]{1,3}|[0-9]{1,15})")
_BYTES: Final = re.compile(r":[A-Za-z0-9+/=]*:")
# 4.2.10: printable ASCII but '"' and '%' as is (no backslash escapes), '%' and two
# lowercase hex digits for any other byte of the UTF-8 text.
_DISPLAY: Final = re.compile(r'%"((?:[ !#$&-~]|%[0-9a-f]{2})*)"')


class _Malformed(Exception):
    pass


def parse_sf_dictionary(text: str) -> dict[str, Any] | None:
    """An RFC 9651 Dictionary as ``{key: value}``, or None when ``text`` is not one.

    Strict, as the RFC asks: any error fails the whole field. Values are
    :class:`Token`, ``str``, :class:`DisplayString`, ``int``, :class:`Date`, ``float``,
    ``bool``, ``bytes`` (the base64 text, checked, not decoded) or a
    ``list`` (an inner list); parameters are parsed and dropped. A key given
    twice keeps its last value.
    """
    try:
        return _dictionary(text)
    except _Malformed:
        return None


def _dictionary(text: str) -> dict[str, Any]:
    if not text.isascii():
        raise _Malformed
    s = text.strip(" ")
    out: dict[str, Any] = {}
    i, n = 0, len(s)
    while i < n:
        key, i = _match(_KEY, s, i)
        value: Any
        if i < n and s[i] == "=":
            i += 1
            if i < n and s[i] == "(":
                value, i = _inner_list(s, i)
            else:
                value, i = _bare_item(s, i)
        else:
            value = True
        i = _parameters(s, i)
        out[key] = value
        i = _after_member(s, i)
    return out


def _after_member(s: str, i: int) -> int:
    """Past the comma that follows a dictionary's or a list's member: ``len(s)`` at the
    end; anything but a comma, or a trailing comma, is malformed."""
    n = len(s)
    while i < n and s[i] in " \t":
        i += 1
    if i == n:
        return n
    if s[i] != ",":
        raise _Malformed
    i += 1
    while i < n and s[i] in " \t":
        i += 1
    if i == n:
        raise _Malformed  # a trailing comma
    return i


def _match(pattern: re.Pattern[str], s: str, i: int) -> tuple[str, int]:
    found = pattern.match(s, i)
    if found is None:
        raise _Malformed
    return found.group(), found.end()


def _bare_item(s: str, i: int) -> tuple[Any, int]:
    if i >= len(s):
        raise _Malformed
    c = s[i]
    if c == '"':
        out = []
        i += 1
        while i < len(s):
            c = s[i]
            if c == "\\":
                if i + 1 >= len(s) or s[i + 1] not in '"\\':
                    raise _Malformed
                out.append(s[i + 1])
                i += 2
            elif c == '"':
                return "".join(out), i + 1
            elif " " <= c <= "~":
                out.append(c)
                i += 1
            else:
                raise _Malformed
        raise _Malformed
    if c == "?":
        if s[i + 1 : i + 2] in ("0", "1"):
            return s[i + 1] == "1", i + 2
        raise _Malformed
    if c == ":":
        value, i = _match(_BYTES, s, i)
        content = value[1:-1].encode()
        try:  # 4.2.7: content that is not base64 fails the field; a lacking "=" padding does not
            binascii.a2b_base64(content + b"=" * (-len(content) % 4), strict_mode=True)
        except binascii.Error:
            raise _Malformed from None
        return content, i
    if c == "-" or c.isdigit():
        value, i = _match(_NUMBER, s, i)
        return (float(value) if "." in value else int(value)), i
    if c == "@":
        value, i = _match(_NUMBER, s, i + 1)
        if "." in value:
            raise _Malformed
        return Date(value), i
    if c == "%":
        found = _DISPLAY.match(s, i)
        if found is None:
            raise _Malformed
        try:
            text = _percent_decoded(found.group(1))
        except UnicodeDecodeError:
            raise _Malformed from None
        return DisplayString(text), found.end()
    value, i = _match(_TOKEN, s, i)
    return Token(value), i


def _percent_decoded(text: str) -> str:
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "%":
            out.append(int(text[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(ord(text[i]))
            i += 1
    return out.decode("utf-8")


def _inner_list(s: str, i: int) -> tuple[list[Any], int]:
    i += 1  # "("
    items: list[Any] = []
    while i < len(s):
        while i < len(s) and s[i] == " ":
            i += 1
        if i < len(s) and s[i] == ")":
            return items, i + 1
        item, i = _bare_item(s, i)
        i = _parameters(s, i)
        items.append(item)
        if i < len(s) and s[i] not in " )":
            raise _Malformed
    raise _Malformed


def _parameters(s: str, i: int) -> int:
    return _kept_parameters(s, i)[1]


def _kept_parameters(s: str, i: int) -> tuple[dict[str, Any], int]:
    parameters: dict[str, Any] = {}
    while i < len(s) and s[i] == ";":
        i += 1
        while i < len(s) and s[i] == " ":
            i += 1
        key, i = _match(_KEY, s, i)
        value: Any = True
        if i < len(s) and s[i] == "=":
            value, i = _bare_item(s, i + 1)
        parameters[key] = value
    return parameters, i


def parse_sf_list(text: str) -> list[tuple[Any, dict[str, Any]]] | None:
    """An RFC 9651 List as ``[(item, {parameter: value})]`` (``Robots-Tag``), or None
    when ``text`` is not one. Strict, as :func:`parse_sf_dictionary`."""
    try:
        return _list(text)
    except _Malformed:
        return None


def _list(text: str) -> list[tuple[Any, dict[str, Any]]]:
    if not text.isascii():
        raise _Malformed
    s = text.strip(" ")
    out: list[tuple[Any, dict[str, Any]]] = []
    i, n = 0, len(s)
    while i < n:
        item: Any
        if s[i] == "(":
            item, i = _inner_list(s, i)
        else:
            item, i = _bare_item(s, i)
        parameters, i = _kept_parameters(s, i)
        out.append((item, parameters))
        i = _after_member(s, i)
    return out


# -- the lines of robots.txt ----------------------------------------------------
