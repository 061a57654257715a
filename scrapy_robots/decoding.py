"""The one place where robots.txt bytes become text.

Pure Python, no Scrapy import: every parser backend and the rfc9309 library use it.
"""

from __future__ import annotations

import codecs
import re

_CHARSET = re.compile(rb"""charset\s*=\s*["']?([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def charset_from_content_type(content_type: str | bytes | None) -> str | None:
    """Return the codec named by a ``Content-Type`` header's ``charset``, if Python knows it."""
    if not content_type:
        return None
    if isinstance(content_type, str):
        content_type = content_type.encode("latin-1", "replace")
    match = _CHARSET.search(content_type)
    if not match:
        return None
    try:
        return codecs.lookup(match.group(1).decode("ascii")).name
    except LookupError:
        return None


def decode_robotstxt(body: bytes | str, encoding: str | None = None) -> str:
    """Decode a robots.txt body; never raises.

    A byte-order mark wins over ``encoding``; then ``encoding`` (the response's
    charset) when Python knows it; else UTF-8. Undecodable bytes become U+FFFD; a
    leading BOM is removed so that it cannot hide the first ``User-agent`` line; and
    ``\\r\\n`` and lone ``\\r`` line ends become ``\\n``, which some libraries
    (reppy) do not split on otherwise.
    """
    if isinstance(body, str):
        text = body
    else:
        text = _decode(body, encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _decode(body: bytes, encoding: str | None) -> str:
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(codec, errors="replace")
    codec = "utf-8"
    if encoding:
        try:
            codec = codecs.lookup(encoding).name
        except LookupError:
            pass
    return body.decode(codec, errors="replace")


def normalize_robotstxt(body: bytes, content_type: str | bytes | None = None) -> bytes:
    """Re-encode a robots.txt body as UTF-8 without a BOM.

    The middleware does this once, with the response's ``Content-Type``, so that every
    ``ROBOTSTXT_PARSER`` class, ours or Scrapy's, receives bytes that decode as UTF-8.
    """
    return decode_robotstxt(body, charset_from_content_type(content_type)).encode("utf-8")
