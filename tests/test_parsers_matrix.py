"""One behaviour matrix, run against every backend.

The expected answer is RFC 9309's; where a library legitimately differs, the row
says so (and docs/parsers.rst lists the same differences).
"""

from __future__ import annotations

import pytest
from conftest import BACKENDS, backend_class

FULL_UA = "Mozilla/5.0 (compatible; FooBot/2.1; +https://foo.example/bot)"
GROUPS = b"User-agent: FooBot\nDisallow: /foo\n\nUser-agent: *\nDisallow: /\n"

# (id, body, user agent, path, allowed per RFC 9309, {backend: its own answer})
MATRIX = [
    ("prefix", b"User-agent: *\nDisallow: /private\n", "FooBot", "/private/x", False, {}),
    ("prefix-no-slash", b"User-agent: *\nDisallow: /private\n", "FooBot", "/privatex", False, {}),
    ("prefix-other", b"User-agent: *\nDisallow: /private\n", "FooBot", "/public", True, {}),
    ("group-full-ua", GROUPS, FULL_UA, "/foo", False, {}),
    ("group-full-ua-allowed", GROUPS, FULL_UA, "/bar", True, {}),
    ("group-bare-token", GROUPS, "FooBot", "/bar", True, {}),
    ("group-case-insensitive", GROUPS.replace(b"FooBot", b"foobot"), FULL_UA, "/bar", True, {}),
    ("star-fallback", GROUPS, "OtherBot", "/bar", False, {}),
    ("several-agent-lines", b"User-agent: a\nUser-agent: FooBot\nDisallow: /x\n", "FooBot", "/x", False, {}),
    ("several-agent-lines-other", b"User-agent: a\nUser-agent: FooBot\nDisallow: /x\n", "FooBot", "/y", True, {}),
    # urllib and rerp take the first matching rule (1997 draft), not the longest.
    (
        "longest-match",
        b"User-agent: *\nDisallow: /a\nAllow: /a/b\n",
        "FooBot",
        "/a/b/c",
        True,
        {"python": False, "rerp": False},
    ),
    ("longest-match-disallow", b"User-agent: *\nDisallow: /a\nAllow: /a/b\n", "FooBot", "/a/c", False, {}),
    # urllib knows no wildcards: "*" and "$" are literal characters for it.
    ("wildcard-end", b"User-agent: *\nDisallow: /*.pdf$\n", "FooBot", "/x.pdf", False, {"python": True}),
    ("wildcard-end-query", b"User-agent: *\nDisallow: /*.pdf$\n", "FooBot", "/x.pdf?y", True, {}),
    ("wildcard-middle", b"User-agent: *\nDisallow: /a*/b\n", "FooBot", "/a1/b", False, {"python": True}),
    ("empty-disallow", b"User-agent: *\nDisallow:\n", "FooBot", "/x", True, {}),
    ("bom-deny-all", b"\xef\xbb\xbfUser-agent: *\nDisallow: /\n", "FooBot", "/x", False, {}),
    ("utf16-bom-deny-all", "\ufeffUser-agent: *\nDisallow: /\n".encode("utf-16-le"), "FooBot", "/x", False, {}),
    ("crlf", b"User-agent: *\r\nDisallow: /x\r\n", "FooBot", "/x", False, {}),
    ("cr-only", b"User-agent: *\rDisallow: /x\r", "FooBot", "/x", False, {}),
    ("cr-only-other", b"User-agent: *\rDisallow: /x\r", "FooBot", "/y", True, {}),
    ("comments", b"# hi\nUser-agent: * # all\nDisallow: /x # not x\n", "FooBot", "/x", False, {}),
    ("percent-encoded-rule", b"User-agent: *\nDisallow: /%7Efoo\n", "FooBot", "/~foo", False, {}),
    ("percent-encoded-url", b"User-agent: *\nDisallow: /~foo\n", "FooBot", "/%7Efoo", False, {}),
    ("non-ascii-rule", "User-agent: *\nDisallow: /caf\u00e9\n".encode(), "FooBot", "/caf%C3%A9", False, {}),
    ("query", b"User-agent: *\nDisallow: /search?q=\n", "FooBot", "/search?q=x", False, {}),
    ("query-other", b"User-agent: *\nDisallow: /search?q=\n", "FooBot", "/search", True, {}),
    # RFC 9309 2.2.2: /robots.txt is always allowed; only Protego and reppy build that in.
    # The middleware never asks a parser about the robots.txt request itself.
    (
        "robots-txt-always-allowed",
        b"User-agent: *\nDisallow: /\n",
        "FooBot",
        "/robots.txt",
        True,
        {"python": False, "rerp": False},
    ),
]


