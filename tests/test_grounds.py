"""One answer to "may I fetch this, and on what grounds?" (issue #40): grounds() composes the
verdict and every source it rests on, with their versions; the crawl's compliance record,
``scrapy robots`` and ``scrapy robots --record`` all give it. Pure table tests of the
function, then one real crawl asked again by the command, live and from its record."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
import pytest_twisted
from crawling import crawl
from scrapy import Request
from scrapy.settings import Settings
from test_command import _json, robots, site  # noqa: F401 - fixtures

from scrapy_robots.cache import RobotsEntry
from scrapy_robots.grounds import PageReading, grounds
from scrapy_robots.parsers.rfc9309 import RFC9309Parser
from scrapy_robots.record.reader import Record
from scrapy_robots.settings.config import RobotsConfig
from scrapy_robots.status.policy import Action
from scrapy_robots.tdmrep import parse_tdmrep
from scrapy_robots.tdmrep.crawl import TdmRepJson
from scrapy_robots.usage import site_preferences

AGENT = "Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example/bot)"
ROBOTS = "User-agent: *\nDisallow: /private\nContent-Usage: /nodata train-ai=n\n"
RULES = [{"location": "/books/*", "tdm-reservation": 1}]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def config(**settings) -> RobotsConfig:
    return RobotsConfig.from_settings(Settings({"USER_AGENT": AGENT, **settings}))


def parsed(body: str = ROBOTS, **fields) -> RobotsEntry:
    entry = RobotsEntry(
        site="https://shop.example:443", action=Action.PARSE, fetched_at=0.0, expires_at=1e12, version=sha(body)
    )
    entry.parser = RFC9309Parser(body, AGENT)
    entry.usage = site_preferences(body)
    for name, value in fields.items():
        setattr(entry, name, value)
    return entry


def by_status(action: Action, status: int | None, body: str = "", **fields) -> RobotsEntry:
    return RobotsEntry(
        site="https://shop.example:443",
        action=action,
        fetched_at=0.0,
        expires_at=1e12,
        status=status,
        version=sha(body),
        failures=1 if action is Action.UNREACHABLE else 0,
        **fields,
    )


def tdmrep() -> RobotsEntry:
    body = json.dumps(RULES)
    entry = by_status(Action.PARSE, 200, body)
    entry.rules = parse_tdmrep(body.encode(), 500 * 1024)
    return entry


def ask(entry: RobotsEntry, path: str, tdm: RobotsEntry | None = None, **settings):
    """``tdm``: the site's tdmrep.json, heard as the crawl hears it (every enabled file, this one read)."""
    found = config(**settings)
    heard = tuple(
        (cls(None, found), tdm if cls is TdmRepJson else None) for cls in found.policy_files if cls.wanted(found)
    )
    return grounds(entry, Request(f"https://shop.example{path}"), found, heard, at=1.0)


def named(found) -> dict[str, dict]:
    return {(s.name if s.purpose is None else f"{s.name} {s.purpose}"): s for s in found.sources}


@pytest.mark.parametrize(
    ("entry", "path", "allowed", "reason", "stat", "first"),
    [
        (parsed(), "/ok", True, None, "", ("robots.txt", sha(ROBOTS), True, None)),
        (
            parsed(),
            "/private/a",
            False,
            "Forbidden by robots.txt",
            "robotstxt/forbidden",
            ("robots.txt", sha(ROBOTS), False, 2),
        ),
        (by_status(Action.ALLOW, 404, "gone"), "/a", True, None, "", ("status policy", sha("gone"), True, None)),
        (
            by_status(Action.DENY, 403, "no"),
            "/a",
            False,
            "Forbidden by robots.txt: deny all (robots.txt answered HTTP 403)",
            "robotstxt/denied/deny_all",
            ("status policy", sha("no"), False, None),
        ),
        (  # no file came and none was kept: no version to name
            by_status(Action.UNREACHABLE, 503, "busy"),
            "/a",
            False,
            "Forbidden by robots.txt: robots.txt unreachable (HTTP 503) after 1 attempt(s)",
            "robotstxt/denied/unreachable",
            ("status policy", None, False, None),
        ),
        (
            by_status(Action.EXCLUDED, None),
            "/a",
            False,
            "Forbidden by robots.txt: excluded domain (ROBOTSTXT_EXCLUDED_DOMAINS)",
            "robotstxt/denied/excluded",
            ("ROBOTSTXT_EXCLUDED_DOMAINS", None, False, None),
        ),
    ],
    ids=["allowed", "disallowed", "404", "403", "unreachable", "excluded"],
)
def test_robots_txt_and_its_status_policy(entry, path, allowed, reason, stat, first):
    found = ask(entry, path)
    assert (found.allowed, found.reason, found.stat, found.purposes) == (allowed, reason, stat, ())
    [source] = found.sources  # no purpose declared: robots.txt alone
    assert (source.name, source.sha256, source.allowed, source.line) == first
    assert source.decides and found.decided_by == source.says


