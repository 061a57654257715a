"""A crawler's name and a User-agent line are read by one function: the crawler obeys
the group written for it, whatever letters its name has."""

from __future__ import annotations

import pytest
import pytest_twisted
from crawling import crawl, stat
from protego import Protego
from servers import body as serve_body

from scrapy_robots.parsers import GoogleParser, ProtegoParser, RFC9309Parser
from scrapy_robots.rfc9309 import Options, RobotsTxt, agent_key
from scrapy_robots.rfc9309._names import name_key, token_of
from scrapy_robots.useragent import product_token

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
    [
        "UnicödeBöt",
        "FooBot",
        "FooBot2",
        "foo-bot_x",
        "Bär",
        "Mozilla/5.0 (compatible; UnicödeBöt/1.0)",
        "Ai2Bot-Dolma/1.0 (+https://www.allenai.org/crawler)",
        "360Spider",
    ],
)
def test_a_name_reads_as_its_own_group_s_key(name):
    # The group written for the crawler, "User-agent: <its name>", is the one it obeys.
    line = product_token(name)
    assert token_of(name) == agent_key(line) == name_key(line) == line.lower()


def test_a_non_ascii_name_is_not_a_prefix_of_another():
    # "Bö" must not obey "User-agent: Bär": read whole, "bö" and "bär" differ.
    body = b"User-agent: B\xc3\xa4r\nDisallow: /\n"
    assert RFC9309Parser(body).allowed("https://x.example/", "Bö")
    assert not RFC9309Parser(body).allowed("https://x.example/", "Bär")


def test_digits_are_part_of_a_name_on_both_sides():
    body = b"User-agent: FooBot2\nDisallow: /\n\nUser-agent: *\nDisallow:\n"
    assert not RFC9309Parser(body).allowed("https://x.example/", "FooBot2")
    assert RFC9309Parser(body).allowed("https://x.example/", "OtherBot")
    # FooBot2's group is not FooBot's, nor FooBot3's.
    assert RFC9309Parser(body).allowed("https://x.example/", "FooBot")
    assert RFC9309Parser(body).allowed("https://x.example/", "FooBot3")


# --- names with digits (issue #30) ------------------------------------------------
# Real crawler names carry digits. A site owner's group for a named crawler applies to
# that crawler and to no other: by default a name is its letters, digits, "-" and "_" on
# the User-agent line and in the crawler's name alike. product_tokens="rfc9309" reads
# them as Google does: the line up to its first character outside [A-Za-z_-], the
# crawler's name whole.

URL = "https://x.example/page"
AI2 = "User-agent: Ai2Bot-Dolma\nDisallow: /\n\nUser-agent: AI2Bot\nAllow: /\n"
MJ12 = "User-agent: MJ12bot\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
BOTS = "User-agent: Bot1\nDisallow: /\n\nUser-agent: Bot2\nAllow: /\n\nUser-agent: *\nDisallow: /page\n"
SPIDER = "User-agent: 360Spider\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
IMG = "User-agent: img2dataset\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
AI2_HEADER = "Mozilla/5.0 (compatible; Ai2Bot-Dolma/1.0; +https://www.allenai.org/crawler)"

# (body, agent, allowed by default (Protego agrees), allowed with "rfc9309" (Google agrees))
DIGITS = [
    (AI2, "Ai2Bot-Dolma", False, True),  # rfc9309: both lines read "ai"; Ai2Bot-Dolma obeys "*" (none)
    (AI2, AI2_HEADER, False, True),
    (AI2, "AI2Bot", True, True),
    (AI2, "Ai", True, True),  # rfc9309: "ai" is the key of both lines, merged; Allow wins the tie
    (MJ12, "MJ12bot", False, True),
    (MJ12, "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", False, True),
    (MJ12, "MJ13bot", True, True),
    (MJ12, "MJ", True, False),  # rfc9309: "User-agent: MJ12bot" names "mj"
    (BOTS, "Bot1", False, False),  # rfc9309: both lines read "bot"; Bot1 obeys "*"
    (BOTS, "Bot2", True, False),
    (BOTS, "Bot3", False, False),
    (BOTS, "Bot", False, True),  # rfc9309: Bot1's and Bot2's groups merged, Allow wins the tie
    (SPIDER, "360Spider", False, True),  # rfc9309: the line names "" (no crawler)
    (SPIDER, "360Spider/1.0 (+http://www.so.com/help/help_3_2.html)", False, True),
    (SPIDER, "Spider", True, True),
    (IMG, "img2dataset", False, True),
    (IMG, "img2dataset/1.45.0", False, True),
    (IMG, "img", True, False),
]


