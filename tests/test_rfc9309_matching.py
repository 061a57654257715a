"""RFC 9309 matching: groups, product tokens, longest match, wildcards, percent-encoding."""

from __future__ import annotations

import random

import pytest

from scrapy_robots.rfc9309 import RobotsTxt

URL = "https://example.com"


def allowed(body: str | bytes, path: str, agent: str = "FooBot") -> bool:
    return RobotsTxt.parse(body).allowed(URL + path, agent)


# --- groups (RFC 9309 2.1, 2.2.1) -------------------------------------------


def test_specific_group_wins_over_star_group() -> None:
    body = "User-agent: *\nDisallow: /\n\nUser-agent: FooBot\nDisallow: /private\n"
    assert allowed(body, "/public")
    assert not allowed(body, "/private")
    assert not allowed(body, "/public", agent="OtherBot")


def test_product_token_is_case_insensitive() -> None:
    body = "User-agent: foobot\nDisallow: /x\n"
    assert not allowed(body, "/x", agent="FOOBOT")


def test_several_user_agent_lines_form_one_group() -> None:
    body = "User-agent: a\nUser-agent: FooBot\nUser-agent: b\nDisallow: /x\n"
    assert not allowed(body, "/x")
    assert not allowed(body, "/x", agent="b")
    assert allowed(body, "/x", agent="c")


def test_groups_for_the_same_agent_are_merged() -> None:
    body = "User-agent: FooBot\nDisallow: /a\n\nUser-agent: other\nDisallow: /\n\nUser-agent: foobot\nDisallow: /b\n"
    assert not allowed(body, "/a")
    assert not allowed(body, "/b")
    assert allowed(body, "/c")


def test_star_groups_are_merged_and_used_as_fallback() -> None:
    body = "User-agent: *\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n"
    assert not allowed(body, "/a")
    assert not allowed(body, "/b")
    assert allowed(body, "/c")


def test_a_named_group_without_rules_allows_everything() -> None:
    # The named group is obeyed even though it is empty: no fallback to "*".
    body = "User-agent: *\nDisallow: /\n\nUser-agent: FooBot\nDisallow:\n"
    assert allowed(body, "/anything")


def test_no_matching_group_allows_everything() -> None:
    assert allowed("User-agent: other\nDisallow: /\n", "/x")
    assert allowed("", "/x")


def test_rules_before_any_user_agent_are_ignored() -> None:
    assert allowed("Disallow: /\nUser-agent: *\nDisallow: /x\n", "/y")


def test_sitemap_and_other_records_do_not_end_a_group() -> None:
    # RFC 9309 2.2.4: "a Sitemaps record MUST NOT terminate a group".
    body = "User-agent: FooBot\nSitemap: https://example.com/s.xml\nCrawl-delay: 1\nUser-agent: b\nDisallow: /\n"
    assert not allowed(body, "/x")


def test_full_user_agent_header_selects_the_product_token_group() -> None:
    body = "User-agent: FooBot\nDisallow: /\n"
    assert not allowed(body, "/x", agent="Mozilla/5.0 (compatible; FooBot/2.1; +https://foo.example/bot)")
    assert not allowed(body, "/x", agent="FooBot/2.1")


def test_user_agent_line_is_read_up_to_its_token() -> None:
    assert not allowed("User-agent: FooBot/1.0\nDisallow: /\n", "/x")
    assert not allowed("User-agent: * comment\nDisallow: /\n", "/x")
    assert allowed("User-agent: FooBotter\nDisallow: /\n", "/x")


# --- precedence (2.2.2) -------------------------------------------------------


def test_longest_match_wins() -> None:
    body = "User-agent: *\nAllow: /\nDisallow: /cgi-bin\nAllow: /cgi-bin/public\n"
    assert allowed(body, "/page")
    assert not allowed(body, "/cgi-bin/x")
    assert allowed(body, "/cgi-bin/public/x")


def test_allow_wins_a_tie() -> None:
    assert allowed("User-agent: *\nDisallow: /page\nAllow: /page\n", "/page")
    assert allowed("User-agent: *\nDisallow: /*.html\nAllow: /pag*ml\n", "/page.html")


def test_wildcard_length_counts_in_priority() -> None:
    # The "*" counts: "/*/private" (10 characters) beats "/a/privat" (9).
    body = "User-agent: *\nDisallow: /*/private\nAllow: /a/privat\n"
    assert not allowed(body, "/a/private")


# --- wildcards ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("/fish*", "/fish.html", True),
        ("/fish*", "/Fish", False),
        ("/*.php", "/index.php", True),
        ("/*.php", "/folder/filename.php?parameters", True),
        ("/*.php", "/windows.PHP", False),
        ("/*.php$", "/filename.php", True),
        ("/*.php$", "/filename.php?parameters", False),
        ("/*.php$", "/filename.php/", False),
        ("/fish*.php", "/fishheads/catfish.php?parameters", True),
        ("/fish*.php", "/Fish.PHP", False),
        ("/a$b", "/a$b", True),
        ("/a**b", "/axxb", True),
        ("*", "/anything", True),
        ("/$", "/", True),
        ("/$", "/x", False),
        ("/*$", "/x", True),
        ("/a*b*c$", "/abcabc", True),
        ("/a*b*c$", "/abcab", False),
        ("fish", "/fish", False),
    ],
)
def test_wildcards(pattern: str, path: str, matches: bool) -> None:
    assert allowed(f"User-agent: *\nDisallow: {pattern}\n", path) is not matches


