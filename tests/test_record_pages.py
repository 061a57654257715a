"""The compliance record holds the page's own grounds (issue #48): a page whose
``Content-Usage`` header, ``X-Robots-Tag: noai`` or ``<meta name="robots" content="noai">``
denies a declared purpose has a row saying so and what the crawl did (its items dropped,
or the page tagged); the record read back, ``scrapy robots --record`` and the summary say
what the crawl did, as its own stats counted it. Real crawls against local servers."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, stat
from servers import body
from test_directives_crawl import html

from scrapy_robots.record.reader import Record

# Line 2 reserves /reserved/ for training; line 3 lets everything else in.
ROBOTS = "User-agent: *\nContent-Usage: /reserved/ train-ai=n\nAllow: /\n"
PAGES = {
    "/header": html(headers=[("Content-Usage", "train-ai=n")]),
    "/xrobots": html(headers=[("X-Robots-Tag", "noai")]),
    "/meta": html('<meta name="robots" content="noai">'),
    "/plain": html(),
}
PATHS = ["/reserved/a", "/reserved/b", "/header", "/xrobots", "/meta", "/plain"]
MIDDLEWARES = {
    "scrapy_robots.directives.middleware.DirectivesMiddleware": 90,
    "scrapy_robots.spidermw.UsageMiddleware": 100,
}


class ItemSpider(RecordingSpider):
    def parse(self, response):
        super().parse(response)
        yield {"url": response.url}


def robots(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", "--record", str(folder), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=folder.parent,
    )


async def recorded_crawl(serve, tmp_path, mode: str, format: str = "jsonl"):
    site = serve(body(ROBOTS), PAGES)
    folder = tmp_path / f"record-{mode}"
    crawler = await crawl(
        [site.url + path for path in PATHS],
        ItemSpider,
        ROBOTSTXT_RECORD=str(folder),
        ROBOTSTXT_RECORD_FORMAT=format,
        ROBOTSTXT_USAGE=["train-ai"],
        ROBOTSTXT_USAGE_MODE=mode,
        SPIDER_MIDDLEWARES=MIDDLEWARES,
    )
    return site, folder, crawler


def page_rows(record: Record, site_url: str) -> dict[str, dict]:
    return {row["url"][len(site_url) :]: row for row in record.pages}


@pytest.mark.parametrize("format", ["jsonl", "warc"])
@pytest_twisted.ensureDeferred
async def test_deny_mode_records_the_pages_that_denied_and_the_items_dropped(serve, tmp_path, format):
    site, folder, crawler = await recorded_crawl(serve, tmp_path, "deny", format)
    # The crawl: two requests ignored by robots.txt's line 2, three pages' items dropped.
    assert sorted(crawler.spider.downloaded) == sorted(site.url + p for p in ["/header", "/xrobots", "/meta", "/plain"])
    assert stat(crawler, "robotstxt/usage/denied/train-ai") == 2
    assert stat(crawler, "robotstxt/usage/items_dropped/train-ai") == 3
    assert stat(crawler, "item_scraped_count") == 1
    assert stat(crawler, "robotstxt/record/pages") == 3

    record = Record([folder])
    # Each page that denied: which source, what it said, what the crawl did; none for /plain.
    rows = page_rows(record, site.url)
    assert set(rows) == {"/header", "/xrobots", "/meta"}, rows
    expected = {
        "/header": ("header", "Content-Usage: train-ai=n"),
        "/xrobots": ("directive", "X-Robots-Tag: noai"),
        "/meta": ("directive", 'meta name="robots": noai'),
    }
    for path, (source, text) in expected.items():
        row = rows[path]
        assert row["denied"] == {"purpose": "train-ai", "source": source, "text": text}, row
        assert (row["did"], row["items"]) == ("items dropped", 1), row
        assert row["usage"]["train-ai"]["decision"] == "deny", row
    # The decision rows stay what was decided before the download (robots.txt's answer).
    decisions = {row["url"][len(site.url) :]: row for row in record.decisions}
    assert decisions["/header"]["allowed"] and decisions["/header"]["usage"]["train-ai"]["source"] == "robots.txt"

    # The summary counts what the crawl obeyed, as its stats did.
    [summary] = record.summary()
    assert summary.reservations == {
        "train-ai (robots.txt)": 2,
        "train-ai (header, items dropped)": 1,
        "train-ai (directive, items dropped)": 2,
    }, summary.reservations
    dropped = sum(n for what, n in summary.reservations.items() if "items dropped" in what)
    assert dropped == stat(crawler, "robotstxt/usage/items_dropped/train-ai")
    assert summary.reservations["train-ai (robots.txt)"] == stat(crawler, "robotstxt/usage/denied/train-ai")
    text = robots(folder)
    assert text.returncode == 0, text.stderr
    assert (
        "reservations: 2 train-ai (directive, items dropped), 1 train-ai (header, items dropped), "
        "2 train-ai (robots.txt)" in text.stdout
    ), text.stdout
    as_json = robots(folder, "--json")
    assert json.loads(as_json.stdout)["reservations"] == summary.reservations

    # Asked for each URL, the record answers as the crawl did, naming the page's own source.
    for path, (_, text) in expected.items():
        asked = robots(folder, site.url + path)
        assert asked.returncode == 1, (path, asked.stdout + asked.stderr)
        assert f"{site.url}{path}: denied" in asked.stdout, asked.stdout
        assert f"decided by: the page is fetched and its items dropped: {text} denies train-ai" in asked.stdout, (
            asked.stdout
        )
        assert "recorded: " in asked.stdout and f"page: {text} denies train-ai: items dropped (1)" in asked.stdout
        [answer] = [json.loads(line) for line in robots(folder, "--json", site.url + path).stdout.splitlines()]
        assert answer["allowed"] is False and answer["stat"] == "robotstxt/usage/items_dropped/train-ai"
    # The ones beside them: the plain page allowed by line 3, a reserved path denied by line 2.
    plain = robots(folder, site.url + "/plain")
    assert plain.returncode == 0 and "decided by: line 3 (Allow: /)" in plain.stdout, plain.stdout + plain.stderr
    reserved = robots(folder, site.url + "/reserved/a")
    assert reserved.returncode == 1, reserved.stdout + reserved.stderr
    assert "line 2 (Content-Usage: /reserved/ train-ai=n) denies train-ai" in reserved.stdout, reserved.stdout


@pytest_twisted.ensureDeferred
async def test_tag_mode_records_the_pages_tagged_and_answers_allowed_as_the_crawl_did(serve, tmp_path):
    site, folder, crawler = await recorded_crawl(serve, tmp_path, "tag")
    assert len(crawler.spider.downloaded) == len(PATHS)
    assert stat(crawler, "item_scraped_count") == len(PATHS)
    assert stat(crawler, "robotstxt/usage/items_dropped/train-ai") == 0
    assert stat(crawler, "robotstxt/usage/header/denied/train-ai") == 1
    assert stat(crawler, "robotstxt/usage/directive/denied/train-ai") == 2
    record = Record([folder])
    rows = page_rows(record, site.url)
    assert set(rows) == {"/header", "/xrobots", "/meta"}, rows
    assert all((row["did"], row["items"]) == ("tagged", 0) for row in rows.values()), rows
    [summary] = record.summary()
    assert summary.reservations == {
        "train-ai (robots.txt, tagged)": 2,
        "train-ai (header, tagged)": 1,
        "train-ai (directive, tagged)": 2,
    }, summary.reservations
    assert summary.allowed == len(PATHS) and not summary.denied
    # The crawl kept them all: the record says allowed, and names what was tagged.
    for path in ["/header", "/reserved/a"]:
        asked = robots(folder, site.url + path)
        assert asked.returncode == 0, (path, asked.stdout + asked.stderr)
        assert f"{site.url}{path}: allowed" in asked.stdout, asked.stdout
    header = robots(folder, site.url + "/header").stdout
    assert "tagged: the response header Content-Usage: train-ai=n denies train-ai" in header, header
    reserved = robots(folder, site.url + "/reserved/a").stdout
    assert "tagged: line 2 (Content-Usage: /reserved/ train-ai=n) denies train-ai" in reserved, reserved


@pytest_twisted.ensureDeferred
async def test_a_record_written_before_page_rows_and_mode_reads_and_answers_as_before(serve, tmp_path):
    # Files of an earlier version: no page rows, a header without the mode. They read, the
    # summary counts the robots.txt denials alone, and the answers are robots.txt's.
    site, folder, crawler = await recorded_crawl(serve, tmp_path, "deny")
    [decisions] = folder.glob("*.decisions.jsonl")
    header, *lines = [json.loads(line) for line in decisions.read_text().splitlines()]
    assert header == {"purposes": ["train-ai"], "mode": "deny"}
    old = [line for line in lines if line.get("kind") != "page"]
    assert len(old) == len(PATHS)
    decisions.write_text("".join(json.dumps(line) + "\n" for line in [{"purposes": ["train-ai"]}, *old]))
    record = Record([folder])
    assert record.pages == [] and len(record.decisions) == len(PATHS)
    [summary] = record.summary()
    assert summary.reservations == {"train-ai (robots.txt)": 2}
    asked = robots(folder, site.url + "/header")
    assert asked.returncode == 0 and "decided by: line 3 (Allow: /)" in asked.stdout, asked.stdout + asked.stderr
    reserved = robots(folder, site.url + "/reserved/a")
    assert reserved.returncode == 1, reserved.stdout


@pytest.mark.parametrize("noindex", ["drop", "mark"])
@pytest_twisted.ensureDeferred
async def test_the_pages_robots_directives_the_crawl_acted_on_are_in_the_record(serve, tmp_path, noindex):
    # A page that says nofollow (its two links not followed), one that says noindex in its
    # header (its item dropped or marked), one whose link is rel="nofollow" only, and a plain
    # page beside them (followed, nothing recorded): the record says what each page said and
    # what the crawl did, as its stats counted; --record and the summary say the same.
    from test_directives_crawl import anchors, follow

    site = serve(
        body("User-agent: *\nAllow: /\n"),
        {
            "/nofollow": html('<meta name="robots" content="nofollow">', anchors("/a", "/b")),
            "/noindex": html(headers=[("X-Robots-Tag", "noindex")]),
            "/rel": html("", anchors("/c", rel="nofollow")),
            "/plain": html("", anchors("/d")),
            "/d": html(),
        },
    )
    folder = tmp_path / "record"
    urls = [f"{site.url}{path}" for path in ("/nofollow", "/noindex", "/rel", "/plain")]
    crawler = await follow(urls, ROBOTSTXT_RECORD=str(folder), ROBOTSTXT_DIRECTIVES_NOINDEX=noindex)
    assert stat(crawler, "robotstxt/directives/nofollow/requests_dropped") == 2
    assert stat(crawler, "robotstxt/directives/rel_nofollow/requests_dropped") == 1
    counted = {"drop": "items_dropped", "mark": "items_marked"}[noindex]
    assert stat(crawler, f"robotstxt/directives/noindex/{counted}") == 1
    assert stat(crawler, "robotstxt/record/pages") == 3

    record = Record([folder])
    rows = {row["url"][len(site.url) :]: row for row in record.directives}
    assert set(rows) == {"/nofollow", "/noindex", "/rel"}, rows
    assert rows["/nofollow"]["directives"] == {"nofollow": ['meta name="robots"']}
    assert rows["/nofollow"]["did"] == {"requests not followed (nofollow)": 2}
    assert sorted(rows["/nofollow"]["not_followed"]) == [f"{site.url}/a", f"{site.url}/b"]
    assert rows["/noindex"]["directives"] == {"noindex": ["X-Robots-Tag"]}
    did = "items dropped (noindex)" if noindex == "drop" else "items marked (noindex)"
    assert rows["/noindex"]["did"] == {did: 1} and rows["/noindex"]["not_followed"] == []
    assert rows["/rel"]["did"] == {'requests not followed (rel="nofollow")': 1}
    assert rows["/rel"]["not_followed"] == [f"{site.url}/c"]
    assert record.decisions_for(f"{site.url}/d") and not record.not_followed(f"{site.url}/d")

    [summary] = record.summary()
    assert summary.directives == {
        "requests not followed (nofollow)": 2,
        'requests not followed (rel="nofollow")': 1,
        did: 1,
    }
    text = robots(folder)
    assert text.returncode == 0, text.stderr
    assert f"page directives: 1 {did}, 2 requests not followed (nofollow)" in text.stdout, text.stdout
    asked = robots(folder, f"{site.url}/noindex")
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert f"page directives: noindex (X-Robots-Tag): 1 {did}" in asked.stdout, asked.stdout
    # A link the crawl did not follow: the record says from which page, and why.
    unfollowed = robots(folder, f"{site.url}/a")
    assert f'not followed from {site.url}/nofollow: it says nofollow (meta name="robots")' in unfollowed.stdout, (
        unfollowed.stdout + unfollowed.stderr
    )
    plain = robots(folder, f"{site.url}/plain")
    assert "page directives" not in plain.stdout and "not followed" not in plain.stdout, plain.stdout


class TaggingSpider(ItemSpider):
    """Keeps each page's usage tag, by path."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.tags: dict[str, dict] = {}

    def parse(self, response):
        self.tags[urlsplit(response.url).path] = dict(response.meta.get("robotstxt_usage") or {})
        yield from super().parse(response)


