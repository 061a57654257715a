"""Differential tests against Google's own parser (google/robotstxt, via jwm.robotstxt).

Random robots.txt files and URLs, seeded so that a failure reproduces. Every
disagreement must fall into one of the deliberate RFC-over-Google classes
listed in docs/rfc9309.rst; those cases, and only those, are skipped.
"""

from __future__ import annotations

import random
import re

import pytest

from scrapy_robots.rfc9309 import RobotsTxt

googlebot = pytest.importorskip("jwm.robotstxt.googlebot")

AGENT = "FooBot"
_UNRESERVED_ESCAPE = re.compile(r"%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[Dd]|2[Ee]|5[Ff]|7[Ee])")
_ESCAPED_SPECIAL = re.compile(r"%2[4Aa]")
# Google keeps the first 2083 * 8 - 1 bytes of a line and drops the rest.
GOOGLE_MAX_LINE = 2083 * 8


def google_allowed(body: str, url: str, agent: str = AGENT) -> bool:
    return bool(googlebot.RobotsMatcher().OneAgentAllowedByRobots(body, agent, url))


def deliberate_disagreement(body: str, url: str, agent: str = AGENT, product_tokens: str = "names") -> str | None:
    """The documented class a case belongs to, if any (see docs/rfc9309.rst).

    ``product_tokens="rfc9309"`` reads names as Google does: no class of its own."""
    if product_tokens == "names" and _names_decide(body, url, agent):
        return "names with digits or non-ASCII letters"
    path = url.split("://", 1)[-1]
    path = path[path.find("/") :] if "/" in path else "/"
    if re.match(r"/(robots\.txt|%72obots\.txt)(\?|$|#)", path, re.IGNORECASE):
        return "robots.txt is always allowed"
    if not url.isascii():
        return "non-ASCII characters in the URL"
    if _UNRESERVED_ESCAPE.search(url) or _UNRESERVED_ESCAPE.search(body):
        return "percent-encoded unreserved characters"
    if re.search(r"%(?:[0-9A-Fa-f][a-f]|[a-f][0-9A-Fa-f])", url):
        return "lower-case percent-escapes in the URL"
    if _ESCAPED_SPECIAL.search(url) or _ESCAPED_SPECIAL.search(body):
        return "percent-encoded * and $"
    if any(len(line.encode()) >= GOOGLE_MAX_LINE for line in re.split(r"\r\n|\r|\n", body)):
        return "lines longer than Google reads"
    return None


def _names_decide(body: str, url: str, agent: str) -> bool:
    """Whether reading names as Google does (product_tokens="rfc9309", which the random
    files check against Google) changes the verdict: a name with a digit or a non-ASCII
    letter, on a User-agent line or in the crawler's."""
    names = RobotsTxt.parse(body).allowed(url, agent)
    return names != RobotsTxt.parse(body, product_tokens="rfc9309").allowed(url, agent)


# --- the deliberate classes, each shown once --------------------------------


def test_robots_txt_is_allowed_where_google_disallows() -> None:
    body = "User-agent: *\nDisallow: /\n"
    url = "https://example.com/robots.txt"
    assert not google_allowed(body, url)
    assert RobotsTxt.parse(body).allowed(url, AGENT)
    assert deliberate_disagreement(body, url)


def test_encoded_unreserved_characters_match_where_google_does_not() -> None:
    body = "User-agent: *\nDisallow: /%7Euser\n"
    url = "https://example.com/~user"
    assert google_allowed(body, url)
    assert not RobotsTxt.parse(body).allowed(url, AGENT)
    assert deliberate_disagreement(body, url)


def test_lower_case_escapes_in_the_url_match_where_google_does_not() -> None:
    body = "User-agent: *\nDisallow: /a%3F\n"
    url = "https://example.com/a%3f"
    assert google_allowed(body, url)
    assert not RobotsTxt.parse(body).allowed(url, AGENT)
    assert deliberate_disagreement(body, url)


def test_non_ascii_urls_are_encoded_where_google_does_not() -> None:
    body = "User-agent: *\nDisallow: /caf\u00e9\n"
    url = "https://example.com/caf\u00e9"
    assert google_allowed(body, url)
    assert not RobotsTxt.parse(body).allowed(url, AGENT)
    assert deliberate_disagreement(body, url)


def test_percent_encoded_star_matches_a_literal_star_where_google_does_not() -> None:
    body = "User-agent: *\nDisallow: /path/file-with-a-%2A.html\n"
    url = "https://example.com/path/file-with-a-*.html"
    assert google_allowed(body, url)
    assert not RobotsTxt.parse(body).allowed(url, AGENT)
    assert deliberate_disagreement(body, url)


def test_long_lines_are_read_whole_where_google_cuts_them() -> None:
    # RFC 9309 sets no line length, and a rule cut short is a broader rule than the
    # one written: ours reads the whole line, Google its first 16,663 bytes.
    prefix = "/x/" + "a" * (GOOGLE_MAX_LINE - len("disallow: /x/") + 1)
    body = f"user-agent: FooBot\ndisallow: {prefix}/qux\n"
    url = f"https://example.com{prefix}/fux"
    assert not google_allowed(body, url)
    assert RobotsTxt.parse(body).allowed(url, AGENT)
    assert not RobotsTxt.parse(body).allowed(f"https://example.com{prefix}/qux", AGENT)
    assert deliberate_disagreement(body, url)

    body = f"user-agent: FooBot\ndisallow: /\nallow: {prefix}/qux\n"
    assert google_allowed(body, url)
    assert not RobotsTxt.parse(body).allowed(url, AGENT)
    assert RobotsTxt.parse(body).allowed(f"https://example.com{prefix}/qux", AGENT)
    assert deliberate_disagreement(body, url)


