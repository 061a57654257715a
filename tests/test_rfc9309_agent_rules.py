"""AgentRules, what a crawl keeps of each site: the same verdicts as the whole parse.

Every corpus file, under every combination of the options that change verdicts, asked
about URLs built from its own rules: AgentRules as built from the parse, and as built
again from its text form (what a storage keeps), answer as RobotsTxt.allowed does,
compiled or not (rules that are not compiled answer from their text, ScannedRules).
"""

from __future__ import annotations

import itertools
import random

import pytest
from test_rfc9309_corpus import CORPUS, corpus_files, urls_for

from scrapy_robots.decoding import decode_robotstxt
from scrapy_robots.rfc9309 import AgentRules, RobotsTxt

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the robots.txt corpus is not on this machine")

AGENTS = ("FooBot", "Googlebot", "bingbot/2.0 (+http://www.bing.com/bingbot.htm)")
OPTIONS = [
    {"precedence": precedence, "wildcards": wildcards, "empty_rules": empty}
    for precedence, wildcards, empty in itertools.product(("longest", "first"), (True, False), ("ignore", "allow-all"))
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(str(v) for v in o.values()))
def test_agent_rules_answer_as_the_whole_file(options: dict) -> None:
    rng = random.Random(9309)
    checked = disallowed = scanned = 0
    for path in corpus_files():
        body = path.read_bytes()
        robots = RobotsTxt.parse(body, **options)
        urls = urls_for(decode_robotstxt(body), rng, 12)
        for agent in AGENTS:
            rules, form = robots.agent_rules(agent)
            again = AgentRules.loads(form)
            rules.compile()
            assert (again.crawl_delay, again.request_rate) == (robots.crawl_delay(agent), robots.request_rate(agent))
            for index, url in enumerate(urls):
                if index == len(urls) // 2:
                    again.compile()  # from the text, or compiled: the same answers
                    assert again.compiled
                expected = robots.allowed(url, agent)
                assert rules.allowed(url) is expected, (path.name, agent, url)
                assert again.allowed(url) is expected, (path.name, agent, url, "from the text form")
                if index == 0:
                    scanned += not again.compiled  # answered from the text, nothing compiled
                checked += 1
                disallowed += not expected
    assert checked > 100_000 and disallowed > 10_000
    # Nearly every agent's rules are answered from their text until compiled.
    assert scanned > len(AGENTS) * 3000, scanned


# Every kind of rule the compiled form files apart, in an order where first match and
# longest match disagree: the text read as it is answers as the compiled form does.
SHAPES = b"""User-agent: *
Allow: /keep
Disallow: /dir/
Allow: /dir/index.html
Allow: /*/sub/index.htm
Disallow: /a*b$
Allow: /a*
Disallow:
Allow: /x$
Disallow: /p*q*r
Disallow: /p*q*s$
Disallow: /**z
Disallow: /m
Allow: /m
Disallow: /
"""
SHAPE_PATHS = (
    "/dir/",
    "/dir/index.html",
    "/dir/x",
    "/q/sub/",
    "/q/sub/y",
    "/ab",
    "/acb",
    "/acbd",
    "/a",
    "/x",
    "/xy",
    "/pqr",
    "/p1q2r3",
    "/pqs",
    "/pqsx",
    "/z",
    "/yz",
    "/m",
    "/mm",
    "/other",
    "/keep",
    "/",
)


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(str(v) for v in o.values()))
def test_rules_read_from_their_text_answer_as_compiled_ones(options: dict) -> None:
    robots = RobotsTxt.parse(SHAPES, **options)
    scanned, form = robots.agent_rules("FooBot")
    compiled = AgentRules.loads(form)
    compiled.compile()
    answers = []
    for path in SHAPE_PATHS:
        url = f"https://example.com{path}"
        expected = robots.allowed(url, "FooBot")
        assert scanned.allowed(url) is expected, path
        assert compiled.allowed(url) is expected, path
        answers.append(expected)
    assert not scanned.compiled
    assert True in answers and False in answers


@pytest.mark.parametrize(
    "form",
    [
        "",
        "not json\nD/x",
        '["agent-rules/9","longest",true,"ignore",null,null]',
        '["agent-rules/1","longest"]\nD/x',
        '["agent-rules/1","sideways",true,"ignore",null,null]',
        '["agent-rules/1","longest",true,"ignore",null,null]\nX/x',
    ],
)
def test_a_form_that_is_not_one_is_refused(form: str) -> None:
    with pytest.raises(ValueError):
        AgentRules.loads(form)