def test_no_catastrophic_backtracking() -> None:
    body = "User-agent: *\nDisallow: /" + "*a" * 50 + "b\n"
    assert allowed(body, "/" + "a" * 8000)


# --- percent-encoding (2.2.2) -------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("/foo/bar?baz=quz", "/foo/bar?baz=quz"),
        ("/foo/bar/\u30c4", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%62%61%7A", "/foo/bar/baz"),
        ("/foo/bar/baz", "/foo/bar/%62%61%7a"),
        ("/~user", "/%7Euser"),
        ("/foo/bar/\u30c4", "/foo/bar/\u30c4"),
    ],
)
def test_percent_encoded_and_plain_forms_compare_equal(pattern: str, path: str) -> None:
    assert not allowed(f"User-agent: *\nDisallow: {pattern}\n", path)


@pytest.mark.parametrize(
    ("pattern", "path"),
    [("/a%2Fb", "/a/b"), ("/a%2Ab", "/axb"), ("/a%24", "/a")],
)
def test_encoded_reserved_characters_stay_distinct(pattern: str, path: str) -> None:
    assert allowed(f"User-agent: *\nDisallow: {pattern}\n", path)


def test_robots_txt_is_always_allowed() -> None:
    body = "User-agent: *\nDisallow: /\n"
    assert allowed(body, "/robots.txt")
    assert allowed(body, "/robots.txt?x=1")
    assert not allowed(body, "/robots.txt.bak")


def test_url_forms() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /a\nDisallow: /*?q\n")
    assert not robots.allowed("http://example.com/a#frag")
    assert robots.allowed("http://example.com/b#/a")
    assert not robots.allowed("/a/b")
    assert not robots.allowed(b"http://example.com/a")
    assert not robots.allowed("//example.com/a")
    assert not robots.allowed("http://example.com?q=1")
    assert robots.allowed("http://example.com")


def test_url_forms_give_the_same_verdict_in_any_order() -> None:
    # allowed() remembers the last "scheme://host/" it saw to find the next path
    # faster: the verdicts must not depend on which URLs came before.
    body = "User-agent: *\nDisallow: /a\nDisallow: /*?q\nAllow: /a/ok\nDisallow: /c$\n"
    urls = [
        "https://example.com/a",
        "https://example.com/a#x",
        "https://example.com/b#/a",
        "https://example.com/a/ok",
        "http://example.com/a",
        "https://other.example/b",
        "https://example.com",
        "https://example.com?q=1",
        "https://example.com/?q=1",
        "//example.com/a",
        "/a/b",
        "a",
        "https://example.com.evil/a",
        "https://example.com:8080/b",
        "https://user:pw@example.com/a",
        "https://example.com;p/a",
        "https://example.com#/a",
        "https://example.com//a",
        "https://example.com/robots.txt",
        "\nhttps://example.com/a",
        "https://example.com/b#?q",
        "https://example.com/c#x",
        "https://example.com/c",
    ]
    expected = {url: RobotsTxt.parse(body).allowed(url) for url in urls}
    rng = random.Random(13)
    for _ in range(20):
        robots = RobotsTxt.parse(body)
        order = urls * 2
        rng.shuffle(order)
        assert {url: robots.allowed(url) for url in order} == expected
    assert expected == {url: RobotsTxt.parse(body).explain(url).allowed for url in urls}


# --- the file format ------------------------------------------------------------


@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"])
def test_line_endings(newline: str) -> None:
    body = newline.join(["User-agent: *", "Disallow: /x", "", "User-agent: FooBot", "Disallow: /y"])
    assert not allowed(body, "/y")
    assert allowed(body, "/x")


def test_bom_does_not_hide_the_first_line() -> None:
    assert not allowed(b"\xef\xbb\xbfUser-agent: *\nDisallow: /\n", "/x")
    assert not allowed("\ufeffUser-agent: *\nDisallow: /\n", "/x")


def test_comments_and_odd_whitespace() -> None:
    body = "# hello\n  User-agent :\t*  # everyone\n\tDisallow:/x # not /x#y\nDisallow /z\n"
    assert not allowed(body, "/x")
    assert not allowed(body, "/z")
    assert allowed(body, "/y")


def test_key_typos_are_accepted() -> None:
    for key in ("User agent", "useragent", "USER-AGENT"):
        assert not allowed(f"{key}: *\nDisallow: /\n", "/x")
    for key in ("disalow", "dissallow", "Dissalow", "diasllow", "disallaw", "Disallowed"):
        assert not allowed(f"User-agent: *\n{key}: /\n", "/x")


def test_non_ascii_bytes_never_raise_and_match_utf8() -> None:
    assert not allowed("User-agent: *\nDisallow: /caf\u00e9\n".encode(), "/caf%C3%A9")
    assert allowed(b"User-agent: *\nDisallow: /\xff\xfe\n", "/x")


def test_lines_that_do_not_parse_are_skipped() -> None:
    assert not allowed("User-agent: *\nthis line does not parse\nDisallow: /\n", "/x")


def test_at_least_500_kib_are_parsed() -> None:
    filler = "# " + "x" * 1000 + "\n"
    body = "User-agent: *\n" + filler * 600 + "Disallow: /late\n"
    assert len(body) > 500 * 1024
    assert not allowed(body, "/late")
