"""The robots.txt linter: each fault at its line, and the linter usable on its own."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from scrapy_robots.decoding import normalize_robotstxt
from scrapy_robots.lint import (
    BAD_VALUE,
    BINARY,
    DUPLICATE,
    EMPTY_USER_AGENT,
    HTML,
    INVALID_LINE,
    LEGACY_CHARSET,
    MISSING_COLON,
    MISSPELT,
    NO_LEADING_SLASH,
    NOT_UTF8,
    OVERRIDDEN,
    RECORD_BEFORE_USER_AGENT,
    RELATIVE_SITEMAP,
    RULE_BEFORE_USER_AGENT,
    TOO_LARGE,
    UNKNOWN_DIRECTIVE,
    Finding,
    RobotsTxtLinter,
    lint_robotstxt,
)
from scrapy_robots.rfc9309 import RobotsTxt, parse_robotstxt

FAULTY = """\
Disallow: /early
Crawl-delay: 3
User-agent: *
Disallwo: /misspelt
Crawl-delay: soon
Crawl-delay: 4
Crawl-delay: 5
Request-rate: fast
Disallow: /same
Allow: /same
Disallow: private
Sitemap: /sitemap.xml
this line is wrong
Noindex: /x
User-agent:
Allow: /b*
Disallow: /b
Disallow: /fine
"""

EXPECTED = [
    (1, RULE_BEFORE_USER_AGENT),
    (2, RECORD_BEFORE_USER_AGENT),
    (4, UNKNOWN_DIRECTIVE),
    (5, BAD_VALUE),
    (7, DUPLICATE),
    (8, BAD_VALUE),
    (9, OVERRIDDEN),
    (11, NO_LEADING_SLASH),
    (12, RELATIVE_SITEMAP),
    (13, INVALID_LINE),
    (14, UNKNOWN_DIRECTIVE),
    (15, EMPTY_USER_AGENT),
    (17, OVERRIDDEN),
]


def test_each_fault_at_its_line():
    assert [(f.line, f.code) for f in lint_robotstxt(FAULTY)] == EXPECTED


def test_messages_say_why():
    by_line = {f.line: f for f in lint_robotstxt(FAULTY)}
    assert "did you mean Disallow?" in by_line[4].message
    assert "'Noindex'" in by_line[14].message and "did you mean" not in by_line[14].message
    assert "Allow on line 10" in by_line[9].message
    assert "Allow on line 16" in by_line[17].message
    assert str(by_line[5]) == "line 5: Crawl-delay: soon is not a number of seconds"


def test_what_the_linter_flags_is_what_the_parser_ignores():
    # The linter's claims, checked against the parser that the middleware uses.
    robots = RobotsTxt.parse(FAULTY)
    assert robots.allowed("https://example.com/early", "FooBot")  # line 1 applies to nobody
    assert robots.allowed("https://example.com/misspelt", "FooBot")  # line 4 is not read
    assert robots.crawl_delay("FooBot") == 4.0  # line 5 unreadable, line 7 a duplicate
    assert robots.allowed("https://example.com/same", "FooBot")  # line 9 overridden
    assert robots.allowed("https://example.com/private", "FooBot")  # line 11 matches nothing
    assert robots.allowed("https://example.com/b/c", "FooBot")  # line 17 overridden
    # Line 15 opened a group for no crawler: its rules, line 18 included, bind nobody.
    assert robots.allowed("https://example.com/fine", "FooBot")
    assert robots.agents == ("*", "")


def test_a_clean_file_has_no_findings():
    body = b"User-agent: *\nDisallow: /private\nAllow: /private/open\nCrawl-delay: 2\n\nSitemap: https://e.com/s.xml\n"
    assert lint_robotstxt(body) == []


def test_overrides_only_within_the_agents_groups():
    body = "User-agent: a\nAllow: /x\n\nUser-agent: b\nDisallow: /x\n\nUser-agent: a\nDisallow: /y\nAllow: /y\n"
    # /x: a different agent's Allow changes nothing; /y: the groups of "a" merge.
    assert [(f.line, f.code) for f in lint_robotstxt(body)] == [(8, OVERRIDDEN)]


def test_a_longer_disallow_is_not_overridden():
    assert lint_robotstxt("User-agent: *\nAllow: /a\nDisallow: /a/b\nDisallow: /a*\n") == []


def test_html_page_is_one_finding():
    findings = lint_robotstxt(b"\n<!DOCTYPE html>\n<html><head><title>Welcome</title></head></html>\n")
    assert [(f.line, f.code) for f in findings] == [(2, HTML)]


def test_binary_is_one_finding():
    assert [f.code for f in lint_robotstxt(bytes(range(256)) * 4)] == [BINARY]


def test_binary_without_nul_bytes_is_one_finding():
    # Decoding keeps bytes that are not UTF-8 as %XX (for the rules), so the test for
    # binary data reads the bytes as received: random bytes with no NUL are still binary.
    noise = bytes((i * 97 + 31) % 255 + 1 for i in range(3000))
    assert b"\x00" not in noise
    assert [f.code for f in lint_robotstxt(noise)] == [BINARY]
    # A Latin-1 rule is not binary: one byte in a line of text.
    assert BINARY not in [f.code for f in lint_robotstxt(b"User-agent: *\nDisallow: /caf\xe9\n")]


def test_utf16_with_bom_is_text():
    assert lint_robotstxt("\ufeffUser-agent: *\nDisallow: /\n".encode("utf-16-le")) == []


def test_too_large_names_the_first_line_past_the_limit():
    line = b"Disallow: /" + b"x" * 88 + b"\n"  # 100 bytes
    body = b"User-agent: *\n" + line * 20
    [finding] = lint_robotstxt(body, limit=1000)
    assert finding.code == TOO_LARGE
    # 14 bytes of User-agent, then lines of 100: byte 1000 falls in the 10th rule line.
    assert finding.line == 11
    assert "2,014 bytes" in finding.message


def test_default_limit_is_500_kib():
    body = b"User-agent: *\n" + b"Disallow: /x\n" * (500 * 1024 // 13 + 10)
    assert [f.code for f in lint_robotstxt(body)] == [TOO_LARGE]
    assert lint_robotstxt(b"User-agent: *\n" + b"Disallow: /x\n" * 1000) == []


def test_truncated_body_says_the_rest_was_not_read():
    [finding] = lint_robotstxt(b"User-agent: *\nDisallow: /x\n", truncated=True)
    assert (finding.code, finding.line) == (TOO_LARGE, 3)


def test_the_linter_is_a_handler_like_any_other():
    linter = RobotsTxtLinter()
    parse_robotstxt("Disallow: /x\nUser-agent: *\nAllow: /\n", linter)
    assert linter.findings == [Finding(1, RULE_BEFORE_USER_AGENT, linter.findings[0].message)]
    # It is the parser's own group builder underneath.
    assert [agent[1] for group in linter.groups for agent in group.agents] == ["*"]


@pytest.mark.parametrize("text", ["", "\n\n", "#only a comment\n", ":", "::::", "\x00", "key:", "\ufffd" * 3])
def test_never_raises(text):
    assert isinstance(lint_robotstxt(text), list)


def test_does_not_import_scrapy():
    code = "import sys, scrapy_robots.lint; assert 'scrapy' not in sys.modules, 'scrapy imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# -- issue #14 -------------------------------------------------------------------------


def test_html_mentioned_in_a_robots_txt_hides_no_finding():
    body = "User-agent: *\n# our <html> pages live under /site\nDisallow: /<html\nDisallwo: /x\n"
    assert [(f.line, f.code) for f in lint_robotstxt(body)] == [(4, UNKNOWN_DIRECTIVE)]


def test_a_page_that_does_not_start_with_a_tag_is_html_when_no_line_is_read():
    body = b"Warning: include(): failed in /var/www\n<!DOCTYPE html>\n<html><body>Oops</body></html>\n"
    assert [(f.line, f.code) for f in lint_robotstxt(body)] == [(2, HTML)]


def test_bytes_that_are_not_utf8_are_flagged_at_their_line():
    body = b"User-agent: *\nDisallow: /caf\xe9\nDisallow: /caf\xc3\xa9s\n"
    [finding] = lint_robotstxt(body)
    assert (finding.line, finding.code) == (2, NOT_UTF8)
    assert "%E9" in finding.message and "%C3%A9" in finding.message and "column 15" in finding.message
    # A declared legacy charset says the same of the rule (#20 item 12); UTF-8 declared
    # is the same as none.
    assert [(f.line, f.code) for f in lint_robotstxt(body, encoding="iso-8859-1")] == [(2, LEGACY_CHARSET)]
    assert [f.code for f in lint_robotstxt(body, encoding="utf-8")] == [NOT_UTF8]
    assert lint_robotstxt(body.decode("latin-1")) == []  # text: nothing to say about bytes


def test_misspelt_keys_the_tokenizer_accepts_are_flagged():
    body = (
        "User agent: *\n"  # 1
        "Disalow: /a\n"  # 2
        "Disallow: /b\n"  # 3
        "DISALLOW: /c\n"  # 4 case does not matter
        "Crawl_delay: 3\n"  # 5
        "Site-map: https://e.com/s.xml\n"  # 6
        "Disallowed /d\n"  # 7 no colon, two words
    )
    findings = [(f.line, f.code) for f in lint_robotstxt(body)]
    assert findings == [(1, MISSPELT), (2, MISSPELT), (5, MISSPELT), (6, MISSPELT), (7, MISSING_COLON), (7, MISSPELT)]
    by_line = {f.line: f.message for f in lint_robotstxt(body)}
    assert by_line[2] == (
        "'Disalow' is read as Disallow by Google's parser and ours, but not by every parser "
        "(urllib.robotparser skips the line): write Disallow"
    )
    assert "by our parser" in by_line[5]


# -- issue #20 item 12: a directive with no colon ----------------------------------------


def test_a_directive_with_no_colon_is_flagged_with_what_each_parser_reads():
    body = (
        "User-agent *\n"  # 1
        "Disallow /nocolon\n"  # 2
        "Disallow /a:b\n"  # 3 the value's colon cuts the line for Google and us
        "Disallow /c d\n"  # 4 three words
        "Crawl-delay 5\n"  # 5
        "Disallow: /fine\n"  # 6
        "Allowing robots is nice\n"  # 7 prose: no parser reads it
        "Sitemap https://e.com/s.xml\n"  # 8
    )
    findings = lint_robotstxt(body)
    assert [(f.line, f.code) for f in findings] == [
        (1, MISSING_COLON),
        (2, MISSING_COLON),
        (3, MISSING_COLON),  # not also "Disallow: b does not start with '/'"
        (4, MISSING_COLON),
        (5, MISSING_COLON),
        (7, INVALID_LINE),
        (8, MISSING_COLON),  # not also "'Sitemap https' is misspelt" nor "not absolute"
    ]
    by_line = {f.line: f.message for f in findings}
    assert by_line[2] == (
        "no colon after Disallow: Google's parser, Protego and ours read Disallow: /nocolon; "
        "urllib.robotparser and rerp skip the line (RFC 9309 requires the colon): write Disallow: /nocolon"
    )
    assert "User-agent: *" in by_line[1]
    assert "Google's parser and ours read Disallow: b; Protego reads Disallow: /a:b;" in by_line[3]
    assert "Protego reads Disallow: /c d; Google's parser, urllib.robotparser, rerp and ours skip" in by_line[4]
    assert "Protego and ours read Crawl-delay: 5" in by_line[5]
    assert (
        "Google's parser and ours read Sitemap: //e.com/s.xml; Protego reads Sitemap: https://e.com/s.xml"
        in (by_line[8])
    )


_BACKENDS = {
    "ours": "RFC9309Parser",
    "Google's parser": "GoogleParser",
    "Protego": "ProtegoParser",
    "urllib.robotparser": "PythonParser",
    "rerp": "RerpParser",
}
_PROBES = ["/", "/nocolon", "/a:b", "/b", "/a", "/a%20b", "/x", "/ok", "/private"]


def _observe(name: str, body: str) -> tuple[object, ...]:
    import scrapy_robots.parsers as parsers
    from scrapy_robots.parsers import DirectiveNotSupported

    try:
        parser = getattr(parsers, _BACKENDS[name])(body.encode(), "FooBot")
    except ImportError:
        pytest.skip(f"{name} is not installed")
    seen: list[object] = [tuple(parser.allowed(f"https://e.com{p}", "FooBot") for p in _PROBES)]
    for read in (lambda: parser.crawl_delay("FooBot"), parser.sitemaps, parser.preferred_host):
        try:
            seen.append(read())
        except DirectiveNotSupported:
            seen.append("n/a")
    return tuple(seen)


@pytest.mark.parametrize(
    "body",
    [
        "User-agent: *\nDisallow /nocolon\n",
        "User-agent FooBot\nDisallow: /x\n",
        "User-agent: *\nDisallow /a:b\n",
        "User-agent: *\nDisallow /a: b\n",
        "User-agent: *\nDisallow /a b\n",
        "User-agent: *\nDisallow: /\nAllow /ok\n",
        "User-agent: *\nDisallowed /x\n",
        "User-agent: *\nDisallow: /x\nCrawl-delay 5\n",
        "Sitemap https://e.com/s.xml\nUser-agent: *\nDisallow: /private\n",
        "Host example.com:8080\nUser-agent: *\nDisallow: /private\n",
    ],
)
def test_what_the_missing_colon_finding_says_each_parser_reads_it_does(body):
    # Each parser the message names reads the line as the message says (the same
    # answers as the line written with the colon), each one it says skips the line
    # answers as if the line were a comment.
    [finding] = [f for f in lint_robotstxt(body) if f.code == MISSING_COLON]
    lines = body.split("\n")
    said = finding.message.split(": ", 1)[1].split(" (RFC 9309")[0]
    checked = set()
    for part in said.split("; "):
        names, verb, what = re.fullmatch(r"(.+?) (reads?|skips?) (.+)", part).groups()
        if verb.startswith("read"):
            line = what if ":" in what else what.replace("an empty ", "") + ":"
        else:
            line = "#"
        expected = "\n".join(line if n == finding.line - 1 else text for n, text in enumerate(lines))
        for name in re.split(r", | and ", names):
            name = "ours" if name == "our parser" else name
            assert _observe(name, body) == _observe(name, expected), (name, part)
            checked.add(name)
    assert "ours" in checked


# -- issue #20 item 12: a rule in a legacy charset ---------------------------------------


def test_a_rule_in_a_legacy_charset_is_flagged_it_matches_only_that_spelling():
    body = b"User-agent: *\nDisallow: /caf\xe9 # caf\xe9\nDisallow: /caf\xc3\xa9s\nAllow: /x%E9\n# \xe9t\xe9\n"
    [finding] = lint_robotstxt(body, encoding="iso-8859-1")
    assert (finding.line, finding.code) == (2, LEGACY_CHARSET)
    assert finding.message == (
        "Disallow: /caf\xe9 (iso8859-1) is read as Disallow: /caf%E9, which matches the iso8859-1 spelling of "
        "the URL only, not /caf%C3%A9, the UTF-8 one that browsers and Scrapy send: so /caf%C3%A9 stays "
        "allowed; save robots.txt as UTF-8 (RFC 9309 2.3)"
    )
    # What the message says is what the crawl does with the file served so.
    robots = RobotsTxt.parse(normalize_robotstxt(body, "text/plain; charset=iso-8859-1"))
    assert not robots.allowed("https://e.com/caf%E9", "FooBot")
    assert robots.allowed("https://e.com/caf%C3%A9", "FooBot")
    assert robots.allowed("https://e.com/caf\xe9", "FooBot")


@pytest.mark.parametrize(
    ("text", "charset", "read", "utf8"),
    [
        ("Allow: /\xe9t\xe9", "cp1252", "/%E9t%E9", "/%C3%A9t%C3%A9"),
        ("Disallow: /\u043f\u0443\u0442\u044c", "cp1251", "/%EF%F3%F2%FC", "/%D0%BF%D1%83%D1%82%D1%8C"),
        ("Disallow: /\u8868", "shift_jis", "/%95%5C", "/%E8%A1%A8"),  # multi-byte, its 2nd byte "\\"
    ],
)
def test_each_legacy_charset_rule_says_what_it_matches(text, charset, read, utf8):
    body = f"User-agent: *\n{text}\n".encode(charset)
    [finding] = lint_robotstxt(body, encoding=charset)
    assert finding.code == LEGACY_CHARSET
    assert f"is read as {text.split(':')[0]}: {read}, " in finding.message
    assert f"not {utf8}, the UTF-8 one" in finding.message
    robots = RobotsTxt.parse(normalize_robotstxt(body, f"text/plain; charset={charset}"))
    assert robots.allowed(f"https://e.com{read}", "FooBot") is text.startswith("Allow")
    assert robots.allowed(f"https://e.com{utf8}", "FooBot")


def test_a_rule_that_matches_its_utf8_url_is_not_flagged():
    rule = "User-agent: *\nDisallow: /caf\xe9\n"
    # A UTF-8 file declared Latin-1 (read as UTF-8), UTF-16 (decoded), text (characters).
    assert lint_robotstxt(rule.encode("utf-8"), encoding="iso-8859-1") == []
    assert lint_robotstxt(rule.encode("utf-16"), encoding="utf-16") == []
    assert lint_robotstxt(rule, encoding="iso-8859-1") == []