def test_the_deciding_line_and_group_where_the_parser_can_say():
    found = ask(parsed(), "/private/a")
    robots_txt = found.sources[0]
    assert (robots_txt.line, robots_txt.text, robots_txt.group) == (2, "Disallow: /private", ((1, "*"),))
    assert "line 2 (Disallow: /private)" in robots_txt.says
    # The crawl's hot tier keeps compiled rules, not lines: said as such.
    compiled = parsed(parser=None, rules=RFC9309Parser(ROBOTS, AGENT).reduce(AGENT)[0])
    assert ask(compiled, "/private/a").sources[0].says == "robots.txt rules"
    assert ask(compiled, "/private/a").allowed is False
    # A parser that raised: allowed for want of an answer, and said.
    failed = ask(parsed(parser=None, rules=object()), "/private/a")
    assert (failed.allowed, failed.stat, failed.decided_by) == (True, "robotstxt/parser_error", "the parser failed")


def test_a_usage_line_denies_for_the_purpose_declared_and_names_its_version():
    found = ask(parsed(), "/nodata/x", ROBOTSTXT_USAGE=["train-ai"])
    assert (found.allowed, found.stat, found.purposes) == (False, "robotstxt/usage/denied/train-ai", ("train-ai",))
    sources = named(found)
    assert sources["robots.txt"].allowed and not sources["robots.txt"].decides  # the rules allowed it
    usage = sources["usage train-ai"]
    assert (usage.allowed, usage.decides, usage.line, usage.sha256) == (False, True, 3, sha(ROBOTS))
    assert (
        found.decided_by
        == found.reason
        == ("Forbidden by robots.txt usage preference: line 3 (Content-Usage: /nodata train-ai=n) denies train-ai")
    )
    # Declared for search, the same line says nothing: allowed.
    assert ask(parsed(), "/nodata/x", ROBOTSTXT_USAGE=["search"]).allowed


def test_a_tdmrep_reservation_names_the_file_version_and_its_rule():
    found = ask(parsed(), "/books/1", tdmrep(), ROBOTSTXT_USAGE=["train-ai"])
    assert (found.allowed, found.stat) == (False, "robotstxt/tdmrep/denied/file")
    tdm = named(found)["tdmrep.json train-ai"]
    assert (tdm.allowed, tdm.decides, tdm.sha256) == (False, True, sha(json.dumps(RULES)))
    assert "rule 1" in tdm.says
    free = ask(parsed(), "/free", tdmrep(), ROBOTSTXT_USAGE=["train-ai"])
    assert free.allowed and named(free)["tdmrep.json train-ai"].allowed is None  # no rule: nothing stated


def test_a_page_whose_items_a_crawl_drops_is_denied_once_fetched():
    found = ask(parsed(), "/ok", ROBOTSTXT_USAGE=["train-ai"])
    page = PageReading(
        {
            "train-ai": {
                "decision": "deny",
                "stated": True,
                "line": None,
                "text": "X-Robots-Tag: noai",
                "source": "directive",
            }
        },
        ("train-ai", "X-Robots-Tag: noai"),
    )
    read = found.on_page(page)
    assert (read.allowed, read.stat) == (False, "robotstxt/usage/items_dropped/train-ai")
    assert (
        read.reason == "the page is fetched and its items dropped: X-Robots-Tag: noai denies train-ai (ROBOTSTXT_USAGE)"
    )
    directive = named(read)["directive train-ai"]
    assert (directive.allowed, directive.decides, directive.sha256) == (False, True, None)
    assert not read.sources[0].decides and read.sources[0].allowed
    assert found.allowed  # the answer before the page is unchanged


def test_a_record_row_is_the_same_answer_frozen():
    entry = parsed()
    request = Request("https://shop.example/nodata/x", headers={"User-Agent": AGENT})
    found = grounds(entry, request, config(ROBOTSTXT_USAGE=["train-ai"]), at=5.0)
    row = found.row("FooBot")
    assert (row["allowed"], row["by"], row["reason"], row["robots"]) == (
        False,
        found.reason,
        "usage/denied/train-ai",
        sha(ROBOTS),
    )
    assert row["usage_denied"]["line"] == 3
    # The purposes are the same for every decision: the record's file says them once, in its header.
    assert "purposes" not in row
    # The sources are built when asked (scrapy robots --record), not for every decision.
    assert "sources" not in row and "sources" not in found.__dict__


# -- the three consumers, on one site -------------------------------------------------


