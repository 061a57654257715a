"""A crawler's name and a User-agent line are read by one function: the crawler obeys
the group written for it, whatever letters its name has."""

from __future__ import annotations

import pytest
from protego import Protego

from scrapy_robots.parsers import ProtegoParser, RFC9309Parser
from scrapy_robots.rfc9309 import agent_key
from scrapy_robots.rfc9309._names import crawler_name, name_key, token_of

# Protego's own test, tests/test_protego.py::test_unicode_url_and_useragent (0.7.0).
UNICODE = """
User-Agent: *
Disallow: /admin/
Disallow: /static/
# taken from https://en.wikipedia.org/robots.txt
Disallow: /wiki/K%C3%A4ytt%C3%A4j%C3%A4:
Disallow: /wiki/Käyttäjä:
Disallow: /wiki/Keskustelu_käyttäjästä:
User-Agent: UnicödeBöt
Disallow: /some/randome/page.html"""

NAMED = """
# robots.txt for http://www.example.com/

User-Agent: Jävla-Foobot
Disallow: /

User-Agent: \u041b\u044c\u0432\u0456\u0432-bot
Disallow: /totalitarianism/
"""

LVIV = "Mozilla/5.0 (compatible; Львів-bot/1.1)"
CASES = [
    (UNICODE, "https://site.local/", "*", True),
    (UNICODE, "https://site.local/admin/", "*", False),
    (UNICODE, "https://site.local/static/", "*", False),
    (UNICODE, "https://site.local/admin/", "UnicödeBöt", True),
    (UNICODE, "https://site.local/wiki/K%C3%A4ytt%C3%A4j%C3%A4:", "*", False),
    (UNICODE, "https://site.local/wiki/Käyttäjä:", "*", False),
    (UNICODE, "https://site.local/wiki/Keskustelu_k%C3%A4ytt%C3%A4j%C3%A4st%C3%A4:", "*", False),
    (UNICODE, "https://site.local/wiki/Keskustelu_käyttäjästä:", "*", False),
    (UNICODE, "https://site.local/some/randome/page.html", "*", True),
    (UNICODE, "https://site.local/some/randome/page.html", "UnicödeBöt", False),
    (NAMED, "https://x.example/foo/bar.html", "jävla-fanbot", True),
    (NAMED, "https://x.example/foo/bar.html", "jävla-foobot", False),
    (NAMED, "https://x.example/", "foobot", True),
    (NAMED, "https://x.example/", LVIV, True),
    (NAMED, "https://x.example/totalitarianism/foo.htm", LVIV, False),
]


@pytest.mark.parametrize(("body", "url", "agent", "allowed"), CASES)
def test_protego_unicode_case_on_our_parser(body, url, agent, allowed):
    assert RFC9309Parser(body.encode()).allowed(url, agent) is allowed


@pytest.mark.parametrize(("body", "url", "agent", "allowed"), CASES)
def test_the_same_answers_as_protego(body, url, agent, allowed):
    assert Protego.parse(body).can_fetch(url, agent) is allowed
    assert ProtegoParser(body.encode()).allowed(url, agent) is allowed


@pytest.mark.parametrize(
    "name",
    ["UnicödeBöt", "FooBot", "FooBot2", "foo-bot_x", "Bär", "Mozilla/5.0 (compatible; UnicödeBöt/1.0)"],
)
def test_a_name_reads_as_its_own_group_s_key(name):
    # The group written for the crawler, "User-agent: <its name>", is the one it obeys.
    line = crawler_name(name)
    assert token_of(name) == agent_key(line) == name_key(line)


def test_a_non_ascii_name_is_not_a_prefix_of_another():
    # "Bö" must not obey "User-agent: Bär": read whole, "bö" and "bär" differ.
    body = b"User-agent: B\xc3\xa4r\nDisallow: /\n"
    assert RFC9309Parser(body).allowed("https://x.example/", "Bö")
    assert not RFC9309Parser(body).allowed("https://x.example/", "Bär")


def test_digits_end_a_name_on_both_sides():
    body = b"User-agent: FooBot2\nDisallow: /\n\nUser-agent: *\nDisallow:\n"
    assert not RFC9309Parser(body).allowed("https://x.example/", "FooBot2")
    assert RFC9309Parser(body).allowed("https://x.example/", "OtherBot")
