"""TDMRep's grammar (issue #34), as tables: tdmrep.json's first-match rules, its malformed
files, the header fields and meta tags, and the report's processing priority. No crawl:
scrapy_robots.tdmrep is pure."""

from __future__ import annotations

import itertools
import json
import random
import re
import subprocess
import sys

import pytest
from scrapy.http import Headers

from scrapy_robots.tdmrep import (
    FILE,
    HEADER,
    HTML_PAGE,
    MAX_BYTES,
    META,
    NOT_AN_ARRAY,
    NOT_JSON,
    NOT_UTF8,
    TOO_LARGE,
    UNSET,
    Answer,
    combine,
    header_reservation,
    location_pattern,
    meta_reservation,
    parse_tdmrep,
)


def tdmrep(*rules: dict) -> bytes:
    return json.dumps(list(rules)).encode()


def decided(body: bytes, url: str) -> tuple[bool | None, int | None]:
    answer = parse_tdmrep(body).reservation(url)
    return answer.reserved, answer.rule


# The report's second example, as written (section "Examples"), and what it says of each URL.
REPORT_EXAMPLE = b"""
[
  {
  "location": "/directory-a/",
  "tdm-reservation": 1
  },
  {
  "location": "/directory-b/html/",
  "tdm-reservation": 1,
  "tdm-policy":"https://provider.com/policies/policy.json"
  },
  {
  "location": "/directory-b/images/*.jpg",
  "tdm-reservation": 0
  }
]
"""


@pytest.mark.parametrize(
    ("url", "reserved", "rule", "policy"),
    [
        ("https://provider.com/directory-a/paper.pdf", True, 1, None),
        ("https://provider.com/directory-b/html/page.html", True, 2, "https://provider.com/policies/policy.json"),
        ("https://provider.com/directory-b/images/cover.jpg", False, 3, None),
        ("https://provider.com/directory-b/images/sub/cover.jpg", False, 3, None),  # "*" spans "/"
        ("https://provider.com/directory-b/images/cover.png", None, None, None),
        ("https://provider.com/directory-a", None, None, None),  # "/directory-a/" needs its slash
        ("https://provider.com/", None, None, None),
        ("https://provider.com/Directory-A/paper.pdf", None, None, None),  # case-sensitive
    ],
)
def test_the_reports_example(url, reserved, rule, policy):
    answer = parse_tdmrep(REPORT_EXAMPLE).reservation(url)
    assert (answer.reserved, answer.rule, answer.policy) == (reserved, rule, policy)
    if rule is None:
        assert answer.source is None and answer.reason.startswith("no rule of tdmrep.json matches /")
    else:
        assert answer.source == FILE and answer.reason.startswith(f"tdmrep.json rule {rule} ({{")


def test_a_publisher_shaped_file_with_open_access_carved_out_first():
    # A journal publisher: open-access articles and the sitemap open, the journals reserved
    # with a licensing policy, PDFs everywhere reserved without one, the rest reserved.
    body = tdmrep(
        {"location": "/journal/*/open-access/", "tdm-reservation": 0},
        {"location": "/sitemap*.xml$", "tdm-reservation": 0},
        {"location": "/journal/", "tdm-reservation": 1, "tdm-policy": "https://pub.example/tdm/policy.json"},
        {"location": "/*.pdf$", "tdm-reservation": 1},
        {"location": "/", "tdm-reservation": 1, "tdm-policy": "https://pub.example/tdm/terms.html"},
    )
    site = parse_tdmrep(body)
    table = {
        "https://pub.example/journal/cell/open-access/a1": (False, 1),
        "https://pub.example/journal/cell/open-access/a1.pdf": (False, 1),  # rule 1 before rule 4
        "https://pub.example/sitemap-3.xml": (False, 2),
        "https://pub.example/sitemap-3.xml.gz": (True, 5),
        "https://pub.example/journal/cell/a2": (True, 3),
        "https://pub.example/journal/cell/a2.pdf": (True, 3),  # rule 3 before rule 4
        "https://pub.example/books/b.pdf": (True, 4),
        "https://pub.example/books/b.pdf?download=1": (True, 5),  # "$" ends before the query
        "https://pub.example/about": (True, 5),
    }
    assert {url: (a.reserved, a.rule) for url in table for a in [site.reservation(url)]} == table
    assert site.reservation("https://pub.example/journal/x").policy == "https://pub.example/tdm/policy.json"
    assert site.reservation("https://pub.example/books/b.pdf").policy is None
    assert site.reservation("https://pub.example/books/b.pdf").reason == (
        'tdmrep.json rule 4 ({"location": "/*.pdf$", "tdm-reservation": 1})'
    )


