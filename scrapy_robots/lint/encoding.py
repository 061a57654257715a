"""The linter's checks on a robots.txt's bytes as the server sent them: binary data,
bytes that are not UTF-8, rules written in another charset.

Pure Python, no Scrapy import. The checks return ``(line, message)`` pairs, which
:func:`scrapy_robots.lint.lint_robotstxt` turns into findings.
"""

from __future__ import annotations

import codecs
from urllib.parse import quote

from scrapy_robots.decoding import _ascii_compatible, decode_robotstxt


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


def _not_utf8(body: bytes) -> bytes | None:
    """``body`` without its UTF-8 byte-order mark if some of its bytes are not UTF-8;
    None for a body that is UTF-8, or UTF-16 (by its byte-order mark)."""
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return None
    if body.startswith(codecs.BOM_UTF8):
        body = body[3:]
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return body
    return None


def not_utf8_lines(body: bytes) -> list[tuple[int, str]]:
    """Lines with bytes that are not UTF-8, in a file declared (or taken to be) UTF-8.

    Such a byte is read as its ``%XX`` (as Google does), which matches a URL written in
    that legacy charset, never the UTF-8 URL a browser sends for the same character."""
    body = _not_utf8(body)
    if body is None:
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


def legacy_charset_rules(body: bytes, encoding: str, rules: dict[int, tuple[str, str]]) -> list[tuple[int, str]]:
    """The rules (``{line: (directive, value as parsed)}``) whose bytes are not UTF-8,
    in a file served in another charset (ISO-8859-1, windows-1251, Shift_JIS...).

    Whatever that charset, such a rule is read as the ``%XX`` of its bytes (see
    :mod:`scrapy_robots.decoding`): a Latin-1 ``Disallow: /caf\\xe9`` is ``/caf%E9``,
    which matches the URL spelt in that charset, never the UTF-8 ``/caf%C3%A9`` that
    browsers and Scrapy send for ``/café``."""
    try:
        codec = codecs.lookup(encoding).name
    except LookupError:
        return []
    if not _ascii_compatible(codec):
        return []  # UTF-16, UTF-32: decoded as characters, which match their UTF-8 URL
    body = _not_utf8(body)
    if body is None:
        return []  # a UTF-8 file declared in another charset reads as UTF-8
    lines = _raw_lines(body)
    found = []
    for number, (directive, value) in sorted(rules.items()):
        raw = lines[number - 1].split(b"#", 1)[0] if number <= len(lines) else b""
        try:
            raw.decode("utf-8")
            continue
        except UnicodeDecodeError:
            pass
        line = raw.decode(codec, "replace").strip()
        key, colon, written = line.partition(":")
        written = (written if colon else key.split(None, 1)[-1]).strip()
        utf8 = "".join(c if c.isascii() else quote(c) for c in written)
        if directive == "Disallow":
            so = f"so {utf8} stays allowed"
        else:
            so = f"so this Allow does not apply to {utf8}"
        found.append(
            (
                number,
                f"{directive}: {written} ({codec}) is read as {directive}: {value}, which matches the {codec} "
                f"spelling of the URL only, not {utf8}, the UTF-8 one that browsers and Scrapy send: {so}; "
                "save robots.txt as UTF-8 (RFC 9309 2.3)",
            )
        )
    return found


def _raw_lines(body: bytes) -> list[bytes]:
    # The tokenizer's line ends: "\r\n", "\r" and "\n".
    return body.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
