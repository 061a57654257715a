"""AI usage preferences read from robots.txt and the Content-Usage header (no crawl)."""

from __future__ import annotations

import pytest

from scrapy_robots.rfc9309 import RobotsTxt
from scrapy_robots.settings.parts import usage_config
from scrapy_robots.usage import (
    header_preference,
    parse_content_signal,
    parse_content_usage,
    parse_sf_dictionary,
    preference,
    site_preferences,
)

SAMPLE = """\
# Sample file written for these tests.
User-agent: *
Content-Signal: search=yes, ai-input=yes, ai-train=no
Content-Usage: /open/ train-ai=y
Allow: /

User-agent: FooBot
Content-Usage: train-genai=n
Content-Usage: /datasets/ train-ai=y
Disallow: /private
"""


def test_group_scoped_signal_denies_training_for_everyone():
    found = preference(SAMPLE.encode(), "OtherBot", "https://a.example/page", "train-ai")
    assert found.decision == "deny"
    assert found.line == 3
    assert found.text == "Content-Signal: search=yes, ai-input=yes, ai-train=no"
    assert "line 3" in found.reason


def test_the_other_vocabulary_names_the_same_purpose():
    # ai-train (Content-Signal's name) is train-ai; ai-input is Content-Usage's ai-use.
    assert preference(SAMPLE, "OtherBot", "/page", "ai-train").decision == "deny"
    assert preference(SAMPLE, "OtherBot", "/page", "ai-input").decision == "allow"
    assert preference(SAMPLE, "OtherBot", "/page", "search").line == 3


def test_path_scoped_usage_and_a_conflicting_signal_deny_wins():
    # /open/ says train-ai=y, the group's Content-Signal says ai-train=no: a "no" wins.
    found = preference(SAMPLE, "OtherBot", "/open/x", "train-ai")
    assert found.decision == "deny" and found.line == 3


def test_named_group_longest_scope_and_no_parent_label():
    # FooBot's own group: train-genai=n (an earlier draft's label, read as train-ai)
    # everywhere, train-ai=y under /datasets/.
    assert preference(SAMPLE, "FooBot/1.0", "/x", "train-genai").decision == "deny"
    assert preference(SAMPLE, "FooBot/1.0", "/x", "train-ai").decision == "deny"
    scoped = preference(SAMPLE, "FooBot", "/datasets/a", "train-genai")
    # The /datasets/ scope is longer: its train-ai=y decides.
    assert scoped.decision == "allow" and scoped.line == 9
    assert preference(SAMPLE, "FooBot", "/x", "search").stated is False
    assert preference(SAMPLE, "FooBot", "/x", "search").decision == "allow"


def test_unstated_is_allowed_and_a_file_without_lines_keeps_nothing():
    assert site_preferences(b"User-agent: *\nDisallow: /a\n") is None
    found = preference(b"User-agent: *\nDisallow: /a\n", "Bot", "/a", "search")
    assert found.decision == "allow" and not found.stated


def test_malformed_lines_are_ignored_and_a_stray_signal_is_read_for_everyone():
    text = "Content-Signal: ai-train=no\nUser-agent: *\nContent-Usage: train-ai=n,\nContent-Signal: ai_train=no\n"
    robots = RobotsTxt.parse(text)
    assert robots.stray_preferences == ((1, "ai-train=no"),)
    assert preference(robots, "Bot", "/", "train-ai").stated is False  # a RobotsTxt cannot tell
    assert preference(site_preferences(text), "Bot", "/", "train-ai").line == 1
    assert preference(text.replace("Content-Signal: ai-train=no\nU", "U"), "Bot", "/", "train-ai").stated is False


def test_explain_includes_the_preference_lines():
    explanation = RobotsTxt.parse(SAMPLE).explain("https://a.example/x", "FooBot")
    assert explanation.preferences == (
        (8, "Content-Usage", "train-genai=n"),
        (9, "Content-Usage", "/datasets/ train-ai=y"),
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("train-ai=n", {"train-ai": "n"}),
        ("train-ai=n, search=y", {"train-ai": "n", "search": "y"}),
        ('a="x\\"y";p=1, b=?1, c=(1 2);q, d=:aGk=:, e=-1.5, f', None),
        ("Train-AI=n", None),
        ("train-ai=n,", None),
        ("train-ai=", None),
        ("train-ai=n search=y", None),
        ("train-ai=\u00fc", None),
        ("", {}),
    ],
)
def test_structured_field_dictionary(text, expected):
    parsed = parse_sf_dictionary(text)
    if expected is None and text.startswith("a="):
        assert parsed == {"a": 'x"y', "b": True, "c": [1, 2], "d": b"aGk=", "e": -1.5, "f": True}
    else:
        assert parsed == expected


def test_vocabulary_values():
    assert parse_content_usage("train-ai=n, search=y, bots=maybe") == {"train-ai": False, "search": True}
    assert parse_content_usage("bots=n") == {"bots": False}  # kept, and read by no purpose
    assert parse_content_usage('train-ai="n"') == {}
    assert parse_content_signal("Search=Yes, ai-train=no") == {"search": True, "ai-train": False}
    assert parse_content_signal("search yes") is None


def test_header():
    assert header_preference("train-ai=n", "train-genai").decision == "deny"
    assert header_preference("bots=n", "search").stated is False  # vocab-08: no umbrella
    assert header_preference("search=n", "search").decision == "deny"
    assert header_preference("search=y", "train-ai").stated is False
    assert header_preference("train-ai=n;;", "train-ai") is None
    assert header_preference(None, "train-ai").stated is False


def test_settings():
    assert usage_config({}) is None
    assert usage_config({"ROBOTSTXT_USAGE": "ai-train, search"}).purposes == ("train-ai", "search")
    assert usage_config({"ROBOTSTXT_USAGE": '["ai-input"]'}).purposes == ("ai-use",)
    with pytest.raises(ValueError, match="ROBOTSTXT_USAGE: unknown purpose 'ai_train'"):
        usage_config({"ROBOTSTXT_USAGE": ["ai_train"]})
    with pytest.raises(ValueError, match="ROBOTSTXT_USAGE must be a list"):
        usage_config({"ROBOTSTXT_USAGE": 3})
    with pytest.raises(ValueError, match="ROBOTSTXT_USAGE_MODE"):
        usage_config({"ROBOTSTXT_USAGE": ["search"], "ROBOTSTXT_USAGE_MODE": "drop"})


@pytest.mark.parametrize("name", ["ProtegoParser", "PythonParser", "RerpParser"])
def test_other_backends_say_they_cannot_read_the_lines(name):
    import scrapy_robots.parsers as parsers

    cls = getattr(parsers, name)
    assert not cls.supports(parsers.CONTENT_USAGE)
    with pytest.raises(parsers.DirectiveNotSupported):
        cls(SAMPLE.encode(), "FooBot").usage_preferences()


def test_our_backend_reads_the_lines():
    from scrapy_robots.parsers import CONTENT_USAGE, RFC9309Parser

    assert RFC9309Parser.supports(CONTENT_USAGE)
    assert RFC9309Parser(SAMPLE.encode(), "FooBot").usage_preferences() == (
        (8, "Content-Usage", "train-genai=n"),
        (9, "Content-Usage", "/datasets/ train-ai=y"),
    )