@pytest.mark.parametrize(
    ("rules", "url", "expected"),
    [
        # The first match wins, whatever its length: a broad rule first shadows a narrower one.
        ([("/", 1), ("/books/", 0)], "/books/a", (True, 1)),
        ([("/books/", 0), ("/", 1)], "/books/a", (False, 1)),
        ([("/books/", 0), ("/", 1)], "/music/a", (True, 2)),
        ([("/*", 0), ("/books/free/", 1)], "/books/free/a", (False, 1)),
        ([("/books/*.pdf", 1), ("/books/free/", 0)], "/books/free/a.pdf", (True, 1)),
        ([("/books/free/", 0), ("/books/*.pdf", 1)], "/books/free/a.pdf", (False, 1)),
        # The same location twice: the first one speaks.
        ([("/a", 1), ("/a", 0)], "/a", (True, 1)),
        ([("/a", 0), ("/a", 1)], "/a", (False, 1)),
        # A later rule decides only where the earlier ones do not match.
        ([("/a$", 1), ("/a", 0)], "/a/b", (False, 2)),
        # No rule matches: unset.
        ([("/a", 1)], "/b", (None, None)),
        ([], "/b", (None, None)),
    ],
)
def test_the_first_matching_rule_decides(rules, url, expected):
    body = tdmrep(*({"location": location, "tdm-reservation": value} for location, value in rules))
    assert decided(body, url) == expected


@pytest.mark.parametrize(
    ("location", "url", "matches"),
    [
        ("*", "/anything/at/all", True),
        ("/*", "/", True),
        ("/*.jpg", "/a/b/c.jpg", True),
        ("/*.jpg", "/a/b/c.jpg.html", True),  # no "$": a prefix
        ("/*.jpg$", "/a/b/c.jpg.html", False),
        ("/*.jpg$", "/a/b/c.jpg", True),
        ("/books/*/chapter", "/books/x/y/chapter-2", True),
        ("/books/*/chapter", "/books/chapter", False),
        ("/books/**/chapter", "/books/x/chapter", True),
        ("/exact$", "/exact", True),
        ("/exact$", "/exact/", False),
        ("/exact$", "/exactly", False),
        ("/a*b*c$", "/a-b-c", True),
        ("/a*b*c$", "/a-c-b", False),
        ("$", "/", True),  # relative, so "/$": the root only
        ("$", "/a", False),
    ],
)
def test_star_and_dollar_as_robots_txt_reads_them(location, url, matches):
    body = tdmrep({"location": location, "tdm-reservation": 1})
    assert decided(body, url) == ((True, 1) if matches else (None, None))


@pytest.mark.parametrize(
    ("location", "url", "matches"),
    [
        ("/caf%C3%A9/", "/café/menu", True),
        ("/café/", "/caf%c3%a9/menu", True),
        ("/caf%c3%a9/", "/caf%C3%A9/menu", True),
        ("/%7Euser/", "/~user/page", True),  # "~" is unreserved: decoded on both sides
        ("/~user/", "/%7euser/page", True),
        ("/a%2Fb", "/a/b", False),  # "%2F" is reserved: not a "/"
        ("/a/b", "/a%2Fb", False),
        ("/path/foo-%24", "/path/foo-$", True),  # the report's own example
        ("/path/foo-%24", "/path/foo-%24", True),
        ("/path/foo-%24", "/path/foo-", False),  # "%24" is a literal "$", not an anchor
        ("/a-%2A.html", "/a-*.html", True),
        ("/a-%2A.html", "/a-b.html", False),  # "%2A" is a literal "*", not a wildcard
    ],
)
def test_percent_encoding_compares_as_robots_txt_does(location, url, matches):
    body = tdmrep({"location": location, "tdm-reservation": 1})
    assert decided(body, "https://site.example" + url) == ((True, 1) if matches else (None, None))