def test_names_with_digits_are_read_whole_where_google_cuts_them() -> None:
    # Google reads both lines as "ai": Ai2Bot-Dolma is neither, and obeys "*" (none here).
    body = "User-agent: Ai2Bot-Dolma\nDisallow: /\n\nUser-agent: AI2Bot\nAllow: /\n"
    url = "https://example.com/page"
    assert google_allowed(body, url, "Ai2Bot-Dolma")
    assert not RobotsTxt.parse(body).allowed(url, "Ai2Bot-Dolma")
    assert deliberate_disagreement(body, url, "Ai2Bot-Dolma")
    # Read as Google reads them, the names agree.
    assert RobotsTxt.parse(body, product_tokens="rfc9309").allowed(url, "Ai2Bot-Dolma")
    assert not deliberate_disagreement(body, url, "Ai2Bot-Dolma", "rfc9309")


# --- random files ---------------------------------------------------------------

_AGENTS = ["*", "FooBot", "foobot", "FOOBOT/2.0", "Other", "foo", "FooBotter", "* extra", "*bot", "", "Foo_Bot", "-"]
# Names with digits, in runs of their own (the first run keeps its seeded files).
_DIGIT_AGENTS = ["FooBot2", "foobot2", "MJ12bot", "360Spider", "Ai2Bot-Dolma", "AI2Bot", "FooBot/2", "2"]
_ASKED = [AGENT, "Other", "foo"]
_DIGIT_ASKED = ["FooBot2", "MJ12bot", "MJ", "Ai", "Ai2Bot-Dolma", "360Spider", "Spider"]
_PATH_PIECES = [
    "/",
    "a",
    "b",
    "ab",
    "x.html",
    ".php",
    "?",
    "=",
    "&",
    ";",
    "%2F",
    "%3f",
    "%C3%A9",
    "\u00e9",
    "-",
    "$",
    "*",
    "index.htm",
    "index.html",
    "/a",
    "/b/",
    "~",
]
_KEYS_RULE = ["Allow", "Disallow", "allow", "DISALLOW", "disalow", "Dissallow", "Allow ", " disallow"]
_SEPARATORS = [": ", ":", " : ", "\t:\t", " "]


def _pattern(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return ""
    start = rng.choice(["/", "/", "/", "*", ""])
    return start + "".join(rng.choice(_PATH_PIECES) for _ in range(rng.randint(0, 4)))


def _line(rng: random.Random, agents: list[str] = _AGENTS) -> str:
    roll = rng.random()
    if roll < 0.22:
        key = rng.choice(["User-agent", "user-agent", "User agent", "useragent", "USER-AGENT"])
        return f"{key}{rng.choice(_SEPARATORS[:4])}{rng.choice(agents)}"
    if roll < 0.85:
        value = _pattern(rng)
        separator = rng.choice(_SEPARATORS if value and " " not in value else _SEPARATORS[:4])
        return f"{rng.choice(_KEYS_RULE)}{separator}{value}"
    return rng.choice(
        [
            "",
            "# comment",
            "Sitemap: https://example.com/sitemap.xml",
            "Crawl-delay: 5",
            "Noindex: /a",
            "Disallow: /a # comment",
            "garbage",
            "Host: example.com",
        ]
    )


def random_robotstxt(rng: random.Random, agents: list[str] = _AGENTS) -> str:
    newline = rng.choice(["\n", "\n", "\r\n", "\r"])
    return newline.join(_line(rng, agents) for _ in range(rng.randint(1, 14)))


def random_url(rng: random.Random) -> str:
    path = "/" + "".join(
        rng.choice(_PATH_PIECES).replace("*", "x").replace("\u00e9", "%C3%A9") for _ in range(rng.randint(0, 5))
    )
    if rng.random() < 0.1:
        path += "#" + rng.choice(["frag", "/a"])
    return "https://example.com" + path.replace("//", "/")


@pytest.mark.parametrize(
    ("product_tokens", "agents", "asked"),
    # Names with digits are a deliberate difference under "names" (the default): they are
    # compared with Google under "rfc9309", which must agree on every one.
    [
        ("names", _AGENTS, _ASKED),
        ("names", _AGENTS + _DIGIT_AGENTS, _ASKED + _DIGIT_ASKED),
        ("rfc9309", _AGENTS + _DIGIT_AGENTS, _ASKED + _DIGIT_ASKED),
    ],
    ids=["names", "names-with-digits", "rfc9309-with-digits"],
)
def test_random_files_agree_with_google(product_tokens, agents, asked) -> None:
    rng = random.Random(9309)
    compared = skipped = 0
    failures = []
    for _ in range(1500):
        body = random_robotstxt(rng, agents)
        robots = RobotsTxt.parse(body, product_tokens=product_tokens)
        for _ in range(4):
            url = random_url(rng)
            agent = rng.choice(asked)
            if deliberate_disagreement(body, url, agent, product_tokens):
                skipped += 1
                continue
            compared += 1
            ours = robots.allowed(url, agent)
            if ours != google_allowed(body, url, agent):
                failures.append((body, url, agent, ours, robots.explain(url, agent)))
    assert not failures, "\n\n".join(map(repr, failures[:5]))
    # The known classes must stay a minority of the cases: they are not a blanket skip.
    assert compared > 4 * skipped
