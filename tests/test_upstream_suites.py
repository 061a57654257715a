"""Cases from other projects' test suites that our parser used to fail (issue #13).

CPython's ``test_robotparser.py``, Protego's tests and Google's ``robots_test.cc``
were run against ``scrapy_robots.rfc9309`` assertion by assertion. The cases below
are the behaviours where we disagreed, written from the behaviour (the test text is
ours). Line length, where we keep RFC 9309's reading against Google's, is in
``test_rfc9309_google_differential.py`` with the other deliberate differences.
"""

from __future__ import annotations

import pytest

from scrapy_robots.decoding import decode_robotstxt, normalize_robotstxt
from scrapy_robots.parsers import GoogleParser, ProtegoParser, RFC9309Parser
from scrapy_robots.rfc9309 import RobotsTxt

AGENT = "FooBot"
LATIN1_BODY = "User-agent: *\nDisallow: /caf\u00e9\n".encode("latin-1")
LATIN1 = "text/plain; charset=iso-8859-1"


def allowed(body: bytes | str, path: str, agent: str = AGENT, **parse_options: object) -> bool:
    return RobotsTxt.parse(body, **parse_options).allowed("https://example.com" + path, agent)  # type: ignore[arg-type]


# --- 1. a raw non-UTF-8 byte in a rule -------------------------------------------
# Google percent-encodes every byte >= 0x80 of a rule: "/caf\xe9" is "/caf%E9", the
# URL a server with Latin-1 file names serves. U+FFFD would match nothing real.


@pytest.mark.parametrize("encoding", [None, "iso-8859-1", "windows-1252"])
def test_raw_latin1_byte_in_a_rule_matches_its_percent_encoding(encoding):
    assert not allowed(LATIN1_BODY, "/caf%E9", encoding=encoding)
    assert not allowed(LATIN1_BODY, "/caf%e9/menu", encoding=encoding)
    assert allowed(LATIN1_BODY, "/caf", encoding=encoding)
    assert allowed(LATIN1_BODY, "/cafe", encoding=encoding)
    # Not U+FFFD, which any other undecodable byte would have become too.
    assert allowed(LATIN1_BODY, "/caf%EF%BF%BD", encoding=encoding)


def test_undecodable_bytes_become_their_percent_encoding():
    assert decode_robotstxt(b"Disallow: /caf\xe9 # caf\xe9\n") == "Disallow: /caf%E9 # caf%E9\n"
    # A truncated multi-byte sequence, then a lone continuation byte.
    assert decode_robotstxt(b"Disallow: /\xe2\x82/\x80") == "Disallow: /%E2%82/%80"
    # Valid UTF-8 around them is still read as characters.
    assert decode_robotstxt(b"Disallow: /caf\xc3\xa9/\xff") == "Disallow: /caf\u00e9/%FF"


@pytest.mark.parametrize("content_type", [None, LATIN1, "text/plain; charset=windows-1252"])
def test_the_middleware_normalises_latin1_to_percent_encodings(content_type):
    assert normalize_robotstxt(LATIN1_BODY, content_type) == b"User-agent: *\nDisallow: /caf%E9\n"


def test_a_declared_charset_percent_encodes_in_that_charset():
    # cp1251 (Cyrillic): the site's URLs are percent-encoded in cp1251, as Google
    # reads the raw bytes.
    body = "User-agent: *\nDisallow: /\u043a\u0430\u0442\n".encode("cp1251")
    assert normalize_robotstxt(body, "text/plain; charset=windows-1251") == b"User-agent: *\nDisallow: /%EA%E0%F2\n"
    # A multi-byte charset whose second byte can be ASCII ("\u8868" is 0x95 0x5C in
    # Shift_JIS) is read by character, not byte by byte.
    body = "Disallow: /\u8868\n".encode("shift_jis")
    assert decode_robotstxt(body, "shift_jis") == "Disallow: /%95%5C\n"
    # UTF-16 is not ASCII-compatible: its characters stay characters (UTF-8 later).
    body = "Disallow: /caf\u00e9\n".encode("utf-16-le")
    assert decode_robotstxt(body, "utf-16-le") == "Disallow: /caf\u00e9\n"


