"""The RobotParser interface: Scrapy's parser classes and users' own fit where ours do."""

from __future__ import annotations

import subprocess
import sys

import pytest
from scrapy.robotstxt import ProtegoRobotParser, PythonRobotParser
from scrapy.utils.test import get_crawler

from scrapy_robots.parsers import (
    ALLOW,
    CRAWL_DELAY,
    HOST,
    SITEMAP,
    DirectiveNotSupported,
    ProtegoParser,
    ReppyParser,
    RobotParser,
    ScrapyRobotParser,
    as_robot_parser,
)

BODY = b"User-agent: FooBot\nDisallow: /foo\nCrawl-delay: 3\n\nUser-agent: *\nDisallow: /\n"


def test_from_crawler_takes_default_agent_from_settings():
    crawler = get_crawler(settings_dict={"ROBOTSTXT_USER_AGENT": "FooBot"})
    parser = ProtegoParser.from_crawler(crawler, BODY)
    assert parser.user_agent == "FooBot"
    assert parser.allowed("https://example.com/bar")  # FooBot's group, not "*"
    assert parser.crawl_delay() == 3.0


def test_our_parser_reads_its_settings_once_per_crawler_not_once_per_robots_txt(monkeypatch):
    from scrapy_robots.parsers import RFC9309Parser
    from scrapy_robots.settings.config import RobotsConfig

    reads = []
    read = RobotsConfig.from_settings
    monkeypatch.setattr(RobotsConfig, "from_settings", lambda settings: reads.append(settings) or read(settings))
    first = get_crawler(settings_dict={"ROBOTSTXT_USER_AGENT": "FooBot", "ROBOTSTXT_RFC9309_PRECEDENCE": "first"})
    other = get_crawler(settings_dict={"ROBOTSTXT_USER_AGENT": "OtherBot"})
    parsers = [RFC9309Parser.from_crawler(crawler, BODY) for crawler in (first, first, first, other, other)]
    assert len(reads) == 2  # one per crawler
    # Each crawler's own agent and options, however many files are parsed.
    assert [p.user_agent for p in parsers] == ["FooBot"] * 3 + ["OtherBot"] * 2
    first_match = RFC9309Parser.from_crawler(first, b"User-agent: *\nDisallow: /a\nAllow: /a/b\n")
    assert not first_match.allowed("https://example.com/a/b")  # the first matching rule decides
    longest = RFC9309Parser.from_crawler(other, b"User-agent: *\nDisallow: /a\nAllow: /a/b\n")
    assert longest.allowed("https://example.com/a/b")


def test_from_crawler_falls_back_to_user_agent_setting():
    crawler = get_crawler(settings_dict={"USER_AGENT": "Mozilla/5.0 (compatible; FooBot/1.0)"})
    parser = ProtegoParser.from_crawler(crawler, BODY)
    assert parser.allowed("https://example.com/bar")
    assert not parser.allowed("https://example.com/foo")


def test_scrapy_parser_class_wrapped():
    crawler = get_crawler()
    wrapped = as_robot_parser(ProtegoRobotParser.from_crawler(crawler, BODY), "FooBot")
    assert isinstance(wrapped, ScrapyRobotParser)
    assert not wrapped.allowed("https://example.com/foo")
    assert wrapped.allowed("https://example.com/bar")
    if hasattr(ProtegoRobotParser, "crawl_delay"):
        # Scrapy's Protego class overrides crawl_delay (in newer Scrapy: 2.18 does,
        # 2.16 does not), so it is supported ...
        assert wrapped.supports(CRAWL_DELAY)
        assert wrapped.crawl_delay() == 3.0
    else:
        assert not wrapped.supports(CRAWL_DELAY)
        with pytest.raises(DirectiveNotSupported):
            wrapped.crawl_delay()
    # ... and what Scrapy's interface lacks is reported as unsupported, not as absent.
    assert not wrapped.supports(SITEMAP)
    with pytest.raises(DirectiveNotSupported):
        wrapped.sitemaps()
    with pytest.raises(DirectiveNotSupported):
        wrapped.preferred_host()


def test_scrapy_python_parser_wrapped():
    wrapped = as_robot_parser(PythonRobotParser.from_crawler(get_crawler(), BODY), "FooBot")
    assert not wrapped.allowed("https://example.com/foo")


class AllowedOnly:
    """A user's own parser with nothing but allowed(), duck-typed."""

    def __init__(self, body: bytes):
        self.body = body

    @classmethod
    def from_crawler(cls, crawler, robotstxt_body):
        return cls(robotstxt_body)

    def allowed(self, url, user_agent):
        return b"/secret" not in self.body or "/secret" not in url


def test_users_own_class_with_only_allowed():
    wrapped = as_robot_parser(AllowedOnly.from_crawler(None, b"Disallow: /secret"))
    assert wrapped.supports(ALLOW)
    for directive in (CRAWL_DELAY, SITEMAP, HOST):
        assert not wrapped.supports(directive)
    assert not wrapped.allowed("https://example.com/secret/1")
    assert wrapped.allowed("https://example.com/open")
    with pytest.raises(DirectiveNotSupported, match="AllowedOnly cannot read the 'crawl-delay'"):
        wrapped.crawl_delay()


def test_not_a_parser_is_a_clear_error():
    with pytest.raises(TypeError, match="no allowed"):
        as_robot_parser(object())


def test_users_subclass_of_our_interface():
    class DenyAll(RobotParser):
        def allowed(self, url, user_agent=None):
            return False

    parser = DenyAll.from_crawler(get_crawler(), b"")
    assert as_robot_parser(parser) is parser
    assert not parser.allowed("https://example.com/")
    with pytest.raises(DirectiveNotSupported):
        parser.crawl_delay()


def test_reppy_missing_names_the_recipe():
    # A real interpreter in which reppy cannot be imported (sys.modules blocks it).
    code = (
        "import sys; sys.modules['reppy'] = None; sys.modules['reppy.robots'] = None\n"
        "from scrapy_robots.parsers import ReppyParser\n"
        "try:\n    ReppyParser(b'')\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "make reppy" in out.stdout
    assert "ROBOTSTXT_PARSER" in out.stdout


def test_reppy_installed_here():
    # `make test` builds reppy with the recipe; this proves the backend is really tested.
    assert ReppyParser(BODY, "FooBot").crawl_delay() == 3.0


def test_importing_parsers_does_not_import_backends():
    code = (
        "import sys, scrapy_robots.parsers\n"
        "print(sorted(m for m in ('reppy', 'robotexclusionrulesparser', 'protego') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