@pytest.mark.parametrize(
    ("location", "url", "matches"),
    [
        ("/search?q=", "/search?q=tdm", True),
        ("/search", "/search?q=tdm", True),
        ("/search$", "/search?q=tdm", False),  # the query is part of the path matched
        ("/*?utm_", "/a/b?utm_source=x", True),
        ("/*?utm_", "/a/b", False),
        ("/*session=", "/a?x=1&session=2", True),
        ("/page", "/page#section", True),  # the fragment is never matched
        ("/page#section", "/page", False),
    ],
)
def test_query_strings_are_matched_and_fragments_are_not(location, url, matches):
    body = tdmrep({"location": location, "tdm-reservation": 1})
    assert decided(body, "https://site.example" + url) == ((True, 1) if matches else (None, None))


@pytest.mark.parametrize(
    ("value", "reserved", "problem"),
    [
        (1, True, None),
        (0, False, None),
        ("1", True, 'the string "1": read as 1'),
        ("0", False, 'the string "0": read as 0'),
        (2, None, "2 is neither 0 nor 1"),
        (-1, None, "-1 is neither 0 nor 1"),
        (1.0, None, "1.0 is neither 0 nor 1"),
        (True, None, "true is neither 0 nor 1"),  # Python counts True as 1: JSON does not
        (False, None, "false is neither 0 nor 1"),
        (None, None, "null is neither 0 nor 1"),
        ("yes", None, '"yes" is neither 0 nor 1'),
        ([1], None, "[1] is neither 0 nor 1"),
    ],
)
def test_tdm_reservation_values(value, reserved, problem):
    # The rule matches either way, and, first, decides: a later "1" does not speak for it.
    body = tdmrep({"location": "/", "tdm-reservation": value}, {"location": "/", "tdm-reservation": 1})
    answer = parse_tdmrep(body).reservation("/x")
    assert (answer.reserved, answer.rule) == (reserved, 1)
    if problem is None:
        assert answer.problems == ()
    else:
        assert len(answer.problems) == 1 and problem in answer.problems[0], answer.problems
        assert answer.problems[0].startswith("tdmrep.json rule 1: ")


@pytest.mark.parametrize(
    ("rule", "reserved", "decides", "problem"),
    [
        ({"tdm-reservation": 1}, None, False, "no location: the rule matches nothing"),
        ({"location": None, "tdm-reservation": 1}, None, False, "no location"),
        ({"location": 7, "tdm-reservation": 1}, None, False, "location is not a string"),
        ({"location": "", "tdm-reservation": 1}, None, False, "an empty location matches nothing"),
        ({"location": "  ", "tdm-reservation": 1}, None, False, "an empty location matches nothing"),
        ({"location": "/"}, None, True, "no tdm-reservation: unset"),
        ({"location": "/", "tdm-reservation": 1, "tdm-policy": 5}, True, True, "tdm-policy 5 is not a URL"),
        ({"location": "/", "tdm-reservation": 1, "tdm-policy": ""}, True, True, 'tdm-policy "" is not a URL'),
        ({"location": "/", "tdm-reservation": 1, "tdm-policy": "/p.json"}, True, True, "not an absolute URL"),
        ({"location": "/", "tdm-reservation": 1, "comment": "unknown keys are ignored"}, True, True, None),
        ("/", None, False, "not an object"),
        ([{"location": "/", "tdm-reservation": 1}], None, False, "not an object"),
    ],
)
def test_missing_and_mistyped_fields(rule, reserved, decides, problem):
    site = parse_tdmrep(json.dumps([rule, {"location": "/", "tdm-reservation": 0}]).encode())
    assert site.ok and len(site.rules) == 2
    answer = site.reservation("/x")
    # A rule that cannot match leaves the next one to decide; one that matches decides.
    assert (answer.reserved, answer.rule) == ((reserved, 1) if decides else (False, 2))
    rule_problems = site.rules[0].problems
    assert (problem is None and rule_problems == ()) or any(problem in p for p in rule_problems), rule_problems


