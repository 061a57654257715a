"""RSL obeyed by a crawl (issue #50): the robots.txt ``License`` line found, the document
fetched once per site through the book, each declared purpose answered by it; the spec's
examples (tests/rsl_files/) against real servers; a license token sent where one is
required; ``scrapy robots`` quoting the deciding ``<content>``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest_twisted
from crawling import crawl, stat
from servers import body, sequence
from test_command import _json, robots, site  # noqa: F401 - fixtures

from scrapy_robots.record.reader import Record

FILES = Path(__file__).resolve().parent / "rsl_files"
LICENSE = "/license.xml"


def robots_naming(document: str = LICENSE, rules: str = "User-agent: *\nDisallow: /private\n"):
    """robots.txt whose global License line points to ``document`` on the same host."""

    def handle(request):
        return f"License: http://{request.getHeader('host')}{document}\n\n{rules}".encode()

    return handle


def xml(name: str) -> str:
    return (FILES / name).read_text()


@pytest_twisted.ensureDeferred
async def test_the_license_denies_what_it_does_not_license_and_is_fetched_once(serve):
    # RSL 1.0 3.1.2's example: / permits all, /articles/ prohibits ai-train.
    site = serve(robots_naming(), {LICENSE: body(xml("scope.xml"))})
    silent = serve(body("User-agent: *\nDisallow: /private\n"))  # no License line: nothing fetched
    urls = [f"{site.url}/articles/1", f"{site.url}/articles/2", f"{site.url}/about", f"{silent.url}/articles/1"]
    crawler = await crawl(urls, ROBOTSTXT_USAGE=["train-ai"])
    assert sorted(crawler.spider.downloaded) == sorted(urls[2:])
    reason = crawler.spider.ignored[f"{site.url}/articles/1"]
    assert reason.startswith("Forbidden by RSL license: RSL not-licensed for ai-train: <content"), reason
    assert '<prohibits type="usage">ai-train</prohibits>' in reason and reason.endswith("denies train-ai"), reason
    assert crawler.spider.ignored[f"{site.url}/articles/2"] == reason
    assert site.paths().count(LICENSE) == 1 and LICENSE not in silent.paths()
    assert stat(crawler, "robotstxt/rsl/denied/not_licensed") == 2
    assert stat(crawler, "robotstxt/rsl/request_count") == 1
    assert stat(crawler, "robotstxt/rsl/status/200") == 1


@pytest_twisted.ensureDeferred
async def test_search_is_licensed_where_ai_training_is_not(serve):
    site = serve(robots_naming(), {LICENSE: body(xml("scope.xml"))})
    urls = [f"{site.url}/articles/1", f"{site.url}/about"]
    crawler = await crawl(urls, ROBOTSTXT_USAGE=["search"])
    assert sorted(crawler.spider.downloaded) == sorted(urls) and crawler.spider.ignored == {}


@pytest_twisted.ensureDeferred
async def test_license_required_is_denied_without_a_token_and_sent_with_one(serve):
    # RSL's model document: ai-train under / against a crawl payment; /premium/ behind a license server.
    seen: list[str | None] = []

    def page(request):
        seen.append(request.getHeader("authorization"))
        return b"<html></html>"

    routes = {LICENSE: body(xml("crawl-payment.xml")), "/premium/a": page, "/premium/b": page, "/news": page}
    site = serve(robots_naming(), routes)
    urls = [f"{site.url}/premium/a", f"{site.url}/premium/b", f"{site.url}/news"]
    without = await crawl(urls, ROBOTSTXT_USAGE=["train-ai"])
    assert without.spider.downloaded == [] and seen == []
    reason = without.spider.ignored[f"{site.url}/premium/a"]
    assert reason.startswith("Forbidden by RSL license: RSL license-required for ai-train"), reason
    assert "license server https://license.example.com/api" in reason, reason
    assert stat(without, "robotstxt/rsl/denied/license_required") == 3
    other = serve(robots_naming(), routes)
    licensed = await crawl(
        [u.replace(site.url, other.url) for u in urls], ROBOTSTXT_USAGE=["train-ai"], ROBOTSTXT_RSL_TOKEN="tok-123"
    )
    assert len(licensed.spider.downloaded) == 3 and licensed.spider.ignored == {}
    assert seen == ["License tok-123"] * 3


@pytest_twisted.ensureDeferred
async def test_tag_mode_fetches_and_tags_and_an_unreachable_license_reads_not_licensed(serve):
    tagged = serve(robots_naming(), {LICENSE: body(xml("scope.xml"))})
    crawler = await crawl([f"{tagged.url}/articles/1"], ROBOTSTXT_USAGE=["train-ai"], ROBOTSTXT_USAGE_MODE="tag")
    assert crawler.spider.downloaded == [f"{tagged.url}/articles/1"]
    down = serve(robots_naming(), {LICENSE: body("busy", 503)})
    back = serve(robots_naming(), {LICENSE: sequence(body("busy", 503), body(xml("scope.xml")))})
    crawler = await crawl(
        [f"{down.url}/about", f"{down.url}/x", f"{back.url}/about"],
        ROBOTSTXT_USAGE=["train-ai"],
        ROBOTSTXT_UNREACHABLE_RETRY_TIMES=1,
        ROBOTSTXT_UNREACHABLE_RETRY_DELAY=0.2,
    )
    # Never silently allowed: the requests wait for the retry, then are denied; the site that answers goes.
    assert crawler.spider.downloaded == [f"{back.url}/about"]
    assert crawler.spider.ignored[f"{down.url}/about"].startswith("Forbidden by RSL license: license.xml unreachable")
    assert stat(crawler, "robotstxt/rsl/denied/unreachable") == 2
    assert down.paths().count(LICENSE) == 2 and back.paths().count(LICENSE) == 2


@pytest_twisted.ensureDeferred
async def test_the_record_and_scrapy_robots_name_the_deciding_content(site, robots, tmp_path):
    up = site({"/robots.txt": (200, "", {}), LICENSE: (200, xml("scope.xml"), {}), "/about": (200, "ok", {})})
    up.routes["/robots.txt"] = (200, f"License: {up.url}{LICENSE}\n\nUser-agent: *\nAllow: /\n", {})
    folder = tmp_path / "record"
    await crawl(
        [f"{up.url}/articles/1", f"{up.url}/about"],
        ROBOTSTXT_USAGE=["train-ai"],
        ROBOTSTXT_RECORD=str(folder),
        ROBOTSTXT_RECORD_FORMAT="jsonl",
    )
    rows = {row["url"]: row for row in Record([folder]).decisions}
    denied = rows[f"{up.url}/articles/1"]
    assert denied["allowed"] is False and denied["reason"] == "rsl/denied/not_licensed", denied
    assert denied["rsl"] and denied["rsl_said"]["train-ai"]["verdict"] == "not-licensed", denied
    text = robots("--usage", "train-ai", f"{up.url}/articles/1", f"{up.url}/about")
    assert text.returncode == 1, text.stderr
    assert 'rsl          not-licensed for train-ai: <content url="/articles/">' in text.stdout, text.stdout
    assert 'licensed for train-ai: <content url="/">' in text.stdout, text.stdout
    live = {
        answer["url"]: answer
        for answer in _json(robots("--usage", "train-ai", "--json", f"{up.url}/articles/1").stdout)
    }
    again = json.loads(robots("--record", str(folder), "--json", f"{up.url}/articles/1").stdout.splitlines()[0])
    answer = live[f"{up.url}/articles/1"]
    assert answer["reason"] == again["reason"] and answer["stat"] == "robotstxt/rsl/denied/not_licensed", (
        answer,
        again,
    )
    [deciding] = [source for source in answer["sources"] if source["decides"]]
    assert deciding["name"] == "license.xml" and '<content url="/articles/">' in deciding["says"], deciding
    assert answer["sources"] == again["sources"], (answer["sources"], again["sources"])


@pytest_twisted.ensureDeferred
async def test_the_guides_document_with_curly_quotes_is_unusable_said_and_states_nothing(serve, caplog):
    # RSL's getting-started guide prints url=”/” (typographic quotes): not XML.
    site = serve(robots_naming(), {LICENSE: body(xml("getting-started.xml"))})
    crawler = await crawl([f"{site.url}/a", f"{site.url}/b"], ROBOTSTXT_USAGE=["train-ai"])
    assert len(crawler.spider.downloaded) == 2
    assert stat(crawler, "robotstxt/rsl/malformed") == 1
    assert any("is unusable: not-xml" in record.getMessage() for record in caplog.records)
