"""Fuzzing: never raise on any input; the indexed matcher agrees with a naive one."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_robots.rfc9309 import RobotsTxt, normalize

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

options = st.fixed_dictionaries(
    {
        "precedence": st.sampled_from(["longest", "first"]),
        "wildcards": st.booleans(),
        "empty_rules": st.sampled_from(["ignore", "allow-all"]),
        "agent_matching": st.sampled_from(["token", "substring"]),
    }
)

_line = st.one_of(
    st.text(max_size=40),
    st.builds(
        "{}:{}".format,
        st.sampled_from(
            [
                "User-agent",
                "Allow",
                "Disallow",
                "Sitemap",
                "Crawl-delay",
                "Request-rate",
                "Visit-time",
                "Host",
                "Clean-param",
                "x",
            ]
        ),
        st.lists(st.sampled_from(list("/*$%?#ab9 \t\u00e9\ufeff\x00:") + ["%2f", "%7E", "%zz"]), max_size=12).map(
            "".join
        ),
    ),
)
robots_bodies = st.lists(_line, max_size=15).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n", "\r"]).map(lambda newline: newline.join(lines))
)


@FUZZ
@given(
    body=st.one_of(st.binary(max_size=300), st.text(max_size=300), robots_bodies),
    url=st.text(max_size=60),
    agent=st.text(max_size=30),
    opts=options,
)
def test_never_raises(body: str | bytes, url: str, agent: str, opts: dict[str, object]) -> None:
    robots = RobotsTxt.parse(body, **opts)  # type: ignore[arg-type]
    verdict = robots.allowed(url, agent)
    assert isinstance(verdict, bool)
    assert robots.explain(url, agent).allowed is verdict
    robots.crawl_delay(agent)
    robots.request_rate(agent)
    robots.visit_time(agent)
    assert isinstance(robots.sitemaps, tuple)


# --- the indexed matcher against the plainest possible one --------------------

_pattern = st.text(alphabet=st.sampled_from(list("/ab*$.")), max_size=7)
_path = st.text(alphabet=st.sampled_from(list("/ab.$")), max_size=9).map(lambda path: "/" + path)


def naive_allowed(rules: list[tuple[bool, str]], path: str, precedence: str, wildcards: bool) -> bool:
    matching = []
    for line, (allow, pattern) in enumerate(rules, start=2):
        if not pattern:
            continue
        if wildcards:
            anchored = pattern.endswith("$")
            body = pattern[:-1] if anchored else pattern
            regex = ".*".join(re.escape(part) for part in body.split("*")) + ("$" if anchored else "")
            hit = re.match(regex, path, re.DOTALL) is not None
        else:
            hit = path.startswith(pattern)
        if hit:
            matching.append((len(pattern), allow, -line))
    if not matching:
        return True
    if precedence == "first":
        return max(matching, key=lambda match: match[2])[1]
    return max(matching)[1]


@settings(max_examples=400, deadline=None)
@given(
    rules=st.lists(st.tuples(st.booleans(), _pattern), max_size=12),
    paths=st.lists(_path, min_size=1, max_size=5),
    precedence=st.sampled_from(["longest", "first"]),
    wildcards=st.booleans(),
)
def test_indexed_matcher_agrees_with_naive_matcher(
    rules: list[tuple[bool, str]], paths: list[str], precedence: str, wildcards: bool
) -> None:
    body = "User-agent: *\n" + "".join(f"{'Allow' if allow else 'Disallow'}: {pattern}\n" for allow, pattern in rules)
    robots = RobotsTxt.parse(body, precedence=precedence, wildcards=wildcards)  # type: ignore[arg-type]
    for path in paths:
        if path.startswith("/robots.txt"):
            continue
        # Google's index.html rule is not in the naive model: keep it out.
        if any(allow and "index.htm" in pattern for allow, pattern in rules):
            continue
        expected = naive_allowed(rules, path, precedence, wildcards)
        assert robots.allowed("https://example.com" + path) is expected, (body, path)


@FUZZ
@given(st.text(max_size=30))
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize(text)
    assert once.isascii()
    assert normalize(once) == once


def test_big_inputs_do_not_raise() -> None:
    body = "User-agent: *\n" + "Disallow: /" + "*a" * 5000 + "b\n" + "x" * 2_000_000
    robots = RobotsTxt.parse(body)
    assert robots.allowed("https://example.com/" + "a" * 20_000)
    assert not robots.allowed("https://example.com/" + "a" * 20_000 + "b")