@pytest.mark.parametrize(
    ("location", "pattern", "noted"),
    [
        ("/books/", "/books/", False),
        ("*.pdf", "*.pdf", False),
        (" /books/ ", "/books/", False),
        ("https://pub.example/books/*", "/books/*", True),  # a URL: its path
        ("http://other.example/books/*", "/books/*", True),  # the host is not compared
        ("//pub.example/books/", "//pub.example/books/", False),  # a path, as robots.txt reads it
        ("https://pub.example", "/", True),
        ("books/*", "/books/*", True),  # relative: from the root, not from /.well-known/
        ("index.html", "/index.html", True),
        ("", None, True),
    ],
)
def test_what_a_location_that_is_not_a_path_means(location, pattern, noted):
    assert location_pattern(location)[0] == pattern
    assert (location_pattern(location)[1] is not None) == noted
    body = tdmrep({"location": location, "tdm-reservation": 1})
    if pattern is not None:
        path = pattern if pattern.startswith("/") else "/" + pattern
        assert decided(body, "https://pub.example" + path.replace("*", "x")) == (True, 1)


@pytest.mark.parametrize(
    ("body", "kind", "says"),
    [
        (b"", NOT_JSON, "Expecting value"),
        (b"   \n", NOT_JSON, "Expecting value"),
        (b'[{"location": "/", "tdm-reservation": 1}', NOT_JSON, "expected an array"),  # cut short
        (b'[{"location": "/", "tdm-reservation": 1},]', NOT_JSON, ""),  # a trailing comma
        (b"[{'location': '/'}]", NOT_JSON, ""),  # single quotes
        (b'{"location": "/", "tdm-reservation": 1}', NOT_AN_ARRAY, "a JSON object; the rules must be in an array"),
        (b'"/"', NOT_AN_ARRAY, "a JSON string"),
        (b"1", NOT_AN_ARRAY, "a JSON int"),
        (b"null", NOT_AN_ARRAY, "a JSON NoneType"),
        (b'[{"location": "/caf\xe9/", "tdm-reservation": 1}]', NOT_UTF8, "byte 19 is not UTF-8"),  # latin-1
        ('[{"location": "/", "tdm-reservation": 1}]'.encode("utf-16"), NOT_UTF8, "UTF-16 or UTF-32"),
        (b"[" * 100_000, NOT_JSON, "nested too deeply"),
        (b"[" + b"1" * 5000 + b"]", NOT_JSON, ""),  # an integer over Python's 4,300 digits
        (b"[" + b" " * MAX_BYTES + b"]", TOO_LARGE, "524,290 bytes, over the 524,288 read"),
    ],
)
def test_a_malformed_file_is_a_typed_error_and_every_url_reads_unset(body, kind, says):
    site = parse_tdmrep(body)
    assert not site.ok and site.error.kind == kind and site.rules == ()
    assert says in site.error.message, site.error.message
    answer = site.reservation("https://site.example/anything")
    assert (answer.reserved, answer.source, answer.rule) == (None, None, None)
    assert answer.reason == f"tdmrep.json unusable ({kind}: {site.error.message})"
    assert answer.problems == (f"tdmrep.json: {kind}: {site.error.message}",)


def test_the_size_cap_and_a_byte_order_mark():
    rule = b'[{"location": "/", "tdm-reservation": 1}]'
    padded = rule + b" " * (MAX_BYTES - len(rule))
    assert parse_tdmrep(padded).reservation("/x").reserved is True  # exactly the cap: read
    assert parse_tdmrep(padded + b" ").error.kind == TOO_LARGE  # one byte more: not
    assert parse_tdmrep(rule, max_bytes=len(rule) - 1).error.kind == TOO_LARGE
    # A UTF-8 BOM must not turn "reserved" into "unset": skipped, and said.
    site = parse_tdmrep(b"\xef\xbb\xbf" + rule)
    assert site.ok and site.reservation("/x").reserved is True
    assert site.warnings == ("a UTF-8 byte-order mark before the JSON: skipped",)
    assert parse_tdmrep(rule).warnings == ()
    # An empty array is a valid file that reserves nothing.
    assert parse_tdmrep(b"[]").ok and parse_tdmrep(b"[]").reservation("/").reserved is None


