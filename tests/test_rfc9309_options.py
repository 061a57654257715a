"""The options where conventions conflict, and the Scrapy settings that set them.

Each test is the example from docs/rfc9309.rst that shows the difference.
"""

from __future__ import annotations

import pytest
from scrapy.utils.test import get_crawler

from scrapy_robots.parsers import RFC9309Parser
from scrapy_robots.parsers.base import RequestRate
from scrapy_robots.rfc9309 import Options, RobotsTxt

URL = "https://example.com"


# --- precedence ---------------------------------------------------------------

PRECEDENCE_EXAMPLE = "User-agent: *\nAllow: /\nDisallow: /private\n"


def test_longest_match_lets_the_more_specific_rule_win() -> None:
    robots = RobotsTxt.parse(PRECEDENCE_EXAMPLE)
    assert not robots.allowed(URL + "/private/x")


def test_first_match_lets_the_earlier_rule_win() -> None:
    robots = RobotsTxt.parse(PRECEDENCE_EXAMPLE, precedence="first")
    assert robots.allowed(URL + "/private/x")
    assert robots.explain(URL + "/private/x").rule.line == 2  # type: ignore[union-attr]


def test_first_match_with_many_rules_picks_the_earliest_line() -> None:
    body = "User-agent: *\n" + "".join(f"Disallow: /p{i}\n" for i in range(200)) + "Allow: /p1\n"
    robots = RobotsTxt.parse(body, precedence="first")
    assert not robots.allowed(URL + "/p1")
    assert robots.explain(URL + "/p123").rule.line == 2 + 1  # "Disallow: /p1" comes first


# --- wildcards ----------------------------------------------------------------

WILDCARD_EXAMPLE = "User-agent: *\nDisallow: /*.pdf$\n"


def test_wildcards_on() -> None:
    robots = RobotsTxt.parse(WILDCARD_EXAMPLE)
    assert not robots.allowed(URL + "/docs/a.pdf")
    assert robots.allowed(URL + "/*.pdf$")


def test_wildcards_off_reads_patterns_literally() -> None:
    robots = RobotsTxt.parse(WILDCARD_EXAMPLE, wildcards=False)
    assert robots.allowed(URL + "/docs/a.pdf")
    assert not robots.allowed(URL + "/*.pdf$")


# --- empty rules --------------------------------------------------------------

EMPTY_EXAMPLE = "User-agent: *\nDisallow:\nDisallow: /private\n"


def test_empty_disallow_is_ignored_by_default() -> None:
    robots = RobotsTxt.parse(EMPTY_EXAMPLE, precedence="first")
    assert not robots.allowed(URL + "/private")


def test_empty_disallow_allows_everything_when_asked() -> None:
    robots = RobotsTxt.parse(EMPTY_EXAMPLE, precedence="first", empty_rules="allow-all")
    assert robots.allowed(URL + "/private")
    rule = robots.explain(URL + "/private").rule
    assert rule is not None and rule.line == 2 and rule.text == "Disallow: "


def test_empty_rules_under_longest_match_only_decide_when_nothing_else_matches() -> None:
    robots = RobotsTxt.parse(EMPTY_EXAMPLE, empty_rules="allow-all")
    assert not robots.allowed(URL + "/private")
    assert robots.explain(URL + "/public").rule.line == 2  # type: ignore[union-attr]


# --- agent matching -----------------------------------------------------------

AGENT_EXAMPLE = "User-agent: *\nDisallow: /\n\nUser-agent: Googlebot\nAllow: /\n"


def test_token_matching_needs_the_whole_token() -> None:
    robots = RobotsTxt.parse(AGENT_EXAMPLE)
    assert not robots.allowed(URL + "/x", "Googlebot-Image/1.0")
    assert robots.allowed(URL + "/x", "Googlebot/2.1")


def test_substring_matching_finds_the_name_anywhere() -> None:
    robots = RobotsTxt.parse(AGENT_EXAMPLE, agent_matching="substring")
    assert robots.allowed(URL + "/x", "Googlebot-Image/1.0")
    assert not robots.allowed(URL + "/x", "FooBot/1.0")


# --- product tokens -----------------------------------------------------------

TOKENS_EXAMPLE = "User-agent: Ai2Bot-Dolma\nDisallow: /\n\nUser-agent: AI2Bot\nAllow: /\n\nUser-agent: *\nDisallow: /\n"


