"""4,231 real robots.txt files: all parse, and agree with Google's parser.

The differential part builds URLs from each file's own rule paths (where the
decisions are) and compares with google/robotstxt; the only disagreements
allowed are the documented deliberate classes.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from scrapy_robots.decoding import decode_robotstxt
from scrapy_robots.rfc9309 import RobotsTxt

CORPUS = Path("/work/shared/corpus/robotstxt/test_data")
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the robots.txt corpus is not on this machine")

_RULE_PATH = re.compile(r"(?im)^[ \t]*(?:dis)?allow[ \t]*:[ \t]*([^#\s]+)")


def corpus_files() -> list[Path]:
    return sorted(path for path in CORPUS.iterdir() if path.is_file())


def urls_for(text: str, rng: random.Random, count: int) -> list[str]:
    """URLs that hit the file's own rules, percent-encoded as a crawler sends them."""
    paths = _RULE_PATH.findall(text)
    rng.shuffle(paths)
    urls = ["https://example.com/"]
    for path in paths[:count]:
        path = path.replace("*", "x").rstrip("$")
        if not path.startswith("/"):
            path = "/" + path
        suffix = rng.choice(["", "zz", "/x.html", "?q=1"])
        urls.append("https://example.com" + quote(path + suffix, safe="/?=&;%:@!$'()*+,-._~"))
    return urls


def test_every_file_parses_without_exception() -> None:
    files = corpus_files()
    assert len(files) > 4000
    rules = 0
    for path in files:
        robots = RobotsTxt.parse(path.read_bytes())
        robots.allowed("https://example.com/some/page?x=1", "FooBot")
        robots.explain("https://example.com/", "Googlebot")
        robots.crawl_delay("FooBot")
        robots.request_rate("FooBot")
        rules += sum(len(group.rules) for group in robots._groups)
    assert rules > 100_000


@pytest.mark.parametrize(
    ("product_tokens", "agents"),
    [
        ("names", ["Googlebot", "FooBot"]),
        # Real names with digits, read as Google reads them (issue #30).
        ("rfc9309", ["MJ12bot", "AhrefsBot", "360Spider", "Ai2Bot-Dolma", "MJ", "Googlebot"]),
    ],
)
def test_corpus_agrees_with_google(product_tokens, agents) -> None:
    googlebot = pytest.importorskip("jwm.robotstxt.googlebot")
    from test_rfc9309_google_differential import deliberate_disagreement

    rng = random.Random(4231)
    compared = 0
    disagreements: dict[str, int] = {}
    unexplained = []
    for path in corpus_files():
        text = decode_robotstxt(path.read_bytes())
        robots = RobotsTxt.parse(text, product_tokens=product_tokens)
        for url in urls_for(text, rng, 3):
            agent = rng.choice(agents)
            ours = robots.allowed(url, agent)
            theirs = bool(googlebot.RobotsMatcher().OneAgentAllowedByRobots(text, agent, url))
            compared += 1
            if ours != theirs:
                known = deliberate_disagreement(text, url, agent, product_tokens)
                if known is None:
                    unexplained.append((path.name, url, agent, str(robots.explain(url, agent))))
                else:
                    disagreements[known] = disagreements.get(known, 0) + 1
    assert compared > 12_000
    assert not unexplained, unexplained[:5]
    # Deliberate classes are rare on real files.
    assert sum(disagreements.values()) < compared / 1000, disagreements