@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize(
    ("body", "user_agent", "path", "rfc", "exceptions"),
    [pytest.param(*row[1:], id=row[0]) for row in MATRIX],
)
def test_allowed(name, body, user_agent, path, rfc, exceptions):
    parser = backend_class(name)(body, "unused-default")
    expected = exceptions.get(name, rfc)
    assert parser.allowed("https://example.com" + path, user_agent) is expected


DIRECTIVES_BODY = (
    b"User-agent: FooBot\nCrawl-delay: 2.5\nRequest-rate: 1/5\nDisallow:\n\n"
    b"User-agent: *\nCrawl-delay: 9\nDisallow: /x\n\n"
    b"Sitemap: https://example.com/sitemap.xml\nHost: example.com\n"
)
UNSUPPORTED = "unsupported"

# What each backend answers for the same file; UNSUPPORTED means it raised
# DirectiveNotSupported (it cannot read the directive), None that the file lacks it.
DIRECTIVES = {
    "rfc9309": {"delay_foo": 2.5, "delay_other": 9.0, "rate": (1, 5.0), "host": "example.com"},
    "protego": {"delay_foo": 2.5, "delay_other": 9.0, "rate": (1, 5.0), "host": "example.com"},
    # urllib reads only whole-number Crawl-delay values.
    "python": {"delay_foo": None, "delay_other": 9.0, "rate": (1, 5.0), "host": UNSUPPORTED},
    "rerp": {"delay_foo": 2.5, "delay_other": 9.0, "rate": UNSUPPORTED, "host": UNSUPPORTED},
    "reppy": {"delay_foo": 2.5, "delay_other": 9.0, "rate": UNSUPPORTED, "host": UNSUPPORTED},
}


def _ask(call):
    from scrapy_robots.parsers import DirectiveNotSupported

    try:
        return call()
    except DirectiveNotSupported:
        return UNSUPPORTED


@pytest.mark.parametrize("name", BACKENDS)
def test_directives(name):
    parser = backend_class(name)(DIRECTIVES_BODY, FULL_UA)
    expected = DIRECTIVES[name]
    assert _ask(parser.crawl_delay) == expected["delay_foo"]  # default agent: FooBot
    assert _ask(lambda: parser.crawl_delay("OtherBot")) == expected["delay_other"]
    rate = _ask(parser.request_rate)
    assert (rate if rate == UNSUPPORTED else tuple(rate)) == expected["rate"]
    assert _ask(parser.sitemaps) == ["https://example.com/sitemap.xml"]
    assert _ask(parser.preferred_host) == expected["host"]


@pytest.mark.parametrize("name", BACKENDS)
def test_supports_matches_what_raises(name):
    from scrapy_robots.parsers import CRAWL_DELAY, HOST, REQUEST_RATE, SITEMAP

    cls = backend_class(name)
    parser = cls(DIRECTIVES_BODY, "FooBot")
    calls = {
        CRAWL_DELAY: parser.crawl_delay,
        REQUEST_RATE: parser.request_rate,
        SITEMAP: parser.sitemaps,
        HOST: parser.preferred_host,
    }
    for directive, call in calls.items():
        assert (_ask(call) != UNSUPPORTED) is cls.supports(directive), directive


@pytest.mark.parametrize("name", BACKENDS)
def test_absent_directives_are_none_not_unsupported(name):
    cls = backend_class(name)
    parser = cls(b"User-agent: *\nDisallow: /x\n", "FooBot")
    from scrapy_robots.parsers import CRAWL_DELAY, HOST, REQUEST_RATE

    if cls.supports(CRAWL_DELAY):
        assert parser.crawl_delay() is None
    if cls.supports(REQUEST_RATE):
        assert parser.request_rate() is None
    if cls.supports(HOST):
        assert parser.preferred_host() is None
    assert parser.sitemaps() == []
