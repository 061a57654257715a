"""One book for every policy file of a site (issue #40): a third file, ``/.well-known/fixture.txt``,
registered beside robots.txt in a few lines (its path, its status policy, its reader) and driven
through real crawls: many requests, one fetch; its own status policy; a 503, the requests
waiting, then the file; a resumed crawl restoring it from the storage. Counted at the server."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import policy_fixture
import pytest_twisted
from crawling import RecordingSpider, crawl, robots_middleware, stat
from scrapy.exceptions import IgnoreRequest
from servers import body, drip, sequence
from test_command import site  # noqa: F401 - fixture

from scrapy_robots.policyfiles.book import PolicyFile
from scrapy_robots.record.reader import Record
from scrapy_robots.status.policy import NETWORK, Action, StatusPolicy
from scrapy_robots.status.result import FETCH_META

HERE = Path(__file__).resolve().parent

FIXTURE = "/.well-known/fixture.txt"
ROBOTS = "User-agent: *\nDisallow: /private\n"


class Fixture(PolicyFile):
    """The third file: its words are its rules; a 404 keeps the site out (robots.txt's allows)."""

    name = "fixture.txt"
    path = FIXTURE
    stats = "robotstxt/fixture"
    record = "fixture.txt"
    policy = StatusPolicy(
        {
            "2xx": Action.PARSE,
            404: Action.DENY,
            "4xx": Action.ALLOW,
            "5xx": Action.UNREACHABLE,
            NETWORK: Action.UNREACHABLE,
        }
    )

    def read(self, entry):
        return entry.body.decode().split()


class CountingFixture(Fixture):
    """The same file; each download's hook hears how many of the site's requests wait for it."""

    waiting: list[int] = []

    async def fetched(self, decision, result, request, waiting):
        self.waiting.append(waiting)
        await super().fetched(decision, result, request, waiting)


class FixtureMiddleware:
    """After robots.txt's: each request waits for its site's fixture.txt, and carries its words."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.book = None

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    async def process_request(self, request, spider=None):
        if FETCH_META in request.meta:  # the books' own downloads
            return None
        if self.book is None:  # the registration: a book of one more file, beside robots.txt's
            robots = robots_middleware(self.crawler)
            self.book = robots.sites.beside(CountingFixture(self.crawler, robots.config))
        entry = await self.book.entry(self.book.site_of(request), request)
        if entry.action is Action.DENY or entry.action is Action.UNREACHABLE:
            raise IgnoreRequest(f"fixture.txt: {entry.action.value}")
        request.meta["fixture"] = entry.rules
        return None


class FixtureSpider(RecordingSpider):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.words: dict[str, list[str]] = {}

    def parse(self, response):
        super().parse(response)
        self.words[response.url] = response.meta.get("fixture")


async def fixture_crawl(urls, **settings):
    middlewares = {"scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None}
    middlewares |= {"scrapy_robots.RobotsTxtMiddleware": 100, f"{__name__}.FixtureMiddleware": 110}
    return await crawl(urls, FixtureSpider, DOWNLOADER_MIDDLEWARES=middlewares, **settings)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def fixture_hits(site) -> int:
    return site.paths().count(FIXTURE)


def pages(site) -> list[str]:
    return [path for path in site.paths() if path not in ("/robots.txt", FIXTURE)]


@pytest_twisted.ensureDeferred
async def test_many_requests_one_fetch_read_once_and_said(serve, caplog):
    # Sent slowly (0.8 s): the site's requests come while it is being fetched.
    site = serve(body(ROBOTS), {FIXTURE: drip(b"alpha beta\ngamma", 0.05)})
    urls = [f"{site.url}/page/{n}" for n in range(24)]
    CountingFixture.waiting = []
    with caplog.at_level(logging.INFO, logger="scrapy_robots"):
        crawler = await fixture_crawl([*urls, f"{site.url}/private/x"])
    assert fixture_hits(site) == 1 and site.robots_hits() == 1
    [waiting] = CountingFixture.waiting  # one download, for many requests parked on it
    assert waiting > 1, waiting
    assert len(pages(site)) == 24  # robots.txt still decides first: /private/x never went
    assert set(crawler.spider.words) == set(urls)
    assert all(words == ["alpha", "beta", "gamma"] for words in crawler.spider.words.values())
    assert stat(crawler, "robotstxt/fixture/request_count") == 1
    assert stat(crawler, "robotstxt/fixture/status/200") == 1
    assert stat(crawler, "robotstxt/fixture/miss") == 1
    assert stat(crawler, "robotstxt/request_count") == 1  # robots.txt's stats are its own
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("fixture.txt for")]
    assert lines == [f"fixture.txt for http://{site.host}:{site.port}: HTTP 200 -> parse"], lines


@pytest_twisted.ensureDeferred
async def test_a_status_reads_by_the_files_own_policy(serve):
    # robots.txt's policy allows a 404; the file's denies it, and allows a 410 ("4xx").
    missing = serve(body(ROBOTS), {FIXTURE: body("no such file", 404)})
    gone = serve(body(ROBOTS), {FIXTURE: body("gone", 410)})
    no_robots = serve(body("none", 404), {FIXTURE: body("delta")})
    urls = [f"{site.url}/page/{n}" for site in (missing, gone, no_robots) for n in range(3)]
    crawler = await fixture_crawl(urls)
    assert [fixture_hits(site) for site in (missing, gone, no_robots)] == [1, 1, 1]
    assert pages(missing) == [] and len(pages(gone)) == 3 and len(pages(no_robots)) == 3
    assert all(crawler.spider.ignored[f"{missing.url}/page/{n}"] == "fixture.txt: deny" for n in range(3))
    assert crawler.spider.words[f"{gone.url}/page/0"] is None  # allowed, no rules
    assert crawler.spider.words[f"{no_robots.url}/page/0"] == ["delta"]
    assert stat(crawler, "robotstxt/fixture/status/404") == 1
    assert stat(crawler, "robotstxt/fixture/status/410") == 1
    assert stat(crawler, "robotstxt/policy/allow") == 1  # no_robots's robots.txt 404, by robots.txt's policy


@pytest_twisted.ensureDeferred
async def test_a_503_holds_the_requests_then_the_file_answers(serve):
    site = serve(body(ROBOTS), {FIXTURE: sequence(body("busy", 503), body("epsilon"))})
    down = serve(body(ROBOTS), {FIXTURE: body("busy", 503)})
    urls = [f"{s.url}/page/{n}" for s in (site, down) for n in range(4)]
    crawler = await fixture_crawl(urls, ROBOTSTXT_UNREACHABLE_RETRY_DELAY=0.2, ROBOTSTXT_UNREACHABLE_RETRY_TIMES=2)
    # The recovering site: one 503, then the file; its requests waited, none was let through meanwhile.
    assert fixture_hits(site) == 2
    assert len(pages(site)) == 4 and all(crawler.spider.words[f"{site.url}/page/{n}"] == ["epsilon"] for n in range(4))
    # The site that stays down: 1 + 2 retries, then its requests give up.
    assert fixture_hits(down) == 3 and pages(down) == []
    assert all(crawler.spider.ignored[f"{down.url}/page/{n}"] == "fixture.txt: unreachable" for n in range(4))
    assert stat(crawler, "robotstxt/fixture/status/503") == 4
    assert stat(crawler, "robotstxt/fixture/retry") == 3
    assert stat(crawler, "robotstxt/retry", 0) == 0  # robots.txt answered at once


@pytest_twisted.ensureDeferred
async def test_a_resumed_crawl_restores_the_file_from_the_storage(serve, tmp_path):
    site = serve(body(ROBOTS), {FIXTURE: body("zeta eta")})
    jobdir = str(tmp_path / "job")
    first = await fixture_crawl([f"{site.url}/a", f"{site.url}/b"], JOBDIR=jobdir)
    second = await fixture_crawl([f"{site.url}/c", f"{site.url}/d"], JOBDIR=jobdir)
    assert fixture_hits(site) == 1 and site.robots_hits() == 1  # both restored from the job's SQLite
    assert second.spider.words == {f"{site.url}/c": ["zeta", "eta"], f"{site.url}/d": ["zeta", "eta"]}
    assert stat(first, "robotstxt/fixture/request_count") == 1
    assert stat(second, "robotstxt/fixture/request_count") == 0
    assert stat(second, "robotstxt/fixture/restored") == 1
    assert stat(second, "robotstxt/cache/restored") == 1  # robots.txt's, under its own name


@pytest_twisted.ensureDeferred
async def test_the_record_keeps_the_third_files_versions_under_its_own_name(serve, tmp_path):
    site = serve(body(ROBOTS), {FIXTURE: body("theta")})
    folder = tmp_path / "record"
    crawler = await fixture_crawl(
        [f"{site.url}/a", f"{site.url}/b"], ROBOTSTXT_RECORD=str(folder), ROBOTSTXT_RECORD_FORMAT="jsonl"
    )
    assert stat(crawler, "robotstxt/record/versions/robots") == 1
    assert stat(crawler, "robotstxt/record/versions/fixture") == 1
    assert stat(crawler, "robotstxt/record/versions/tdmrep", 0) == 0  # not another file's name
    written = "".join(path.read_text() for path in folder.rglob("*.jsonl"))
    assert '"fixture.txt"' in written and '"robots.txt"' in written


# -- a third file that states preferences: through the one door (policyfiles/preference.py) --

REFUSING = "deny train-ai /secret\ndeny search /hidden\n"
TRAIN = {"ROBOTSTXT_USAGE": ["train-ai"]}


def _registered(*paths: str) -> dict:
    """ROBOTSTXT_POLICY_FILES with the third file: its one registration."""
    return {"ROBOTSTXT_POLICY_FILES": ["scrapy_robots.tdmrep.crawl.TdmRepJson", *paths]}


@pytest_twisted.ensureDeferred
async def test_a_third_file_denies_through_the_door_in_the_crawl_and_the_record(serve, tmp_path):
    site = serve(body(ROBOTS), {FIXTURE: body(REFUSING)})
    plain = serve(body(ROBOTS), {FIXTURE: body("no", 404)})
    urls = [f"{site.url}/secret/1", f"{site.url}/secret/2", f"{site.url}/open", f"{site.url}/hidden/x"]
    urls += [f"{plain.url}/secret/1"]
    folder = tmp_path / "record"
    crawler = await crawl(
        urls,
        ROBOTSTXT_RECORD=str(folder),
        ROBOTSTXT_RECORD_FORMAT="jsonl",
        **TRAIN,
        **_registered(policy_fixture.PATH),
    )
    ignored = crawler.spider.ignored
    reason = "Forbidden by fixture.txt: fixture.txt rule 1 (deny train-ai /secret) denies train-ai"
    assert ignored == {f"{site.url}/secret/1": reason, f"{site.url}/secret/2": reason}, ignored
    # Not declared (search): /hidden goes; the site without the file lets everything go.
    assert sorted(crawler.spider.downloaded) == sorted([f"{site.url}/open", f"{site.url}/hidden/x", urls[-1]])
    assert fixture_hits(site) == 1 and fixture_hits(plain) == 1  # once per site
    assert stat(crawler, "robotstxt/fixture/denied/file") == 2
    assert stat(crawler, "robotstxt/fixture/request_count") == 2
    rows = {row["url"]: row for row in Record([folder]).decisions}
    denied = rows[f"{site.url}/secret/1"]
    assert denied["allowed"] is False and denied["reason"] == "fixture/denied/file", denied
    assert denied["usage_denied"]["source"] == "fixture.txt" and denied["fixture"] == sha(REFUSING), denied
    assert rows[f"{site.url}/open"]["allowed"] is True and rows[f"{site.url}/open"]["fixture"] == sha(REFUSING)


def _command(folder, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
    environ["PYTHONPATH"] = os.pathsep.join([str(HERE), environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "robots", *args],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest_twisted.ensureDeferred
async def test_scrapy_robots_shows_the_third_files_denial_live_from_a_file_and_from_the_record(site, tmp_path):
    # A threaded server (test_command's): the command runs while this test's reactor waits.
    site = site({"/robots.txt": (200, ROBOTS, {}), FIXTURE: (200, REFUSING, {}), "/open": (200, "ok", {})})
    folder = tmp_path / "record"
    await crawl(
        [f"{site.url}/secret/1", f"{site.url}/open"],
        ROBOTSTXT_RECORD=str(folder),
        ROBOTSTXT_RECORD_FORMAT="jsonl",
        **TRAIN,
        **_registered(policy_fixture.PATH),
    )
    flags = ["-s", f"ROBOTSTXT_POLICY_FILES=scrapy_robots.tdmrep.crawl.TdmRepJson,{policy_fixture.PATH}"]
    reason = "Forbidden by fixture.txt: fixture.txt rule 1 (deny train-ai /secret) denies train-ai"
    (tmp_path / "robots.txt").write_text(ROBOTS)
    (tmp_path / ".well-known").mkdir()
    (tmp_path / ".well-known" / "fixture.txt").write_text(REFUSING)
    runs = {
        "live": _command(tmp_path, "--usage", "train-ai", "--json", *flags, f"{site.url}/secret/1", f"{site.url}/open"),
        "file": _command(
            tmp_path,
            "--file",
            "robots.txt",
            "--usage",
            "train-ai",
            "--json",
            *flags,
            f"{site.url}/secret/1",
            f"{site.url}/open",
        ),
        "record": _command(
            tmp_path, "--record", str(folder), "--json", *flags, f"{site.url}/secret/1", f"{site.url}/open"
        ),
    }
    for how, run in runs.items():
        assert run.returncode == 1, (how, run.stdout, run.stderr)
        denied, allowed = (json.loads(line) for line in run.stdout.splitlines())
        assert (denied["allowed"], denied["reason"], denied["stat"]) == (
            False,
            reason,
            "robotstxt/fixture/denied/file",
        ), (
            how,
            denied,
        )
        [deciding] = [source for source in denied["sources"] if source["decides"]]
        assert (deciding["name"], deciding["purpose"]) == ("fixture.txt", "train-ai"), (how, deciding)
        assert deciding["sha256"] == sha(REFUSING), (how, deciding)
        assert allowed["allowed"] is True, (how, allowed)
    text = _command(tmp_path, "--usage", "train-ai", *flags, f"{site.url}/secret/1")
    assert "fixture      fixture.txt rule 1 (deny train-ai /secret) denies train-ai" in text.stdout, text.stdout
    # Without the copy beside the local robots.txt, --file does not invent one.
    (tmp_path / ".well-known" / "fixture.txt").unlink()
    alone = _command(tmp_path, "--file", "robots.txt", "--usage", "train-ai", *flags, f"{site.url}/secret/1")
    assert alone.returncode == 0 and "not read for train-ai" in alone.stdout, alone.stdout