def test_names_with_digits_are_read_whole_by_default() -> None:
    robots = RobotsTxt.parse(TOKENS_EXAMPLE)
    assert not robots.allowed(URL + "/x", "Ai2Bot-Dolma/1.0")
    assert robots.allowed(URL + "/x", "AI2Bot/1.0")
    assert not robots.allowed(URL + "/x", "Ai")


def test_rfc9309_product_tokens_read_the_lines_as_google_does() -> None:
    robots = RobotsTxt.parse(TOKENS_EXAMPLE, product_tokens="rfc9309")
    # Both lines name "ai": no group is Ai2Bot-Dolma's, nor AI2Bot's; "Ai" obeys both, merged.
    assert not robots.allowed(URL + "/x", "Ai2Bot-Dolma/1.0")
    assert not robots.allowed(URL + "/x", "AI2Bot/1.0")
    assert robots.allowed(URL + "/x", "Ai")


# --- validation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("precedence", "shortest"),
        ("wildcards", "yes"),
        ("empty_rules", "deny"),
        ("agent_matching", "regex"),
        ("product_tokens", "google"),
    ],
)
def test_bad_option_values_are_rejected(option: str, value: object) -> None:
    with pytest.raises(ValueError, match=option):
        RobotsTxt.parse("", **{option: value})  # type: ignore[arg-type]


# --- the Scrapy adapter -------------------------------------------------------


def parser(settings: dict[str, object], body: bytes = b"") -> RFC9309Parser:
    return RFC9309Parser.from_crawler(get_crawler(settings_dict=settings), body)


def test_adapter_reads_every_setting() -> None:
    rp = parser(
        {
            "ROBOTSTXT_RFC9309_PRECEDENCE": "first",
            "ROBOTSTXT_RFC9309_WILDCARDS": "False",
            "ROBOTSTXT_RFC9309_EMPTY_RULES": "allow-all",
            "ROBOTSTXT_RFC9309_AGENT_MATCHING": "substring",
            "ROBOTSTXT_RFC9309_PRODUCT_TOKENS": "RFC9309",
        }
    )
    assert rp.rp.options == Options("first", False, "allow-all", "substring", "rfc9309")
    assert parser({}).rp.options == Options()


@pytest.mark.parametrize(
    ("setting", "value", "fix"),
    [
        ("ROBOTSTXT_RFC9309_PRECEDENCE", "shortest", "'longest' or 'first'"),
        ("ROBOTSTXT_RFC9309_WILDCARDS", "perhaps", "True or False"),
        ("ROBOTSTXT_RFC9309_EMPTY_RULES", "deny", "'ignore' or 'allow-all'"),
        ("ROBOTSTXT_RFC9309_AGENT_MATCHING", "regex", "'token' or 'substring'"),
        ("ROBOTSTXT_RFC9309_PRODUCT_TOKENS", "google", "'names' or 'rfc9309'"),
    ],
)
def test_adapter_names_the_bad_setting_and_the_fix(setting: str, value: str, fix: str) -> None:
    with pytest.raises(ValueError) as error:
        parser({setting: value})
    assert setting in str(error.value) and fix in str(error.value)


def test_adapter_answers_every_directive() -> None:
    body = (
        b"User-agent: FooBot\nDisallow: /private\nCrawl-delay: 2.5\nRequest-rate: 3/10s\n"
        b"Sitemap: https://example.com/s.xml\nHost: example.com\n"
    )
    rp = parser({"USER_AGENT": "Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example)"}, body)
    assert all(rp.supports(directive) for directive in ("allow", "crawl-delay", "request-rate", "sitemap", "host"))
    assert not rp.allowed(URL + "/private/x")
    assert rp.allowed(URL + "/private/x", "OtherBot")
    assert rp.crawl_delay() == 2.5
    assert rp.request_rate() == RequestRate(3, 10.0)
    assert isinstance(rp.request_rate(), RequestRate)
    assert rp.sitemaps() == ["https://example.com/s.xml"]
    assert rp.preferred_host() == "example.com"
    assert rp.explain(URL + "/private/x").rule.line == 2  # type: ignore[union-attr]
    assert rp.crawl_delay(b"OtherBot") is None