def test_a_utf8_file_declared_latin1_gives_the_same_paths():
    # A common misconfiguration: the server says ISO-8859-1 for a UTF-8 file. Byte for
    # byte, the rule is the same "/caf%C3%A9" that the UTF-8 reading gives.
    body = "User-agent: *\nDisallow: /caf\u00e9\n".encode()
    assert not allowed(body, "/caf%C3%A9", encoding="iso-8859-1")
    assert not allowed(body, "/caf\u00e9", encoding="iso-8859-1")
    assert not allowed(body, "/caf%C3%A9")


def test_raw_bytes_in_a_url_are_percent_encoded_too():
    robots = RobotsTxt.parse(LATIN1_BODY)
    assert not robots.allowed(b"https://example.com/caf\xe9", AGENT)
    assert robots.allowed(b"https://example.com/cafe", AGENT)


def test_text_decoded_with_surrogateescape_keeps_its_bytes():
    # The way Python reads undecodable file names and streams: U+DCE9 is the byte 0xE9.
    text = LATIN1_BODY.decode("utf-8", "surrogateescape")
    assert not allowed(text, "/caf%E9")
    assert allowed(text, "/cafe")


def test_a_raw_byte_in_sitemap_and_user_agent_lines():
    robots = RobotsTxt.parse(b"Sitemap: https://example.com/caf\xe9.xml\nUser-agent: B\xe4r\nDisallow: /\n")
    assert robots.sitemaps == ("https://example.com/caf%E9.xml",)
    # Google reads a User-agent value up to its first non-letter byte: "B".
    assert not robots.allowed("https://example.com/x", "B")
    assert robots.allowed("https://example.com/x", "Other")


@pytest.mark.parametrize(
    "body",
    [LATIN1_BODY, normalize_robotstxt(LATIN1_BODY), normalize_robotstxt(LATIN1_BODY, LATIN1)],
    ids=["raw", "normalised", "normalised-with-charset"],
)
def test_every_backend_gives_the_same_verdicts_on_a_latin1_file(body):
    pytest.importorskip("jwm.robotstxt.googlebot")
    expected = {"/caf%E9": False, "/caf%E9/x": False, "/caf%C3%A9": True, "/cafe": True, "/": True}
    for parser_class in (ProtegoParser, RFC9309Parser, GoogleParser):
        parser = parser_class(body, AGENT)
        verdicts = {path: parser.allowed("https://example.com" + path) for path in expected}
        assert verdicts == expected, parser_class.__name__


# --- 2. a User-agent name with a non-ASCII letter ------------------------------
# Google reads "User-agent: B\u00e4r" as "B" (its product tokens are ASCII) and a
# crawler named "B\u00e4r" then obeys "*". We read a name the same way on both
# sides, letters beyond ASCII included (as Protego does): "B\u00e4r" obeys its own
# group, and neither "B" nor "B\u00f6" obey it.

BAER = "User-agent: B\u00e4r\nDisallow: /\n"


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ("B\u00f6", True),
        ("b\u00d6", True),
        ("Mozilla/5.0 (compatible; B\u00f6/1.0; +https://b.example/bot)", True),
        ("B\u00e4r", False),  # its own group (Google: allowed, the line names "B")
        ("b\u00c4R", False),
        ("Mozilla/5.0 (compatible; B\u00e4r/1.0)", False),
        ("B", True),  # not "B\u00e4r" (Google: denied)
        ("b", True),
        ("B/1.0", True),
    ],
)
def test_an_agent_with_a_non_ascii_letter_is_read_whole_on_both_sides(agent, expected):
    assert allowed(BAER, "/x", agent) is expected


def test_a_non_ascii_letter_before_an_ascii_name():
    body = "User-agent: Bot\nDisallow: /\n"
    assert allowed(body, "/x", "\u00d6Bot")
    assert not allowed(body, "/x", "Bot")


def test_explain_names_the_whole_agent():
    explanation = RobotsTxt.parse(BAER + "\nUser-agent: *\nDisallow: /private\n").explain(
        "https://example.com/x", "B\u00f6"
    )
    assert explanation.allowed
    assert explanation.user_agent == "B\u00f6"
    assert explanation.group_lines == ((4, "*"),)


# --- 3. a partial UTF-8 byte-order mark -----------------------------------------
# Google skips any leading part of "\xef\xbb\xbf": the first line still counts.


