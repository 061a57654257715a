"""RSL through a fleet (issue #50): the license document a site's robots.txt names is
fetched once per site for every crawler sharing the Redis, obeyed by each of them, and
revalidated with the validators stored with the fleet's record. Real `scrapy crawl`
processes, a real redis-server; the documents and pages counted at the sites."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest_twisted
import redis as redis_py
from fleet import finished, start_crawler
from servers import Validated, body, sequence
from twisted.internet import reactor
from twisted.internet.task import deferLater

from scrapy_robots.record.reader import Record
from scrapy_robots.record.version import sha256_of

# No gap or duration asserted: at the lower CPU priority under `make test` (tests/conftest.py),
# not beside the fleet's pace tests at theirs (marked `timing`, its 3-4 crawler processes
# each made the pace tests' crawlers late).

FILES = Path(__file__).resolve().parent / "rsl_files"
LICENSE = "/license.xml"
#: The end of a site's RSL record's key in the storage (policyfiles/license.py).
RSL_KEY = "/.well-known/rsl"
#: A declared purpose, which RSL answers; TDMRep (on with it by default) off, so that
#: the sites count RSL's document and the pages only.
USAGE = {"ROBOTSTXT_USAGE": '["train-ai"]', "ROBOTSTXT_TDMREP": False}
#: Each crawler its own URLs (the in-memory scheduler): every crawler meets the site's
#: licensed and unlicensed pages, so that each is seen obeying the document itself.
OWN_SHARES = {"SCHEDULER": "scrapy.core.scheduler.Scheduler", "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter"}
DENIED = "Forbidden by RSL license: RSL not-licensed for ai-train"
LM1 = "Wed, 21 Oct 2015 07:28:00 GMT"
LM2 = "Thu, 22 Oct 2015 07:28:00 GMT"


def sleep(seconds: float) -> Any:
    return deferLater(reactor, seconds, lambda: None)


def robots_naming_license(request) -> bytes:
    return f"License: http://{request.getHeader('host')}{LICENSE}\n\nUser-agent: *\nDisallow: /private\n".encode()


def xml(name: str) -> str:
    return (FILES / name).read_text()


async def run_fleet(shares: list[list[str]], redis, **settings: Any) -> list[dict[str, Any]]:
    return await finished([start_crawler(share, redis.url, **{**OWN_SHARES, **USAGE, **settings}) for share in shares])


def license_hits(site) -> int:
    return site.paths().count(LICENSE)


@pytest_twisted.ensureDeferred
async def test_the_license_is_fetched_once_per_site_for_the_fleet_and_obeyed_by_every_crawler(serve, redis, tmp_path):
    # RSL 1.0 3.1.2's example: / permits all, /articles/ prohibits ai-train.
    sites = [serve(robots_naming_license, {LICENSE: body(xml("scope.xml"))}) for _ in range(2)]

    def share(n: int) -> list[str]:
        return [f"{site.url}/{path}{n}" for site in sites for path in ("about", "articles/")]

    folder = tmp_path / "record"
    results = await run_fleet([share(n) for n in range(3)], redis, ROBOTSTXT_RECORD=str(folder))
    assert [license_hits(site) for site in sites] == [1, 1]
    assert [site.robots_hits() for site in sites] == [1, 1]
    assert sum(r["stats"].get("robotstxt/rsl/request_count", 0) for r in results) == 2
    for n, result in enumerate(results):
        assert sorted(result["downloaded"]) == sorted(f"{site.url}/about{n}" for site in sites), result["log"][-3000:]
        assert set(result["ignored"]) == {f"{site.url}/articles/{n}" for site in sites}
        assert all(reason.startswith(DENIED) for reason in result["ignored"].values()), result["ignored"]
        assert result["stats"].get("robotstxt/rsl/denied/not_licensed") == 2, result["stats"]
    # No page it does not license reached a site.
    for site in sites:
        assert sorted(site.paths()) == sorted(["/robots.txt", LICENSE, "/about0", "/about1", "/about2"])
    # Every crawler's decisions name the one version, whichever crawler fetched it.
    record = Record([folder])
    denied = [row for row in record.decisions if not row["allowed"]]
    assert len(denied) == 6 and {row["reason"] for row in denied} == {"rsl/denied/not_licensed"}
    assert {row["rsl"] for row in record.decisions} == {sha256_of(xml("scope.xml").encode())}

    # Each site's document is one record of the fleet, keyed by the site whatever its URL.
    client = redis_py.Redis.from_url(redis.url)
    keys = {key.decode() for key in client.scan_iter("scrapy_robots:fleetbot:site:*")}
    client.close()
    assert keys == {f"scrapy_robots:fleetbot:site:{{{site.url}{suffix}}}" for site in sites for suffix in ("", RSL_KEY)}

    # A crawler started after the fleet ended reads the document from Redis: no download.
    [late] = await run_fleet([share(3)], redis)
    assert [license_hits(site) for site in sites] == [1, 1]
    assert late["stats"].get("robotstxt/rsl/request_count", 0) == 0
    assert late["stats"].get("robotstxt/rsl/restored") == 2, late["stats"]
    assert sorted(late["downloaded"]) == sorted(f"{site.url}/about3" for site in sites)
    assert set(late["ignored"]) == {f"{site.url}/articles/3" for site in sites}


@pytest_twisted.ensureDeferred
async def test_license_required_is_denied_in_every_crawler_without_a_token_and_sent_by_each_with_one(serve, redis):
    # RSL's model document: /premium/ behind a license server (a free license, a token required).
    seen: list[tuple[str, str | None]] = []

    def page(request) -> bytes:
        seen.append((request.path.decode(), request.getHeader("authorization")))
        return b"<html></html>"

    site = serve(robots_naming_license, {LICENSE: body(xml("crawl-payment.xml"))})
    site.pages = page
    without = await run_fleet([[f"{site.url}/premium/a{n}"] for n in range(2)], redis)
    assert seen == []
    for result in without:
        [reason] = result["ignored"].values()
        assert reason.startswith("Forbidden by RSL license: RSL license-required for ai-train"), reason
        assert result["stats"].get("robotstxt/rsl/denied/license_required") == 1, result["stats"]
    with_token = await run_fleet([[f"{site.url}/premium/b{n}"] for n in range(2)], redis, ROBOTSTXT_RSL_TOKEN="tok-123")
    assert sorted(seen) == [("/premium/b0", "License tok-123"), ("/premium/b1", "License tok-123")]
    assert [result["ignored"] for result in with_token] == [{}, {}]
    # Four crawlers, one download of the document.
    assert license_hits(site) == 1


@pytest_twisted.ensureDeferred
async def test_a_license_answering_503_then_200_is_not_licensed_meanwhile_in_every_crawler(serve, redis):
    site = serve(robots_naming_license, {LICENSE: sequence(body("busy", 503), body(xml("scope.xml")))})
    # No waiting for a retry: each request meets the unreachable document itself.
    settings = {"ROBOTSTXT_UNREACHABLE_RETRY_TIMES": 0, "ROBOTSTXT_UNREACHABLE_RETRY_DELAY": 5.0}
    meanwhile = await run_fleet(
        [[f"{site.url}/about{n}", f"{site.url}/articles/{n}"] for n in range(2)], redis, **settings
    )
    assert license_hits(site) == 1  # the 503, shared with the fleet until the retry is due
    assert site.page_hits() == [hit for hit in site.hits if hit.path == LICENSE]  # never allowed
    for result in meanwhile:
        assert result["downloaded"] == []
        assert all(
            reason.startswith("Forbidden by RSL license: license.xml unreachable")
            for reason in result["ignored"].values()
        ), result["ignored"]
        assert len(result["ignored"]) == 2
        assert result["stats"].get("robotstxt/rsl/denied/unreachable") == 2, result["stats"]
    await sleep(5.2)
    after = await run_fleet(
        [[f"{site.url}/about{n}", f"{site.url}/articles/{n}"] for n in range(2, 4)], redis, **settings
    )
    assert license_hits(site) == 2
    for n, result in enumerate(after, 2):
        assert result["downloaded"] == [f"{site.url}/about{n}"]
        assert list(result["ignored"]) == [f"{site.url}/articles/{n}"]
        assert result["ignored"][f"{site.url}/articles/{n}"].startswith(DENIED)


@pytest_twisted.ensureDeferred
async def test_a_crawler_revalidates_the_license_another_stored_then_a_third_reads_its_new_version(
    serve, redis, tmp_path
):
    document = Validated(xml("scope.xml"), '"v1"', LM1, content_type="application/rsl+xml")
    site = serve(robots_naming_license, {LICENSE: document})

    def share(n: int) -> list[str]:
        return [f"{site.url}/about{n}", f"{site.url}/articles/{n}"]

    # Every crawler keeps the compliance record (the version a 304 keeps is the one its fetcher recorded).
    folder = tmp_path / "record"
    settings = {"ROBOTSTXT_CACHE_TTL": 2.0, "ROBOTSTXT_RECORD": str(folder)}
    [first] = await run_fleet([share(0)], redis, **settings)
    await sleep(2.1)  # past the document's lifetime: the fleet's record is expired, still kept
    [second] = await run_fleet([share(1)], redis, **settings)
    document.change(
        '<rsl xmlns="https://rslstandard.org/rsl">'
        '<content url="/"><license><prohibits type="usage">ai-train</prohibits></license></content></rsl>',
        '"v2"',
        LM2,
    )
    await sleep(2.1)
    [third] = await run_fleet([share(2)], redis, **settings)
    # The second crawler sent what the first stored; its 304 kept the version, with no new read.
    assert document.asked == [(None, None), ('"v1"', LM1), ('"v1"', LM1)]
    assert (document.full, document.not_modified) == (2, 1)
    assert (first["stats"].get("robotstxt/rsl/conditional", 0), first["stats"].get("robotstxt/rsl/revalidated", 0)) == (
        0,
        0,
    )
    assert (
        second["stats"].get("robotstxt/rsl/conditional") == 1 and second["stats"].get("robotstxt/rsl/revalidated") == 1
    )
    assert "HTTP 304 -> parse (not modified: the copy kept, not read again)" in second["log"], second["log"][-3000:]
    record = Record([folder])
    [check] = record.revalidations
    v1, v2 = sha256_of(xml("scope.xml").encode()), sha256_of(document.data)
    assert (check["file"], check["status"], check["governs"], check["etag"]) == ("license.xml", 304, v1, '"v1"')
    assert [v.sha256 for found in record.versions.values() for v in found if v.file == "license.xml"] == [v1, v2]
    # Both obeyed the first version; the third the new one, which licenses nothing for ai-train.
    for n, result in enumerate((first, second)):
        assert result["downloaded"] == [f"{site.url}/about{n}"]
        assert list(result["ignored"]) == [f"{site.url}/articles/{n}"]
    assert (
        third["stats"].get("robotstxt/rsl/conditional") == 1 and third["stats"].get("robotstxt/rsl/revalidated", 0) == 0
    )
    assert third["downloaded"] == [] and set(third["ignored"]) == set(share(2))
    assert all(reason.startswith(DENIED) for reason in third["ignored"].values()), third["ignored"]


@pytest_twisted.ensureDeferred
async def test_crawlers_waiting_on_a_license_answering_503_let_nothing_through_before_its_200(serve, redis):
    site = serve(robots_naming_license, {LICENSE: sequence(body("busy", 503), body(xml("scope.xml")))})
    # One retry, due a second after the 503: every crawler's requests wait for it.
    settings = {"ROBOTSTXT_UNREACHABLE_RETRY_TIMES": 1, "ROBOTSTXT_UNREACHABLE_RETRY_DELAY": 1.0}
    results = await run_fleet(
        [[f"{site.url}/about{n}", f"{site.url}/articles/{n}"] for n in range(2)], redis, **settings
    )
    # The fleet asked twice (the 503, the retry's 200), not each crawler.
    documents = [hit.at for hit in site.hits if hit.path == LICENSE]
    assert len(documents) == 2
    assert all(hit.at > documents[1] for hit in site.page_hits() if hit.path != LICENSE)
    for n, result in enumerate(results):
        assert result["downloaded"] == [f"{site.url}/about{n}"]
        assert list(result["ignored"]) == [f"{site.url}/articles/{n}"]
        assert result["ignored"][f"{site.url}/articles/{n}"].startswith(DENIED)
