"""explain(): which group applied and which line decided."""

from __future__ import annotations

from scrapy_robots.rfc9309 import RobotsTxt, Rule

BODY = """\
# example
User-agent: *
Disallow: /

User-agent: FooBot
User-agent: BarBot
Disallow: /private
Allow: /private/ok

User-agent: foobot
Disallow: /*.pdf$
"""
URL = "https://example.com"


def test_names_the_rule_and_every_group_line() -> None:
    explanation = RobotsTxt.parse(BODY).explain(URL + "/private/x", "Mozilla/5.0 (compatible; FooBot/1.0)")
    assert not explanation.allowed
    assert explanation.user_agent == "FooBot"
    assert explanation.group_lines == ((5, "FooBot"), (10, "foobot"))
    assert explanation.rule == Rule(7, False, "/private", "Disallow")
    assert explanation.rule.text == "Disallow: /private"
    assert "line 7 (Disallow: /private)" in str(explanation)
    assert str(explanation).startswith("disallowed: ")


def test_longest_match_is_the_one_named() -> None:
    explanation = RobotsTxt.parse(BODY).explain(URL + "/private/ok/1", "FooBot")
    assert explanation.allowed and explanation.rule is not None and explanation.rule.line == 8


def test_rule_from_a_merged_group() -> None:
    explanation = RobotsTxt.parse(BODY).explain(URL + "/a.pdf", "FooBot")
    assert explanation.rule is not None and explanation.rule.line == 11


def test_fallback_group() -> None:
    explanation = RobotsTxt.parse(BODY).explain(URL + "/x", "OtherBot")
    assert explanation.group_lines == ((2, "*"),)
    assert explanation.rule is not None and explanation.rule.line == 3


def test_no_rule_matched() -> None:
    explanation = RobotsTxt.parse(BODY).explain(URL + "/public", "BarBot")
    assert explanation.allowed and explanation.rule is None
    assert explanation.group_lines == ((6, "BarBot"),)
    assert "no rule" in explanation.reason


def test_no_group_applies() -> None:
    explanation = RobotsTxt.parse("User-agent: BarBot\nDisallow: /\n").explain(URL + "/x", "FooBot")
    assert explanation.allowed and explanation.group_lines == () and explanation.rule is None
    assert "no group" in explanation.reason


def test_robots_txt_itself() -> None:
    explanation = RobotsTxt.parse(BODY).explain(URL + "/robots.txt", "OtherBot")
    assert explanation.allowed and explanation.rule is None and "always allowed" in explanation.reason


def test_path_is_shown_normalised() -> None:
    explanation = RobotsTxt.parse(BODY).explain(URL + "/caf\u00e9%7e#frag", "OtherBot")
    assert explanation.path == "/caf%C3%A9~"


def test_agrees_with_allowed_on_every_line_kind() -> None:
    robots = RobotsTxt.parse(BODY)
    for path in ("/", "/private", "/private/ok", "/a.pdf", "/a.pdf?x", "/robots.txt", "/index.html"):
        for agent in ("FooBot", "BarBot", "x", "*"):
            assert robots.explain(URL + path, agent).allowed is robots.allowed(URL + path, agent)