def test_a_long_rule_is_cut_in_its_reason():
    long = {"location": "/a/", "tdm-reservation": 1, "tdm-policy": "https://pub.example/" + "p" * 300}
    reason = parse_tdmrep(tdmrep(long)).reservation("/a/x").reason
    assert reason == 'tdmrep.json rule 1 ({"location": "/a/", "tdm-reservation": 1, ...})'


def _reference(rules: list[tuple[str, int]], path: str) -> int | None:
    """First match by a regex per location: the report's rule, written the obvious way."""
    for index, (location, _) in enumerate(rules, 1):
        anchored = location.endswith("$")
        regex = ".*".join(map(re.escape, location.rstrip("$").split("*"))) + ("$" if anchored else "")
        if re.match(regex, path):
            return index
    return None


def test_the_compiled_matcher_agrees_with_a_scan_of_the_rules_in_order():
    # The rfc9309 matcher files rules by head and bisects; in first-match order it must
    # still name the first rule in file order that matches. 300 files of 1 to 40 rules.
    rng = random.Random(34)
    pieces = ["/", "a", "b", "/a", "/b", "*", ".pdf", "?q=", "x"]
    checked = 0
    for _ in range(300):
        rules = []
        for _ in range(rng.randint(1, 40)):
            location = "/" + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))
            rules.append((location + ("$" if rng.random() < 0.2 else ""), rng.choice((0, 1))))
        site = parse_tdmrep(tdmrep(*({"location": loc, "tdm-reservation": v} for loc, v in rules)))
        for _ in range(20):
            path = "/" + "".join(rng.choice(pieces[:-1] + ["c"]) for _ in range(rng.randint(0, 6)))
            assert site.reservation("https://site.example" + path).rule == _reference(rules, path), (rules, path)
            checked += 1
    assert checked == 6000


# -- the response: header fields and meta tags ------------------------------------------


@pytest.mark.parametrize(
    ("headers", "reserved", "policy", "reason"),
    [
        ({}, None, None, "nothing stated"),
        ({"tdm-reservation": "1"}, True, None, "header tdm-reservation: 1"),
        ({"TDM-Reservation": "0"}, False, None, "header tdm-reservation: 0"),
        ({b"tdm-reservation": b" 1 "}, True, None, "header tdm-reservation: 1"),
        ({"tdm-reservation": ["1", "1"]}, True, None, "header tdm-reservation: 1"),
        ({"tdm-reservation": "0, 1"}, True, None, "header tdm-reservation: 1"),  # disagree: 1 wins
        ({"tdm-reservation": "2"}, None, None, "nothing stated"),
        ({"tdm-reservation": "yes, 0"}, False, None, "header tdm-reservation: 0"),
        (
            {"tdm-reservation": "1", "tdm-policy": "https://provider.com/policies/policy.json"},
            True,
            "https://provider.com/policies/policy.json",
            "header tdm-reservation: 1",
        ),
        ({"tdm-policy": "https://p.example/a,b.json"}, None, "https://p.example/a,b.json", "nothing stated"),
    ],
)
def test_the_header_fields(headers, reserved, policy, reason):
    for given in (headers, Headers(headers)):
        answer = header_reservation(given)
        assert (answer.reserved, answer.policy, answer.reason) == (reserved, policy, reason)
        assert answer.source == (HEADER if reserved is not None else None)
        assert answer.policy_source == (HEADER if policy is not None else None)


def test_the_header_fields_say_what_they_ignored():
    assert header_reservation({"tdm-reservation": "2"}).problems == (
        "header tdm-reservation: 2: neither 0 nor 1, read as unset",
    )
    assert header_reservation({"tdm-reservation": "0, 1"}).problems == (
        "tdm-reservation says both 0 and 1: 1 (reserved) is kept",
    )
    assert header_reservation({"tdm-policy": ["https://a/p", "https://b/p"]}).problems == (
        "several tdm-policy values: the first, https://a/p, is kept",
    )
    assert header_reservation({"content-type": "text/html"}) == UNSET
    with pytest.raises(TypeError, match="headers must be a mapping"):
        header_reservation(["tdm-reservation: 1"])