@pytest.mark.parametrize("mode", ["deny", "tag"])
@pytest_twisted.ensureDeferred
async def test_a_page_denying_twice_is_named_by_one_source_in_the_tag_the_drop_and_the_record(
    serve, tmp_path, caplog, mode
):
    # A Content-Usage header and an X-Robots-Tag noai both deny train-ai: the item's drop (its
    # log line), the page's tag and the record's row name the same source (the drop named the
    # directive where the tag named the header); a page with the header alone beside it.
    site = serve(
        body("User-agent: *\nAllow: /\n"),
        {
            "/both": html(headers=[("Content-Usage", "train-ai=n"), ("X-Robots-Tag", "noai")]),
            "/header": html(headers=[("Content-Usage", "train-ai=n")]),
        },
    )
    folder = tmp_path / "record"
    caplog.set_level(logging.DEBUG, logger="scrapy_robots")
    crawler = await crawl(
        [f"{site.url}/both", f"{site.url}/header"],
        TaggingSpider,
        ROBOTSTXT_RECORD=str(folder),
        ROBOTSTXT_USAGE=["train-ai"],
        ROBOTSTXT_USAGE_MODE=mode,
        SPIDER_MIDDLEWARES=MIDDLEWARES,
    )
    rows = {urlsplit(row["url"]).path: row for row in Record([folder]).pages}
    for path in ("/both", "/header"):
        tag = crawler.spider.tags[path]["train-ai"]
        assert (tag["decision"], tag["source"], tag["text"]) == ("deny", "header", "Content-Usage: train-ai=n"), tag
        assert rows[path]["denied"] == {"purpose": "train-ai", "source": "header", "text": tag["text"]}, rows[path]
    dropped = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Item dropped")]
    if mode == "tag":
        assert dropped == [], dropped
        return
    assert len(dropped) == 2, dropped
    for path in ("/both", "/header"):
        line = f"Item dropped: Content-Usage: train-ai=n of {site.url}{path} denies train-ai"
        assert any(said.startswith(line) for said in dropped), (line, dropped)
