"""AgentRules, what a crawl keeps of each site: the same verdicts as the whole parse.

Every corpus file, under every combination of the options that change verdicts, asked
about URLs built from its own rules: AgentRules as built from the parse, and as built
again from its text form (what a storage keeps), answer as RobotsTxt.allowed does.
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
    checked = disallowed = 0
    for path in corpus_files():
        body = path.read_bytes()
        robots = RobotsTxt.parse(body, **options)
        urls = urls_for(decode_robotstxt(body), rng, 12)
        for agent in AGENTS:
            rules, form = robots.agent_rules(agent)
            again = AgentRules.loads(form)
            assert (again.crawl_delay, again.request_rate) == (robots.crawl_delay(agent), robots.request_rate(agent))
            for index, url in enumerate(urls):
                if index == len(urls) // 2:
                    again.release()  # the compiled structure goes; the text builds it again
                expected = robots.allowed(url, agent)
                assert rules.allowed(url) is expected, (path.name, agent, url)
                assert again.allowed(url) is expected, (path.name, agent, url, "from the text form")
                checked += 1
                disallowed += not expected
    assert checked > 100_000 and disallowed > 10_000


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