REPORT_HTML = b"""<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="tdm-reservation" content="1">
    <meta name="tdm-policy" content="https://provider.com/policies/policy.json">
    <title>Document title</title>
  </head>
  <body>
    ...
  </body>
</html>"""


@pytest.mark.parametrize(
    ("html", "reserved", "policy"),
    [
        (REPORT_HTML, True, "https://provider.com/policies/policy.json"),
        (b'<head><meta name="tdm-reservation" content="0">', False, None),
        (b"<HEAD><META CONTENT=' 1 ' NAME='TDM-Reservation'></HEAD>", True, None),
        (b"<head><meta name=tdm-reservation content=1>", True, None),
        (b'<head><meta name="tdm-reservation" content="2">', None, None),
        (b'<head><meta name="tdm-reservation">', None, None),  # no content: ignored
        (b'<head><meta name="tdm-reservation" content="0"><meta name="tdm-reservation" content="1">', True, None),
        (
            b'<head><meta name="tdm-policy" content="https://p.example/?a=1&amp;b=2">',
            None,
            "https://p.example/?a=1&b=2",
        ),
        (b'<head></head><body><meta name="tdm-reservation" content="1">', None, None),  # in the body
        (b'<head><!-- <meta name="tdm-reservation" content="1"> --></head>', None, None),
        (b"<head><script>s = '<meta name=tdm-reservation content=1>'</script></head>", None, None),
        (b"<head><title>" + b"x" * (64 * 1024) + b'</title><meta name="tdm-reservation" content="1">', None, None),
        (b'<meta name="tdm-reservation" content="1">', True, None),  # no head tag: the top
        (b"", None, None),
    ],
)
def test_the_meta_tags(html, reserved, policy):
    answer = meta_reservation(html)
    assert (answer.reserved, answer.policy) == (reserved, policy)
    assert answer.source == (META if reserved is not None else None)
    if reserved is not None:
        assert answer.reason == f'<meta name="tdm-reservation" content="{int(reserved)}">'
    if html == b'<head><meta name="tdm-reservation">':
        assert answer.problems == ('<meta name="tdm-reservation"> without content: ignored',)


# -- the report's processing priority ---------------------------------------------------

_FILE_BODY = {
    0: tdmrep({"location": "/", "tdm-reservation": 0}),
    1: tdmrep({"location": "/", "tdm-reservation": 1}),
    None: tdmrep({"location": "/other/", "tdm-reservation": 1}),  # a file that says nothing here
}
_HEADERS = {0: {"tdm-reservation": "0"}, 1: {"tdm-reservation": "1"}, None: {}}
_META = {
    0: b'<head><meta name="tdm-reservation" content="0">',
    1: b'<head><meta name="tdm-reservation" content="1">',
    None: b"<head><title>t</title>",
}


@pytest.mark.parametrize(("in_file", "in_header", "in_meta"), list(itertools.product((None, 0, 1), repeat=3)))
def test_every_combination_of_file_header_and_meta(in_file, in_header, in_meta):
    answer = combine(
        parse_tdmrep(_FILE_BODY[in_file]).reservation("/page"),
        header_reservation(_HEADERS[in_header]),
        meta_reservation(_META[in_meta]),
    )
    # The last source that states a value decides; an absent one never resets it.
    stated = [
        (source, value)
        for source, value in ((FILE, in_file), (HEADER, in_header), (META, in_meta))
        if value is not None
    ]
    if not stated:
        assert (answer.reserved, answer.source) == (None, None)
        assert answer.reason == "no rule of tdmrep.json matches /page"
    else:
        source, value = stated[-1]
        assert (answer.reserved, answer.source) == (bool(value), source)
        assert (
            answer.reason
            == {
                FILE: f'tdmrep.json rule 1 ({{"location": "/", "tdm-reservation": {value}}})',
                HEADER: f"header tdm-reservation: {value}",
                META: f'<meta name="tdm-reservation" content="{value}">',
            }[source]
        )
        assert answer.rule == (1 if source == FILE else None)