def record_answer(folder, *urls: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", "--record", str(folder), "--json", *urls],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=folder.parent,
    )


def _same_versions_and_denial(row: dict, sources: list[dict]) -> None:
    """A crawl's row writes the answer's inputs frozen, the versions by hash: the sources
    the command builds of them name the same versions, and the same denial."""
    by_name = {source["name"]: source for source in sources}
    assert row["robots"] == sources[0]["sha256"], (row, sources)
    assert row.get("tdmrep") == by_name["tdmrep.json"]["sha256"], (row, sources)
    [deciding] = [source for source in sources if source["decides"]]
    denied = row.get("usage_denied")
    if denied is None:
        assert deciding is sources[0], sources
    else:  # robots.txt's usage lines are the "usage" source
        name = "usage" if denied["source"] == "robots.txt" else denied["source"]
        assert (name, denied["purpose"], denied["line"]) == (deciding["name"], deciding["purpose"], deciding["line"])


@pytest_twisted.ensureDeferred
async def test_the_crawl_its_record_and_the_command_give_one_answer(site, robots, tmp_path):
    up = site(
        {
            "/robots.txt": (200, ROBOTS, {}),
            "/.well-known/tdmrep.json": (200, json.dumps(RULES), {"Content-Type": "application/json"}),
            "/ok": (200, "ok", {}),
        }
    )
    down = site({"/robots.txt": (503, "busy", {})})
    urls = {
        "allowed": f"{up.url}/ok",
        "disallowed": f"{up.url}/private/x",
        "usage": f"{up.url}/nodata/x",
        "tdmrep": f"{up.url}/books/1",
        "unreachable": f"{down.url}/a",
    }
    settings = {"ROBOTSTXT_USAGE": ["train-ai"], "ROBOTSTXT_UNREACHABLE_RETRY_TIMES": 0, "USER_AGENT": AGENT}
    folder = tmp_path / "record"
    crawler = await crawl(
        list(urls.values()), ROBOTSTXT_RECORD=str(folder), ROBOTSTXT_RECORD_FORMAT="jsonl", **settings
    )
    assert crawler.spider.downloaded == [urls["allowed"]]
    rows = {row["url"]: row for row in Record([folder]).decisions}

    flags = ["-s", "ROBOTSTXT_USAGE=train-ai", "-s", "ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0", "-s", f"USER_AGENT={AGENT}"]
    live = {answer["url"]: answer for answer in _json(robots("--json", *flags, *urls.values()).stdout)}
    done = record_answer(folder, *urls.values())
    assert done.returncode == 1, done.stderr  # some denied (the record answers for the past: no error)
    recorded = {answer["url"]: answer for answer in _json(done.stdout)}

    expected = {
        "allowed": (True, "robotstxt/", "allowed"),
        "disallowed": (False, "Forbidden by robots.txt", "forbidden"),
        "usage": (False, "Forbidden by robots.txt usage preference: line 3", "usage/denied/train-ai"),
        "tdmrep": (False, "Forbidden by TDMRep reservation: tdmrep.json rule 1", "tdmrep/denied/file"),
        "unreachable": (
            False,
            "Forbidden by robots.txt: robots.txt unreachable (HTTP 503) after 1",
            "denied/unreachable",
        ),
    }
    for case, url in urls.items():
        allowed, reason, stat = expected[case]
        row, now, then = rows[url], live[url], recorded[url]
        # One verdict, one reason, one stat.
        assert row["allowed"] is now["allowed"] is then["allowed"] is allowed, (case, row, now, then)
        assert now["reason"] == then["reason"], (case, now["reason"], then["reason"])
        if not allowed:
            assert row["by"] == now["reason"] and now["reason"].startswith(reason), (case, row["by"], now["reason"])
        else:
            assert now["reason"] is None
        assert row["reason"] == stat and (now["stat"] or "robotstxt/allowed").endswith(stat), (case, now["stat"])
        assert now["stat"] == then["stat"] and now["purposes"] == then["purposes"] == row["purposes"] == ["train-ai"]
        # The same sources, each with its version: live and from the record, line for line.
        assert now["sources"] == then["sources"], (case, now["sources"], then["sources"])
        _same_versions_and_denial(row, now["sources"])
    versions = {s["name"]: s["sha256"] for s in live[urls["tdmrep"]]["sources"]}
    # No License line: RSL's document is named, not read.
    assert versions == {
        "robots.txt": sha(ROBOTS),
        "usage": sha(ROBOTS),
        "tdmrep.json": sha(json.dumps(RULES)),
        "license.xml": None,
    }
    assert live[urls["disallowed"]]["sources"][0]["line"] == 2
    assert {s["sha256"] for s in live[urls["unreachable"]]["sources"]} == {None}  # no version came