@pytest.mark.parametrize(("body", "agent", "allowed", "_"), DIGITS)
def test_a_name_with_digits_obeys_its_own_group(body, agent, allowed, _):
    assert RobotsTxt.parse(body).allowed(URL, agent) is allowed
    assert RFC9309Parser(body.encode()).allowed(URL, agent) is allowed
    assert RFC9309Parser(body.encode(), user_agent=agent).allowed(URL) is allowed


@pytest.mark.parametrize(("body", "agent", "allowed", "_"), DIGITS)
def test_protego_reads_names_with_digits_as_we_do(body, agent, allowed, _):
    assert Protego.parse(body).can_fetch(URL, agent) is allowed


@pytest.mark.parametrize(("body", "agent", "_", "allowed"), DIGITS)
def test_the_rfc9309_reading_gives_google_s_verdicts(body, agent, _, allowed):
    assert RobotsTxt.parse(body, product_tokens="rfc9309").allowed(URL, agent) is allowed
    options = Options(product_tokens="rfc9309")
    assert RFC9309Parser(body.encode(), options=options).allowed(URL, agent) is allowed
    pytest.importorskip("jwm.robotstxt.googlebot")
    assert GoogleParser(body.encode()).allowed(URL, agent) is allowed


@pytest.mark.parametrize("name", ["Ai2Bot-Dolma", "AI2Bot", "MJ12bot", "360Spider", "img2dataset", "Bot1"])
def test_a_name_with_digits_is_read_whole(name):
    assert agent_key(name) == name_key(name) == name.lower()
    assert agent_key(f"{name}/1.0") == name.lower()


def test_the_rfc9309_reading_cuts_a_line_at_its_first_digit():
    assert agent_key("Ai2Bot-Dolma", "rfc9309") == "ai"
    assert agent_key("360Spider", "rfc9309") == ""
    assert agent_key("UnicödeBöt", "rfc9309") == "unic"  # Google's ASCII letters
    assert agent_key("* Ai2Bot", "rfc9309") == agent_key("*") == "*"


def test_explain_names_the_group_of_a_name_with_digits():
    robots = RobotsTxt.parse(AI2 + "\nUser-agent: *\nAllow: /\n")
    explanation = robots.explain(URL, AI2_HEADER)
    assert not explanation.allowed
    assert explanation.user_agent == "Ai2Bot-Dolma"
    assert explanation.group_lines == ((1, "Ai2Bot-Dolma"),)
    explanation = RobotsTxt.parse(AI2, product_tokens="rfc9309").explain(URL, "Ai")
    assert explanation.group_lines == ((1, "Ai2Bot-Dolma"), (4, "AI2Bot"))


@pytest_twisted.ensureDeferred
async def test_a_crawl_as_ai2bot_dolma_obeys_its_own_group(serve):
    site = serve(serve_body(AI2 + "\nUser-agent: *\nDisallow: /private\n"))
    urls = [f"{site.url}/page", f"{site.url}/private"]
    crawler = await crawl(urls, USER_AGENT=AI2_HEADER)
    assert sorted(crawler.spider.ignored) == urls
    assert crawler.spider.downloaded == []
    assert stat(crawler, "robotstxt/forbidden") == 2
    # AI2Bot's group is its own: it may fetch both.
    crawler = await crawl(urls, USER_AGENT="Mozilla/5.0 (compatible; AI2Bot/1.0; +https://www.allenai.org/crawler)")
    assert sorted(crawler.spider.downloaded) == urls
    # Read as Google reads it, Ai2Bot-Dolma names no group ("ai" is AI2Bot's too): "*".
    crawler = await crawl(urls, USER_AGENT=AI2_HEADER, ROBOTSTXT_RFC9309_PRODUCT_TOKENS="rfc9309")
    assert crawler.spider.downloaded == urls[:1] and list(crawler.spider.ignored) == urls[1:]
