"""The linter's checks on a robots.txt's bytes as the server sent them: binary data,
and bytes that are not UTF-8.

Pure Python, no Scrapy import. The checks return ``(line, message)`` pairs, which
:func:`scrapy_robots.lint.lint_robotstxt` turns into findings.
"""

from __future__ import annotations

import codecs
from urllib.parse import quote

from scrapy_robots.decoding import decode_robotstxt


def is_binary(body: bytes | str, encoding: str | None = None) -> bool:
    """Whether ``body`` is not text at all (an image, an archive...)."""
    if isinstance(body, str):
        sample = body[:8192]
    elif body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or not utf8_expected(encoding):
        sample = decode_robotstxt(body[:16384], encoding)[:8192]
    else:
        # decode_robotstxt keeps bytes that are not UTF-8 (as %XX, for the rules), so
        # its text has no U+FFFD to count: read the bytes as received.
        sample = body[:8192].decode("utf-8", "replace")
    if "\x00" in sample:
        return True
    # Undecodable bytes become U+FFFD here: text has few, binary data many.
    return bool(sample) and sample.count("\ufffd") > len(sample) // 10


def utf8_expected(encoding: str | None) -> bool:
    """Whether a body served with the charset ``encoding`` is meant to be UTF-8."""
    if not encoding:
        return True
    try:
        return codecs.lookup(encoding).name in ("utf-8", "utf-8-sig")
    except LookupError:
        return True  # an unknown charset is read as UTF-8


def not_utf8_lines(body: bytes) -> list[tuple[int, str]]:
    """Lines with bytes that are not UTF-8, in a file declared (or taken to be) UTF-8.

    Such a byte is read as its ``%XX`` (as Google does), which matches a URL written in
    that legacy charset, never the UTF-8 URL a browser sends for the same character."""
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return []
    if body.startswith(codecs.BOM_UTF8):
        body = body[3:]
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return []  # the common case: one decode, no line split
    found = []
    for number, line in enumerate(_raw_lines(body), 1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            if number == 1 and exc.start == 0 and line[:1] == b"\xef":
                continue  # the start of a broken byte-order mark, skipped as Google does
            bad = line[exc.start : exc.end]
            guess = bad.decode("cp1252", "replace")
            escaped = "".join(f"%{octet:02X}" for octet in bad)
            found.append(
                (
                    number,
                    f"byte{'s' if len(bad) > 1 else ''} {escaped} at column {exc.start + 1} "
                    f"{'are' if len(bad) > 1 else 'is'} not UTF-8 (Latin-1 {guess!r}?): parsers read "
                    f"{escaped}, which matches no URL a browser writes for {guess!r} "
                    f"({quote(guess)}); robots.txt is UTF-8 (RFC 9309 2.3)",
                )
            )
    return found


def _raw_lines(body: bytes) -> list[bytes]:
    # The tokenizer's line ends: "\r\n", "\r" and "\n".
    return body.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
