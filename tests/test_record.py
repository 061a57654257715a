"""The compliance record (issue #34, part 2): every policy file version a crawl saw, each
decision with the version that made it, read back with warcio and asked with
``scrapy robots --record`` without the network; through a pause and resume (JOBDIR), a
robots.txt change in between, and a crash."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import pytest_twisted
from crawling import RecordingSpider, crawl, stat
from fleet import start_crawler
from processes import run_spider
from servers import body, drip, sequence
from test_stopping import ended, sleep, until
from twisted.internet.defer import DeferredList
from warcio.archiveiterator import ArchiveIterator

from scrapy_robots.commands.record import site_of
from scrapy_robots.record.reader import Record

# Asserts on a real clock: run at the normal CPU priority under `make test` (tests/conftest.py).
pytestmark = pytest.mark.timing

ROBOTS = "User-agent: *\nDisallow: /private\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class ProvenanceSpider(RecordingSpider):
    """Keeps what each response's meta says of the robots.txt version that governed it."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.versions: dict[str, dict] = {}

    def parse(self, response):
        super().parse(response)
        self.versions[response.url] = response.meta.get("robotstxt_version")


def warc_records(folder: Path) -> list[tuple[str, str, bytes]]:
    records = []
    for path in sorted(folder.glob("*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream, check_digests=True):
                uri = record.rec_headers.get_header("WARC-Target-URI")
                records.append((record.rec_type, uri, record.content_stream().read()))
                # What `warcio check` verifies: each block and payload digest matches.
                assert record.digest_checker.passed is not False, record.digest_checker.problems
    return records


def robots(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", "--record", str(folder), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=folder.parent,
    )


@pytest_twisted.ensureDeferred
async def test_a_crawl_records_each_version_and_each_decision_and_the_response_carries_its_version(serve, tmp_path):
    parsed = serve(body(ROBOTS))
    denied = serve(body("no", 403))
    missing = serve(body("not here", 404))
    urls = [f"{parsed.url}/a", f"{parsed.url}/private/b", f"{denied.url}/c", f"{missing.url}/d"]
    folder = tmp_path / "record"
    crawler = await crawl(urls, ProvenanceSpider, ROBOTSTXT_RECORD=str(folder))
    assert sorted(crawler.spider.downloaded) == [f"{parsed.url}/a", f"{missing.url}/d"]
    # The response knows the version that let it through.
    assert crawler.spider.versions[f"{parsed.url}/a"]["sha256"] == sha(ROBOTS)
    assert crawler.spider.versions[f"{missing.url}/d"]["sha256"] == sha("not here")
    # The WARC, read by warcio: a request, a response and a metadata record per robots.txt.
    records = warc_records(folder)
    responses = {uri: payload for kind, uri, payload in records if kind == "response"}
    assert responses == {
        f"{parsed.url}/robots.txt": ROBOTS.encode(),
        f"{denied.url}/robots.txt": b"no",
        f"{missing.url}/robots.txt": b"not here",
    }
    assert [kind for kind, _, _ in records].count("request") == 3
    metadata = [json.loads(payload) for kind, _, payload in records if kind == "metadata"]
    assert sorted(m["action"] for m in metadata) == ["allow", "deny", "parse"]
    # Every decision, with the version that made it.
    record = Record([folder])
    rows = {row["url"]: row for row in record.decisions}
    assert set(rows) == set(urls)
    assert rows[f"{parsed.url}/a"]["allowed"] and rows[f"{parsed.url}/a"]["robots"] == sha(ROBOTS)
    assert not rows[f"{parsed.url}/private/b"]["allowed"]
    assert rows[f"{parsed.url}/private/b"]["reason"] == "forbidden"
    assert rows[f"{denied.url}/c"]["reason"] == "denied/deny_all"
    assert rows[f"{missing.url}/d"]["by"] == "status policy: HTTP 404 -> allow"
    assert stat(crawler, "robotstxt/record/decisions") == 4
    assert stat(crawler, "robotstxt/record/versions/robots") == 3
    # Asked for a time before the crawl: no version then, an error.
    early = robots(folder, "--at", "2000-01-01T00:00Z", f"{parsed.url}/a")
    assert early.returncode == 2 and "holds no robots.txt" in early.stdout, early.stdout + early.stderr
    # The 404 site: allowed by its status policy, whatever the path.
    missing_answer = robots(folder, f"{missing.url}/d", f"{denied.url}/c")
    assert missing_answer.returncode == 1, missing_answer.stdout
    assert "decided by: status policy: HTTP 404 -> allow" in missing_answer.stdout
    assert "decided by: status policy: HTTP 403 -> deny" in missing_answer.stdout


OLD = "User-agent: *\nDisallow: /old\n"
NEW = "User-agent: *\nDisallow: /new\n"
SUBPROCESS = {
    "ROBOTSTXT_OBEY": True,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "USER_AGENT": "Mozilla/5.0 (compatible; FooBot/1.0; +https://foo.example/bot)",
    "DOWNLOADER_MIDDLEWARES": {
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        "scrapy_robots.RobotsTxtMiddleware": 100,
    },
    "CONCURRENT_REQUESTS": 2,
    "DOWNLOAD_DELAY": 0.1,  # the crawl lasts long enough to be stopped
    "RANDOMIZE_DOWNLOAD_DELAY": False,
    "ROBOTSTXT_RECORD_FLUSH_INTERVAL": 0.2,
}


def slow_site(serve, robots_text: str):
    site = serve(body(robots_text))
    site.pages = drip(b"ok", 0.05)
    return site


def paths_of(site) -> list[str]:
    return [hit.path for hit in site.page_hits()]


@pytest_twisted.ensureDeferred
async def test_a_record_through_ctrl_c_and_a_resume_across_a_robots_txt_change_answers_for_both_times(serve, tmp_path):
    site = slow_site(serve, OLD)
    urls = [f"{site.url}/{kind}/{n}" for n in range(12) for kind in ("old", "new", "page")]
    folder = tmp_path / "record"
    settings = {**SUBPROCESS, "JOBDIR": str(tmp_path / "job"), "ROBOTSTXT_RECORD": str(folder)}
    settings["ROBOTSTXT_CACHE_TTL"] = 2  # the resume fetches robots.txt again
    settings["ROBOTSTXT_RECORD_FLUSH_INTERVAL"] = 60  # written when each run closes
    handle = run_spider(urls, tmp_path, **settings)
    await until(lambda: len(site.page_hits()) >= 6, 30, "the first run to fetch 6 pages")
    handle.signal("INT")
    first = await ended(handle, timeout=20)
    assert not first["killed"] and first["reason"] == "shutdown", first["log"][-3000:]
    between = time.time()
    # robots.txt changes; the stored copy expires (ROBOTSTXT_CACHE_TTL) before the resume.
    site.robots = body(NEW)
    await sleep(2.5)
    last = await ended(run_spider(urls, tmp_path, **settings), timeout=90)
    assert last["exit"] == 0 and last["reason"] == "finished", last["log"][-3000:]

    record = Record([folder])
    assert len(list(folder.glob("*.decisions.jsonl"))) == 2  # one file per run
    decided = Counter(row["url"] for row in record.decisions)
    # Each request decided once across both runs: none twice, none left out.
    assert set(decided) == set(urls) and max(decided.values()) == 1, decided
    for row in record.decisions:
        assert row["robots"] == (sha(OLD) if row["t"] < between else sha(NEW)), row
        assert row["allowed"] == (f"/{'old' if row['robots'] == sha(OLD) else 'new'}/" not in row["url"]), row
    # Every page the server sent was allowed by the version its decision names.
    allowed = {row["url"][len(site.url) :] for row in record.decisions if row["allowed"]}
    assert sorted(paths_of(site)) == sorted(allowed)
    # Both versions are in the WARC, each body once (a refetch of the same body is a revisit).
    records = warc_records(folder)
    bodies = [payload for kind, uri, payload in records if kind == "response" and uri.endswith("/robots.txt")]
    assert sorted(bodies) == sorted([NEW.encode(), OLD.encode()]) or set(bodies) == {OLD.encode(), NEW.encode()}
    assert len(bodies) <= 2 + 1  # once per file: the first run's and the second's

    # Asked later, without the network: the version at each time, and its verdict.
    before, now = str(between - 0.5), str(time.time())
    answers = {}
    for at in (before, now):
        for kind in ("old", "new"):
            done = robots(folder, "--at", at, f"{site.url}/{kind}/99", "--json")
            answers[(at, kind)] = (done.returncode, json.loads(done.stdout) if done.stdout else done.stderr)
    assert answers[(before, "old")][0] == 1 and answers[(before, "new")][0] == 0, answers
    assert answers[(now, "old")][0] == 0 and answers[(now, "new")][0] == 1, answers
    assert answers[(before, "old")][1]["robots_txt"]["sha256"] == sha(OLD)
    assert answers[(before, "old")][1]["agent"] == "FooBot"  # as the crawl obeyed, not Scrapy's default
    assert answers[(now, "new")][1]["robots_txt"]["sha256"] == sha(NEW)
    assert "line 2 (Disallow: /old)" in answers[(before, "old")][1]["decided_by"]
    summary = robots(folder)
    assert summary.returncode == 0, summary.stderr
    assert f"{site.url}: 2 robots.txt version(s)" in summary.stdout, summary.stdout


@pytest_twisted.ensureDeferred
async def test_a_crawl_killed_leaves_a_record_that_reads_up_to_its_last_batch(serve, tmp_path):
    site = slow_site(serve, OLD)
    urls = [f"{site.url}/page/{n}" for n in range(40)]
    folder = tmp_path / "record"
    handle = run_spider(urls, tmp_path, **SUBPROCESS, ROBOTSTXT_RECORD=str(folder))
    await until(lambda: len(site.page_hits()) >= 3, 30, "3 pages fetched")
    decided = len(site.page_hits())  # at least: each was decided before it was sent
    await sleep(0.5)  # two flush intervals: their decisions are written
    assert not handle.done.called, handle.output.decode()[-3000:]
    handle.kill()
    result = await ended(handle, timeout=20)
    assert result["reason"] == "no result"  # killed: the spider never closed
    sent = len(site.page_hits())
    record = Record([folder])
    assert record.versions and record.version_at(site_of(site.url), time.time()).sha256 == sha(OLD)
    # What was written reads whole; at most the last interval's decisions are lost.
    assert decided <= len(record.decisions) <= len(urls)
    assert all(row["robots"] == sha(OLD) and row["allowed"] for row in record.decisions)
    done = robots(folder, f"{site.url}/page/1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sent < len(urls)  # killed before the end


class RobotsProvenance:
    """docs/compliance.rst's spider middleware: each item carries its response's version."""

    async def process_spider_output(self, response, result, spider=None):
        async for item in result:
            if isinstance(item, dict):
                item["robots_txt"] = response.meta.get("robotstxt_version")
            yield item


class KeepItems:
    """An item pipeline: stores the items, their provenance beside them."""

    kept: list[dict] = []

    def process_item(self, item, spider=None):
        self.kept.append(item)
        return item


class ItemSpider(RecordingSpider):
    def parse(self, response):
        super().parse(response)
        yield {"url": response.url}


@pytest_twisted.ensureDeferred
async def test_json_lines_keep_tdmrep_versions_and_reservations_and_the_summary_names_them(serve, tmp_path):
    rules = [{"location": "/books/*", "tdm-reservation": 1}]
    site = serve(body(ROBOTS), {"/.well-known/tdmrep.json": body(json.dumps(rules))})
    urls = [f"{site.url}/books/a", f"{site.url}/books/b", f"{site.url}/free", f"{site.url}/private/x"]
    folder = tmp_path / "record"
    KeepItems.kept = []
    crawler = await crawl(
        urls,
        ItemSpider,
        ROBOTSTXT_RECORD=str(folder),
        ROBOTSTXT_RECORD_FORMAT="jsonl",
        ROBOTSTXT_USAGE=["train-ai"],
        SPIDER_MIDDLEWARES={"test_record.RobotsProvenance": 900},
        ITEM_PIPELINES={"test_record.KeepItems": 100},
    )
    assert crawler.spider.downloaded == [f"{site.url}/free"]
    [item] = KeepItems.kept
    assert item["url"] == f"{site.url}/free" and item["robots_txt"]["sha256"] == sha(ROBOTS)
    assert not list(folder.glob("*.warc.gz"))
    bodies = {path.name: path.read_bytes() for path in (folder / "bodies").iterdir()}
    assert bodies == {sha(ROBOTS): ROBOTS.encode(), sha(json.dumps(rules)): json.dumps(rules).encode()}
    record = Record([folder])
    rows = {row["url"]: row for row in record.decisions}
    assert rows[f"{site.url}/books/a"]["tdmrep"] == sha(json.dumps(rules))
    assert rows[f"{site.url}/books/a"]["usage_denied"]["source"] == "tdmrep.json"
    assert rows[f"{site.url}/books/a"]["reason"] == "tdmrep/denied/file"
    assert rows[f"{site.url}/free"]["tdm"]["reserved"] is None
    [summary] = record.summary()
    assert summary.tdmrep == {"parse"} and summary.allowed == 1
    assert summary.denied == {"tdmrep/denied/file": 2, "forbidden": 1}
    assert summary.reservations == {"train-ai (tdmrep.json)": 2}
    assert stat(crawler, "robotstxt/record/versions/tdmrep") == 1
    done = robots(folder, "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["reservations"] == {"train-ai (tdmrep.json)": 2}
    # Asked afterwards, the record answers as the crawl decided: robots.txt allows /books/a,
    # the tdmrep.json recorded then reserves it for the purpose the crawl declared.
    asked = robots(folder, f"{site.url}/books/a")
    assert asked.returncode == 1, asked.stdout + asked.stderr
    assert f"{site.url}/books/a: denied" in asked.stdout, asked.stdout
    assert "decided by: Forbidden by TDMRep reservation: tdmrep.json rule 1" in asked.stdout, asked.stdout
    free = robots(folder, f"{site.url}/free")
    assert free.returncode == 0 and f"{site.url}/free: allowed" in free.stdout, free.stdout + free.stderr

    # The purposes, the same for every decision, are the file's header (its first line), not
    # in each row; the reader gives them to each row.
    [decisions] = folder.glob("*.decisions.jsonl")
    header, *lines = [json.loads(line) for line in decisions.read_text().splitlines()]
    assert header == {"purposes": ["train-ai"], "mode": "deny"} and len(lines) == 4
    assert not any("purposes" in line for line in lines)
    assert all(row["purposes"] == ["train-ai"] for row in record.decisions)
    # A file written before the header, each row with its purposes, reads and answers the same.
    decisions.write_text("".join(json.dumps({**line, "purposes": ["train-ai"]}) + "\n" for line in lines))
    # (Such a file does not say its mode: ROBOTSTXT_USAGE_MODE came into the header later.)
    assert Record([folder]).decisions == [{k: v for k, v in row.items() if k != "mode"} for row in record.decisions]
    again = robots(folder, f"{site.url}/books/a")
    assert again.returncode == 1, again.stdout + again.stderr
    assert "decided by: Forbidden by TDMRep reservation: tdmrep.json rule 1" in again.stdout, again.stdout


@pytest_twisted.ensureDeferred
async def test_a_decision_row_says_what_was_decided_then_whenever_its_batch_is_written(serve, tmp_path):
    # The pages' answers (a Content-Usage or tdm-reservation header) come after the decision
    # to send them: a row written after the response must not take them for the decision's.
    rules = [{"location": "/books/*", "tdm-reservation": 0}]
    site = serve(
        body(ROBOTS),
        {
            "/.well-known/tdmrep.json": body(json.dumps(rules)),
            "/books/1": body("<html></html>", headers={"tdm-reservation": "1", "Content-Type": "text/html"}),
            "/books/2": body("<html></html>", headers={"Content-Usage": "train-ai=n", "Content-Type": "text/html"}),
        },
    )
    urls = [f"{site.url}/books/1", f"{site.url}/books/2", f"{site.url}/books/3"]
    rows = {}
    for batch in (10_000, 1):  # written at the close (after the responses), and at once
        folder = tmp_path / f"record-{batch}"
        crawler = await crawl(
            urls,
            ItemSpider,
            ROBOTSTXT_RECORD=str(folder),
            ROBOTSTXT_RECORD_FORMAT="jsonl",
            ROBOTSTXT_RECORD_BATCH=batch,
            ROBOTSTXT_USAGE=["train-ai"],
            SPIDER_MIDDLEWARES={"scrapy_robots.spidermw.UsageMiddleware": 100},
        )
        assert sorted(crawler.spider.downloaded) == sorted(urls)
        assert stat(crawler, "robotstxt/usage/items_dropped/train-ai") == 2
        rows[batch] = {
            row["url"]: {k: v for k, v in row.items() if k not in ("t", "robots_fetched_at")}
            for row in Record([folder]).decisions
        }
    assert rows[10_000] == rows[1]
    for url in urls:
        row = rows[1][url]
        assert row["allowed"] and row["tdm"]["source"] == "tdmrep.json" and row["tdm"]["reserved"] is False, row
        assert all(pref["source"] != "header" for pref in row.get("usage", {}).values()), row


@pytest_twisted.ensureDeferred
async def test_a_fleet_writes_one_record_per_crawler_whose_decisions_name_the_one_version_fetched(
    serve, redis, tmp_path
):
    sites = [serve(body(ROBOTS)) for _ in range(3)]
    urls = [f"{site.url}/p{i}" for site in sites for i in range(6)] + [f"{site.url}/private" for site in sites]
    folder = tmp_path / "record"
    # Each crawler brings its own half of each site: both decide, one fetches each robots.txt.
    handles = [start_crawler(half, redis.url, ROBOTSTXT_RECORD=str(folder)) for half in (urls[::2], urls[1::2])]
    results = [result for _, result in await DeferredList([h.done for h in handles])]
    for result in results:
        assert result["exit"] == 0, result["log"][-3000:]
    assert [site.robots_hits() for site in sites] == [1, 1, 1]  # fetched once by the fleet
    record = Record([folder])
    assert len(list(folder.glob("*.decisions.jsonl"))) == 2
    # One version per site, recorded by whichever crawler fetched it; every decision of
    # either crawler names it.
    versions = [v for (file, _), found in record.versions.items() for v in found]
    assert len(versions) == 3 and {v.sha256 for v in versions} == {sha(ROBOTS)}
    assert Counter(row["url"] for row in record.decisions) == Counter(urls)
    assert {row["robots"] for row in record.decisions} == {sha(ROBOTS)}


@pytest_twisted.ensureDeferred
async def test_while_robots_txt_is_unreachable_the_kept_copy_is_the_version_that_decides(serve, tmp_path):
    site = serve(sequence(body(ROBOTS), body("busy", 503)))
    site.pages = drip(b"ok", 0.05)
    urls = [f"{site.url}/{path}/{n}" for n in range(6) for path in ("p", "private")]
    folder = tmp_path / "record"
    await crawl(
        urls,
        ROBOTSTXT_RECORD=str(folder),
        ROBOTSTXT_CACHE_TTL=0.3,  # fetched again during the crawl: the server answers 503 then
        CONCURRENT_REQUESTS=1,
        DOWNLOAD_DELAY=0.15,
    )
    assert site.robots_hits() >= 2
    record = Record([folder])
    [first, *later] = record.versions[("robots.txt", site_of(site.url))]
    assert (first.status, first.action, first.governs) == (200, "parse", sha(ROBOTS))
    assert later and all(v.status == 503 and v.sha256 == sha("busy") and v.governs == sha(ROBOTS) for v in later)
    # Every decision, before and after the 503, names the copy kept: the 200's.
    assert {row["robots"] for row in record.decisions} == {sha(ROBOTS)}
    assert any(row["t"] > later[0].fetched_at for row in record.decisions)
    assert all(row["allowed"] == ("/private/" not in row["url"]) for row in record.decisions)
    done = robots(folder, f"{site.url}/private/9", "--json")
    answer = json.loads(done.stdout)
    assert done.returncode == 1 and answer["robots_txt"]["sha256"] == sha(ROBOTS), done.stdout
    assert answer["robots_txt"]["status"] == 503 and "the copy before it was kept" in answer["robots_txt"]["note"]


@pytest_twisted.ensureDeferred
async def test_a_site_never_reached_has_no_version_in_the_record_answer(serve, tmp_path):
    # A network error, and a 503, with no copy from before: the record says no version was
    # fetched, not the SHA-256 of nothing, "HTTP None" or "0 bytes".
    from servers import reset

    down, busy = serve(reset()), serve(body("busy", 503))
    folder = tmp_path / "record"
    await crawl([f"{down.url}/a", f"{busy.url}/b"], ROBOTSTXT_RECORD=str(folder), ROBOTSTXT_UNREACHABLE_RETRY_TIMES=0)
    for url, outcome in ((f"{down.url}/a", "unreachable ("), (f"{busy.url}/b", "unreachable (HTTP 503)")):
        text = robots(folder, url)
        assert text.returncode == 1, text.stdout + text.stderr
        assert "robots.txt: no version: asked " in text.stdout and outcome in text.stdout, text.stdout
        assert "no version was fetched" in text.stdout, text.stdout
        assert "HTTP None" not in text.stdout and " 0 bytes" not in text.stdout and sha("") not in text.stdout
        answer = json.loads(robots(folder, url, "--json").stdout)
        assert answer["robots_txt"]["sha256"] is None and answer["robots_txt"]["size"] is None, answer


@pytest_twisted.ensureDeferred
async def test_a_full_batch_is_written_before_the_timer_and_the_close(serve, tmp_path):
    site = serve(body(ROBOTS))
    site.pages = drip(b"ok", 0.05)
    urls = [f"{site.url}/p/{n}" for n in range(12)]
    folder = tmp_path / "record"
    seen: list[int] = []

    class Watching(RecordingSpider):
        def parse(self, response):
            super().parse(response)
            files = list(folder.glob("*.decisions.jsonl"))
            seen.append(sum(1 for _ in files[0].open()) - 1 if files else 0)  # the rows, below the header

    await crawl(
        urls,
        Watching,
        ROBOTSTXT_RECORD=str(folder),
        ROBOTSTXT_RECORD_FLUSH_INTERVAL=3600,
        ROBOTSTXT_RECORD_BATCH=4,
        CONCURRENT_REQUESTS=1,
    )
    # Written 4 by 4 while the crawl ran (the timer never fired), the rest at the close.
    assert seen[-1] >= 8 and all(n % 4 == 0 for n in seen), seen
    assert len(Record([folder]).decisions) == 12


@pytest_twisted.ensureDeferred
async def test_a_resume_within_the_lifetime_names_the_first_runs_version_and_records_it_once(serve, tmp_path):
    site = slow_site(serve, OLD)
    urls = [f"{site.url}/{kind}/{n}" for n in range(10) for kind in ("old", "page")]
    folder = tmp_path / "record"
    settings = {**SUBPROCESS, "JOBDIR": str(tmp_path / "job"), "ROBOTSTXT_RECORD": str(folder)}
    handle = run_spider(urls, tmp_path, **settings)
    await until(lambda: len(site.page_hits()) >= 4, 30, "the first run to fetch 4 pages")
    handle.signal("INT")
    first = await ended(handle, timeout=20)
    assert not first["killed"] and first["reason"] == "shutdown", first["log"][-3000:]
    last = await ended(run_spider(urls, tmp_path, **settings), timeout=90)
    assert last["exit"] == 0 and last["reason"] == "finished", last["log"][-3000:]
    assert site.robots_hits() == 1  # the resumed run restored it from the JOBDIR
    record = Record([folder])
    # One version, in the first run's files; both runs' decisions name it.
    assert [v.sha256 for v in record.versions[("robots.txt", site_of(site.url))]] == [sha(OLD)]
    assert len(list(folder.glob("*.warc.gz"))) == 1 and len(list(folder.glob("*.decisions.jsonl"))) == 2
    assert Counter(row["url"] for row in record.decisions) == Counter(urls)
    assert {row["robots"] for row in record.decisions} == {sha(OLD)}


def test_asking_a_record_that_is_not_there_or_with_options_it_cannot_honour_is_an_error(tmp_path):
    missing = robots(tmp_path / "nothing", "https://example.com/a")
    assert missing.returncode == 2 and "no such record folder" in missing.stderr
    (tmp_path / "decisions.jsonl").write_text("")
    a_file = robots(tmp_path / "decisions.jsonl", "https://example.com/a")
    assert a_file.returncode == 2 and "is a file: --record names the folder ROBOTSTXT_RECORD wrote" in a_file.stderr
    (tmp_path / "empty").mkdir()
    empty = robots(tmp_path / "empty", "https://example.com/a")
    assert empty.returncode == 2 and "no record files" in empty.stderr
    combined = robots(tmp_path / "empty", "--page", "https://example.com/a")
    assert combined.returncode == 2 and "--record and --page cannot be combined" in combined.stderr
    at = subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", "--at", "2025-01-01", "https://example.com/a"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert at.returncode == 2 and "give --record DIR too" in at.stderr
    bad = robots(tmp_path / "empty", "--at", "yesterday", "https://example.com/a")
    assert bad.returncode == 2 and "--at 'yesterday'" in bad.stderr


@pytest_twisted.ensureDeferred
async def test_a_record_asked_at_a_time_lists_the_decisions_made_by_then_and_checks_urls_as_live(serve, tmp_path):
    from scrapy_robots.commands.inputs import check_url

    site = serve(body(ROBOTS))
    folder = tmp_path / "record"
    url = f"{site.url}/private/a"
    await crawl([url], ROBOTSTXT_RECORD=str(folder), ROBOTSTXT_RECORD_FORMAT="jsonl")
    await sleep(0.05)
    between = time.time()
    await sleep(0.05)
    await crawl([url], ROBOTSTXT_RECORD=str(folder), ROBOTSTXT_RECORD_FORMAT="jsonl")
    then = robots(folder, "--at", repr(between), url)
    assert then.returncode == 1, then.stdout + then.stderr
    assert then.stdout.count("  recorded: ") == 1, then.stdout
    now = robots(folder, url)
    assert now.stdout.count("  recorded: ") == 2, now.stdout
    # Input that names no web page: the live mode's message, not a site made of None.
    _, error = check_url("notaurl", local_file=False)
    bad = robots(folder, "--at", repr(between), "notaurl")
    assert bad.returncode == 2 and error in bad.stdout + bad.stderr and "None" not in bad.stdout, bad.stdout
