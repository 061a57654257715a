"""Decoding happens in one place: charset, BOM, bad bytes, line ends."""

from __future__ import annotations

import codecs

import pytest

from scrapy_robots.decoding import charset_from_content_type, decode_robotstxt, normalize_robotstxt
from scrapy_robots.parsers import ProtegoParser


@pytest.mark.parametrize(
    ("header", "codec"),
    [
        ("text/plain; charset=ISO-8859-1", "iso8859-1"),
        (b'text/plain;charset="windows-1251"', "cp1251"),
        ("text/plain; charset=utf-8", "utf-8"),
        ("text/plain", None),
        ("text/plain; charset=no-such-codec", None),
        (None, None),
    ],
)
def test_charset_from_content_type(header, codec):
    assert charset_from_content_type(header) == codec


def test_latin1_body_percent_encoded_in_its_charset():
    # The site's URLs are percent-encoded in its charset, as Google reads the raw bytes.
    body = "User-agent: *\nDisallow: /caf\u00e9\n".encode("latin-1")
    normalized = normalize_robotstxt(body, "text/plain; charset=iso-8859-1")
    assert normalized == b"User-agent: *\nDisallow: /caf%E9\n"
    parser = ProtegoParser(normalized, "FooBot")
    assert not parser.allowed("https://example.com/caf%E9")


def test_without_charset_utf8_and_bad_bytes_percent_encoded():
    assert decode_robotstxt(b"Disallow: /\xff") == "Disallow: /%FF"
    assert decode_robotstxt("Disallow: /caf\u00e9".encode()) == "Disallow: /caf\u00e9"


@pytest.mark.parametrize("bom", [codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE])
def test_bom_removed_and_wins_over_charset(bom):
    codec = {codecs.BOM_UTF8: "utf-8", codecs.BOM_UTF16_LE: "utf-16-le", codecs.BOM_UTF16_BE: "utf-16-be"}[bom]
    body = bom + "User-agent: *\nDisallow: /\n".encode(codec)
    assert decode_robotstxt(body, "iso-8859-1") == "User-agent: *\nDisallow: /\n"


@pytest.mark.parametrize("body", [b"a\r\nb\rc\nd", "a\r\nb\rc\nd"])
def test_line_ends_normalised(body):
    assert decode_robotstxt(body) == "a\nb\nc\nd"


@pytest.mark.parametrize("charset", ["base64", "rot13", "hex", "zlib", "idna", "punycode", "utf-7"])
def test_a_charset_that_is_no_text_encoding_never_raises(charset):
    body = b"User-agent: *\nDisallow: /caf\xe9\n"
    assert charset_from_content_type(f"text/plain; charset={charset}") is not None
    assert normalize_robotstxt(body, f"text/plain; charset={charset}") == b"User-agent: *\nDisallow: /caf%E9\n"