def test_the_policy_is_superseded_on_its_own_and_dropped_when_not_reserved():
    site = parse_tdmrep(tdmrep({"location": "/", "tdm-reservation": 1, "tdm-policy": "https://pub.example/file"}))
    from_file = site.reservation("/a")
    # A header that states a policy only: the file's reservation stays, its policy goes.
    answer = combine(from_file, header_reservation({"tdm-policy": "https://pub.example/header"}), None)
    assert (answer.reserved, answer.source, answer.policy, answer.policy_source) == (
        True,
        FILE,
        "https://pub.example/header",
        HEADER,
    )
    assert answer.explain() == (
        'TDM reserved: tdmrep.json rule 1 ({"location": "/", "tdm-reservation": 1, "tdm-policy": '
        '"https://pub.example/file"}); tdm-policy https://pub.example/header (header tdm-policy: https://pub.example/header)'
    )
    # A header that reserves without a policy: the file's policy stays.
    answer = combine(from_file, header_reservation({"tdm-reservation": "1"}), None)
    assert (answer.source, answer.policy, answer.policy_source) == (HEADER, "https://pub.example/file", FILE)
    # A meta tag that lifts the reservation: the policy is not for this resource any more.
    answer = combine(from_file, None, meta_reservation(b'<meta name="tdm-reservation" content="0">'))
    assert (answer.reserved, answer.source, answer.policy) == (False, META, None)
    assert answer.problems[-1].endswith("ignored: TDM rights are not reserved")


def test_an_unset_value_never_resets_one_already_set():
    reserved = parse_tdmrep(tdmrep({"location": "/", "tdm-reservation": 1})).reservation("/a")
    answer = combine(reserved, header_reservation({"tdm-reservation": "2"}), meta_reservation(b"<meta name=x>"))
    assert (answer.reserved, answer.source) == (True, FILE)
    assert answer.problems == ("header tdm-reservation: 2: neither 0 nor 1, read as unset",)
    # An unusable file, a header, nothing on the page: the header decides, the file's error is said.
    broken = parse_tdmrep(b"{}").reservation("/a")
    answer = combine(broken, header_reservation({"tdm-reservation": "1"}), None)
    assert (answer.reserved, answer.source) == (True, HEADER)
    assert answer.problems == ("tdmrep.json: not-an-array: a JSON object; the rules must be in an array, [{...}, ...]",)
    # Nothing consulted at all.
    assert combine(None, None, None) == UNSET == Answer()
    assert UNSET.explain() == "TDM unset: nothing stated"


def test_importing_tdmrep_does_not_import_scrapy() -> None:
    code = (
        "import sys\n"
        "import scrapy_robots.tdmrep as t\n"
        't.parse_tdmrep(b\'[{"location": "/", "tdm-reservation": 1}]\').reservation(\'http://a/x\')\n'
        "t.meta_reservation(b'<meta name=tdm-reservation content=1>')\n"
        "bad = sorted(m for m in sys.modules if m == 'scrapy' or m.startswith(('scrapy.', 'twisted')))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "body",
    [
        b"<html><body>Not Found</body></html>",
        b"\n  <!DOCTYPE html>\n<html lang=en><head><title>Home</title></head></html>",
        b"<HEAD><meta charset=latin-1><title>Caf\xe9</title></HEAD>",  # not UTF-8: a page first
        b"<!doctype html><html>" + b" " * MAX_BYTES + b"</html>",  # over the cap: a page first
    ],
)
def test_an_html_page_is_no_file_not_a_broken_one(body):
    # Issue #48: a site answering every path with a page is the common site without TDMRep.
    site = parse_tdmrep(body)
    assert not site.ok and site.error.kind == HTML_PAGE and site.rules == ()
    assert site.error.message == "an HTML page, not a tdmrep.json: the site does not implement TDMRep"
    answer = site.reservation("https://site.example/anything")
    assert (answer.reserved, answer.source, answer.rule, answer.problems) == (None, None, None, ())
    assert answer.reason == "tdmrep.json: an HTML page, not a tdmrep.json: the site does not implement TDMRep"
    # JSON that merely mentions a page stays JSON.
    assert parse_tdmrep(b'[{"location": "/<html>", "tdm-reservation": 1}]').ok
