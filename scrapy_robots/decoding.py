"""The one place where robots.txt bytes become text.

Pure Python, no Scrapy import: every parser backend and the rfc9309 library use it.

Google's parser reads robots.txt as bytes and percent-encodes every byte >= 0x80 of a
rule: a Latin-1 ``Disallow: /caf\\xe9`` is the rule ``/caf%E9``, the URL that a server
with Latin-1 file names serves. The text made here keeps that meaning, so that every
backend, given the text, reads the rule as Google does: a byte that is not part of
UTF-8 becomes its ``%XX`` (not U+FFFD, which would match nothing real).
"""

from __future__ import annotations

import codecs
import re
from functools import lru_cache
from typing import Final

_CHARSET = re.compile(rb"""charset\s*=\s*["']?([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_UTF8: Final = frozenset({"utf-8", "utf-8-sig"})
# Enough of robots.txt's syntax to tell a charset that writes ASCII as ASCII
# (Latin-1, cp1251, Shift_JIS...) from one that does not (UTF-16, UTF-32).
_PROBE: Final = "User-agent: *\nDisallow: /a?b=c&d#e"
# errors="surrogateescape" writes an undecodable byte 0xXX as U+DCXX.
_ESCAPED_TO_PERCENT: Final = {0xDC00 + octet: f"%{octet:02X}" for octet in range(0x80, 0x100)}

#: The codecs error handler that writes each undecodable byte as ``%XX``.
PERCENT_ERRORS: Final = "robotstxt-percent"


def _percent_escape(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return _percent(error.object[error.start : error.end]), error.end


codecs.register_error(PERCENT_ERRORS, _percent_escape)


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

    A byte-order mark wins over ``encoding`` (the response's charset); the start of
    a UTF-8 one is skipped too, as Google does, so that it cannot hide the first
    ``User-agent`` line. The body is read as UTF-8, and a byte that is not part of
    UTF-8 becomes its ``%XX``: what Google makes of a raw byte in a rule. A charset
    that writes a character in several bytes (Shift_JIS, GBK...) has its non-ASCII
    characters written as the ``%XX`` of their bytes in it, as the site's URLs are;
    UTF-16 and UTF-32 are decoded as such. ``\\r\\n`` and lone ``\\r`` line ends
    become ``\\n``, which some libraries (reppy) do not split on otherwise.
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


def cut_at_maxsize(body: bytes, maxsize: int) -> bytes:
    """What the crawl reads of a body longer than ``ROBOTSTXT_MAXSIZE``: its first
    ``maxsize`` bytes, back to the last line end (a rule cut in half could allow more
    than it did); ``body`` itself when it is within the cap."""
    if len(body) <= maxsize:
        return body
    body = body[:maxsize]
    cut = max(body.rfind(b"\n"), body.rfind(b"\r"))
    return body[: cut + 1] if cut >= 0 else b""


def size_text(size: int) -> str:
    """A size as the answers say it (ROBOTSTXT_MAXSIZE's cut): ``500 KiB``, else ``1,000 bytes``."""
    return f"{size // 1024} KiB" if size % 1024 == 0 else f"{size:,} bytes"


def _decode(body: bytes, encoding: str | None) -> str:
    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            body = body[len(bom) :]
            return _decode_utf8(body) if bom_codec == "utf-8" else body.decode(bom_codec, PERCENT_ERRORS)
    if body[:1] == b"\xef":
        body = _skip_partial_bom(body)
    codec = _own_codec(encoding) if encoding else None
    if codec is None:
        return _decode_utf8(body)
    try:
        text = body.decode(codec, PERCENT_ERRORS)
    except (LookupError, UnicodeError):  # a codec that takes no error handler
        return _decode_utf8(body)
    if text.isascii() or not _ascii_compatible(codec):
        return text  # UTF-16, UTF-32: characters, written as UTF-8 later
    # A multi-byte charset: each character as the %XX of its bytes in it, as the
    # site's URLs spell it ("\u8868" is 0x95 0x5C in Shift_JIS: "%95%5C").
    return text.translate(_percent_table(codec))


@lru_cache(maxsize=64)
def _own_codec(encoding: str) -> str | None:
    """The codec that a body declared in ``encoding`` is decoded with, or ``None`` for UTF-8.

    A single-byte charset that writes ASCII as ASCII (ISO-8859-1, windows-1251,
    KOI8-R...) is read as UTF-8: each of its bytes >= 0x80 becomes a ``%XX`` that
    way (or belongs to a UTF-8 character whose percent-encoding is the same bytes),
    exactly as a raw byte in a rule is read by Google. So a file declared Latin-1
    but written in UTF-8, a common misconfiguration, reads right.
    """
    try:
        codec = codecs.lookup(encoding).name
        if codec in _UTF8:
            return None
        # No two bytes make one character.
        single_byte = all(len(bytes((octet, octet)).decode(codec, "replace")) == 2 for octet in range(0x80, 0x100))
    except (LookupError, UnicodeError):
        # Not a text encoding (base64, rot13...: a Content-Type can name anything),
        # or one that takes no error handler (idna): UTF-8 it is.
        return None
    return None if single_byte and _ascii_compatible(codec) else codec


class _PercentTable(dict[int, str]):
    """A ``str.translate`` table: ASCII kept, any other character -> the ``%XX`` of
    its bytes in ``codec``, worked out the first time it is seen."""

    def __init__(self, codec: str):
        super().__init__((octet, chr(octet)) for octet in range(0x80))
        self.codec = codec

    def __missing__(self, ordinal: int) -> str:
        character = chr(ordinal)
        try:
            octets = character.encode(self.codec)
        except UnicodeError:  # a codec whose decoding does not round-trip
            octets = character.encode("utf-8")
        escaped = self[ordinal] = _percent(octets)
        return escaped


@lru_cache(maxsize=8)
def _percent_table(codec: str) -> _PercentTable:
    return _PercentTable(codec)


def _decode_utf8(body: bytes) -> str:
    # What body.decode("utf-8", PERCENT_ERRORS) returns, fast whatever the body:
    # valid files (nearly all) take C's strict path, a file with a few bad bytes (a
    # Latin-1 file) calls the handler once for each, and binary data (a bad byte in
    # every few) has them all replaced in one C pass rather than by a Python call each.
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    text = body.decode("utf-8", "surrogateescape")
    # Each escaped byte is one character that UTF-8 writes in three bytes.
    bad = (len(text.encode("utf-8", "surrogatepass")) - len(body)) // 2
    if bad * 32 > len(text):
        return text.translate(_ESCAPED_TO_PERCENT)
    return body.decode("utf-8", PERCENT_ERRORS)


def _skip_partial_bom(body: bytes) -> bytes:
    # Google skips any leading part of the UTF-8 BOM ("\xef\xbb" and "\xef" too) that
    # a broken editor or proxy left. Bytes that start a real character (a
    # continuation byte follows) are kept.
    cut = 2 if body[1:2] == b"\xbb" else 1
    following = body[cut : cut + 1]
    if following and 0x80 <= following[0] <= 0xBF:
        return body
    return body[cut:]


@lru_cache(maxsize=64)
def _ascii_compatible(codec: str) -> bool:
    try:
        return _PROBE.encode(codec) == _PROBE.encode("ascii")
    except (UnicodeError, LookupError):
        return False


def _percent(octets: bytes) -> str:
    return "%" + octets.hex("%").upper()


def normalize_robotstxt(body: bytes, content_type: str | bytes | None = None) -> bytes:
    """Re-encode a robots.txt body as UTF-8 without a BOM.

    The middleware does this once, with the response's ``Content-Type``, so that every
    ``ROBOTSTXT_PARSER`` class, ours or Scrapy's, receives bytes that decode as UTF-8
    to the same text (bytes that were not UTF-8 already written as ``%XX``).
    """
    return decode_robotstxt(body, charset_from_content_type(content_type)).encode("utf-8")


#: How an HTML page starts (lower case, after white space): what a server that answers
#: every URL with a page sends for robots.txt and tdmrep.json. The linter, the crawl's
#: robots.txt line and tdmrep.json's reading share it.
HTML_MARKERS: Final = ("<!doctype html", "<html", "<head", "<body", "<meta", "<title")


def starts_as_html(text: str | bytes) -> bool:
    """Does this body (a robots.txt, a ``tdmrep.json``) start as an HTML page? A server
    that answers every URL with a page sends one; no rule can be read from it."""
    head = text[:512].lstrip().lower()
    if isinstance(head, bytes):
        return head.startswith(tuple(marker.encode() for marker in HTML_MARKERS))
    return head.startswith(HTML_MARKERS)