@pytest.mark.parametrize("bom", [b"\xef\xbb\xbf", b"\xef\xbb", b"\xef"], ids=["full", "two-bytes", "one-byte"])
def test_a_partial_bom_does_not_hide_the_first_line(bom):
    body = bom + b"User-agent: *\nDisallow: /\n"
    assert not allowed(body, "/x")
    assert not allowed(normalize_robotstxt(body), "/x")
    assert decode_robotstxt(body) == "User-agent: *\nDisallow: /\n"


def test_a_partial_bom_skipped_before_a_named_group():
    body = b"\xef\xbbUser-Agent: FooBot\nDisallow: /AnyValue\n"
    assert not allowed(body, "/AnyValue")
    assert allowed(body, "/Other")


def test_a_broken_bom_makes_the_first_line_garbage():
    # "\xef\x11\xbf": the first byte is skipped, the rest is not a BOM: the line is
    # "\x11\xbfUser-Agent: FooBot", an unknown key, so the rule belongs to no group.
    body = b"\xef\x11\xbfUser-Agent: FooBot\nDisallow: /AnyValue\n"
    assert allowed(body, "/AnyValue")


def test_a_bom_in_the_middle_is_not_skipped():
    body = b"User-Agent: FooBot\n\xef\xbb\xbfDisallow: /AnyValue\n"
    assert allowed(body, "/AnyValue")


def test_a_real_character_after_ef_is_kept():
    # "\xef\xbb\x80" is U+FEC0, a character, not a broken BOM.
    assert decode_robotstxt(b"\xef\xbb\x80x") == "\ufec0x"
    assert decode_robotstxt(b"\xef\x80\x80x") == "\uf000x"


# --- 5. RFC 9309 2.2.3: "%2A" and "%24" in a pattern -----------------------------
# The RFC's own table: "/path/file-with-a-%2A.html" matches
# "https://www.example.com/path/file-with-a-*.html", "/path/foo-%24" matches
# "https://www.example.com/path/foo-$".


def test_rfc_table_percent_2a_matches_a_literal_star():
    body = "User-agent: *\nDisallow: /path/file-with-a-%2A.html\n"
    assert not allowed(body, "/path/file-with-a-*.html")
    assert not allowed(body, "/path/file-with-a-%2A.html")
    assert not allowed(body, "/path/file-with-a-%2a.html")
    # Still not a wildcard.
    assert allowed(body, "/path/file-with-a-x.html")
    assert allowed(body, "/path/file-with-a-.html")


def test_rfc_table_percent_24_matches_a_literal_dollar():
    body = "User-agent: *\nDisallow: /path/foo-%24\n"
    assert not allowed(body, "/path/foo-$")
    assert not allowed(body, "/path/foo-%24")
    assert not allowed(body, "/path/foo-$/bar")
    # Still not an anchor.
    assert allowed(body, "/path/foo-")


def test_percent_encoded_star_and_dollar_together():
    body = "User-agent: *\nDisallow: /buy/%2A%24\n"
    assert not allowed(body, "/buy/*$")
    assert not allowed(body, "/buy/%2A%24")
    assert allowed(body, "/buy/anything")
    assert allowed(body, "/buy/")


def test_literal_star_with_wildcards_and_a_final_percent_24():
    body = "User-agent: *\nDisallow: /*/a%2A%24\n"
    assert not allowed(body, "/x/a*$")
    assert not allowed(body, "/x/a*$/more")
    assert allowed(body, "/x/ab$")


def test_a_dollar_inside_a_pattern_matches_its_percent_encoding():
    body = "User-agent: *\nDisallow: /a$b\n"
    assert not allowed(body, "/a$b")
    assert not allowed(body, "/a%24b")
    assert allowed(body, "/ab")


def test_the_final_dollar_still_anchors():
    body = "User-agent: *\nDisallow: /a$\n"
    assert not allowed(body, "/a")
    assert allowed(body, "/a$")
    assert allowed(body, "/a%24")


def test_without_wildcards_star_and_dollar_match_their_percent_encoding():
    body = "User-agent: *\nDisallow: /a*b$\n"
    assert not allowed(body, "/a*b$", wildcards=False)
    assert not allowed(body, "/a%2Ab%24", wildcards=False)
    assert allowed(body, "/axb", wildcards=False)


