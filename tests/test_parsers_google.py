"""GoogleParser: Google's own C++ library (jwm-robotstxt) behind our interface.

The behaviour matrix of test_parsers_matrix.py, with Google's legitimate differences
from RFC 9309 listed (docs/parsers.rst and docs/rfc9309.rst explain them).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from test_parsers_matrix import DIRECTIVES_BODY, FULL_UA, MATRIX, UNSUPPORTED, _ask

pytest.importorskip("jwm.robotstxt.googlebot")

from scrapy_robots.parsers import CRAWL_DELAY, HOST, REQUEST_RATE, SITEMAP, GoogleParser

# Google does not decode percent-encoded unreserved characters ("%7E" is not "~"),
# and answers for /robots.txt itself like any other path (the middleware never asks).
GOOGLE_DIFFERS = {
    "percent-encoded-rule": True,
    "percent-encoded-url": True,
    "robots-txt-always-allowed": False,
}


@pytest.mark.parametrize(
    ("name", "body", "user_agent", "path", "rfc"), [pytest.param(*row[:5], id=row[0]) for row in MATRIX]
)
def test_allowed(name, body, user_agent, path, rfc):
    parser = GoogleParser(body, "unused-default")
    assert parser.allowed("https://example.com" + path, user_agent) is GOOGLE_DIFFERS.get(name, rfc)


def test_differences_are_only_the_listed_ones():
    assert set(GOOGLE_DIFFERS) <= {row[0] for row in MATRIX}
    for name, expected in GOOGLE_DIFFERS.items():
        rfc = next(row[4] for row in MATRIX if row[0] == name)
        assert expected is not rfc, name


def test_directives():
    parser = GoogleParser(DIRECTIVES_BODY, FULL_UA)
    assert _ask(parser.sitemaps) == ["https://example.com/sitemap.xml"]
    # Googlebot ignores these: the backend says it cannot read them, not "unset".
    assert _ask(parser.crawl_delay) == UNSUPPORTED
    assert _ask(parser.request_rate) == UNSUPPORTED
    assert _ask(parser.preferred_host) == UNSUPPORTED
    assert GoogleParser.supports(SITEMAP)
    assert not any(GoogleParser.supports(d) for d in (CRAWL_DELAY, REQUEST_RATE, HOST))


def test_default_agent_and_bytes():
    parser = GoogleParser(b"User-agent: FooBot\nDisallow: /x\n", user_agent=FULL_UA)
    assert not parser.allowed(b"https://example.com/x")
    assert parser.allowed("https://example.com/x", "OtherBot")


@pytest.mark.parametrize("body", [b"", b"\x00\xff\xfe garbage", "caf\u00e9: \u2603\n".encode(), b"Disallow" * 10_000])
def test_bad_input_never_raises(body):
    parser = GoogleParser(body)
    assert parser.allowed("https://example.com/x", "FooBot") in (True, False)
    assert isinstance(parser.sitemaps(), list)


def test_in_a_crawl_settings(tmp_path):
    # ROBOTSTXT_PARSER takes it like any backend: build_from_crawler(cls, crawler, body).
    from scrapy.utils.misc import build_from_crawler
    from scrapy.utils.test import get_crawler

    crawler = get_crawler(settings_dict={"ROBOTSTXT_USER_AGENT": "FooBot"})
    parser = build_from_crawler(GoogleParser, crawler, b"User-agent: FooBot\nDisallow: /\n")
    assert not parser.allowed("https://example.com/x")


def test_without_the_library_the_error_names_the_extra():
    code = (
        "import sys; sys.modules['jwm.robotstxt'] = None; sys.modules['jwm.robotstxt.googlebot'] = None\n"
        "from scrapy_robots.settings.config import _load_value\n"
        "try:\n"
        "    _load_value('ROBOTSTXT_PARSER', 'scrapy_robots.parsers.GoogleParser')\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "ROBOTSTXT_PARSER" in out
    assert "pip install scrapy-robots[google]" in out
