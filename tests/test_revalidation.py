"""robots.txt, tdmrep.json and RSL documents revalidated, not downloaded again (issue #50): a refresh of a
known file sends the stored ``ETag`` / ``Last-Modified`` back (``If-None-Match``,
``If-Modified-Since``); a 304 keeps the copy and its rules (no parse), a 200 replaces it.
Through the memory, SQLite (JOBDIR) and Redis storages; the record notes the check. Every
request counted at servers that honour (or ignore) the validators."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, stat
from scrapy import Request
from servers import Validated, body, redirect, sequence
from twisted.internet import reactor
from twisted.internet.task import deferLater

from scrapy_robots.cache import RobotsEntry, pack, unpack
from scrapy_robots.cache.entry import conditional_headers, entry_from_record, record_of
from scrapy_robots.record.reader import Record
from scrapy_robots.record.version import sha256_of
from scrapy_robots.status.policy import Action

V1 = "User-agent: *\nDisallow: /b\n"
V2 = "User-agent: *\nDisallow: /a\n"
LM1 = "Wed, 21 Oct 2015 07:28:00 GMT"
LM2 = "Thu, 22 Oct 2015 07:28:00 GMT"
#: every request after the first finds its site's entry expired: a step comes ``pause`` after
#: the one before, the entry expires TTL after its download ended (a loaded machine's
#: download of 0.2 s left the 0.2 s of room of a 1.0 s TTL and a 1.2 s pause: a refresh missed)
TTL = {"ROBOTSTXT_CACHE_TTL": 0.5}
WELL_KNOWN = "/.well-known/tdmrep.json"
USAGE_MW = {"scrapy_robots.spidermw.UsageMiddleware": 100}


class Steps(RecordingSpider):
    """Its URLs one after the other, ``pause`` seconds apart (longer than the TTL); a
    callable among them is run at its turn (a server changes its file)."""

    pause = 1.5

    async def start(self):
        for step in self.urls:
            if callable(step):
                step()
                continue
            yield Request(step, callback=self.parse, errback=self.errback, dont_filter=True)
            await asyncio.sleep(self.pause)


def wait(seconds: float) -> Any:
    return deferLater(reactor, seconds, lambda: None)


def calls_of(monkeypatch, module: Any, name: str) -> list[int]:
    """A list that grows by one at each call of ``module.name`` (still called)."""
    calls: list[int] = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *args: calls.append(1) or real(*args))
    return calls


async def steps(steps: list[Any], **settings: Any):
    return await crawl(steps, Steps, **{**TTL, **settings})


@pytest_twisted.ensureDeferred
async def test_a_refresh_is_answered_304_then_200_for_a_new_version_then_304_again(serve, caplog):
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    robots = Validated(V1, '"v1"', LM1)
    site = serve(robots)
    a, b = f"{site.url}/a", f"{site.url}/b"
    crawler = await steps([a, b, lambda: robots.change(V2, '"v2"', LM2), b, a])
    # The first fetch, then each refresh sends the validators of the copy it holds.
    assert robots.asked == [(None, None), ('"v1"', LM1), ('"v1"', LM1), ('"v2"', LM2)]
    assert (robots.full, robots.not_modified) == (2, 2)
    # The 304 kept V1's rules (/b denied), the 200 brought V2's (/b allowed, /a denied), kept by the last 304.
    assert crawler.spider.downloaded == [a, b]
    assert set(crawler.spider.ignored) == {a, b}
    # Two parses: the two versions; none for the 304s.
    assert stat(crawler, "robotstxt/parsed") == 2
    assert stat(crawler, "robotstxt/revalidated") == 2
    assert stat(crawler, "robotstxt/conditional") == 3
    assert stat(crawler, "robotstxt/request_count") == 4
    assert stat(crawler, "robotstxt/response_status_count/304") == 2
    not_modified = [r.getMessage() for r in caplog.records if "HTTP 304" in r.getMessage()]
    assert len(not_modified) == 2 and all("not modified: the copy kept" in line for line in not_modified)


@pytest.mark.parametrize(
    ("etag", "last_modified", "sent"),
    [
        ('W/"weak-1"', None, ('W/"weak-1"', None)),  # a weak tag is sent as stored, and validates
        (None, LM1, (None, LM1)),
        ('"v1"', LM1, ('"v1"', LM1)),
        (None, None, (None, None)),  # nothing to send: an unconditional request, a full body
    ],
    ids=["etag-weak", "last-modified", "both", "neither"],
)
@pytest_twisted.ensureDeferred
async def test_the_validators_sent_are_those_the_server_gave(serve, etag, last_modified, sent):
    robots = Validated(V1, etag, last_modified)
    site = serve(robots)
    crawler = await steps([f"{site.url}/a", f"{site.url}/a", f"{site.url}/b"])
    assert robots.asked == [(None, None), sent, sent]
    validated = sent != (None, None)
    assert (robots.full, robots.not_modified) == ((1, 2) if validated else (3, 0))
    assert stat(crawler, "robotstxt/parsed") == (1 if validated else 3)
    assert stat(crawler, "robotstxt/revalidated") == (2 if validated else 0)
    assert stat(crawler, "robotstxt/conditional") == (2 if validated else 0)
    assert crawler.spider.downloaded == [f"{site.url}/a", f"{site.url}/a"]


@pytest_twisted.ensureDeferred
async def test_a_server_that_ignores_the_validators_gets_a_full_download_each_time(serve):
    robots = Validated(V1, honour=False)
    site = serve(robots)
    crawler = await steps([f"{site.url}/a", f"{site.url}/b", f"{site.url}/a"])
    assert robots.asked == [(None, None), ('"v1"', LM1), ('"v1"', LM1)]
    assert (robots.full, robots.not_modified) == (3, 0)
    assert stat(crawler, "robotstxt/parsed") == 3
    assert stat(crawler, "robotstxt/revalidated") == 0
    assert crawler.spider.downloaded == [f"{site.url}/a", f"{site.url}/a"]


@pytest_twisted.ensureDeferred
async def test_revalidate_off_downloads_every_refresh_in_full(serve):
    off, on = Validated(V1), Validated(V1)
    off_site, on_site = serve(off), serve(on)
    await steps([f"{off_site.url}/a", f"{off_site.url}/a"], ROBOTSTXT_REVALIDATE=False)
    await steps([f"{on_site.url}/a", f"{on_site.url}/a"])
    assert off.asked == [(None, None), (None, None)] and off.full == 2
    assert on.asked == [(None, None), ('"v1"', LM1)] and on.not_modified == 1


@pytest_twisted.ensureDeferred
async def test_a_5xx_on_refresh_keeps_the_stale_copy_and_its_validators_then_a_304_keeps_it(serve):
    robots = Validated(V1)
    site = serve(sequence(robots, body("down", 503), robots))
    b = f"{site.url}/b"
    crawler = await steps([f"{site.url}/a", b, b], ROBOTSTXT_UNREACHABLE_RETRY_DELAY=1.0)
    # The 503 kept V1 in use (today's policy, RFC 9309 2.4); the next attempt revalidated it.
    assert stat(crawler, "robotstxt/cache/stale_used") == 1
    assert robots.asked == [(None, None), ('"v1"', LM1)]
    assert robots.not_modified == 1
    assert stat(crawler, "robotstxt/revalidated") == 1
    assert stat(crawler, "robotstxt/parsed") == 1
    assert crawler.spider.downloaded == [f"{site.url}/a"]
    assert set(crawler.spider.ignored) == {b}


@pytest_twisted.ensureDeferred
async def test_a_304_to_a_request_without_validators_is_no_answer_not_a_redirect(serve):
    # RFC 9309's 3xx row ("allow": a redirect not followed) is not a 304's: with no copy to
    # keep, it is no usable answer, as a network failure is (default: unreachable).
    site = serve(body("", 304))
    crawler = await crawl([f"{site.url}/a", f"{site.url}/b"], ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0)
    assert crawler.spider.downloaded == []
    assert set(crawler.spider.ignored) == {f"{site.url}/a", f"{site.url}/b"}
    assert stat(crawler, "robotstxt/policy/unreachable") == 1
    assert stat(crawler, "robotstxt/policy/allow") == 0


@pytest.mark.parametrize(
    "policy", ["scrapy.extensions.httpcache.DummyPolicy", "scrapy.extensions.httpcache.RFC2616Policy"]
)
@pytest_twisted.ensureDeferred
async def test_scrapys_http_cache_neither_answers_nor_stores_the_revalidation(serve, tmp_path, policy):
    robots = Validated(V1)
    site = serve(robots)
    cache = {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path / "httpcache"), "HTTPCACHE_POLICY": policy}
    crawler = await steps([f"{site.url}/a", f"{site.url}/b"], **cache)
    # The conditional request reached the server, and its 304 reached the book.
    assert robots.asked == [(None, None), ('"v1"', LM1)]
    assert stat(crawler, "robotstxt/revalidated") == 1
    assert stat(crawler, "robotstxt/parsed") == 1
    assert crawler.spider.ignored.keys() == {f"{site.url}/b"}
    # A new crawl's first, unconditional request is never answered with a stored 304.
    again = await steps([f"{site.url}/a"], **cache)
    assert again.spider.downloaded == [f"{site.url}/a"]
    assert stat(again, "robotstxt/policy/parse") == 1


@pytest_twisted.ensureDeferred
async def test_a_redirected_robots_txt_is_revalidated_at_its_target(serve):
    robots = Validated(V1)
    site = serve(redirect("/real-robots.txt"), routes={"/real-robots.txt": robots})
    crawler = await steps([f"{site.url}/a", f"{site.url}/b", f"{site.url}/b"])
    assert robots.asked == [(None, None), ('"v1"', LM1), ('"v1"', LM1)]
    assert stat(crawler, "robotstxt/revalidated") == 2
    assert stat(crawler, "robotstxt/parsed") == 1
    assert crawler.spider.downloaded == [f"{site.url}/a"]


@pytest_twisted.ensureDeferred
async def test_tdmrep_json_is_revalidated_through_the_same_book(serve, monkeypatch):
    from scrapy_robots.tdmrep import crawl as tdm_crawl

    parses = calls_of(monkeypatch, tdm_crawl, "parse_tdmrep")
    tdm = Validated(json.dumps([{"location": "/books/*", "tdm-reservation": 1}]), content_type="application/json")
    site = serve(body("User-agent: *\nDisallow: /private\n"), routes={WELL_KNOWN: tdm})
    books = f"{site.url}/books/x"
    crawler = await steps([f"{site.url}/a", books, books], ROBOTSTXT_USAGE=["train-ai"], SPIDER_MIDDLEWARES=USAGE_MW)
    assert tdm.asked == [(None, None), ('"v1"', LM1), ('"v1"', LM1)]
    assert (tdm.full, tdm.not_modified) == (1, 2)
    assert len(parses) == 1
    assert stat(crawler, "robotstxt/tdmrep/revalidated") == 2
    assert stat(crawler, "robotstxt/tdmrep/conditional") == 2
    # The file kept its rules: the reservation still denies.
    assert crawler.spider.downloaded == [f"{site.url}/a"]
    assert set(crawler.spider.ignored) == {books}


@pytest_twisted.ensureDeferred
async def test_a_second_crawler_of_the_fleet_revalidates_with_the_validators_from_redis(serve, redis):
    robots = Validated(V1)
    site = serve(robots)
    fleet = {"ROBOTSTXT_CACHE_STORAGE": "scrapy_robots.fleet.RedisRobotsStorage", "ROBOTSTXT_REDIS_URL": redis.url}
    first = await steps([f"{site.url}/a"], **fleet)
    await wait(1.0)  # past the entry's lifetime: the fleet's record is expired, still kept
    second = await steps([f"{site.url}/b", f"{site.url}/a"], **fleet)
    assert robots.asked == [(None, None), ('"v1"', LM1), ('"v1"', LM1)]
    assert (robots.full, robots.not_modified) == (1, 2)
    assert stat(first, "robotstxt/parsed") == 1
    assert stat(second, "robotstxt/parsed") == 0  # built from the rules stored beside the body
    assert stat(second, "robotstxt/revalidated") == 2
    assert second.spider.downloaded == [f"{site.url}/a"]
    assert set(second.spider.ignored) == {f"{site.url}/b"}


@pytest_twisted.ensureDeferred
async def test_a_resumed_jobdir_crawl_revalidates_the_files_it_kept(serve, tmp_path):
    robots = Validated(V1)
    site = serve(robots)
    jobdir = str(tmp_path / "job")
    await steps([f"{site.url}/a"], JOBDIR=jobdir)
    await wait(1.0)
    second = await steps([f"{site.url}/b", f"{site.url}/c"], JOBDIR=jobdir)
    assert robots.asked == [(None, None), ('"v1"', LM1), ('"v1"', LM1)]
    assert stat(second, "robotstxt/parsed") == 0
    assert stat(second, "robotstxt/revalidated") == 2
    assert second.spider.downloaded == [f"{site.url}/c"]
    # The SQLite file keeps the validators, and the body for the next 304.
    import sqlite3

    with sqlite3.connect(f"{jobdir}/robotstxt.sqlite3") as db:
        [(record, body_kept)] = db.execute("SELECT record, body IS NOT NULL FROM robots").fetchall()
    assert json.loads(record)["etag"] == '"v1"' and json.loads(record)["last_modified"] == LM1 and body_kept


@pytest_twisted.ensureDeferred
async def test_the_record_notes_each_revalidation_not_a_new_version(serve, tmp_path):
    robots = Validated(V1, '"v1"', LM1)
    site = serve(robots)
    a, b = f"{site.url}/a", f"{site.url}/b"
    folder = tmp_path / "record"
    await steps(
        [a, b, lambda: robots.change(V2, '"v2"', LM2), b, a],
        ROBOTSTXT_RECORD=str(folder),
        ROBOTSTXT_RECORD_FORMAT="jsonl",
    )
    record = Record([folder])
    site_key = f"http://{site.host}:{site.port}"
    versions = record.versions[("robots.txt", site_key)]
    assert [v.sha256 for v in versions] == [sha256_of(V1.encode()), sha256_of(V2.encode())]
    checks = record.revalidations
    assert [(row["file"], row["status"], row["governs"], row["etag"]) for row in checks] == [
        ("robots.txt", 304, sha256_of(V1.encode()), '"v1"'),
        ("robots.txt", 304, sha256_of(V2.encode()), '"v2"'),
    ]
    # Each decision names the version that governed it, revalidated or not.
    assert [(row["url"], row["robots"]) for row in record.decisions] == [
        (a, sha256_of(V1.encode())),
        (b, sha256_of(V1.encode())),
        (b, sha256_of(V2.encode())),
        (a, sha256_of(V2.encode())),
    ]
    [summary] = record.summary()
    assert (summary.fetches, summary.revalidated, len(summary.versions)) == (2, 2, 2)
    assert record.revalidated_at(site_key, versions[0].fetched_at, checks[0]["t"]) == checks[0]["t"]
    assert record.revalidated_at(site_key, versions[1].fetched_at, checks[1]["t"] - 0.001) is None


class LongSteps(Steps):
    pause = 4.0


@pytest_twisted.ensureDeferred
async def test_a_recording_crawler_asks_for_the_whole_file_a_crawler_that_does_not_record_stored(
    serve, redis, tmp_path, caplog
):
    # A fleet whose first crawler does not record: its entry in Redis has the validators,
    # not the version. The recording crawler after it decides on that copy (a decision that
    # names no version: said once, counted), then, at the refresh, asks for the whole file
    # instead of a 304 that would keep it obeying a version its record cannot name.
    caplog.set_level(logging.INFO, logger="scrapy_robots")
    robots = Validated(V1, '"v1"', LM1)
    site = serve(robots)
    a, b, c = (f"{site.url}/{path}" for path in "abc")
    folder = tmp_path / "record"
    fleet = {"ROBOTSTXT_CACHE_STORAGE": "scrapy_robots.fleet.RedisRobotsStorage", "ROBOTSTXT_REDIS_URL": redis.url}
    await crawl([a], Steps, ROBOTSTXT_CACHE_TTL=4.0, **fleet)
    # Restored within the first crawler's 4 s; the next two steps 4 s apart, each past the
    # lifetime of the copy before it (TTL 0.5 s for the copies this crawler fetches).
    second = await crawl(
        [a, b, c], LongSteps, ROBOTSTXT_RECORD=str(folder), ROBOTSTXT_RECORD_FORMAT="jsonl", **{**TTL, **fleet}
    )
    # The refresh of the unversioned copy unconditional; the next one, of the copy this
    # crawler recorded, sends its validators again.
    assert robots.asked == [(None, None), (None, None), ('"v1"', LM1)]
    assert (robots.full, robots.not_modified) == (2, 1)
    assert stat(second, "robotstxt/record/unversioned") == 1
    said = [r.getMessage() for r in caplog.records if "without its version" in r.getMessage()]
    assert len(said) == 1 and "ROBOTSTXT_RECORD on every crawler" in said[0], said
    record = Record([folder])
    v1 = sha256_of(V1.encode())
    assert [v.sha256 for v in record.versions[("robots.txt", f"http://{site.host}:{site.port}")]] == [v1]
    assert [(row["url"], row["robots"]) for row in record.decisions] == [(a, None), (b, v1), (c, v1)]
    assert second.spider.downloaded == [a, c]


#: An entry packed by the release before validators were stored (its version, Content-Type
#: and body set), and its SQLite record: both read, with no validators.
OLD_PACKED = bytes.fromhex(
    "0178f91fd7aaf283040ad04f89561606480101f232d4db507f10e32da85d4a89499441b0036219b41950132252124de20200b6ae3cb1"
)
OLD_RECORD = (
    '{"site":"http://a:80","action":"parse","fetched_at":1.0,"expires_at":2.0,"status":200,"url":null,'
    '"redirects":0,"size":0,"truncated":false,"error":null,"failures":0,"unreachable_since":null,'
    '"retry_after":null,"content_type":"text/plain","schedule_end":null,"version":"' + "ab" * 32 + '",'
    '"version_fetched_at":1.0,"body_dropped":false}'
)


def test_validators_are_stored_and_older_entries_still_read():
    entry = RobotsEntry(
        site="http://a:80", action=Action.PARSE, fetched_at=1.0, expires_at=2.0, status=200, body=b"User-agent: *\n"
    )
    entry.etag, entry.last_modified = 'W/"x"', LM1
    for stored in (unpack(pack(entry)), entry_from_record(record_of(entry), entry.body)):
        assert (stored.etag, stored.last_modified) == ('W/"x"', LM1)
        assert conditional_headers(stored) == {"If-None-Match": 'W/"x"', "If-Modified-Since": LM1}
    for old in (unpack(OLD_PACKED), entry_from_record(OLD_RECORD, b"User-agent: *\nDisallow: /b\n")):
        assert (old.version, old.content_type, old.body) == ("ab" * 32, "text/plain", b"User-agent: *\nDisallow: /b\n")
        assert (old.etag, old.last_modified) == (None, None)
        assert conditional_headers(old) == {}
    # A parsed file whose body is gone cannot honour a 304: nothing sent.
    entry.body = None
    assert conditional_headers(entry) == {}


#: An RSL document (RSL 1.0 3.1.2's example) and the version that turns it around: the
#: site's pages are licensed for ai-train except /articles/, then /articles/ only.
RSL_V1 = (
    '<rsl xmlns="https://rslstandard.org/rsl">'
    '<content url="/"><license><permits type="usage">all</permits></license></content>'
    '<content url="/articles/"><license><prohibits type="usage">ai-train</prohibits></license></content></rsl>'
)
RSL_V2 = (
    '<rsl xmlns="https://rslstandard.org/rsl">'
    '<content url="/"><license><prohibits type="usage">all</prohibits></license></content>'
    '<content url="/articles/"><license><permits type="usage">ai-train</permits></license></content></rsl>'
)
LICENSE = "/license.xml"


def robots_naming_license(request) -> bytes:
    return f"License: http://{request.getHeader('host')}{LICENSE}\n\nUser-agent: *\nAllow: /\n".encode()


@pytest_twisted.ensureDeferred
async def test_an_rsl_document_is_revalidated_kept_on_304_and_replaced_by_its_new_version(serve, monkeypatch, tmp_path):
    from scrapy_robots.policyfiles import license as rsl_crawl

    parses = calls_of(monkeypatch, rsl_crawl, "parse_rsl")
    document = Validated(RSL_V1, content_type="application/rsl+xml")
    site = serve(robots_naming_license, routes={LICENSE: document})
    about, article, news = f"{site.url}/about", f"{site.url}/articles/1", f"{site.url}/news"
    folder = tmp_path / "record"
    crawler = await steps(
        [about, article, lambda: document.change(RSL_V2, '"v2"', LM2), article, news],
        ROBOTSTXT_USAGE=["train-ai"],
        ROBOTSTXT_RECORD=str(folder),
        ROBOTSTXT_RECORD_FORMAT="jsonl",
    )
    # Each refresh sends the validators of the version the crawl holds.
    assert document.asked == [(None, None), ('"v1"', LM1), ('"v1"', LM1), ('"v2"', LM2)]
    assert (document.full, document.not_modified) == (2, 2)
    # The 304 kept V1 (/articles/ not licensed), the 200 brought V2 (/articles/ licensed, the rest not),
    # kept by the last 304: one parse per version, none for a 304.
    assert crawler.spider.downloaded == [about, article]
    assert set(crawler.spider.ignored) == {article, news}
    assert crawler.spider.ignored[news].startswith("Forbidden by RSL license: RSL not-licensed for ai-train")
    assert len(parses) == 2
    assert stat(crawler, "robotstxt/rsl/request_count") == 4
    assert stat(crawler, "robotstxt/rsl/conditional") == 3
    assert stat(crawler, "robotstxt/rsl/revalidated") == 2
    assert stat(crawler, "robotstxt/rsl/denied/not_licensed") == 2
    # The record notes the two checks against the version each kept, not new versions.
    record = Record([folder])
    site_key = f"http://{site.host}:{site.port}"
    assert [v.sha256 for v in record.versions[("license.xml", site_key)]] == [
        sha256_of(RSL_V1.encode()),
        sha256_of(RSL_V2.encode()),
    ]
    assert [(row["file"], row["status"], row["governs"]) for row in record.revalidations] == [
        ("license.xml", 304, sha256_of(RSL_V1.encode())),
        ("license.xml", 304, sha256_of(RSL_V2.encode())),
    ]


@pytest_twisted.ensureDeferred
async def test_a_second_crawler_revalidates_the_rsl_document_from_redis_and_reads_it_once(serve, redis, monkeypatch):
    from scrapy_robots.policyfiles import license as rsl_crawl

    parses = calls_of(monkeypatch, rsl_crawl, "parse_rsl")
    document = Validated(RSL_V1, content_type="application/rsl+xml")
    site = serve(robots_naming_license, routes={LICENSE: document})
    about, article = f"{site.url}/about", f"{site.url}/articles/1"
    fleet = {"ROBOTSTXT_CACHE_STORAGE": "scrapy_robots.fleet.RedisRobotsStorage", "ROBOTSTXT_REDIS_URL": redis.url}
    await steps([about], ROBOTSTXT_USAGE=["train-ai"], **fleet)
    assert len(parses) == 1
    await wait(1.0)  # past the document's lifetime: the fleet's record is expired, still kept
    second = await steps([article, about], ROBOTSTXT_USAGE=["train-ai"], **fleet)
    assert document.asked == [(None, None), ('"v1"', LM1), ('"v1"', LM1)]
    assert (document.full, document.not_modified) == (1, 2)
    # The stored body read once (this crawler held no rules), and no read for either 304.
    assert len(parses) == 2
    assert stat(second, "robotstxt/rsl/revalidated") == 2
    assert second.spider.downloaded == [about] and set(second.spider.ignored) == {article}