def test_explain_shows_the_literal_characters():
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /f-%2A\n")
    explanation = robots.explain("https://example.com/f-%2a", AGENT)
    assert not explanation.allowed
    assert explanation.path == "/f-*"
    assert explanation.rule is not None and explanation.rule.pattern == "/f-%2A"


# --- 6. names with digits (issue #30) ------------------------------------------
# Protego's wildcard test names its groups Rule1TestBot to Rule7TestBot, and its 1996
# draft test 1bot to 8bot. Each crawler obeys its own group, as Protego reads them; read
# up to the first digit, all seven Rule groups were one group ("rule") and every 1996
# line named "" (no crawler).

RULE_BOTS = """
User-agent: Rule1TestBot
Disallow:  /foo*

User-agent: Rule2TestBot
Disallow:  /foo*/bar.html

# Disallows anything containing the letter m!
User-agent: Rule3TestBot
Disallow:  *m

User-agent: Rule4TestBot
Allow:  /foo/bar.html
Disallow: *

User-agent: Rule5TestBot
Disallow:  /foo*/*bar.html

User-agent: Rule6TestBot
Allow:  /foo$
Disallow:  /foo

User-agent: Rule7TestBot
Allow: *****************/****.js
"""

DRAFT_1996_BOTS = """
User-agent: 1bot
Allow: /tmp
Disallow: /

User-agent: 2bot
Allow: /tmp/
Disallow: /

User-agent: 3bot
Allow: /a%3cd.html
Disallow: /

User-agent: 5bot
Allow: /a%2fb.html
Disallow: /

User-agent: 6bot
Allow: /a/b.html
Disallow: /

User-agent: 7bot
Allow: /%7ejoe/index.html
Disallow: /
"""

# (body, agent, {path: allowed})
NAMED_WITH_DIGITS = [
    (RULE_BOTS, "Rule1TestBot", {"/fo.html": True, "/foo.html": False, "/food": False, "/foo/bar.html": False}),
    (
        RULE_BOTS,
        "Rule2TestBot",
        {"/fo.html": True, "/foo/bar.html": False, "/foo/a/b/c/x/y/z/bar.html": False, "/food/xyz.html": True},
    ),
    (RULE_BOTS, "Rule3TestBot", {"/foo.htm": False, "/foo": True, "/moo": False, "/foo/bar.txt": True}),
    (RULE_BOTS, "Rule4TestBot", {"/fo.html": False, "/foo": False, "/foo/bar.html": True, "/foo/bar.txt": False}),
    (RULE_BOTS, "Rule5TestBot", {"/foo/bar.html": False, "/food/rebar.html": False, "/food/rebarf.html": True}),
    (RULE_BOTS, "Rule6TestBot", {"/foo": True, "/foo/": False, "/fooey": False}),
    (RULE_BOTS, "Rule7TestBot", {"/xyz/foo.js": True, "/inlife/daily/fashion-20160727/": True}),
    (DRAFT_1996_BOTS, "1bot", {"/tmp.html": True, "/tmp/a.html": True, "/x": False}),
    (DRAFT_1996_BOTS, "2bot", {"/tmp": False, "/tmp/": True, "/tmp/a.html": True}),
    (DRAFT_1996_BOTS, "3bot", {"/a%3cd.html": True, "/a%3Cd.html": True, "/x": False}),
    (DRAFT_1996_BOTS, "5bot", {"/a%2fb.html": True, "/a/b.html": False}),
    (DRAFT_1996_BOTS, "6bot", {"/a%2fb.html": False, "/a/b.html": True}),
    (DRAFT_1996_BOTS, "7bot", {"/~joe/index.html": True, "/x": False}),
    (DRAFT_1996_BOTS, "8bot", {"/x": True}),  # no group names 8bot, and there is no "*"
]


@pytest.mark.parametrize(("body", "agent", "expected"), NAMED_WITH_DIGITS, ids=[c[1] for c in NAMED_WITH_DIGITS])
def test_protego_s_named_groups_with_digits(body, agent, expected):
    robots = RobotsTxt.parse(body)
    parser = RFC9309Parser(body.encode(), agent)
    protego = ProtegoParser(body.encode(), agent)
    for path, verdict in expected.items():
        url = "https://example.com" + path
        assert robots.allowed(url, agent) is verdict, path
        assert parser.allowed(url) is verdict, path
        assert protego.allowed(url) is verdict, path
