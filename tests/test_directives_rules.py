"""The page directives' grammar (issue #33), as tables: headers (legacy and structured),
the head scan, and how sources combine. No crawl: scrapy_robots.directives is pure."""

from __future__ import annotations

import pytest

from scrapy_robots.directives import NONE, header_directives, meta_directives, read_directives

BOT = "mybot"


def flags(directives) -> set[str]:
    names = ("noindex", "nofollow", "noarchive", "nosnippet", "noimageindex", "noai", "noimageai")
    return {name for name in names if getattr(directives, name)}


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["noindex"], {"noindex"}),
        (["NoIndex, NOFOLLOW"], {"noindex", "nofollow"}),
        (["none"], {"noindex", "nofollow"}),
        (["max-image-preview:none"], set()),  # not "none" (Nutch's substring match reads it so)
        (["max-snippet:0, noarchive"], {"noarchive"}),
        (["all", "index, follow"], set()),
        (["noai, noimageai"], {"noai", "noimageai"}),
        (["googlebot: noindex, nofollow"], set()),  # another crawler's
        (["mybot: noindex, nofollow"], {"noindex", "nofollow"}),
        (["MyBot: nofollow"], {"nofollow"}),
        (["googlebot: noindex", "nosnippet"], {"nosnippet"}),  # several headers add up
        (["noarchive, googlebot: noindex, mybot: nofollow"], {"noarchive", "nofollow"}),
        (["frobnicate, noindex"], {"noindex"}),  # an unknown token is ignored
        # A name that is no product token names no crawler: its part is nobody's, not everybody's.
        (["googlebot*: noindex, nofollow"], set()),
        (["noarchive, google*bot: noindex, mybot: nofollow"], {"noarchive", "nofollow"}),
        (["googlebot/2.1: nofollow"], set()),
        (["nocache"], {"noarchive"}),  # Bing's name for noarchive
        (["NOCACHE, mybot: nocache"], {"noarchive"}),
        ([""], set()),
        ([",,,"], set()),
    ],
)
def test_the_legacy_header(values, expected):
    assert flags(header_directives(values, [], BOT)) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["*;nosnippet, ExampleBot;noindex"], {"nosnippet"}),
        (["*;nosnippet, mybot;noindex"], {"nosnippet", "noindex"}),
        (["MyBot;noindex;nofollow"], {"noindex", "nofollow"}),
        (['mybot;unavailable_after="2000-01-01T00:00:00Z"'], set()),  # a date, not a flag
        (["*;noindex,"], set()),  # malformed (a trailing comma): ignored as a whole
        (['"mybot";noindex'], {"noindex"}),  # a string item reads as the name
        (["*;max-image-preview=none"], set()),
        (["*;none"], {"noindex", "nofollow"}),
    ],
)
def test_the_structured_header(values, expected):
    assert flags(header_directives([], values, BOT)) == expected


def test_unavailable_after_is_noindex_after_its_date():
    for value in (
        "unavailable_after: 25 Jun 2010 15:00:00 PST",
        "unavailable_after: Friday, 25-Jun-10 15:00:00 PST",
        "unavailable_after: 2010-06-25T23:00:00+00:00",
    ):
        found = header_directives([value], [], BOT)
        assert found.unavailable_after == pytest.approx(1277506800.0), value
        assert not found.noindex
        assert found.at(1277506800.0 - 1).noindex is False
        assert found.at(1277506800.0).noindex is True
    assert header_directives(["unavailable_after: someday"], [], BOT) == NONE


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (b'<html><head><meta name="robots" content="noindex"></head>', {"noindex"}),
        (b"<HEAD><META CONTENT='nofollow' NAME='ROBOTS'></HEAD>", {"nofollow"}),
        (b"<head><meta name=robots content=none>", {"noindex", "nofollow"}),
        (b'<head><meta name="mybot" content="noarchive"><meta name="otherbot" content="noindex">', {"noarchive"}),
        (b'<head><meta name="robots" content="max-image-preview:none">', set()),
        (b'<head></head><body><meta name="robots" content="noindex">', set()),  # in the body: not read
        (
            b'<head><meta name="robots" content="noindex"><meta name="robots" content="nofollow">',
            {"noindex", "nofollow"},
        ),
        (b'<head><meta name="description" content="noindex">', set()),
        (b'<head><meta name="robots" content="noindex"', set()),  # a cut tag
        (b'\xff\xfe<head><meta name=robots content="noai">', {"noai"}),
        (b'<head><!-- <meta name="robots" content="noindex"> --><meta name="robots" content="noai">', {"noai"}),
        (b'<head><!-- </head> --><meta name="robots" content="noindex">', {"noindex"}),
        (b"<head><script>var t = '<meta name=robots content=nofollow>';</script></head>", set()),
        (b'<head><script src="a.js"></script><meta name="robots" content="nofollow"></head>', {"nofollow"}),
        (b'<head><!-- never closed <meta name="robots" content="noindex">', set()),
        (b'<html><meta name="robots" content="noindex"/><body>', {"noindex"}),  # no head tag
        (b'<head><script>document.write("<body>")</script><meta name="robots" content="noindex">', {"noindex"}),
        (b'<head><SCRIPT type="x">a</Script ><meta name="robots" content="nofollow"><BODY>', {"nofollow"}),
        (b'<head></head><!-- x --><meta name="robots" content="noindex">', set()),
    ],
)
def test_the_head_scan(html, expected):
    assert flags(meta_directives(html, BOT)) == expected


def test_the_sources_combine_to_the_most_restrictive_and_say_where_each_came_from():
    header = header_directives(["nofollow"], [], BOT)
    meta = meta_directives(b'<head><meta name="mybot" content="noindex">', BOT)
    both = header | meta
    assert flags(both) == {"noindex", "nofollow"}
    assert both.as_meta() == {"nofollow": ["X-Robots-Tag"], "noindex": ['meta name="mybot"']}
    assert (both | header_directives(["noindex"], [], BOT)).as_meta()["noindex"] == [
        'meta name="mybot"',
        "X-Robots-Tag",
    ]
    assert read_directives(["index"], "x") == NONE and not NONE
