"""RFC 9651 structured fields: our subset (scrapy_robots/_sfv.py), at the grammar's edges."""

from __future__ import annotations

import pytest

from scrapy_robots.utils.sfv import Token, parse_sf_dictionary, parse_sf_list


@pytest.mark.parametrize(
    "text, expected",
    [
        # RFC 9651 4.2.4: an Integer has at most 15 digits, a Decimal at most 12 before
        # the dot and 1 to 3 after it.
        ("123456789012345, -123456789012345", [123456789012345, -123456789012345]),
        ("123456789012.123", [123456789012.123]),
        ("0042, -0", [42, 0]),
        ("1234567890123456", None),
        ("1234567890123.1", None),
        ("-1234567890123.0", None),
        ("1.1234", None),
        ("1.", None),
        ("1..4", None),
        ("-", None),
        ("(1234567890123.1)", None),
    ],
)
def test_numbers(text, expected):
    parsed = parse_sf_list(text)
    assert (parsed if parsed is None else [item for item, _ in parsed]) == expected


def test_decimal_limits_in_dictionaries_and_parameters():
    assert parse_sf_dictionary("a=123456789012.5") == {"a": 123456789012.5}
    assert parse_sf_dictionary("a=1234567890123.5") is None
    assert parse_sf_list("a;q=1234567890123.5") is None
    assert parse_sf_list("a;q=0.5") == [(Token("a"), {"q": 0.5})]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("*;nosnippet, ExampleBot;noindex", [("*", {"nosnippet": True}), ("ExampleBot", {"noindex": True})]),
        ("a; x", [("a", {"x": True})]),
        ("  a  ,  b  ", [("a", {}), ("b", {})]),
        ("a\t,\tb", [("a", {}), ("b", {})]),
        ("", []),
        ("a ;x", None),
        ("a;x =1", None),
        ("a;X=1", None),
        ("a,", None),
        (",a", None),
        ("a,,b", None),
        ("a b", None),
        ("(a,b)", None),
        ("((a))", None),
        ('"bad \\n escape"', None),
        ("t\u00f6ken", None),
    ],
)
def test_list_grammar(text, expected):
    assert parse_sf_list(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # RFC 9651 4.2.9: a Date is "@" and an Integer (seconds since the epoch).
        ("a;d=@1659578233", [("a", {"d": 1659578233})]),
        ("@-12", [(-12, {})]),
        ("@1.5", None),
        ("@", None),
        ("@ 12", None),
        # 4.2.10: a Display String, %"..." with lowercase %xx escapes of UTF-8.
        ('%"f%c3%bc%c3%bc"', [("f\u00fc\u00fc", {})]),
        ('%"plain text"', [("plain text", {})]),
        ('%"f%C3%BC"', None),
        ('%"a%c3"', None),
        ('%"a%2"', None),
        ('%"unterminated', None),
        ('%"a\\"b"', None),
        ("%a", None),
        # 4.2.7: a Byte Sequence's content must decode as base64 ("=" padding may lack).
        (":aGVsbG8=:", [(b"aGVsbG8=", {})]),
        (":aGVsbG8:", [(b"aGVsbG8", {})]),
        (":a=b:", None),
        (":abcde:", None),
    ],
)
def test_dates_display_strings_and_byte_sequences(text, expected):
    assert parse_sf_list(text) == expected


def test_the_new_types_are_told_apart():
    from scrapy_robots.utils.sfv import Date, DisplayString

    ((item, parameters),) = parse_sf_list('%"caf%c3%a9";at=@0')
    assert isinstance(item, DisplayString) and item == "caf\u00e9"
    assert isinstance(parameters["at"], Date) and parameters["at"] == 0
    assert parse_sf_dictionary('title=%"x", when=@86400') == {"title": "x", "when": 86400}
